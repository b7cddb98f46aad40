"""Inputs: every file an evaluation reads, from its bytes to contract-shaped Arrow tables.

Detection of a file's shape (`shapes`), the readers (`readers`, `arrowtext`, `long_runs`,
`compressed`), the contract's columns and types (`contract`), the manifest, the frozen labels,
the tuning split and the corpus with its cache. May import `ids` and `text`."""
