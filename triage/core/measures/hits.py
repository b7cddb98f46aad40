"""What triage's four metrics read of an arm (docs/measures.md "The numbers"): where it retrieved
each query's gold (`GoldHits`), and the gold of every query (`GoldSets`).

An arm's ranked lists enter only through `GoldHits`: the positions where it retrieved a gold id
of that query. Everything else about a ranked list is irrelevant to these metrics, so each kernel
(core/measures/families/) is a few numpy operations over those (few) positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

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

    @cached_property
    def ideal_rank(self) -> np.ndarray:
        """Each grade's 1-based rank in its query's ideal ranking (the gold, grade descending)."""
        return positions_in_runs(self.query)


def positions_in_runs(query: np.ndarray) -> np.ndarray:
    """1-based position of each entry within its run of equal (sorted) query indices (int64)."""
    if not len(query):
        return np.zeros(0, np.int64)
    first = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    counts = np.diff(np.r_[first, len(query)])
    return np.arange(len(query)) - np.repeat(first, counts) + 1


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
