"""RR (reciprocal rank) and triage's mrr@k: 1 / the rank of the first relevant id within k, else 0.
One kernel (`reciprocal_rank`) for both: RR over every judgement at its rel, mrr over the gold in
the stored order."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, Metric
from triage.core.measures.hits import GoldHits, GoldSets
from triage.core.measures.ranked import Judgements, Positions


def reciprocal_rank(query: np.ndarray, rank: np.ndarray, k: int | None, n: int) -> np.ndarray:
    """Per query (of n), 1 / the rank of its first entry within the first k (None: anywhere), else
    0 (float64). The entries (relevant ids, at their ranks) are sorted by query, then rank."""
    top = np.flatnonzero(rank <= k) if k is not None else np.arange(len(rank))
    first = top[np.flatnonzero(np.diff(query[top], prepend=-1))]  # each query's first within k
    out = np.zeros(n, np.float64)
    out[query[first]] = 1.0 / rank[first]
    return out


def _named(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    """Over the relevant ids (grade ≥ rel)."""
    relevant = at.grade >= rel
    return reciprocal_rank(at.query[relevant], at.rank[relevant], k, at.n)


def _metric(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None) -> np.ndarray:
    """Over the gold: 1 / the best gold rank, when it is within k."""
    return reciprocal_rank(hits.query, hits.rank, k, len(gold.n_gold))


RR = Family(
    name="RR",
    cut=Cut.OPTIONAL,
    params=("rel", "judged_only"),
    definition="reciprocal rank: 1 / the rank of the first relevant id within k, else 0",
    kernel=_named,
    ranx="mrr@{k}",
    uncut_trec_eval="recip_rank",
    uncut_ranx="mrr",
)

MRR = Metric(
    name="mrr",
    definition="mean of 1 / rank of the first gold id within top, else 0",
    kernel=_metric,
    trec_eval="`recip_rank` on the first k only: trec_eval's own is uncut (the first gold at any rank)",
    ir_measures="`RR@5`",
    ranx="`mrr@5`",
)
