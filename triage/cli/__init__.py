"""Command line: `triage`, `triage report`, `triage labels …` (entry point: `main.main`)."""
