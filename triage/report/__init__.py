"""The headless report: one dict of numbers (`model`), printed as text, Markdown or JSON."""
