"""What the measures by name read (docs/measures.md "Measures by name"): every judgement in force
(`Judgements`) and where an arm lists its judged ids (`Positions`), in the order the measures read
its lists (`Order`), numpy over all queries at once.

An arm enters as `Positions`: every listed id that has a label, with its query, its 1-based rank
and its grade, and each list's length (the other ids count for no measure). Each kernel
(core/measures/families/) is a few masks, cumulative sums and bincounts over those arrays; no
Python loop runs per query or per rank. The conventions are trec_eval's (and so ir_measures' and
pytrec_eval's):

- relevant: grade ≥ rel (rel ≥ 1); an id absent from the labels is not relevant;
- a negative grade is what trec_eval calls "in the pool, unjudged": never relevant, not counted as
  judged non-relevant by Bpref, and dropped with the unjudged by judged_only; Judged@k counts it
  as judged (it has a label);
- nDCG's gain is the grade (grades ≤ 0 gain nothing), discount log2(rank + 1), the ideal ranking
  every positive grade of the query high to low;
- a query with no relevant id scores 0 on every measure (the means over which queries: docs/measures.md);
- an id listed twice counts once, at its first rank: the later copy is a slot with no label.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.ids import codes
from triage.core.measures.hits import positions_in_runs

KEY = np.int64(1 << 32)
NO_LABEL = np.iinfo(np.int64).min  # the grade of a listed id absent from the labels


class Order(Enum):
    """How a run's ranked list is ordered before the measures read it.

    TREC_EVAL: by score descending, ties by id descending — trec_eval's own order, whatever the
    rank column says (so do ir_measures and pytrec_eval); AS_GIVEN: the stored order."""

    TREC_EVAL = "trec_eval"
    AS_GIVEN = "as_given"


@dataclass(frozen=True)
class Judgements:
    """Every judgement in force for `n` queries: sorted pair keys `query * KEY + code` (`code`
    indexing `vocabulary`) with their grades, one per pair (a pair given twice keeps its highest
    grade)."""

    vocabulary: pa.Array
    keys: np.ndarray
    grade: np.ndarray
    n: int

    @cached_property
    def query(self) -> np.ndarray:
        return self.keys // KEY

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per query, how many of its judgements `mask` selects (int64)."""
        return np.bincount(self.query[mask], minlength=self.n).astype(np.int64)

    def n_relevant(self, rel: int) -> np.ndarray:
        """R: judged ids with grade ≥ rel, per query."""
        return self.count(self.grade >= rel)

    def n_nonrelevant(self, rel: int) -> np.ndarray:
        """N: judged ids with 0 ≤ grade < rel, per query (Bpref's)."""
        return self.count((self.grade >= 0) & (self.grade < rel))

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ideal rankings: the positive grades by query then grade descending, as (query,
        1-based rank in its query's ideal ranking, grade)."""
        keep = self.grade > 0
        q, g = self.query[keep], self.grade[keep]
        order = np.lexsort((-g, q))
        q, g = q[order], g[order]
        return q, positions_in_runs(q), g


def judgements(
    query: np.ndarray, chunk_ids: pa.Array | pa.ChunkedArray, grade: np.ndarray, n: int
) -> Judgements:
    """`Judgements` from rows: each row's query index (int64; rows with -1 are left out), chunk id
    and grade."""
    keep = query >= 0
    if not keep.all():
        chunk_ids = chunk_ids.filter(pa.array(keep))
        query, grade = query[keep], grade[keep]
    vocabulary, code = (
        codes.coded_distinct(chunk_ids) if len(query) else (pa.array([], pa.string()), np.zeros(0, np.int64))
    )
    keys = query.astype(np.int64) * KEY + code
    order = np.lexsort((-grade, keys))  # by key, the highest grade first
    keys, grade = keys[order], grade[order].astype(np.int64)
    first = np.r_[True, keys[1:] != keys[:-1]] if len(keys) else np.zeros(0, bool)
    return Judgements(vocabulary, keys[first], grade[first], n)


@dataclass(frozen=True)
class Positions:
    """One arm's judged positions, sorted by (query, rank): the query index, 1-based rank and grade
    of every listed id that has a label (a repeat of an id listed above it has none, and is not
    here). The kernels read nothing else: an id without a label is relevant to no measure, gains
    nothing and is not judged, so the lists' other ids are left out. `depth`: per query, the
    length of its list (0: absent from the run)."""

    query: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    depth: np.ndarray

    @property
    def n(self) -> int:
        return len(self.depth)

    @property
    def labelled(self) -> np.ndarray:
        """Has a judgement of any grade (Judged@k's judged)."""
        return self.grade != NO_LABEL

    @property
    def pooled(self) -> np.ndarray:
        """Judged with a grade ≥ 0 (what trec_eval's judged_only keeps)."""
        return self.grade >= 0

    def judged_only(self) -> Positions:
        """The lists with every id that has no grade ≥ 0 removed, ranks closed up (trec_eval -J)."""
        keep = self.pooled
        q = self.query[keep]
        return Positions(
            q, positions_in_runs(q), self.grade[keep], np.bincount(q, minlength=self.n).astype(np.int64)
        )

    def within(self, k: int | None) -> np.ndarray:
        """Whether each entry is within the first k (k None: the whole list; bool)."""
        return self.rank <= k if k is not None else np.ones(len(self.rank), bool)

    def found(self, k: int | None, rel: int) -> np.ndarray:
        """Per query, its relevant ids (grade ≥ rel) within the first k (int64)."""
        hits = self.within(k) & (self.grade >= rel)
        return np.bincount(self.query[hits], minlength=self.n).astype(np.int64)


def judged_positions(query: np.ndarray, rank: np.ndarray, grade: np.ndarray, depth: np.ndarray) -> Positions:
    """`Positions` from labelled entries in any order (query index, 1-based rank, grade), one per
    (query, id); `depth` per query index."""
    order = np.lexsort((rank, query))
    return Positions(
        query[order].astype(np.int64), rank[order].astype(np.int64), grade[order].astype(np.int64), depth
    )


def positions(
    lists: pa.ListArray, row_query: np.ndarray, judged: Judgements, repeats: bool = True
) -> Positions:
    """`Positions` of `lists` (row i answers query index `row_query[i]`; each query at most once).
    `repeats` False: no list holds an id twice, so none needs looking for. One hash look-up of
    every listed id in the judged vocabulary; the pair search, and the repeat check, for those it
    holds alone."""
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    lengths = np.diff(offsets)
    depth = np.zeros(judged.n, np.int64)
    depth[row_query] = lengths
    none = np.zeros(0, np.int64)
    if not len(judged.keys) or not offsets[-1]:
        return Positions(none, none, none, depth)
    code = codes.encode(lists.flatten(), judged.vocabulary)
    at = np.flatnonzero(code >= 0)
    row = np.searchsorted(offsets, at, side="right") - 1
    q = row_query[row].astype(np.int64)
    keys = q * KEY + code[at]
    j = np.minimum(np.searchsorted(judged.keys, keys), len(judged.keys) - 1)
    found = judged.keys[j] == keys
    q, keys, rank, grade = q[found], keys[found], (at - offsets[row] + 1)[found], judged.grade[j[found]]
    if repeats and len(keys):  # an id listed twice counts once, at its first rank
        order = np.lexsort((rank, keys))
        first = order[np.r_[True, keys[order][1:] != keys[order][:-1]]]
        q, rank, grade = q[first], rank[first], grade[first]
    return judged_positions(q, rank, grade, depth)


def permutation(lists: pa.ListArray, scores: pa.ListArray | None, order: Order) -> np.ndarray | None:
    """The flat positions of `lists` in `order` (see `reorder`), or None when that is the stored
    order (`in_stored_order`)."""
    unsorted = _to_reorder(lists, scores, order)
    if unsorted is None:
        return None
    s, offsets = unsorted
    lengths = np.diff(offsets)
    row = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    perm = np.lexsort((-s, row))
    tied = np.zeros(len(perm), bool)
    if len(perm) > 1:
        tied[1:] = (row[perm][1:] == row[perm][:-1]) & (s[perm][1:] == s[perm][:-1])
    if tied.any():
        group = np.cumsum(~tied) - 1
        in_run = tied | np.r_[tied[1:], False]
        at = np.flatnonzero(in_run)
        ids = lists.flatten().take(pa.array(perm[at]))
        sub = pc.sort_indices(
            pa.table({"g": group[at], "id": ids}), sort_keys=[("g", "ascending"), ("id", "descending")]
        ).to_numpy()
        perm[at] = perm[at][sub]
    return perm


def _scores(lists: pa.ListArray, scores: pa.ListArray) -> tuple[np.ndarray, np.ndarray]:
    """The scores flattened (float64) and the lists' offsets counted from 0 (int64)."""
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    return scores.flatten().to_numpy(zero_copy_only=False).astype(np.float64, copy=False), offsets


def in_stored_order(lists: pa.ListArray, scores: pa.ListArray | None, order: Order) -> bool:
    """Whether `order` reads `lists` as stored: AS_GIVEN, no scores, or scores already strictly
    descending in every list (checked vectorised, no sort)."""
    return _to_reorder(lists, scores, order) is None


def _to_reorder(
    lists: pa.ListArray, scores: pa.ListArray | None, order: Order
) -> tuple[np.ndarray, np.ndarray] | None:
    """The flat scores and offsets (`_scores`) when `order` reads `lists` otherwise than stored;
    None when it reads them as stored (`in_stored_order`)."""
    if order is Order.AS_GIVEN or scores is None:
        return None
    s, offsets = _scores(lists, scores)
    return None if _descending(s, offsets) else (s, offsets)


def _descending(s: np.ndarray, offsets: np.ndarray) -> bool:
    """Whether the scores fall strictly within every list (the order they sort into is theirs)."""
    falls = s[1:] < s[:-1]
    inner = offsets[1:-1]
    falls[inner[(inner > 0) & (inner < len(s))] - 1] = True  # a new list starts: no comparison
    return bool(falls.all())


PAIRS = 1 << 20  # (position, list member) pairs compared per numpy pass in `ranks_in_order`


def ranks_in_order(
    lists: pa.ListArray, scores: pa.ListArray | None, order: Order, at: np.ndarray
) -> np.ndarray | None:
    """The 1-based rank in `order` (see `reorder`) of each of the flat positions `at` (int64), or
    None when that is the stored order (`permutation`). No sort: each position is compared with
    the members of its own list, the number before it counted (a higher score; an equal score and
    a greater id; NaN, which sorts last, before a NaN listed later), strings compared only for the
    equal scores. More pairs than a few passes over the lists: ranked by `permutation`."""
    unsorted = _to_reorder(lists, scores, order)
    if unsorted is None:
        return None
    s, offsets = unsorted
    lengths = np.diff(offsets)
    row = np.searchsorted(offsets, at, side="right") - 1
    width = lengths[row]
    if int(width.sum()) > 4 * len(s) + PAIRS:
        perm = permutation(lists, scores, order)
        assert perm is not None
        return reordered_ranks(perm, lists, at)
    ids = lists.flatten()
    out = np.empty(len(at), np.int64)
    ends = np.cumsum(width)
    lo = 0
    while lo < len(at):
        hi = max(int(np.searchsorted(ends, ends[lo] - width[lo] + PAIRS, side="right")), lo + 1)
        out[lo:hi] = _ranks(ids, s, at[lo:hi], offsets[row[lo:hi]], width[lo:hi])
        lo = hi
    return out


def _ranks(ids: pa.Array, s: np.ndarray, at: np.ndarray, first: np.ndarray, width: np.ndarray) -> np.ndarray:
    """`ranks_in_order` for positions `at` whose lists start at `first` and hold `width` ids."""
    pos = np.repeat(np.arange(len(at), dtype=np.int64), width)
    member = np.repeat(first - (np.cumsum(width) - width), width) + np.arange(len(pos), dtype=np.int64)
    me = at[pos]
    mine, theirs = s[me], s[member]
    before = theirs > mine  # NaN is greater than nothing, and nothing is greater than NaN
    nan = np.isnan(mine)
    before |= nan & (~np.isnan(theirs) | (member < me))
    tie = np.flatnonzero((theirs == mine) & (member != me))
    if len(tie):  # equal scores: the greater id first, an equal id (listed twice) in stored order
        a, b = ids.take(pa.array(member[tie])), ids.take(pa.array(me[tie]))
        greater = pc.greater(a, b).to_numpy(zero_copy_only=False)
        equal = pc.equal(a, b).to_numpy(zero_copy_only=False)
        before[tie] = greater | (equal & (member[tie] < me[tie]))
    return np.bincount(pos[before], minlength=len(at)).astype(np.int64) + 1


def reordered_ranks(perm: np.ndarray, lists: pa.ListArray, at: np.ndarray) -> np.ndarray:
    """The 1-based rank, after `permutation` `perm`, of each of the flat positions `at` (int64)."""
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    where = np.empty(len(perm), np.int64)
    where[perm] = np.arange(len(perm), dtype=np.int64)
    row = np.searchsorted(offsets, at, side="right") - 1
    return where[at] - offsets[row] + 1


def reorder(
    lists: pa.ListArray, scores: pa.ListArray | None, order: Order
) -> tuple[pa.ListArray, pa.ListArray | None]:
    """The run table's lists in `order`. TREC_EVAL: within each list by score descending, ties by
    id descending (byte order, as trec_eval's strcmp), the stored order and any rank column
    ignored; without scores, or AS_GIVEN, the lists as stored. Vectorised: one numpy sort over
    (row, score), and a string sort of the tied ids alone (`permutation`)."""
    perm = permutation(lists, scores, order)
    if perm is None or scores is None:
        return lists, scores
    offsets = lists.offsets
    base = pa.array(offsets.to_numpy() - offsets[0].as_py(), pa.int32())
    take = pa.array(perm)
    return (
        pa.ListArray.from_arrays(base, lists.flatten().take(take)),
        pa.ListArray.from_arrays(base, scores.flatten().take(take)),
    )
