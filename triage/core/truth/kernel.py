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
RESCORE_ROWS = 128  # candidates rescored in float64 at a time (their temporaries stay in cache)
# A group's eligible rows are gathered (a copy) when fewer than GATHER × (its queries) × (the
# block's rows); else its queries join the block-wide product and its ineligible hits are dropped.
# Measured: a gathered row costs ~100x a query-row pair of a large product.
GATHER = 0.01
HELD_BYTES = 256 << 20  # the filtered groups' eligible rows held before their queries scan them


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


@dataclass(frozen=True)
class _Rows:
    """Rows to score: their float32 embeddings as stored (rescored from) and their ids."""

    x: np.ndarray
    ids: pa.Array

    def take(self, at: np.ndarray) -> _Rows:
        return _Rows(self.x[at], self.ids.take(pa.array(at)))

    @classmethod
    def joined(cls, parts: list[_Rows]) -> _Rows:
        if len(parts) == 1:
            return parts[0]
        return cls(np.concatenate([p.x for p in parts]), pa.concat_arrays([p.ids for p in parts]))


@dataclass(frozen=True)
class _Form:
    """Rows as the float32 products take them: normalised under cosine; under ip and l2 moved by
    their mean (`centre`), so that the products' rounding scales with the rows' spread, not with
    their distance from the origin. `nr2`: the moved rows' squared lengths (l2); `reach`: a bound
    on their lengths."""

    xa: np.ndarray
    nr2: np.ndarray
    centre: np.ndarray | None  # float64 (d,); None under cosine
    reach: float


@dataclass(frozen=True)
class _Frame:
    """Per query of a pass: the float32 error bound `m`, the offset between the product and the
    gain (ip: q·centre), and the squared length of the moved query (l2)."""

    m: np.ndarray
    off: np.ndarray
    qn2: np.ndarray


class _Scan:
    def __init__(self, job: Job) -> None:
        self.job = job
        q = job.vectors
        self.n, self.d = q.shape
        self.q64 = q.astype(np.float64)
        self.qn = np.sqrt((self.q64 * self.q64).sum(axis=1))
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
        self.held: dict[int, list[_Rows]] = {}  # per filtered group: its few eligible rows, copied
        self.held_bytes = 0

    # -- the bounds, per query of a pass --------------------------------------------------------

    def _form(self, x: np.ndarray) -> _Form:
        if self.job.metric == "cosine":
            nr2 = np.einsum("ij,ij->i", x, x)
            return _Form(x / np.sqrt(nr2)[:, None], nr2, None, 1.0)
        c32 = x.mean(axis=0, dtype=np.float64).astype(np.float32)
        centre = c32.astype(np.float64)  # the float32 centre, exactly: products and offsets agree
        xa = x - c32
        nr2 = np.einsum("ij,ij->i", xa, xa)
        return _Form(xa, nr2, centre, float(np.sqrt(float(nr2.max()))) * (1 + 1e-3))

    def _frame(self, qs: np.ndarray, form: _Form) -> tuple[np.ndarray, _Frame]:
        """The pass's float32 queries and its frame. The margin bounds |product − exact| for any
        order of summation: γ_d ≈ d·U times the vectors' lengths, with room for the rounding of
        the normalised or moved vectors themselves."""
        unit = SAFETY * (self.d + 2) * U
        zero = np.zeros(len(qs))
        if form.centre is None:
            return self.qa[qs], _Frame(np.full(len(qs), unit), zero, zero)
        if self.job.metric == "ip":  # q·r = q·(r − c) + q·c
            return self.qa[qs], _Frame(unit * self.qn[qs] * form.reach, self.q64[qs] @ form.centre, zero)
        moved = self.q64[qs] - form.centre
        qa = np.ascontiguousarray(self.qa[qs] - form.centre.astype(np.float32))
        qn2 = (moved * moved).sum(axis=1)
        return qa, _Frame(unit * (2 * np.sqrt(qn2) * form.reach + form.reach**2), zero, qn2)

    def _lower(self, a: np.ndarray, f: _Frame, at: np.ndarray) -> np.ndarray:
        """The least exact gain a row of product `a` can have (`at`: the queries' places in the
        frame)."""
        if self.job.metric == "l2":  # a = 2(q−c)·(r−c) − ‖r−c‖² = ‖q−c‖² − dist²
            return -np.sqrt(np.maximum(f.qn2[at] - a + f.m[at], 0.0))
        return a + f.off[at] - f.m[at]

    def _threshold(self, cut: np.ndarray, f: _Frame) -> np.ndarray:
        """The least product of a row whose exact gain can reach `cut` (per query of the frame)."""
        if self.job.metric == "l2":
            return f.qn2 - cut * cut - f.m
        return cut - f.off - f.m

    # -- a block ------------------------------------------------------------------------------

    def add(self, block: Block) -> None:
        rows = len(block.ids)
        if rows == 0:
            return
        whole = _Rows(block.vectors, block.ids)
        dense: list[tuple[np.ndarray, np.ndarray | None]] = []
        for g, mask in enumerate(block.eligible):
            n_e = rows if mask is None else int(np.count_nonzero(mask))
            self.n_eligible[g] += n_e
            if n_e == 0 or len(self.members[g]) == 0:
                continue
            if mask is None or n_e >= GATHER * len(self.members[g]) * rows:
                dense.append((self.members[g], mask))
                continue
            at = np.flatnonzero(mask)
            self.held.setdefault(g, []).append(whole.take(at))
            self.held_bytes += whole.x.itemsize * whole.x.shape[1] * len(at)
        if dense:
            form = self._form(whole.x)
            qs_all = np.concatenate([m for m, _ in dense])
            admits = np.stack([np.ones(rows, bool) if mask is None else mask for _, mask in dense])
            which = np.concatenate([np.full(len(m), i) for i, (m, _) in enumerate(dense)])
            step = _query_rows(rows)
            for first in range(0, len(qs_all), step):
                part = slice(first, first + step)
                self._pass(qs_all[part], whole, form, (which[part], admits))
        if self.held_bytes > HELD_BYTES:
            self._release()
        self._prune()

    def _release(self) -> None:
        """The held rows of each filtered group, scanned by its queries at once."""
        for g, parts in self.held.items():
            rows = _Rows.joined(parts)
            form = self._form(rows.x)
            for qs in _chunks(self.members[g], _query_rows(len(rows.ids))):
                self._pass(qs, rows, form, None)
        self.held, self.held_bytes = {}, 0

    def _pass(
        self, qs: np.ndarray, rows: _Rows, form: _Form, masked: tuple[np.ndarray, np.ndarray] | None
    ) -> None:
        """Queries `qs` against `rows`, their hits rescored and pooled. `masked`: per query, its
        row of the admission matrix (groups × rows); None: every row admitted."""
        qa, f = self._frame(qs, form)
        s = qa @ form.xa.T
        if self.job.metric == "l2":
            s *= 2
            s -= form.nr2[None, :]
        theta = self._threshold(self.cut[qs], f)
        fresh = np.flatnonzero(np.isneginf(theta))
        if len(fresh):
            theta[fresh] = self._first(s, fresh, f, masked)
        qi, cj = np.divmod(np.flatnonzero(s >= _down(theta)[:, None]), s.shape[1])  # 8x np.nonzero's speed
        if masked is not None:
            qi, cj = _admitted(qi, cj, masked)
        a = s[qi, cj].astype(np.float64)
        del s
        keep = a >= self._tightened(a, qi, qs, f)[qi]
        qi, cj = qi[keep], cj[keep]
        if len(qi) == 0:
            return
        self.pool_q.append(qs[qi])
        self.pool_g.append(self._exact(qs[qi], rows.x, cj))
        self.pool_ids.append(rows.ids.take(pa.array(cj)))

    def _first(
        self, s: np.ndarray, fresh: np.ndarray, f: _Frame, masked: tuple[np.ndarray, np.ndarray] | None
    ) -> np.ndarray:
        """A first threshold for queries with fewer than k candidates known: from the k-th best
        product in a sample of the columns (-inf where the sample holds fewer)."""
        k = self.job.k
        width = min(s.shape[1], max(1024, 8 * k))
        if width < k:
            return np.full(len(fresh), -np.inf)
        sample = s[fresh, :width].copy()
        if masked is not None:
            which, admits = masked
            sample[~admits[which[fresh], :width]] = -np.inf
        kth = np.partition(sample, width - k, axis=1)[:, width - k].astype(np.float64)
        cut = cutoff(self._lower(kth, f, fresh), self.job.tolerance)
        theta = self._threshold(cut, _Frame(f.m[fresh], f.off[fresh], f.qn2[fresh]))
        theta[~np.isfinite(kth)] = -np.inf
        return theta

    def _tightened(self, a: np.ndarray, qi: np.ndarray, qs: np.ndarray, f: _Frame) -> np.ndarray:
        """Per query of the pass, the product threshold from the k-th best hit and the pool."""
        cut = self.cut[qs].copy()
        k = self.job.k
        if len(a) >= k:
            order = np.lexsort((-a, qi))
            counts = np.bincount(qi, minlength=len(qs))
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            full = np.flatnonzero(counts >= k)
            kth = a[order[starts[full] + k - 1]]
            cut[full] = np.maximum(cut[full], cutoff(self._lower(kth, f, full), self.job.tolerance))
        return self._threshold(cut, f)

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
        self._release()
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
