"""Exact truth for filtered queries: the exact top k within each query's eligible documents, and the
runs judged against it (docs/data.md "Exact truth as labels")."""
