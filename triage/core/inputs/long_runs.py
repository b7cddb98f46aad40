"""Runs written one row per (query, retrieved id) — the "long" layout most harnesses and
PyTerrier write — grouped into the contract's one row per query (docs/data.md "Input shapes")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.inputs.contract import FLOAT, ID, INT, conform, single
from triage.core.inputs.readers import Parsed


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
    ties by docno descending). Queries keep the order of their first row. Other columns are per
    query: each must hold one value per query and is kept once. Vectorised: one sort, no loop."""
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
    for name in names:
        if name in LONG:
            continue
        col = single(table.column(name))
        kept = col.take(pa.array(first))
        _one_per_query(loaded, name, col, kept.take(pa.array(codes)), table.column("query_id"))
        out[name] = kept
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


def _one_per_query(loaded: Parsed, name: str, col: pa.Array, spread: pa.Array, qids: pa.ChunkedArray) -> None:
    """Refuse a column of a long run whose value changes within one query (which one is meant?)."""
    same = pc.fill_null(pc.equal(col, spread), False)
    both_null = pc.and_(col.is_null(), spread.is_null())
    differs = pc.invert(pc.or_(same, both_null)).to_numpy(zero_copy_only=False)
    if differs.any():
        row = int(np.flatnonzero(differs)[0])
        raise InputError(
            loaded.path,
            f"column {name!r} changes within query {qids[row].as_py()!r}; in a run one row per "
            "(query, id) the other columns hold one value per query",
            loaded.where(row),
        )
