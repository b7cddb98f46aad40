"""Success@k and triage's hit_rate@k: whether a relevant id is within the first k. One kernel
(`success`) for both: Success over every judgement at its rel, hit_rate over the gold in the
stored order."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, Metric
from triage.core.measures.hits import GoldHits, GoldSets
from triage.core.measures.ranked import Judgements, Positions


def success(query: np.ndarray, rank: np.ndarray, k: int | None, n: int) -> np.ndarray:
    """Per query (of n), whether one of its entries (relevant ids, at their ranks) is within the
    first k (None: anywhere; bool)."""
    top = rank <= k if k is not None else np.ones(len(rank), bool)
    return np.bincount(query[top], minlength=n) > 0


def _named(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    """Over the relevant ids (grade ≥ rel): 1.0 or 0.0."""
    relevant = at.grade >= rel
    return success(at.query[relevant], at.rank[relevant], k, at.n).astype(np.float64)


def _metric(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None) -> np.ndarray:
    """Over the gold (bool: the query's hit at k)."""
    return success(hits.query, hits.rank, k, len(gold.n_gold))


SUCCESS = Family(
    name="Success",
    cut=Cut.REQUIRED,
    params=("rel", "judged_only"),
    definition="1 when a relevant id is within the first k, else 0",
    kernel=_named,
    trec_eval="success_{k}",
    ranx="hit_rate@{k}",
)

HIT_RATE = Metric(
    name="hit_rate",
    definition="mean of [top ∩ gold ≠ ∅]",
    kernel=_metric,
    trec_eval="`success_5`",
    ir_measures="`Success@5`",
    ranx="`hit_rate@5`",
)
