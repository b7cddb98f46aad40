"""Checks: what was held still between the arms and the labels, each a level, a code and a message.

May import `measures`, `inputs`, `ids` and `text`."""
