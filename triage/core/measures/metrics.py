"""Per-query retrieval metrics at a cut-off k (docs/measures.md "The numbers"), vectorised over all queries.

An arm's ranked lists enter only through `GoldHits`: the positions where it retrieved a gold id
of that query. Everything else about a ranked list is irrelevant to these metrics, so each
function below is a few numpy operations over those (few) positions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GoldHits:
    """Where one arm retrieved gold: one entry per (query, gold id), at its first position.

    query: int64 query index; rank: int64, 1-based rank in the stored list; grade: int64 ≥ 1;
    code: int64 index of the chunk id in the gold vocabulary. Sorted by (query, rank).
    """

    query: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    code: np.ndarray


@dataclass(frozen=True)
class GoldSets:
    """The gold grades of every query, for ideal DCG and recall denominators.

    query/grade/code: one entry per (query, gold id), sorted by query then grade descending;
    `code` indexes the gold vocabulary. n_gold: int64 per query index (0: unlabelled).
    """

    query: np.ndarray
    grade: np.ndarray
    code: np.ndarray
    n_gold: np.ndarray


def gold_rank(hits: GoldHits, n: int) -> np.ndarray:
    """1-based rank of the best-ranked gold id over the full stored depth; 0 when absent."""
    out = np.zeros(n, np.int64)
    # Entries are sorted by (query, rank): the first entry of each query holds its best rank.
    q = hits.query
    first = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if len(q) else np.zeros(0, np.int64)
    out[q[first]] = hits.rank[first]
    return out


def hits_at(hits: GoldHits, k: int | np.ndarray, n: int) -> np.ndarray:
    """Number of distinct gold ids among the first k (an int, or one per query), per query (int64)."""
    top = hits.rank <= (k[hits.query] if isinstance(k, np.ndarray) and k.ndim else k)
    return np.bincount(hits.query[top], minlength=n).astype(np.int64)


def hit_at(hits: GoldHits, k: int, n: int) -> np.ndarray:
    """hit@k: at least one gold id among the first k (bool per query)."""
    return hits_at(hits, k, n) > 0


def recall_at(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None = None) -> np.ndarray:
    """|top ∩ gold| / min(k, |gold|[, n_eligible]); NaN where undefined (no gold, n_eligible = 0).

    `n_eligible` is int64 per query with -1 where unknown (unfiltered). An n_eligible below the
    gold found in the top k contradicts itself (`inconsistent_eligible`, an error check) and is
    not used: recall never exceeds 1."""
    return _recall(hits_at(hits, k, len(gold.n_gold)), k, gold, n_eligible)


def _recall(found: np.ndarray, k: int, gold: GoldSets, n_eligible: np.ndarray | None) -> np.ndarray:
    """recall@k from the distinct gold found in each top k (`recall_at`)."""
    denom = np.minimum(gold.n_gold, k).astype(np.float64)
    if n_eligible is not None:
        known = (n_eligible >= 0) & (n_eligible >= found)
        denom[known] = np.minimum(denom[known], n_eligible[known])
    with np.errstate(invalid="ignore", divide="ignore"):
        out = found / denom
    out[denom == 0] = np.nan
    return out


def inconsistent_eligible(hits: GoldHits, k: int, n_eligible: np.ndarray) -> np.ndarray:
    """Queries whose n_eligible is below the number of gold ids found in their top k (bool)."""
    return (n_eligible >= 0) & (n_eligible < hits_at(hits, k, len(n_eligible)))


def mrr_at(hits: GoldHits, k: int, n: int) -> np.ndarray:
    """Reciprocal rank of the first gold id within the first k, else 0."""
    rank = gold_rank(hits, n)
    out = np.zeros(n, np.float64)
    inside = (rank > 0) & (rank <= k)
    out[inside] = 1.0 / rank[inside]
    return out


def ndcg_at(hits: GoldHits, k: int, gold: GoldSets) -> np.ndarray:
    """nDCG@k with linear gain (= grade) and log2(rank + 1) discount; the ideal ranking is the
    query's gold grades in descending order. NaN for queries without gold."""
    n = len(gold.n_gold)
    top = hits.rank <= k
    dcg = np.bincount(hits.query[top], weights=hits.grade[top] / np.log2(hits.rank[top] + 1.0), minlength=n)
    # 1-based position of each gold grade within its query's descending list.
    first = np.searchsorted(gold.query, gold.query, side="left")
    pos = np.arange(len(gold.query)) - first + 1
    ideal = pos <= k
    idcg = np.bincount(gold.query[ideal], weights=gold.grade[ideal] / np.log2(pos[ideal] + 1.0), minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = dcg / idcg
    out[idcg == 0] = np.nan
    return out


@dataclass(frozen=True)
class PerQuery:
    """One arm judged at one k: arrays aligned with the query universe."""

    k: int
    gold_rank: np.ndarray  # int64, 0 = no gold in the stored list
    hit: np.ndarray  # bool
    recall: np.ndarray  # float64, NaN = not scored
    mrr: np.ndarray  # float64
    ndcg: np.ndarray  # float64, NaN = not scored


def judge(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None = None) -> PerQuery:
    n = len(gold.n_gold)
    return PerQuery(
        k=k,
        gold_rank=gold_rank(hits, n),
        hit=hit_at(hits, k, n),
        recall=recall_at(hits, k, gold, n_eligible),
        mrr=mrr_at(hits, k, n),
        ndcg=ndcg_at(hits, k, gold),
    )


def judge_at(
    hits: GoldHits, ks: Iterable[int], gold: GoldSets, n_eligible: np.ndarray | None = None
) -> dict[int, PerQuery]:
    """`judge` at several cut-offs at once: the best gold rank, the discounted gains and the ideal
    positions are found once, and each k costs a mask and three bincounts over the gold hits (the
    ranked lists are not read). Equal, value for value, to `judge` at each k."""
    n = len(gold.n_gold)
    best = gold_rank(hits, n)
    gain = hits.grade / np.log2(hits.rank + 1.0)
    pos = positions_in_runs(gold.query)
    ideal_gain = gold.grade / np.log2(pos + 1.0)
    out = {}
    for k in ks:
        top = hits.rank <= k
        found = np.bincount(hits.query[top], minlength=n).astype(np.int64)
        mrr = np.zeros(n, np.float64)
        inside = (best > 0) & (best <= k)
        mrr[inside] = 1.0 / best[inside]
        dcg = np.bincount(hits.query[top], weights=gain[top], minlength=n)
        ideal = pos <= k
        idcg = np.bincount(gold.query[ideal], weights=ideal_gain[ideal], minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            ndcg = dcg / idcg
        ndcg[idcg == 0] = np.nan
        out[k] = PerQuery(k, best, found > 0, _recall(found, k, gold, n_eligible), mrr, ndcg)
    return out


def positions_in_runs(query: np.ndarray) -> np.ndarray:
    """1-based position of each entry within its run of equal (sorted) query indices (int64)."""
    if not len(query):
        return np.zeros(0, np.int64)
    first = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    counts = np.diff(np.r_[first, len(query)])
    return np.arange(len(query)) - np.repeat(first, counts) + 1


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
