"""nDCG: discounted cumulative gain over the ideal one, within k. The one kernel (`ndcg`) of the
named nDCG@k, read over every judgement in the order the measures read a run, and of triage's
ndcg@k, read over the gold in the stored order."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, Metric
from triage.core.measures.hits import GoldHits, GoldSets
from triage.core.measures.ranked import Judgements, Positions


def dcg(query: np.ndarray, rank: np.ndarray, gain: np.ndarray, k: int | None, n: int) -> np.ndarray:
    """Per query (of n), the sum of gain / log2(rank + 1) over its entries within the first k
    (None: all of them; float64)."""
    top = np.flatnonzero(rank <= k) if k is not None else np.arange(len(rank))
    return np.bincount(query[top], weights=gain[top] / np.log2(rank[top] + 1.0), minlength=n)


Ranked = tuple[np.ndarray, np.ndarray, np.ndarray]  # (query, 1-based rank, gain) per entry


def ndcg(listed: Ranked, ideal: Ranked, k: int | None, n: int) -> np.ndarray:
    """DCG / ideal DCG within k, per query (float64; NaN where the ideal DCG is 0). `listed`: each
    listed entry's (query, rank, gain); `ideal`: each query's ideal ranking, as (query, rank,
    gain) of its gains high to low."""
    found, best = dcg(*listed, k, n), dcg(*ideal, k, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = found / best
    out[best == 0] = np.nan
    return out


def _named(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    """gain = grade, a grade ≤ 0 gaining nothing; 0 where the query has no positive grade."""
    gain = np.where(at.grade > 0, at.grade, 0).astype(np.float64)
    out = ndcg((at.query, at.rank, gain), judged.ideal, k, at.n)
    out[np.isnan(out)] = 0.0
    return out


def _metric(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None) -> np.ndarray:
    """gain = the gold's grade; NaN where the query has no gold (not scored)."""
    ideal = (gold.query, gold.ideal_rank, gold.grade)
    return ndcg((hits.query, hits.rank, hits.grade), ideal, k, len(gold.n_gold))


NDCG = Family(
    name="nDCG",
    cut=Cut.OPTIONAL,
    params=("judged_only",),
    definition="DCG / ideal DCG within k: gain = grade (grades ≤ 0 gain 0), discount log2(rank + 1); "
    "the ideal ranks every positive grade of the query high to low. judged_only=True: unjudged "
    "ids are removed from the ranking first (trec_eval -J)",
    kernel=_named,
    trec_eval="ndcg_cut_{k}",
    ranx="ndcg@{k}",
    uncut_trec_eval="ndcg",
    uncut_ranx="ndcg",
)

NDCG_AT_K = Metric(
    name="ndcg",
    definition="mean of DCG / ideal DCG within k as `nDCG@k` below (the same kernel), over the gold in "
    "the stored order: gain = relevance; the ideal ranks the query's gold grades high to low",
    kernel=_metric,
    trec_eval="`ndcg_cut_5`",
    ir_measures="`nDCG@5`",
    ranx="`ndcg@5`",
)
