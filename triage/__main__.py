from triage.cli.main import main

raise SystemExit(main())
