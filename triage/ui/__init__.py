"""The Textual app: screens and widgets over a headless `Session`. Never computes a metric."""
