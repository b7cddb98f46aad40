"""Id encoding: strings become integers once, then everything compares integers.

Queries are encoded against the query universe (every id any input names, first-seen order).
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


def universe(*id_columns: pa.Array | pa.ChunkedArray | None) -> pa.Array:
    """Every distinct id, in order of first appearance across the columns given."""
    parts = [c for c in id_columns if c is not None]
    chunks: list[pa.Array] = []
    for c in parts:
        chunks.extend(c.chunks if isinstance(c, pa.ChunkedArray) else [c])
    return distinct(pa.chunked_array(chunks, pa.string()))


def distinct(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Distinct values in order of first appearance, as one contiguous array."""
    out = pc.unique(values)
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def encode(values: pa.Array | pa.ChunkedArray, vocabulary: pa.Array) -> np.ndarray:
    """Position of each value in `vocabulary` as int64, NONE where absent."""
    idx = pc.index_in(values, value_set=vocabulary)
    if isinstance(idx, pa.ChunkedArray):
        idx = idx.combine_chunks()
    return idx.fill_null(NONE).to_numpy().astype(np.int64, copy=False)


def list_rows(lists: pa.ListArray) -> tuple[np.ndarray, np.ndarray]:
    """For a list array: (row of each flattened element, 0-based position within its row)."""
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets = offsets - offsets[0]
    lengths = np.diff(offsets)
    row = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    pos = np.arange(offsets[-1], dtype=np.int64) - offsets[:-1][row]
    return row, pos


def fingerprint(strings: pa.Array) -> np.ndarray:
    """A 64-bit fingerprint per string: its length and its first and last 8 bytes, mixed.

    Equal strings have equal fingerprints; unequal ones usually differ. Used to screen for
    duplicates cheaply, then confirmed by exact comparison. Reads 8-byte words straight out of
    the Arrow buffer (no copy): allocation, not arithmetic, is what costs here.
    """
    if pa.types.is_large_string(strings.type):
        strings = strings.cast(pa.string())
    n = len(strings)
    raw = strings.buffers()[2]
    data = np.frombuffer(raw, np.uint8) if raw is not None else np.zeros(0, np.uint8)
    if n == 0 or len(data) < 8:
        return np.array([hash(v) & 0xFFFFFFFFFFFFFFFF for v in strings.to_pylist()], np.uint64)
    offsets = np.frombuffer(strings.buffers()[1], np.int32, n + 1, strings.offset * 4)
    start, end = offsets[:-1], offsets[1:]
    length = (end - start).astype(np.uint64)
    # A little-endian uint64 starting at every byte of the data.
    words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    tail = words[np.maximum(end - 8, 0)]
    fp = length ^ np.uint64(0x9E3779B97F4A7C15)
    short = np.flatnonzero(length < 8)
    if len(short):  # keep only the string's own bytes: the high `length` bytes of the word
        shift = (np.uint64(8) - length[short]) * np.uint64(8)
        tail[short] = np.where(end[short] >= 8, tail[short] >> shift, 0)
        for i in short[end[short] < 8].tolist():  # at most 7 strings at the very start
            tail[i] = int.from_bytes(data[start[i] : end[i]].tobytes(), "little")
    long = length >= 8
    head = np.zeros(n, np.uint64)
    head[long] = words[start[long]]
    tail *= np.uint64(0xC2B2AE3D27D4EB4F)
    head *= np.uint64(0xFF51AFD7ED558CCD)
    fp ^= tail
    fp ^= head
    return fp


def duplicate_rows(lists: pa.ListArray) -> dict[int, dict[str, list[int]]]:
    """Rows holding an id twice: {row: {id: [1-based positions]}} (exact; vectorised screen).

    Each row's fingerprints are sorted in a dense (rows x max depth) matrix; only rows where two
    neighbours agree are read back as Python strings and confirmed.
    """
    flat = lists.flatten()
    if len(flat) == 0:
        return {}
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    lengths = np.diff(offsets)
    row, pos = list_rows(lists)
    row, pos = row.astype(np.int32), pos.astype(np.int32)
    # Rows much longer than usual are few: check them exactly; the rest fit a dense matrix.
    cap = 4 * int(np.median(lengths)) + 16
    long_rows = np.flatnonzero(lengths > cap)
    short = lengths[row] <= cap
    row, pos, fp = row[short], pos[short], fingerprint(flat)[short]
    width = max(int(lengths[lengths <= cap].max(initial=1)), 1)
    suspects = long_rows.tolist()
    step = max(1, 8_000_000 // width)  # rows per batch: at most ~8M cells
    bounds = np.searchsorted(row, np.arange(0, len(lengths) + step, step))
    for lo, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=False)):
        if a == b:
            continue
        first = lo * step
        dense = np.broadcast_to(np.arange(width, dtype=np.uint64), (step, width)).copy()
        dense[row[a:b] - first, pos[a:b]] = fp[a:b]
        dense.sort(axis=1)
        suspects.extend((first + np.flatnonzero((dense[:, 1:] == dense[:, :-1]).any(axis=1))).tolist())
    found: dict[int, dict[str, list[int]]] = {}
    for r in suspects:
        seen: dict[str, list[int]] = {}
        for i, v in enumerate(lists[r].as_py(), start=1):
            seen.setdefault(v, []).append(i)
        dups = {v: p for v, p in seen.items() if len(p) > 1}
        if dups:
            found[r] = dups
    return found
