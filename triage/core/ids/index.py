"""Membership in a large id column (a corpus's 2M chunk ids) by fingerprint, without a string
hash table: `IdIndex`, and `CorpusIds`, the corpus's ids with their index and rows.

The ids' 64-bit fingerprints (`codes.fingerprint`: every byte and the length) go into an
open-addressing table of about four slots an id; a look-up is a few integer gathers for all
values at once. A value is present when its fingerprint is an indexed id's. Equal strings have
equal fingerprints, so an id reported absent is absent; a different id taken for present needs a
64-bit collision, about m·n/2^64 for m distinct values against n ids (2·10^-7 at 2M against 2M).

The table is laid out from the keys sorted by their home slot (`by_slot`), not filled one probe
at a time: each key takes its home slot or the slot after the key placed before it, whichever
is later (linear probing's own layout, in one pass over memory in order). The sort is the one
the corpus's repeated-id check reads: equal fingerprints end up side by side.

Why a table of triage's own rather than a library's, measured side by side by
tests/benchmarks/bench_ids.py (2M corpus ids; the row of each of the 10M ids that 100k queries
x 100 retrieved; best of 3 rounds on 2 shared cores):

    build   find 10M  screen 25  held
    0.94 s   1.57 s   0.04 ms    96 MiB  this table (and each slot's row)
    0.81 s   17.3 s   0.04 ms    23 MiB  numpy: sorted fingerprints, `np.searchsorted`
    1.41 s   11.7 s   0.03 ms    23 MiB  the same, the sought keys sorted first
    -        4.57 s   78 ms      -       Arrow: `pc.index_in` over the fingerprints
    -        9.83 s   47 ms      -       Arrow: `pc.index_in` over the id strings

A binary search reads about 21 keys a look-up, most outside the CPU's caches; a probe here
reads one or two slots. Arrow builds its hash table inside every call (nothing kept, nothing to
cache) and answers a screen only by a scan of the 2M ids. The price of the table is memory:
four slots an id, about four times the sorted keys'. Arrow's hashing stays where the set is
small (`codes.encode` against the gold vocabulary, `Corpus.rows_of` of an unmapped corpus).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.ids import codes

_FREE = np.uint64(0)  # a free slot; a fingerprint of 0 is stored and sought as 1
_64 = np.uint64(64)


def _keys(fp: np.ndarray) -> np.ndarray:
    return np.maximum(fp, np.uint64(1))


def _bits(n: int) -> int:
    """Home slots for `n` ids: 2^bits, about four an id."""
    return max(4, int(n * 4 - 1).bit_length())


def by_slot(fp: np.ndarray) -> np.ndarray:
    """The keys of fingerprints `fp`, rotated so that their home slot's bits lead, sorted: in
    home-slot order, then by the rest. Equal fingerprints are adjacent."""
    bits, keys = np.uint64(_bits(len(fp))), _keys(fp)
    return np.sort((keys << (_64 - bits)) | (keys >> bits))


@dataclass(frozen=True)
class IdIndex:
    """`table`: each slot's fingerprint (0: free); a key's home slot is `key & mask`, and it sits
    there or in the run of filled slots after it. The table ends with a free slot: a probe
    stops there without wrapping around."""

    table: np.ndarray
    mask: int

    @classmethod
    def build(cls, fp: np.ndarray, placed: np.ndarray | None = None) -> IdIndex:
        """The index of ids with fingerprints `fp`; `placed`: `by_slot(fp)`, when computed."""
        bits = _bits(len(fp))
        rotated = by_slot(fp) if placed is None else placed
        if len(rotated):
            rotated = rotated[np.r_[True, rotated[1:] != rotated[:-1]]]  # a key given twice: once
        b = np.uint64(bits)
        keys = (rotated >> (_64 - b)) | (rotated << b)
        mask = (1 << bits) - 1
        home = (keys & np.uint64(mask)).astype(np.int64)
        i = np.arange(len(keys), dtype=np.int64)
        slot = np.maximum.accumulate(home - i) + i if len(keys) else i  # max(home, previous + 1)
        table = np.zeros(max(mask + 2, int(slot[-1]) + 2 if len(slot) else 0), np.uint64)
        table[slot] = keys
        return cls(table, mask)

    @classmethod
    def of(cls, table: np.ndarray, rows: np.ndarray, n: int) -> IdIndex | None:
        """The index of `n` ids whose `table` and `rows` (each slot's row, `rows_at`; -1: free)
        were built before (a cache's); None when they cannot be one: `table` too short for `n`
        ids' home slots or not ending with a free slot, a free slot's row not -1 or a filled slot
        without one, or the filled slots' rows not 0..n-1 once each. (Whether its keys are the
        ids' is the caller's to check.) Sequential passes but one scatter into n flags: no random
        reads of the table."""
        mask = (1 << _bits(n)) - 1
        if (
            table.dtype != np.uint64
            or rows.dtype != np.int32
            or len(table) < mask + 2
            or len(rows) != len(table)
            or table[-1] != _FREE
        ):
            return None
        filled = table != _FREE
        if not np.array_equal(filled, rows >= 0) or (rows[~filled] != -1).any():
            return None  # a row in each filled slot, and -1 in every free one
        held = rows[filled]
        if len(held) != n or (n and held.max() >= n):
            return None
        seen = np.zeros(n, bool)
        seen[held] = True  # n rows, each below n: each row once exactly when all are seen
        return cls(table, mask) if seen.all() else None

    def rows_at(self, places: np.ndarray) -> np.ndarray:
        """Each slot's row, given each row's slot `places` (int32 below 2^31 rows; -1: a free
        slot): the first row where two rows share a slot (ids sharing a fingerprint)."""
        rows = np.full(len(self.table), -1, np.int32 if len(places) < 1 << 31 else np.int64)
        rows[places[::-1]] = np.arange(len(places) - 1, -1, -1)  # the first row wins
        return rows

    def contains(self, fp: np.ndarray, batch: int = codes.BATCH) -> np.ndarray:
        """Whether the value with each fingerprint of `fp` is among the ids (bool), `batch`
        values at a time (small temporaries)."""
        out = np.empty(len(fp), bool)
        for first in range(0, len(fp), batch):
            out[first : first + batch] = self._probe(fp[first : first + batch])[1]
        return out

    def ends(self, fp: np.ndarray, batch: int = codes.BATCH) -> np.ndarray:
        """The slot where each fingerprint's probe ends (int64): the one holding it, else a free
        slot. `batch` values at a time."""
        out = np.empty(len(fp), np.int64)
        for first in range(0, len(fp), batch):
            out[first : first + batch] = self._probe(fp[first : first + batch])[0]
        return out

    def _probe(self, fp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each fingerprint's probe ends and whether its key is there."""
        keys = _keys(fp)
        slot = keys.view(np.int64) & self.mask  # int64: numpy gathers by uint64 slowly
        held = np.take(self.table, slot)
        found = held == keys
        todo = np.flatnonzero(~found)
        todo = todo[held[todo] != _FREE]
        while len(todo):
            slot[todo] += 1
            held = np.take(self.table, slot[todo])
            hit = held == keys[todo]
            found[todo[hit]] = True
            todo = todo[~hit & (held != _FREE)]
        return slot, found


class CorpusIds:
    """Every chunk id of the corpus, indexed by fingerprint (`IdIndex`) for membership and rows;
    the index is built at the first look-up (the app's corpus check runs after its first paint).
    `fp`: the ids' fingerprints and `placed`: `by_slot(fp)`, when already computed; or
    `index` and `slot_rows` (each slot's row), as the corpus cache holds them. `source`: the
    cache table whose chunk_id column these ids are (so that a look-up over the same table can
    use them without comparing 2M strings), else None."""

    def __init__(
        self,
        chunk_ids: pa.Array,
        fp: np.ndarray | None = None,
        placed: np.ndarray | None = None,
        index: IdIndex | None = None,
        slot_rows: np.ndarray | None = None,
        source: object | None = None,
    ) -> None:
        self.ids = chunk_ids
        self.source = source
        self._fp = fp
        self._placed = placed
        self._index = index
        self._rows = slot_rows  # each slot's corpus row (-1: free), for `find`: the cache's, or built
        self._lock = threading.Lock()  # two threads looking up at once build it once

    @property
    def fp(self) -> np.ndarray:
        if self._fp is None:
            self._fp = codes.fingerprint(self.ids)
        return self._fp

    @property
    def index(self) -> IdIndex:
        with self._lock:
            if self._index is None:
                placed, self._placed = self._placed, None  # the index holds what it needs of them
                self._index = IdIndex.build(self.fp, placed)
            return self._index

    def find(self, fp: np.ndarray) -> np.ndarray:
        """The corpus row of the id with each fingerprint of `fp` (int64; -1: absent; of the first
        row, for a fingerprint two ids share)."""
        index = self.index
        with self._lock:
            if self._rows is None:
                self._rows = index.rows_at(index.ends(self.fp))
        return np.take(self._rows, index.ends(fp)).astype(np.int64)  # unfound: a free slot's -1

    def __len__(self) -> int:
        return len(self.ids)

    def holds(self, fp: np.ndarray) -> np.ndarray:
        """Whether the corpus holds the id of each fingerprint of `fp` (bool)."""
        return self.index.contains(fp)

    def missing(self, chunk_ids: pa.Array, fp: np.ndarray | None = None) -> pa.Array:
        """The distinct `chunk_ids` the corpus does not hold. `fp`: their fingerprints, when known."""
        held = self.holds(codes.fingerprint(chunk_ids) if fp is None else fp)
        return pc.unique(chunk_ids.filter(pa.array(~held))) if not held.all() else pa.array([], pa.string())

    def absent(self, chunk_ids: list[str]) -> list[str]:
        """Those of `chunk_ids` that the corpus does not hold, in the order given."""
        gone = set(self.missing(pa.array(chunk_ids, pa.string())).to_pylist()) if chunk_ids else set()
        return [c for c in chunk_ids if c in gone]
