"""Ids: strings encoded to integers once (`codes`), and membership in a large id column (`index`).

May import `triage.core.text`; nothing else in core."""
