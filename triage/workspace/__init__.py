"""The headless application: an evaluation opened with its label state (a snapshot), the session
the UI reads, review decisions, query details and suggestions. Imports core and labels, never a UI."""
