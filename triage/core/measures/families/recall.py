"""triage's recall@k: the gold found within the first k over min(k, |gold|[, n_eligible]) — its
own family, not R@k (which divides by every relevant id of the query)."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Metric
from triage.core.measures.hits import GoldHits, GoldSets, hits_at


def recall_at(hits: GoldHits, k: int, gold: GoldSets, n_eligible: np.ndarray | None = None) -> np.ndarray:
    """|top ∩ gold| / min(k, |gold|[, n_eligible]); NaN where undefined (no gold, n_eligible = 0).

    `n_eligible` is int64 per query with -1 where unknown (unfiltered). An n_eligible below the
    gold found in the top k contradicts itself (`inconsistent_eligible`, an error check) and is
    not used: recall never exceeds 1."""
    found = hits_at(hits, k, len(gold.n_gold))
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


RECALL = Metric(
    name="recall",
    definition="mean of |top ∩ gold| / min(k, |gold|); with `n_eligible`: min(k, |gold|, "
    "n_eligible); a query with n_eligible = 0 is left out and counted; an n_eligible below the gold "
    "found in the top k contradicts itself, is not used (recall never exceeds 1) and is an error check",
    kernel=recall_at,
    trec_eval="`recall_5` when |gold| ≤ k (it divides by |gold|)",
    ir_measures="`R@5`, likewise",
    ranx="`recall@5`, likewise",
)


def exact_recall_at(hits: GoldHits, k: int, n_eligible: np.ndarray) -> np.ndarray:
    """Recall@k against exact truth (`hits`: where the arm retrieved the true neighbours at k, tied
    extras included): |top k ∩ truth| over min(k, n_eligible), the truth's exact count whatever
    the truth holds, at most min(k, n_eligible) counted (a tied extra may stand in for a
    neighbour it ties with); NaN where n_eligible ≤ 0 (nothing eligible, or not known)."""
    denom = np.minimum(k, n_eligible)
    found = np.minimum(hits_at(hits, k, len(n_eligible)), denom)
    out = np.full(len(n_eligible), np.nan)
    ok = denom > 0
    out[ok] = found[ok] / denom[ok]
    return out
