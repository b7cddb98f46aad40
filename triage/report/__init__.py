"""The headless report: one typed `Report` (`model`), its figures as strings (`cells`), printed as
text (`terminal`), Markdown (`markdown`) or JSON (`model.dumps`)."""
