"""Bpref, as trec_eval computes it: how rarely judged non-relevant ids rank above the relevant."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, ratio
from triage.core.measures.ranked import Judgements, Positions


def _bpref(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    """Each relevant id retrieved adds 1 − min(n, R) / min(N, R), n the judged non-relevant ids
    above it (1 when n = 0); the sum divided by R."""
    relevant = at.grade >= rel
    big_r = judged.n_relevant(rel)
    nonrel = (at.grade >= 0) & (at.grade < rel)
    # judged non-relevant ids strictly above each position, within its query
    before: np.ndarray = np.cumsum(nonrel, dtype=np.int64) - nonrel
    start = np.searchsorted(at.query, at.query)  # each query's first position (sorted by query)
    above: np.ndarray = before - before[start]
    q = at.query[relevant]
    n_above: np.ndarray = above[relevant]
    big_n = judged.n_nonrelevant(rel)
    r_q, n_q = big_r[q], big_n[q]
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(n_above > 0, 1.0 - np.minimum(n_above, r_q) / np.minimum(n_q, r_q), 1.0)
    return ratio(np.bincount(q, weights=part, minlength=at.n), big_r)


BPREF = Family(
    name="Bpref",
    cut=Cut.NONE,
    params=("rel",),
    definition="over the relevant ids retrieved: 1 − min(n, R) / min(R, N), n the judged non-relevant "
    "ids ranked above it (1 when n = 0), summed and divided by R; N the query's judged "
    "non-relevant ids (as trec_eval computes it)",
    kernel=_bpref,
    uncut_trec_eval="bpref",
    uncut_ranx="bpref",
    reads_non_relevant=True,
)
