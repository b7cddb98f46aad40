"""The floor: the data contract, readers (label files included), ids, gold, metrics, paired, slices,
checks, search, suggestions, untrusted-text sanitising and safe writes. Imports nothing above it,
never Textual or Rich."""
