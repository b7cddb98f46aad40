"""The report's sections, one module each: its types, its builder from the workspace's results,
its columns and cells, and its Markdown and HTML blocks."""
