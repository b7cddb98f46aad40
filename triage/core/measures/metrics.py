"""triage's four metrics at a cut-off k (docs/measures.md "The numbers"), vectorised over all
queries: an arm judged at k (`PerQuery`) by the kernels the registry declares for them
(core/measures/families/: hit_rate, recall, mrr, ndcg), and their means over the scored queries.

An arm's ranked lists enter only through `GoldHits` (core/measures/hits.py): the positions where
it retrieved a gold id of that query.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from triage.core.measures.families import METRICS
from triage.core.measures.hits import GoldHits, GoldSets, gold_rank


@dataclass(frozen=True)
class PerQuery:
    """One arm judged at one k: arrays aligned with the query universe."""

    k: int
    gold_rank: np.ndarray  # int64, 0 = no gold in the stored list
    hit: np.ndarray  # bool
    recall: np.ndarray  # float64, NaN = not scored
    mrr: np.ndarray  # float64
    ndcg: np.ndarray  # float64, NaN = not scored


def judge_arm(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None = None) -> PerQuery:
    """The four metrics at k of the arm that retrieved `hits`, per query, and its best gold rank."""
    return _at(hits, k, gold, n_eligible, gold_rank(hits, len(gold.n_gold)))


def _at(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None, best: np.ndarray) -> PerQuery:
    """`judge_arm` with the best gold ranks already found."""
    args = (hits, k, gold, n_eligible)
    return PerQuery(
        k,
        best,
        METRICS["hit_rate"].kernel(*args),
        METRICS["recall"].kernel(*args),
        METRICS["mrr"].kernel(*args),
        METRICS["ndcg"].kernel(*args),
    )


def judge_at(
    hits: GoldHits, ks: Iterable[int], gold: GoldSets, n_eligible: np.ndarray | None = None
) -> dict[int, PerQuery]:
    """`judge_arm` at several cut-offs at once: the best gold ranks are found once (and the gold's
    ideal ranks once, `GoldSets.ideal_rank`), and each k costs a few masks and bincounts over the
    gold hits (the ranked lists are not read). Equal, value for value, to `judge_arm` at each k."""
    best = gold_rank(hits, len(gold.n_gold))
    return {k: _at(hits, k, gold, n_eligible, best) for k in ks}


@dataclass(frozen=True)
class Means:
    """Means over the scored queries (those with gold). Recall excludes n_eligible = 0."""

    n: int
    hit_rate: float
    recall: float
    mrr: float
    ndcg: float
    n_recall: int


def means(pq: PerQuery, scored: np.ndarray) -> Means:
    n = int(scored.sum())

    def mean(values: np.ndarray, mask: np.ndarray) -> float:
        return float(values[mask].mean()) if mask.any() else float("nan")

    recall_ok = scored & ~np.isnan(pq.recall)
    return Means(
        n=n,
        hit_rate=mean(pq.hit.astype(np.float64), scored),
        recall=mean(pq.recall, recall_ok),
        mrr=mean(pq.mrr, scored),
        ndcg=mean(pq.ndcg, scored),
        n_recall=int(recall_ok.sum()),
    )
