"""The exact top-k of many queries over one shard's rows: the pure function every engine runs.

`partial_topk(job, blocks)` reads a shard's blocks once and keeps, per query, every eligible row
that can still be in its truth: its k best rows and every row tied with the k-th within the
tolerance (docs/truth.md "Definitions"). Exact, and the same bytes whatever the blocking, the
BLAS threads or the machine:

- Candidates are found in float32: one matrix product of many queries against a block's rows
  (a query group's eligible rows gathered when few, else the whole block with the ineligible
  rows dropped from the hits), compared with a running threshold per query. The threshold is
  lowered by a margin `m` that bounds the float32 error (|fl(q·r) − q·r| ≤ γ_d ‖q‖‖r‖, γ_d ≈ d·2⁻²⁴,
  for any order of summation), so no row the exact scores would keep is missed.
- Each candidate is rescored in float64 from the stored float32 values, one row at a time in a
  fixed order (numpy's pairwise sum along the row), so a score never depends on the blocking.
- The pool of candidates is cut after every block to those at or above the k-th exact score's
  cutoff: `merge.cutoff`.

Scores inside are gains, higher is better: the cosine similarity, the inner product, or minus the
Euclidean distance (l2); `merge` orders and cuts them, `output` writes the distance back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from triage.core.truth.merge import Partial, cutoff, keep_best

METRICS = ("cosine", "ip", "l2")
U = 2.0**-24  # float32's unit roundoff
SAFETY = 3.0  # the margin is SAFETY · (d + 2) · U · (the product's magnitude bound)
LOWEST = np.float32(np.finfo(np.float32).min)
QUERY_ROWS = 2048  # queries in one matrix product
SCORE_BYTES = 64 << 20  # the float32 score block of one product, at most
RESCORE_ROWS = 4096  # candidates rescored in float64 at a time
# A group's eligible rows are gathered (a copy) when fewer than GATHER × (its queries) × (the
# block's rows); else its queries join the block-wide product and its ineligible hits are dropped.
# Measured: a gathered row costs ~100x a query-row pair of a large product.
GATHER = 0.01


@dataclass(frozen=True)
class Block:
    """Consecutive rows of a shard: their chunk ids, their embeddings, and which of them each
    predicate group admits."""

    start: int  # the first row's place in its shard (0-based)
    ids: pa.Array  # chunk ids, string
    vectors: np.ndarray  # float32 (rows, d), C-contiguous
    eligible: tuple[np.ndarray | None, ...]  # per group: bool per row; None: every row


@dataclass(frozen=True)
class Job:
    """The queries one scan answers: their float32 vectors, each one's predicate group (an index
    into the shard reader's predicates), the metric, k and the tolerance."""

    vectors: np.ndarray  # float32 (queries, d)
    groups: np.ndarray  # int64 per query
    n_groups: int
    metric: str
    k: int
    tolerance: float


def partial_topk(job: Job, blocks: Iterable[Block], progress: Callable[[int], None] | None = None) -> Partial:
    """Every query's candidates over `blocks`, best first (ties by chunk id); `progress(rows)`
    after each block."""
    scan = _Scan(job)
    for block in blocks:
        scan.add(block)
        if progress is not None:
            progress(len(block.ids))
    return scan.partial()


class _Scan:
    def __init__(self, job: Job) -> None:
        self.job = job
        q = job.vectors
        self.n, self.d = q.shape
        self.q64 = q.astype(np.float64)
        self.qn = np.sqrt((self.q64 * self.q64).sum(axis=1))
        self.qn2 = self.qn * self.qn
        if job.metric == "cosine":
            self.qa = np.ascontiguousarray((self.q64 / self.qn[:, None]).astype(np.float32))
        else:
            self.qa = np.ascontiguousarray(q, dtype=np.float32)
        self.cut = np.full(self.n, -np.inf)  # per query: the gain a row needs to stay; -inf: < k known
        self.members = [np.flatnonzero(job.groups == g) for g in range(job.n_groups)]
        self.n_eligible = np.zeros(job.n_groups, np.int64)
        self.pool_q: list[np.ndarray] = []
        self.pool_g: list[np.ndarray] = []
        self.pool_ids: list[pa.Array] = []

    # -- the bounds, per query (`qs`: the queries' indices) --------------------------------------

    def _margin(self, qs: np.ndarray, reach: float) -> np.ndarray:
        """A bound on |float32 gain − exact gain| for rows of norm ≤ `reach`."""
        unit = SAFETY * (self.d + 2) * U
        if self.job.metric == "cosine":
            return np.full(len(qs), unit)
        if self.job.metric == "ip":
            return unit * self.qn[qs] * reach
        return unit * (2 * self.qn[qs] * reach + reach * reach)

    def _lower(self, a: np.ndarray, qs: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The least exact gain a row of float32 gain `a` can have."""
        if self.job.metric == "l2":  # a = 2q·r − ‖r‖² = ‖q‖² − dist²
            return -np.sqrt(np.maximum(self.qn2[qs] - a + m, 0.0))
        return a - m

    def _threshold(self, cut: np.ndarray, qs: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The least float32 gain of a row whose exact gain can reach `cut`."""
        if self.job.metric == "l2":
            return self.qn2[qs] - cut * cut - m
        return cut - m

    # -- a block ------------------------------------------------------------------------------

    def add(self, block: Block) -> None:
        x = block.vectors
        rows = len(x)
        if rows == 0:
            return
        nr2 = np.einsum("ij,ij->i", x, x)
        if self.job.metric == "cosine":
            xa = x / np.sqrt(nr2)[:, None]
            reach = 1.0
        else:
            xa = x
            reach = float(np.sqrt(float(nr2.max()))) * (1 + 1e-3)
        dense: list[tuple[np.ndarray, np.ndarray | None]] = []
        for g, mask in enumerate(block.eligible):
            n_e = rows if mask is None else int(np.count_nonzero(mask))
            self.n_eligible[g] += n_e
            members = self.members[g]
            if n_e == 0 or len(members) == 0:
                continue
            if mask is None or n_e >= GATHER * len(members) * rows:
                dense.append((members, mask))
                continue
            at = np.flatnonzero(mask)
            for qs in _chunks(members, _query_rows(len(at))):
                self._pass(qs, xa[at], nr2[at], block, at, None, reach)
        if dense:
            qs_all = np.concatenate([m for m, _ in dense])
            admits = np.stack([np.ones(rows, bool) if mask is None else mask for _, mask in dense])
            which = np.concatenate([np.full(len(m), i) for i, (m, _) in enumerate(dense)])
            step = _query_rows(rows)
            for first in range(0, len(qs_all), step):
                part = slice(first, first + step)
                self._pass(qs_all[part], xa, nr2, block, None, (which[part], admits), reach)
        self._prune()

    def _pass(
        self,
        qs: np.ndarray,
        xa: np.ndarray,
        nr2: np.ndarray,
        block: Block,
        at: np.ndarray | None,
        masked: tuple[np.ndarray, np.ndarray] | None,
        reach: float,
    ) -> None:
        """Queries `qs` against the rows `xa` (block rows `at`; None: all), their hits rescored
        and pooled. `masked`: per query, its row of the admission matrix (groups × the block's
        rows); None: every row admitted."""
        s = self.qa[qs] @ xa.T
        if self.job.metric == "l2":
            s *= 2
            s -= nr2[None, :]
        m = self._margin(qs, reach)
        theta = self._threshold(self.cut[qs], qs, m)
        fresh = np.flatnonzero(np.isneginf(theta))
        if len(fresh):
            theta[fresh] = self._first(s, fresh, qs, m, masked)
        qi, cj = np.nonzero(s >= _down(theta)[:, None])
        if masked is not None:
            qi, cj = _admitted(qi, cj, masked)
        a = s[qi, cj].astype(np.float64)
        del s
        keep = a >= self._tightened(a, qi, qs, m)[qi]
        qi, cj = qi[keep], cj[keep]
        if len(qi) == 0:
            return
        rows = cj if at is None else at[cj]
        self.pool_q.append(qs[qi])
        self.pool_g.append(self._exact(qs[qi], block.vectors, rows))
        self.pool_ids.append(block.ids.take(pa.array(rows)))

    def _first(
        self,
        s: np.ndarray,
        fresh: np.ndarray,
        qs: np.ndarray,
        m: np.ndarray,
        masked: tuple[np.ndarray, np.ndarray] | None,
    ) -> np.ndarray:
        """A first threshold for queries with fewer than k candidates known: from the k-th best
        float32 gain of a sample of the block's columns (-inf where the sample holds fewer)."""
        k = self.job.k
        width = min(s.shape[1], max(1024, 8 * k))
        if width < k:
            return np.full(len(fresh), -np.inf)
        sample = s[fresh, :width].copy()
        if masked is not None:
            which, admits = masked
            sample[~admits[which[fresh], :width]] = -np.inf
        kth = np.partition(sample, width - k, axis=1)[:, width - k].astype(np.float64)
        q = qs[fresh]
        theta = self._threshold(cutoff(self._lower(kth, q, m[fresh]), self.job.tolerance), q, m[fresh])
        theta[~np.isfinite(kth)] = -np.inf
        return theta

    def _tightened(self, a: np.ndarray, qi: np.ndarray, qs: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Per query of the pass, the float32 threshold from the k-th best hit and the pool."""
        cut = self.cut[qs].copy()
        k = self.job.k
        if len(a) >= k:
            order = np.lexsort((-a, qi))
            counts = np.bincount(qi, minlength=len(qs))
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            full = np.flatnonzero(counts >= k)
            kth = a[order[starts[full] + k - 1]]
            hit_cut = cutoff(self._lower(kth, qs[full], m[full]), self.job.tolerance)
            cut[full] = np.maximum(cut[full], hit_cut)
        return self._threshold(cut, qs, m)

    def _exact(self, qidx: np.ndarray, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The float64 gain of each (query, row) pair, from the stored float32 values."""
        out = np.empty(len(rows))
        for first in range(0, len(rows), RESCORE_ROWS):
            part = slice(first, first + RESCORE_ROWS)
            r = x[rows[part]].astype(np.float64)
            q = self.q64[qidx[part]]
            if self.job.metric == "l2":
                diff = q - r
                out[part] = -np.sqrt((diff * diff).sum(axis=1))
                continue
            dot = (q * r).sum(axis=1)
            if self.job.metric == "cosine":
                dot /= self.qn[qidx[part]] * np.sqrt((r * r).sum(axis=1))
            out[part] = dot
        return out

    def _prune(self) -> None:
        """The pool cut to each query's k best and its ties; each query's cut updated."""
        if not self.pool_q:
            return
        q = np.concatenate(self.pool_q)
        g = np.concatenate(self.pool_g)
        ids = pa.concat_arrays(self.pool_ids) if len(self.pool_ids) > 1 else self.pool_ids[0]
        keep, cut = keep_best(q, g, self.n, self.job.k, self.job.tolerance)
        self.cut = np.maximum(self.cut, cut)
        self.pool_q, self.pool_g = [q[keep]], [g[keep]]
        self.pool_ids = [ids.filter(pa.array(keep))]

    def partial(self) -> Partial:
        self._prune()
        n_eligible = self.n_eligible[self.job.groups] if self.n else np.zeros(0, np.int64)
        if not self.pool_q:
            return Partial.of(np.zeros(0, np.int32), pa.array([], pa.string()), np.zeros(0), n_eligible)
        return Partial.of(self.pool_q[0].astype(np.int32), self.pool_ids[0], self.pool_g[0], n_eligible)


def _query_rows(columns: int) -> int:
    """Queries per product so that its float32 scores stay under SCORE_BYTES."""
    return int(max(1, min(QUERY_ROWS, SCORE_BYTES // (4 * max(columns, 1)))))


def _chunks(a: np.ndarray, size: int) -> list[np.ndarray]:
    return [a[i : i + size] for i in range(0, len(a), size)]


def _down(theta: np.ndarray) -> np.ndarray:
    """float64 thresholds as float32, rounded down (never above the bound)."""
    t = theta.astype(np.float32)
    t = np.where(t.astype(np.float64) > theta, np.nextafter(t, np.float32(-np.inf)), t)
    return np.where(np.isneginf(theta), LOWEST, t).astype(np.float32)


def _admitted(
    qi: np.ndarray, cj: np.ndarray, masked: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The hits (query row, column) whose query's predicate admits the column's row."""
    which, admits = masked
    keep = admits[which[qi], cj]
    return qi[keep], cj[keep]
