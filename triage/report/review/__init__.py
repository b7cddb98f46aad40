"""The review document (`triage review export`): its model (`document`), rendered as Markdown
(`markdown`) and as one HTML page (`html`, whose page start and escaping the report's HTML shares)."""
