"""Inputs: every file an evaluation reads, from its bytes to contract-shaped Arrow tables.

Detection of a file's shape and the dispatch to its reader (`shapes`), one reader per format
(`trec`, `jsonl`, `parquet`, `delimited` for CSV/TSV, `ranx`), what they share (`readers`,
`compressed`), the long layout (`long_runs`), the contract's columns and types (`contract`), the
manifest (its measures parsed by `measures.names`), the frozen labels, the tuning split and the
corpus with its cache. May import `measures`, `ids` and `text`."""
