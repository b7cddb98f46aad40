"""Rank movements of B against A beyond the flips: per-query wins, ties and losses on mrr@k and
ndcg@k, the queries both arms hit whose gold fell, and the histogram of gold-rank changes.

A query that both arms hit but whose gold fell from rank 1 to rank 4 is no flip; these are where
it shows. Every function is a few numpy operations over the per-query arrays of `PerQuery`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.evaluation import Evaluation

TIE = 1e-9  # |B − A| at or below this is a tie: the float noise of one sum, far below any real step


@dataclass(frozen=True)
class WinTieLoss:
    """Scored queries where B's per-query value is above A's by more than TIE (wins), within TIE
    of it (ties), below it by more than TIE (losses). They sum to the scored queries."""

    wins: int
    ties: int
    losses: int


def win_tie_loss(a: np.ndarray, b: np.ndarray, scored: np.ndarray, tol: float = TIE) -> WinTieLoss:
    """B against A over the `scored` queries, one per-query metric array each (float64)."""
    d = b[scored] - a[scored]
    wins, losses = int((d > tol).sum()), int((d < -tol).sum())
    return WinTieLoss(wins, len(d) - wins - losses, losses)


def drop_order(
    hit_a: np.ndarray,
    hit_b: np.ndarray,
    rank_a: np.ndarray,
    rank_b: np.ndarray,
    scored: np.ndarray,
    query_ids: pa.Array,
) -> np.ndarray:
    """Indices of the scored queries both arms hit whose best gold rank is worse in B (rank_b >
    rank_a, both within k): the largest drop (rank_b − rank_a) first, then the better rank in A
    first (1 → 3 costs more reciprocal rank than 2 → 4), then query_id."""
    fell = np.flatnonzero(scored & hit_a & hit_b & (rank_b > rank_a))
    if len(fell) == 0:
        return fell
    by_name = np.empty(len(fell), np.int64)
    by_name[pc.sort_indices(query_ids.take(pa.array(fell))).to_numpy()] = np.arange(len(fell))
    drop = rank_b[fell] - rank_a[fell]
    return fell[np.lexsort((by_name, rank_a[fell], -drop))]


@dataclass(frozen=True)
class RankChanges:
    """Gold-rank change, A's rank − B's rank (positive: B ranked its best gold higher), over the
    scored queries with a gold id in both stored lists, at any depth. `change` holds each distinct
    change ascending (int64), `count` the queries with it. Scored queries with a gold id in one
    list only, or in neither, are counted apart and not in the histogram."""

    change: np.ndarray
    count: np.ndarray
    only_a: int  # gold in A's stored list only
    only_b: int  # gold in B's stored list only
    neither: int

    @property
    def n(self) -> int:
        return int(self.count.sum())

    @property
    def fell(self) -> int:
        """Queries whose gold B ranked lower than A (change < 0)."""
        return int(self.count[self.change < 0].sum())

    @property
    def same(self) -> int:
        return int(self.count[self.change == 0].sum())

    @property
    def rose(self) -> int:
        return int(self.count[self.change > 0].sum())


def rank_changes(rank_a: np.ndarray, rank_b: np.ndarray, scored: np.ndarray) -> RankChanges:
    """The histogram of A rank − B rank; ranks are 1-based, 0 where the gold is absent."""
    in_a, in_b = scored & (rank_a > 0), scored & (rank_b > 0)
    both = in_a & in_b
    change, count = np.unique(rank_a[both] - rank_b[both], return_counts=True)
    return RankChanges(
        change.astype(np.int64),
        count.astype(np.int64),
        int((in_a & ~in_b).sum()),
        int((in_b & ~in_a).sum()),
        int((scored & ~in_a & ~in_b).sum()),
    )


@dataclass(frozen=True)
class Ranks:
    n: int  # scored queries compared
    mrr: WinTieLoss
    ndcg: WinTieLoss
    drops: np.ndarray  # query indices, in `drop_order`
    changes: RankChanges


def ranks(ev: Evaluation) -> Ranks:
    """B against A on `ev`'s scored queries at its k."""
    a, b, scored = ev.a.judged, ev.b.judged, ev.scored
    return Ranks(
        n=int(scored.sum()),
        mrr=win_tie_loss(a.mrr, b.mrr, scored),
        ndcg=win_tie_loss(a.ndcg, b.ndcg, scored),
        drops=drop_order(a.hit, b.hit, a.gold_rank, b.gold_rank, scored, ev.query_ids),
        changes=rank_changes(a.gold_rank, b.gold_rank, scored),
    )
