"""Exact truth for filtered queries: the predicates, the corpus's shards, the kernel, and the
queries worth running it on (`sampling`)."""
