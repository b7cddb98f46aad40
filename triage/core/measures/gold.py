"""Gold labels encoded for the metrics: chunk ids against a gold vocabulary, pairs as integers.

A (query, chunk) pair is the int64 key `query * KEY + code`, where `code` indexes `vocabulary`.
`gold_hits` finds, in one pass over an arm's ranked lists, where each query's own gold sits;
`with_query` and `query_hits` redo that for a single query, which is what an amendment changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.ids import codes
from triage.core.measures.metrics import GoldHits, GoldSets

KEY = np.int64(1 << 32)


@dataclass(frozen=True)
class Gold:
    """The effective gold set. keys/grade: sorted pair keys and their grades; `frozen_keys`: the
    sorted keys the frozen file alone makes gold (amendments add to `keys`, never to these)."""

    vocabulary: pa.Array
    keys: np.ndarray
    grade: np.ndarray
    sets: GoldSets
    frozen_keys: np.ndarray

    @cached_property
    def fingerprints(self) -> np.ndarray:
        """`codes.fingerprint` of each vocabulary id (uint64), computed once for both arms."""
        return codes.fingerprint(self.vocabulary)


def _sets(q: np.ndarray, code: np.ndarray, grade: np.ndarray, n: int) -> GoldSets:
    by_query = np.lexsort((-grade, q))
    return GoldSets(
        q[by_query], grade[by_query], code[by_query], np.bincount(q, minlength=n).astype(np.int64)
    )


def encode_gold(
    table: pa.Table,
    frozen: pa.Table,
    query_ids: pa.Array,
    q: np.ndarray | None = None,
    coded: tuple[pa.Array, np.ndarray] | None = None,
) -> Gold:
    """`table`: the effective (query_id, chunk_id, relevance ≥ 1) rows, one per pair;
    `frozen`: the frozen file's gold rows (a subset of `table`'s pairs). Rows of a query outside
    `query_ids` (an amendment naming an unknown query; reported by a check) are left out. `q`:
    each row's position in `query_ids` (int64), when already known; `coded`: the rows' chunk ids'
    `codes.coded_distinct`, when already computed."""
    same = table is frozen  # no amendment in force: the frozen pairs are these very rows
    q = codes.encode(table.column("query_id"), query_ids).astype(np.int64) if q is None else q
    known = q >= 0
    if not known.all():
        table, q, coded = table.filter(pa.array(known)), q[known], None  # coded over other rows
    vocabulary, code = codes.coded_distinct(table.column("chunk_id")) if coded is None else coded
    grade = table.column("relevance").to_numpy().astype(np.int64)
    keys = q * KEY + code
    order = np.argsort(keys, kind="stable")
    if same:
        frozen_keys = keys[order]
    else:
        fq = codes.encode(frozen.column("query_id"), query_ids).astype(np.int64)
        fc = codes.encode(frozen.column("chunk_id"), vocabulary).astype(np.int64)
        frozen_keys = np.sort(fq * KEY + fc)
    return Gold(vocabulary, keys[order], grade[order], _sets(q, code, grade, len(query_ids)), frozen_keys)


SLOTS = 8  # a query's first SLOTS gold ids are found by fingerprint; any further by hash look-up


def gold_hits(
    lists: pa.ListArray,
    row_query: np.ndarray,
    gold: Gold,
    fp: np.ndarray | None = None,
    repeats: bool = True,
) -> GoldHits:
    """Positions where a run retrieved a gold id of that very query (first occurrence only;
    `repeats` False: no list holds an id twice, so none needs dropping).

    Each row is compared with its own query's gold only: for g < SLOTS, the g-th gold id's
    fingerprint against every fingerprint of the row (integer compares, no string hashing), then
    the few equal fingerprints confirmed by exact string comparison. A query with more than SLOTS
    gold ids is looked up in a hash table of the gold vocabulary instead. `fp`: the lists'
    `codes.list_fingerprints`, when already computed."""
    flat = lists.flatten()
    fp = codes.list_fingerprints(lists) if fp is None else fp
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    lengths = np.diff(offsets)
    s = gold.sets
    first_gold = np.cumsum(s.n_gold) - s.n_gold  # each query's first entry in `s`
    n_gold = s.n_gold[row_query]  # per row
    many = n_gold > SLOTS
    vocab_fp = gold.fingerprints
    # Per candidate: its flat position, its row, the gold code and grade it may be.
    where_parts, row_parts, code_parts, grade_parts = [], [], [], []
    rows = max(1, codes.BATCH // max(int(np.median(lengths)) if len(lengths) else 1, 1))
    for r0 in range(0, len(lengths), rows):  # about codes.BATCH ids a batch: temporaries in the cache
        r1 = min(r0 + rows, len(lengths))
        lo = offsets[r0]
        part = fp[lo : offsets[r1]]
        depth = int(lengths[r0])
        if depth and (lengths[r0:r1] == depth).all():  # equally deep lists: a matrix, row by row
            grid = part.reshape(r1 - r0, depth)
            slots = np.where(many[r0:r1], 0, np.minimum(n_gold[r0:r1], SLOTS))
            base = first_gold[row_query[r0:r1]]
            sel = np.arange(r1 - r0)
            for g in range(int(slots.max(initial=0))):  # the g-th gold of the rows that have one
                sel = sel[slots[sel] > g]
                entry = base[sel] + g
                code = s.code[entry]
                rows_g = grid if len(sel) == len(grid) else grid[sel]
                hit = np.flatnonzero(rows_g == vocab_fp[code][:, None])
                r, c = np.divmod(hit, depth)
                where_parts.append(lo + sel[r] * depth + c)
                row_parts.append(r0 + sel[r])
                code_parts.append(code[r])
                grade_parts.append(s.grade[entry[r]])
            continue
        row_of = np.repeat(np.arange(r0, r1), lengths[r0:r1])
        for g in range(min(int(n_gold[r0:r1].max(initial=0)), SLOTS)):
            has = (n_gold[r0:r1] > g) & ~many[r0:r1]
            entry = np.minimum(first_gold[row_query[r0:r1]] + g, len(s.code) - 1)  # the g-th gold
            code = np.where(has, s.code[entry], -1)
            slot_fp = vocab_fp[code] if len(vocab_fp) else np.zeros(len(code), np.uint64)
            cand = np.flatnonzero(part == slot_fp[row_of - r0])
            row = row_of[cand] - r0
            keep = has[row]
            cand, row = cand[keep], row[keep]
            where_parts.append(lo + cand)
            row_parts.append(r0 + row)
            code_parts.append(code[row])
            grade_parts.append(s.grade[entry[row]])
    if many.any():  # rows whose query has more than SLOTS gold ids: a look-up of every id
        at = np.flatnonzero(np.repeat(many, lengths))
        code = codes.encode(flat.take(pa.array(at)), gold.vocabulary).astype(np.int64)
        at, code = at[code >= 0], code[code >= 0]
        row = np.searchsorted(offsets, at, side="right") - 1
        keys = row_query[row] * KEY + code
        j = np.minimum(np.searchsorted(gold.keys, keys), max(len(gold.keys) - 1, 0))
        pair = (gold.keys[j] == keys) if len(gold.keys) else np.zeros(len(keys), bool)  # that query's
        where_parts.append(at[pair])
        row_parts.append(row[pair])
        code_parts.append(code[pair])
        grade_parts.append(gold.grade[j[pair]])
    where, row, code, grade = (
        np.concatenate(p) if p else np.zeros(0, np.int64)
        for p in (where_parts, row_parts, code_parts, grade_parts)
    )
    if len(where):  # equal fingerprints: confirm the strings are equal
        same = pc.equal(flat.take(pa.array(where)), gold.vocabulary.take(pa.array(code)))
        ok = same.to_numpy(zero_copy_only=False)
        where, row, code, grade = where[ok], row[ok], code[ok], grade[ok]
    q = row_query[row]
    rank = where - offsets[row] + 1
    if repeats:  # an id listed twice counts once, at its first rank
        keys = q * KEY + code
        order = np.lexsort((rank, keys))
        keys, q, rank, grade, code = keys[order], q[order], rank[order], grade[order], code[order]
        first = np.r_[True, keys[1:] != keys[:-1]] if len(keys) else np.zeros(0, bool)
        q, rank, grade, code = q[first], rank[first], grade[first], code[first]
    # By query, then rank: one key, stably sorted (fast when the run lists its queries in order).
    order = np.argsort(q * (int(lengths.max(initial=0)) + 1) + rank, kind="stable")
    return GoldHits(q[order], rank[order], grade[order].astype(np.int64), code[order].astype(np.int64))


def coded(chunk_ids: list[str], vocabulary: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Codes of a few `chunk_ids` in `vocabulary` (int64), the vocabulary grown by those it lacks:
    one scan of the vocabulary for the few ids, no hash table of it."""
    found = codes.positions_in(chunk_ids, vocabulary)
    new = list(dict.fromkeys(c for c, code in zip(chunk_ids, found.tolist(), strict=True) if code < 0))
    if new:
        start = len(vocabulary)
        vocabulary = pa.concat_arrays([vocabulary, pa.array(new, pa.string())])
        where = {c: start + i for i, c in enumerate(new)}
        found = np.array(
            [code if code >= 0 else where[c] for c, code in zip(chunk_ids, found.tolist(), strict=True)],
            np.int64,
        )
    return vocabulary, found


def with_query(gold: Gold, q: int, pairs: list[tuple[str, int]]) -> Gold:
    """`gold` with query `q`'s gold set replaced by `pairs` (chunk id, grade ≥ 1).

    Costs one scan of the vocabulary for the few ids (no hash table of the vocabulary) and copies
    of the sorted arrays: a few milliseconds at 100,000 queries."""
    chunk_ids = [c for c, _ in pairs]
    vocabulary, codes = coded(chunk_ids, gold.vocabulary)
    grades = np.array([g for _, g in pairs], np.int64)
    # q's block of keys sits between the other queries' blocks: sort the block alone.
    block = np.argsort(q * KEY + codes, kind="stable")
    lo, hi = np.searchsorted(gold.keys, [q * KEY, (q + 1) * KEY])
    keys = np.concatenate([gold.keys[:lo], (q * KEY + codes)[block], gold.keys[hi:]])
    grade = np.concatenate([gold.grade[:lo], grades[block], gold.grade[hi:]])
    s = gold.sets
    lo, hi = np.searchsorted(s.query, [q, q + 1])
    by_grade = np.argsort(-grades, kind="stable")
    sets = GoldSets(
        np.concatenate([s.query[:lo], np.full(len(pairs), q, np.int64), s.query[hi:]]),
        np.concatenate([s.grade[:lo], grades[by_grade], s.grade[hi:]]),
        np.concatenate([s.code[:lo], codes[by_grade], s.code[hi:]]),
        s.n_gold.copy(),
    )
    sets.n_gold[q] = len(pairs)
    return Gold(vocabulary, keys, grade, sets, gold.frozen_keys)


def query_hits(ranked: list[str], q: int, gold: Gold) -> GoldHits:
    """Where query `q`'s gold sits in one ranked list (first occurrence of each id)."""
    lo, hi = np.searchsorted(gold.keys, [q * KEY, (q + 1) * KEY])
    codes = (gold.keys[lo:hi] % KEY).tolist()
    names = gold.vocabulary.take(pa.array(codes, pa.int64())).to_pylist() if codes else []
    mine = {
        name: (code, grade)
        for name, code, grade in zip(names, codes, gold.grade[lo:hi].tolist(), strict=True)
    }
    rank, grade, code = [], [], []
    for i, chunk in enumerate(ranked, start=1):
        if chunk in mine:
            c, g = mine.pop(chunk)  # popped: a repeated id counts once, at its first rank
            rank.append(i)
            grade.append(g)
            code.append(c)
    n = len(rank)
    return GoldHits(
        np.full(n, q, np.int64), np.array(rank, np.int64), np.array(grade, np.int64), np.array(code, np.int64)
    )


def splice(hits: GoldHits, q: int, new: GoldHits) -> GoldHits:
    """`hits` with query `q`'s entries replaced by `new`'s (both sorted by query, rank)."""
    lo, hi = np.searchsorted(hits.query, [q, q + 1])
    return GoldHits(
        *(
            np.concatenate([old[:lo], add, old[hi:]])
            for old, add in (
                (hits.query, new.query),
                (hits.rank, new.rank),
                (hits.grade, new.grade),
                (hits.code, new.code),
            )
        )
    )


def frozen_only(hits: GoldHits, gold: Gold) -> tuple[GoldHits, GoldSets]:
    """The hits and gold sets the frozen file alone would give."""
    keep = np.isin(hits.query * KEY + hits.code, gold.frozen_keys)
    s = gold.sets
    keep_sets = np.isin(s.query * KEY + s.code, gold.frozen_keys)
    n_gold = np.bincount(s.query[keep_sets], minlength=len(s.n_gold)).astype(np.int64)
    return (
        GoldHits(hits.query[keep], hits.rank[keep], hits.grade[keep], hits.code[keep]),
        GoldSets(s.query[keep_sets], s.grade[keep_sets], s.code[keep_sets], n_gold),
    )


@dataclass(frozen=True)
class JudgedPairs:
    """Every judged (query, chunk) pair, gold or judged not relevant: sorted int64 keys
    `query * KEY + code`, `code` indexing `vocabulary` (the judged chunk ids)."""

    vocabulary: pa.Array
    keys: np.ndarray

    def chunks_of(self, q: int) -> list[str]:
        """The chunk ids paired with query index `q` (a binary search of the sorted keys)."""
        lo, hi = np.searchsorted(self.keys, [q * KEY, (q + 1) * KEY]).tolist()
        return [] if hi <= lo else list(self.vocabulary.take(pa.array(self.keys[lo:hi] % KEY)).to_pylist())


def encode_judged(table: pa.Table, query_ids: pa.Array) -> JudgedPairs:
    """`table`: (query_id, chunk_id) rows of every judgement in force, any grade."""
    q = codes.encode(table.column("query_id"), query_ids).astype(np.int64)
    keep = q >= 0
    chunks = table.column("chunk_id").filter(pa.array(keep)) if not keep.all() else table.column("chunk_id")
    vocabulary, code = codes.coded_distinct(chunks)
    return JudgedPairs(vocabulary, np.unique(q[keep] * KEY + code))


def pairs_of(gold: Gold) -> JudgedPairs:
    """The gold pairs in the shape of `JudgedPairs` (the same sorted keys over the gold vocabulary)."""
    return JudgedPairs(gold.vocabulary, gold.keys)


def _lookup(pairs: JudgedPairs, q: np.ndarray, chunks: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """For each (q[i], chunks[i]): whether it is one of `pairs` (bool) and its pair key."""
    if len(pairs.keys) == 0 or len(q) == 0:
        return np.zeros(len(q), bool), np.zeros(len(q), np.int64)
    code = codes.encode(chunks, pairs.vocabulary).astype(np.int64)
    keys = q * KEY + code
    j = np.minimum(np.searchsorted(pairs.keys, keys), len(pairs.keys) - 1)
    return (code >= 0) & (pairs.keys[j] == keys), keys


def contains(pairs: JudgedPairs, q: np.ndarray, chunks: pa.Array) -> np.ndarray:
    """Whether each (q[i], chunks[i]) is one of `pairs` (bool), vectorised."""
    return _lookup(pairs, q, chunks)[0]


def judged_in_top(
    lists: pa.ListArray, row_query: np.ndarray, judged: JudgedPairs, k: int | np.ndarray, n: int
) -> np.ndarray:
    """Per query (of n), how many distinct ids of `judged` pairs of that query sit among the first
    k retrieved (k: an int, or one per query; int64); one vectorised pass over the top k of every
    list, none when it is empty."""
    if len(judged.keys) == 0:
        return np.zeros(n, np.int64)
    cuts = k.astype(np.int64) if isinstance(k, np.ndarray) and k.ndim else None
    top = pc.list_slice(lists, 0, int(k) if cuts is None else int(cuts.max(initial=0)))
    parents = pc.list_parent_indices(top).to_numpy()
    q = row_query[parents]
    flat = top.flatten()
    if cuts is not None:  # each query's own cut: an id's place in its list below it
        starts = top.offsets.to_numpy()[:-1] - top.offsets[0].as_py()
        keep = np.arange(len(parents)) - starts[parents] < cuts[q]
        q, flat = q[keep], flat.filter(pa.array(keep))
    hit, keys = _lookup(judged, q, flat)
    found = np.unique(keys[hit])  # an id listed twice counts once
    return np.bincount((found // KEY).astype(np.int64), minlength=n).astype(np.int64)


def judged_in_list(ranked: list[str], q: int, judged: JudgedPairs, k: int) -> int:
    """The same count for one query's list (after a judgement changed that query)."""
    lo, hi = np.searchsorted(judged.keys, [q * KEY, (q + 1) * KEY])
    codes = (judged.keys[lo:hi] % KEY).tolist()
    names = set(judged.vocabulary.take(pa.array(codes, pa.int64())).to_pylist()) if codes else set()
    return len(names & set(ranked[:k]))


def with_judged(judged: JudgedPairs, q: int, chunk_ids: list[str]) -> JudgedPairs:
    """`judged` with query `q`'s judged chunks replaced by `chunk_ids`."""
    vocabulary, codes = coded(chunk_ids, judged.vocabulary)
    lo, hi = np.searchsorted(judged.keys, [q * KEY, (q + 1) * KEY])
    mine = np.unique(q * KEY + codes.astype(np.int64))
    return JudgedPairs(vocabulary, np.concatenate([judged.keys[:lo], mine, judged.keys[hi:]]))
