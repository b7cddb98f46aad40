"""Membership in a large id column (a corpus's 2M chunk ids) by fingerprint, without a string
hash table: `IdIndex`.

The ids' 64-bit fingerprints (`ids.fingerprint`: every byte and the length) go into an
open-addressing table of about four slots an id; a look-up is a few integer gathers for all
values at once. A value is present when its fingerprint is an indexed id's. Equal strings have
equal fingerprints, so an id reported absent is absent; a different id taken for present needs a
64-bit collision, about m·n/2^64 for m distinct values against n ids (2·10^-7 at 2M against 2M).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from triage.core import ids

_FREE = np.uint64(0)  # a free slot; a fingerprint of 0 is stored and sought as 1


def _keys(fp: np.ndarray) -> np.ndarray:
    return np.where(fp == _FREE, np.uint64(1), fp)


@dataclass(frozen=True)
class IdIndex:
    """`table`: each slot's fingerprint (0: free), about four slots an id; `rows`: the slot's
    position among the ids (int32; of the first id given a fingerprint twice)."""

    table: np.ndarray
    rows: np.ndarray

    @classmethod
    def build(cls, fp: np.ndarray) -> IdIndex:
        """The index of ids with fingerprints `fp`."""
        keys = _keys(fp)
        size = 1 << max(4, int(len(keys) * 4 - 1).bit_length())
        table, claimed = np.zeros(size, np.uint64), np.full(size, -1, np.int64)
        slot = (keys & np.uint64(size - 1)).astype(np.int64)
        pending = np.arange(len(keys), dtype=np.int64)
        while len(pending):  # linear probing, all ids at once
            s = slot[pending]
            held = np.take(table, s)
            free = held == _FREE
            claim, s_free = pending[free], s[free]
            claimed[s_free[::-1]] = claim[::-1]  # several claims on one free slot: one id wins
            won = claimed[s_free] == claim
            table[s_free[won]] = keys[claim[won]]
            done = ~free & (held == keys[pending])  # the fingerprint is already there
            done[np.flatnonzero(free)[won]] = True
            pending = pending[~done]
            slot[pending] = (slot[pending] + 1) & (size - 1)
        return cls(table, claimed.astype(np.int32))

    def contains(self, fp: np.ndarray, batch: int = ids.BATCH) -> np.ndarray:
        """Whether the value with each fingerprint of `fp` is among the ids (bool), `batch`
        values at a time (small temporaries)."""
        out = np.empty(len(fp), bool)
        for first in range(0, len(fp), batch):
            out[first : first + batch] = self._contains(_keys(fp[first : first + batch]))
        return out

    def find(self, fp: np.ndarray, batch: int = ids.BATCH) -> np.ndarray:
        """Position among the ids of the value with each fingerprint of `fp` (int64; -1: absent)."""
        out = np.empty(len(fp), np.int64)
        for first in range(0, len(fp), batch):
            slot = self._slots(_keys(fp[first : first + batch]))
            out[first : first + len(slot)] = np.where(slot >= 0, np.take(self.rows, np.maximum(slot, 0)), -1)
        return out

    def _contains(self, keys: np.ndarray) -> np.ndarray:
        return self._slots(keys) >= 0

    def _slots(self, keys: np.ndarray) -> np.ndarray:
        """The slot holding each key (int64; -1: absent)."""
        mask = len(self.table) - 1
        slot = (keys & np.uint64(mask)).astype(np.int64)  # int64: numpy gathers by uint64 slowly
        out = np.full(len(keys), -1, np.int64)
        held = np.take(self.table, slot)
        hit = held == keys
        out[hit] = slot[hit]
        todo = np.flatnonzero(~hit & (held != _FREE))  # a free slot ends the probe: absent
        while len(todo):
            slot[todo] = (slot[todo] + 1) & mask
            held = np.take(self.table, slot[todo])
            hit = held == keys[todo]
            out[todo[hit]] = slot[todo[hit]]
            todo = todo[~hit & (held != _FREE)]
        return out
