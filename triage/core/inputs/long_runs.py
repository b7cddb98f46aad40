"""Runs written one row per (query, retrieved id) — the "long" layout most harnesses and
PyTerrier write — grouped into the contract's one row per query (docs/data.md "Input shapes").
Their other columns may be of any type: `same` compares values row by row at any depth (Arrow has
no `equal` kernel for lists, structs, maps or null columns)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.inputs.contract import FLOAT, ID, INT, RUN, conform, single
from triage.core.inputs.readers import Parsed, plain_array, plain_type


@dataclass(frozen=True)
class Placed(Parsed):
    """A table built from another file's rows: row i of `table` came from row `origin[i]` of
    `source`, which names the place in the file the user wrote."""

    source: Parsed | None = None
    origin: np.ndarray | None = None

    def where(self, row: int) -> str:
        if self.source is None or self.origin is None:
            return super().where(row)
        return self.source.where(int(self.origin[row]))


LONG = {"query_id": (ID, True), "chunk_id": (ID, True), "rank": (INT, False), "score": (FLOAT, False)}


def group_long(loaded: Parsed) -> Parsed:
    """A run one row per (query, retrieved id) as the contract's one row per query.

    Order within a query (trec_eval's, docs/data.md "Input shapes"): by `rank` ascending when the file
    has ranks, then by `score` descending, then by chunk id descending (trec_eval breaks score
    ties by docno descending). Queries keep the order of their first row. Other columns, of any
    type: one that holds one value per query is kept once; the contract's (`plan`, `tenant`, …)
    must; any other is kept as a list per query, in the order of `retrieved`. Vectorised: one
    sort, no loop."""
    names = loaded.table.column_names
    if "query_id" not in names or "chunk_id" not in names:
        missing = "query_id" if "query_id" not in names else "retrieved"
        raise InputError(
            loaded.path,
            f"missing required column {missing!r} (columns: {', '.join(names) or 'none'}); a run is "
            "one row per query (query_id, retrieved) or one row per retrieved id (query_id, "
            "chunk_id and rank or score)",
        )
    if "rank" not in names and "score" not in names:
        raise InputError(
            loaded.path, "a run one row per (query, id) needs a `rank` or `score` column to order the ids"
        )
    table = conform(loaded, LONG)
    for name in ("rank", "score"):
        if name in names:
            col = single(table.column(name))
            if col.null_count:
                row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
                raise InputError(loaded.path, f"{name} is empty (null)", loaded.where(row))
    encoded = pc.dictionary_encode(single(table.column("query_id")))  # codes in first-seen order
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    order = _order(table, codes, [n for n in ("rank", "score") if n in names])
    n_queries = len(encoded.dictionary)
    offsets = pa.array(np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=n_queries))]), pa.int32())
    # Codes are numbered in first-seen order: a query's first row is where the running maximum rises.
    rises = np.concatenate([[True], codes[1:] > np.maximum.accumulate(codes)[:-1]])
    first = np.flatnonzero(rises)  # row of each query's first line
    out = {
        "query_id": encoded.dictionary,
        "retrieved": pa.ListArray.from_arrays(offsets, single(table.column("chunk_id")).take(order)),
    }
    if "score" in names:
        out["scores"] = pa.ListArray.from_arrays(offsets, single(table.column("score")).take(order))
    spread = pa.array(first[codes])  # each row's query's first row
    for name in names:
        if name in LONG:
            continue
        if name == "scores":  # the name of the list built from `score`
            raise InputError(
                loaded.path,
                "holds a column 'scores' beside 'chunk_id': a run one row per (query, id) gives each "
                "id's score as 'score'",
            )
        col = single(table.column(name))
        differs = ~same(col, col.take(spread))
        if not differs.any():  # one value per query: kept once
            out[name] = col.take(pa.array(first))
        elif name in RUN:  # the contract's columns are one value per query
            row = int(np.flatnonzero(differs)[0])
            raise InputError(
                loaded.path,
                f"column {name!r} changes within query {table.column('query_id')[row].as_py()!r}; in a run "
                "one row per (query, id) the contract's columns hold one value per query",
                loaded.where(row),
            )
        else:  # a value per id: a list per query, in the order of `retrieved` (as `score` gives `scores`)
            out[name] = pa.ListArray.from_arrays(offsets, col.take(order))
    grouped = pa.table(out)
    return Placed(loaded.path, grouped, loaded.meta, source=loaded, origin=first)


def _order(table: pa.Table, codes: np.ndarray, keys: list[str]) -> np.ndarray:
    """Row order: by query code, then `rank` ascending / `score` descending, then chunk id
    descending. The id key (a string sort) is applied only within runs of rows tied on the
    others: ties are few, and a string sort of every row costs more than the rest together."""
    how = {"rank": "ascending", "score": "descending"}
    keyed = pa.table({"q": codes, **{k: table.column(k) for k in keys}})
    order = np.array(pc.sort_indices(keyed, sort_keys=[("q", "ascending"), *((k, how[k]) for k in keys)]))
    tied = np.zeros(len(order), bool)  # tied[i]: sorted row i equals row i - 1 on every key
    tied[1:] = codes[order][1:] == codes[order][:-1]
    for k in keys:
        v = single(table.column(k)).to_numpy(zero_copy_only=False)[order]
        tied[1:] &= v[1:] == v[:-1]
    if not tied.any():
        return order
    group = np.cumsum(~tied) - 1  # run number of each sorted row
    in_run = tied | np.concatenate([tied[1:], [False]])  # rows of runs longer than one
    at = np.flatnonzero(in_run)
    ids = single(table.column("chunk_id")).take(pa.array(order[at]))
    sub = pc.sort_indices(
        pa.table({"g": group[at], "id": ids}), sort_keys=[("g", "ascending"), ("id", "descending")]
    ).to_numpy()
    order[at] = order[at][sub]
    return order


def same(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Per row, whether `a` and `b` (one type, one length) hold the same value: both null, or
    equal; NaN equals NaN; lists of equal length whose elements are the same, structs whose fields
    are; a type Arrow cannot compare (a union) compared as Python values."""
    if a.equals(b):  # the common case, at once (Arrow's own: NaN is not NaN there)
        return np.ones(len(a), bool)
    t = a.type
    if pa.types.is_null(t):
        return np.ones(len(a), bool)
    if isinstance(t, pa.BaseExtensionType):
        return same(a.storage, b.storage)
    if pa.types.is_dictionary(t) or pa.types.is_run_end_encoded(t) or plain_type(t) != t:
        return same(plain_array(a), plain_array(b))
    null_a, null_b = _nulls(a), _nulls(b)
    both = ~null_a & ~null_b
    if pa.types.is_struct(t):
        equal = np.ones(len(a), bool)
        for i in range(t.num_fields):
            equal &= same(a.field(i), b.field(i))
    elif (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or pa.types.is_map(t)
    ):
        equal = _same_lists(a, b, both)
    else:
        equal = _equal(a, b)
    return (null_a & null_b) | (both & equal)


def _same_lists(a: pa.Array, b: pa.Array, both: np.ndarray) -> np.ndarray:
    """Per row where `both` hold a list: whether the lists are of one length and the same element
    by element."""
    if pa.types.is_map(a.type):  # a map is a list of key/item structs; Arrow's list kernels take no map
        a, b = _entries(a), _entries(b)
    length_a, length_b = _lengths(a), _lengths(b)
    rows = np.flatnonzero(both & (length_a == length_b))
    out = np.zeros(len(a), bool)
    if not len(rows):
        return out
    taken = pa.array(rows)
    inner = same(a.take(taken).flatten(), b.take(taken).flatten())
    parent = np.repeat(np.arange(len(rows)), length_a[rows])  # the row of each element
    good = np.ones(len(rows), bool)
    good[parent[~inner]] = False
    out[rows] = good
    return out


def _entries(arr: pa.Array) -> pa.Array:
    """A map as the list of its key/item structs it is stored as."""
    offsets = pa.array(arr.offsets.to_numpy())
    entries = pa.StructArray.from_arrays([arr.keys, arr.items], fields=list(arr.values.type))
    return pa.ListArray.from_arrays(offsets, entries, mask=arr.is_null() if arr.null_count else None)


def _lengths(arr: pa.Array) -> np.ndarray:
    return pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)


def _equal(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Per row, whether two flat arrays' values are equal (anything where either is null); NaN
    equals NaN."""
    try:
        equal = pc.fill_null(pc.equal(a, b), False).to_numpy(zero_copy_only=False)
    except pa.ArrowNotImplementedError:  # no kernel for the type: as Python values
        return np.array([x == y for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)], bool)
    if pa.types.is_float32(a.type) or pa.types.is_float64(a.type):
        equal |= pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False).to_numpy(zero_copy_only=False)
    return equal


def _nulls(arr: pa.Array) -> np.ndarray:
    return arr.is_null().to_numpy(zero_copy_only=False)
