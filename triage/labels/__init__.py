"""The label store: the frozen gold file (read-only) and, later, the amendment log."""
