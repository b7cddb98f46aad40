from triage.cli import main

raise SystemExit(main())
