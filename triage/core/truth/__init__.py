"""Truth: the exact top-k within the rows a query's filter admits, computed from a corpus of
embeddings (docs/truth.md), and read back as the labels runs are judged against (`folder`,
`judged`; docs/data.md "Exact truth as labels"). `predicate` reads a filter (a SQL WHERE clause)
into an `expression`, whose `mask` is the rows it admits; `sampling` is the rule that picks the
queries worth running it on, `counts` each filter's exact count of eligible rows it bands them by.
May import `inputs` and the rooms below it."""
