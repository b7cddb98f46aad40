"""Retrieval evaluations in the shapes RAG frameworks keep them (docs/data.md "RAG evaluations"):
which shape a table has and how its rows become the contract's run (`frameworks`), JSON read whole
(`json_rows`), and what such runs give beyond their lists: labels, query text, texts (`from_runs`)."""
