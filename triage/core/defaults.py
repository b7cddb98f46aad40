"""The defaults the command line shows in its help, each defined once, here.

This module imports nothing, so `triage --help` (which prints these values) loads no engine: the
rooms that use them (`views.slices`, `gate.propose`) import them from here.
"""

DEFAULT_FLOOR = 0.80  # tenant hit-rate floor unless --floor says otherwise
MIN_N = 30  # scored queries a slice needs to be gated: below it, one query moves the rate > 3%
SUGGEST_SE = 3.0  # standard errors between B's hit rate and the proposed floor
# `triage truth`: a row within this × max(1, |the k-th score|) of the k-th is tied with it
TRUTH_TOLERANCE = 1e-6
