"""Id encoding: strings become integers once, then everything compares integers.

Queries are encoded against the query universe (every id any input names, first-seen order;
`evaluation.universe`).
Chunk ids are encoded against the gold vocabulary only: a ranked position matters to a metric
only if its id is gold for *some* query, so one hash look-up per retrieved id against the (small)
gold vocabulary replaces a dictionary over the whole corpus. Whether the gold id belongs to *that*
query is then an integer search over the (query, gold) pairs.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# A code for "not gold for any query".
NONE = -1
# Values per numpy pass in the batched loops over ids: 32k values make temporaries of 256 KB,
# which stay in the CPU's cache (a million at a time ran the fingerprint 1.8x slower).
BATCH = 1 << 15


def distinct(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Distinct values in order of first appearance, as one contiguous array."""
    out = pc.unique(values)
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def coded_distinct(values: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """`distinct(values)` and each value's position in it (int64), in one hashing pass."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    encoded = pc.dictionary_encode(values)
    return encoded.dictionary, encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def encode(values: pa.Array | pa.ChunkedArray, vocabulary: pa.Array) -> np.ndarray:
    """Position of each value in `vocabulary` as int32, NONE where absent."""
    if len(values) == 0:  # no hash table of the vocabulary for nothing
        return np.zeros(0, np.int32)
    idx = pc.index_in(values, value_set=vocabulary)
    if isinstance(idx, pa.ChunkedArray):
        idx = idx.combine_chunks()
    return idx.fill_null(NONE).to_numpy()


def absent_from(values: pa.Array, corpus_ids: pa.Array) -> pa.Array:
    """The distinct `values` not among `corpus_ids`; the hash table is built over the smaller side."""
    if len(values) * 4 < len(corpus_ids):
        found = corpus_ids.filter(pc.is_in(corpus_ids, value_set=values))
        return pc.unique(values.filter(pc.invert(pc.is_in(values, value_set=found))))
    return pc.unique(values.filter(pc.invert(pc.is_in(values, value_set=corpus_ids))))


def positions_in(values: list[str], vocabulary: pa.Array) -> np.ndarray:
    """Position of each of a few `values` in `vocabulary` (NONE where absent), by one scan of the
    vocabulary against the few values: no hash table of a large vocabulary is built."""
    if not values:
        return np.zeros(0, np.int64)
    few = pa.array(list(dict.fromkeys(values)), pa.string())
    where = np.flatnonzero(pc.is_in(vocabulary, value_set=few).to_numpy(zero_copy_only=False))
    found = dict(zip(vocabulary.take(pa.array(where)).to_pylist(), where.tolist(), strict=True))
    return np.array([found.get(v, NONE) for v in values], np.int64)


_KEEP = np.array([(1 << 8 * r) - 1 for r in range(9)], np.uint64)  # the low r bytes of a word


_M = np.uint64(0xFF51AFD7ED558CCD)


def _mix(x: np.ndarray) -> np.ndarray:
    """Multiply and fold, in place (uint64)."""
    x *= _M
    x ^= x >> np.uint64(29)
    return x


def string_bytes(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's offsets counted from its first string (int32, one more than strings) and
    its bytes (uint8), both read-only views of the Arrow buffers: no copy, but of the offsets of
    a slice that does not start at byte 0 (a rebased 10M-id column is a fresh 40 MB to page in)."""
    offsets = np.frombuffer(strings.buffers()[1], np.int32, len(strings) + 1, strings.offset * 4)
    base = int(offsets[0])
    data = strings.buffers()[2]
    size = int(offsets[-1]) - base
    raw = np.frombuffer(data, np.uint8, size, base) if data is not None and size else np.zeros(0, np.uint8)
    return (offsets - np.int32(base) if base else offsets), raw


def fingerprint(strings: pa.Array, batch: int = BATCH) -> np.ndarray:
    """A 64-bit hash of each string's length and every one of its bytes (uint64).

    Equal strings have equal fingerprints; unequal ones differ but for a 2^-64 chance. The bytes
    are read as 8-byte words out of a padded copy of the Arrow data, `batch` strings at a time:
    the first and the last 8 bytes of every string (a string under 8 bytes: its own bytes), then,
    for the strings longer than 16 bytes only, the words between.
    """
    if pa.types.is_large_string(strings.type):
        strings = strings.cast(pa.string())
    if len(strings) > batch:
        return np.concatenate([fingerprint(strings.slice(i, batch)) for i in range(0, len(strings), batch)])
    n = len(strings)
    if n == 0:
        return np.zeros(0, np.uint64)
    offsets, raw = string_bytes(strings)
    offsets = offsets.astype(np.intp)  # gathers with native-width indices: 0.7x the time of int32
    padded = np.zeros(len(raw) + 8, np.uint8)  # 8 zero bytes: every word is readable
    padded[: len(raw)] = raw
    words = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    start = offsets[:-1]
    length = offsets[1:] - offsets[:-1]
    first = words[start]  # bytes 0–7 (past a short string's end: cleared below)
    last = words[np.maximum(start + length - 8, 0)]  # the last 8 bytes
    short = np.flatnonzero(length < 8)
    if len(short):  # under 8 bytes: the string's own bytes, as its first and its last word
        first[short] &= _KEEP[length[short]]
        last[short] = first[short]
    h = length.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    h ^= first
    _mix(h)
    # Words 1..W with W = (length - 9) // 8: with the first and the last, every byte is read.
    live = np.flatnonzero(length > 16)
    w = 1
    while len(live):
        x = h[live]
        x ^= words[start[live] + np.int32(8 * w)]
        h[live] = _mix(x)
        w += 1
        live = live[length[live] >= 8 * w + 9]
    h ^= last
    _mix(h)
    h ^= h >> np.uint64(32)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(29)
    return h


def list_fingerprints(lists: pa.ListArray, batch: int = BATCH) -> np.ndarray:
    """`fingerprint` of every listed id, in flattened order (uint64), computed `batch` ids at a
    time: the temporaries stay small, which is what makes it fast."""
    flat = lists.flatten()
    out = np.empty(len(flat), np.uint64)
    for first in range(0, len(flat), batch):
        out[first : first + batch] = fingerprint(flat.slice(first, batch))
    return out


def _suspect_rows(fp: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Rows (of one batch) whose sorted fingerprints hold two equal neighbours."""
    if (lengths == lengths[0]).all():  # equally deep lists: a zero-copy matrix
        dense = fp.reshape(len(lengths), int(lengths[0]))
    else:
        # Padding cells hold their column number: distinct within a row, and vanishingly unlikely
        # to equal a real fingerprint (a coincidence only costs one row's exact check).
        width = int(lengths.max())
        dense = np.broadcast_to(np.arange(width, dtype=np.uint64), (len(lengths), width)).copy()
        row = np.repeat(np.arange(len(lengths)), lengths)
        dense[row, np.arange(len(row)) - (np.cumsum(lengths) - lengths)[row]] = fp
    dense.sort(axis=1)
    return np.flatnonzero((dense[:, 1:] == dense[:, :-1]).any(axis=1))


def duplicate_rows(
    lists: pa.ListArray, batch: int = BATCH, fp: np.ndarray | None = None
) -> dict[int, dict[str, list[int]]]:
    """Rows holding an id twice: {row: {id: [1-based positions]}}.

    Screened in batches of about `batch` ids: fingerprints sorted within each row, and only rows
    where two neighbours agree are read back as Python strings and confirmed exactly. Rows far
    deeper than usual are checked exactly on their own. `fp`: the lists' `list_fingerprints`,
    when already computed.
    """
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    lengths = np.diff(offsets)
    if len(lengths) == 0 or offsets[-1] == 0:
        return {}
    cap = 4 * int(np.median(lengths)) + 16
    suspects = np.flatnonzero(lengths > cap).tolist()
    rows = max(1, batch // max(int(lengths[lengths <= cap].max(initial=1)), 1))
    for first in range(0, len(lengths), rows):
        n = lengths[first : first + rows]
        if fp is None:
            part = fingerprint(lists.slice(first, rows).flatten())
        else:
            part = fp[offsets[first] : offsets[first + len(n)]].copy()  # sorted in place below
        keep = np.flatnonzero(n <= cap)
        if len(keep) < len(n):
            part = part[np.repeat(n <= cap, n)]
        if len(part) == 0:
            continue
        hits = _suspect_rows(part, n[keep])
        suspects.extend((first + keep[hits]).tolist())
    found: dict[int, dict[str, list[int]]] = {}
    for r in sorted(suspects):
        seen: dict[str, list[int]] = {}
        for i, v in enumerate(lists[r].as_py(), start=1):
            seen.setdefault(v, []).append(i)
        dups = {v: p for v, p in seen.items() if len(p) > 1}
        if dups:
            found[r] = dups
    return found
