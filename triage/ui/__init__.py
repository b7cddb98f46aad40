"""The Textual app: screens and widgets over a `Session`. Never computes a metric."""
