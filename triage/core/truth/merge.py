"""Partial top-k lists and their merge: the k best rows per query and every row tied with the k-th.

A gain is higher-is-better: the cosine similarity, the inner product, or minus the Euclidean
distance. A row is tied with the k-th (gain g_k) when |g − g_k| ≤ tolerance × max(1, |g_k|): it
stays when g ≥ `cutoff(g_k)`. The cutoff grows with g_k, so a merge is exact: the merged k-th is
at least each part's k-th, and every row at or above the merged cutoff was kept by its part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa


@dataclass(frozen=True)
class Partial:
    """Candidates of a query block: rows ordered by query, gain descending, then chunk id (Python
    string order: Arrow sorts strings by their UTF-8 bytes, which is code point order)."""

    query: np.ndarray  # int32: the query's index in the block
    ids: pa.Array  # chunk ids, string
    gains: np.ndarray  # float64
    n_eligible: np.ndarray  # int64 per query of the block: the rows its predicate admits

    @classmethod
    def of(cls, query: np.ndarray, ids: pa.Array, gains: np.ndarray, n_eligible: np.ndarray) -> Partial:
        """The candidates given in any order, ordered."""
        table = pa.table({"q": query.astype(np.int32), "g": gains, "id": ids})
        table = table.sort_by([("q", "ascending"), ("g", "descending"), ("id", "ascending")])
        return cls(
            table.column("q").to_numpy(),
            _one(table.column("id")),
            table.column("g").to_numpy(),
            np.asarray(n_eligible, np.int64),
        )


def _one(col: pa.ChunkedArray) -> pa.Array:
    return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)


def cutoff(gain: np.ndarray, tolerance: float) -> np.ndarray:
    """The least gain tied with a k-th of `gain` (growing with it)."""
    return gain - tolerance * np.maximum(1.0, np.abs(gain))


def keep_best(
    query: np.ndarray, gains: np.ndarray, n_queries: int, k: int, tolerance: float
) -> tuple[np.ndarray, np.ndarray]:
    """Which candidates stay (each query's k best and their ties), and each query's cutoff
    (-inf where it has fewer than k candidates: all stay)."""
    order = np.lexsort((-gains, query))
    counts = np.bincount(query, minlength=n_queries)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    full = np.flatnonzero(counts >= k)
    cut = np.full(n_queries, -np.inf)
    cut[full] = cutoff(gains[order[starts[full] + k - 1]], tolerance)
    return gains >= cut[query], cut


def merge_partials(parts: Sequence[Partial], k: int, tolerance: float) -> Partial:
    """The partials of one query block over disjoint rows (shards) as one: n_eligible summed,
    the candidates cut to each query's k best and their ties."""
    n_eligible = np.stack([p.n_eligible for p in parts]).sum(axis=0, dtype=np.int64)
    query = np.concatenate([p.query for p in parts])
    gains = np.concatenate([p.gains for p in parts])
    ids = pa.concat_arrays([p.ids.cast(pa.string()) for p in parts])
    keep, _ = keep_best(query, gains, len(n_eligible), k, tolerance)
    return Partial.of(query[keep], ids.filter(pa.array(keep)), gains[keep], n_eligible)


@dataclass(frozen=True)
class TruthLists:
    """A merged partial as truth lists: each row's 1-based rank and whether it is a tied extra
    (past min(k, n_eligible))."""

    partial: Partial
    rank: np.ndarray  # int32
    tied: np.ndarray  # bool


def truth_lists(part: Partial, k: int) -> TruthLists:
    counts = np.bincount(part.query, minlength=len(part.n_eligible))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    rank = (np.arange(len(part.query)) - starts[part.query] + 1).astype(np.int32)
    return TruthLists(part, rank, rank > k)
