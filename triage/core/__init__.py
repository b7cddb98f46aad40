"""The floor: everything that reads files and computes numbers, in rooms that import downwards only
(the import-linter contract "Core's rooms" in pyproject.toml, run by tests/house/test_layers.py):

    gate        floors a report is held to, and floors proposed
    views       slices, rank movements, cause hints, origin, cost, answers
    checks      what was held still between the arms and the labels
    evaluation  one evaluation for one label state (and `bundled`, the sample's spec)
    inputs      every input file, from bytes to contract-shaped Arrow tables (a manifest's
                measures parsed by name)
    measures    the measure registry and its kernels, gold encoded, the per-query metrics at k,
                the paired view, intervals, the paired tests
    ids         strings encoded to integers once; membership in a large id column
    text        untrusted text made safe, words, fuzzy search, near-duplicates
    files       safe writes; removal: a folder of triage's removed without leaving it; errors: the
                one error class of bad input; defaults: the values the command line's help shows
                (imports nothing)

Imports nothing above it, never Textual or Rich."""
