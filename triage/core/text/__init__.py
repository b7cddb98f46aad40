"""Text: untrusted text made safe to show, words and token estimates, fuzzy search, near-duplicates.

Imports only `triage.core.errors` and the standard libraries; every other room may use it."""
