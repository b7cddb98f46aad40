"""The data contract (docs/data.md "The data contract"): which columns each input holds, and their types.

`conform` turns a parsed table into one whose contract columns have exactly the documented
Arrow types; extra columns are kept untouched. Ids are strings whatever their type in a file
(an integer id 7 becomes "7"); a float or boolean id is refused rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.ids.codes import fingerprint
from triage.core.inputs.readers import Parsed

ID, IDS, FLOATS, STR, INT, FLOAT = "id", "list of ids", "list of numbers", "text", "integer", "number"
GRADE = "integer (a grade)"  # negative too: trec_eval's "pooled, unjudged", TREC Web's −2 for junk
BOOL = "boolean (true/false, or 1/0)"

# column -> (kind, required)
RUN = {
    "query_id": (ID, True),
    "retrieved": (IDS, True),
    "scores": (FLOATS, False),
    "plan": (STR, False),
    "n_eligible": (INT, False),
    "n_returned": (INT, False),
    "latency_ms": (FLOAT, False),
    "tenant": (STR, False),
    "filter": (STR, False),
    "selectivity": (FLOAT, False),
    "answer_correct": (BOOL, False),  # the harness's verdict on the answer; null: not judged
}
QUERIES = {
    "query_id": (ID, True),
    "text": (STR, False),
    "tenant": (STR, False),
    "query_type": (STR, False),
    "source_type": (STR, False),
    "filter": (STR, False),
    "selectivity": (FLOAT, False),
    "language": (STR, False),
    "origin": (STR, False),  # where the query came from: "real", "generated", or any string
}
LABELS = {"query_id": (ID, True), "chunk_id": (ID, True), "relevance": (GRADE, False)}
CORPUS = {
    "chunk_id": (ID, True),
    "text": (STR, False),
    "header": (STR, False),
    "doc_id": (ID, False),
    "source_type": (STR, False),
}
# The layouts of other tools: their names for our columns, read as ours where ours are absent
# (docs/data.md "Input shapes"). The one table every reader, and the Python API's tables, consult.
# Runs and labels one row per (query, id): a run's `score` is its score, the grade (`relevance`)
# is the labels' own.
LAYOUTS: dict[str, dict[str, str]] = {
    "BEIR (qrels/*.tsv)": {"query-id": "query_id", "corpus-id": "chunk_id", "score": "relevance"},
    "PyTerrier (qid, docno, score, rank / qid, docno, label)": {
        "qid": "query_id",
        "docno": "chunk_id",
        "label": "relevance",
    },
    "ranx (q_id, doc_id, score)": {"q_id": "query_id", "doc_id": "chunk_id", "score": "relevance"},
    "ir_measures, ir_datasets (query_id, doc_id, score / relevance)": {"doc_id": "chunk_id"},
    "TREC (qid, docid, rel)": {"qid": "query_id", "docid": "chunk_id", "rel": "relevance"},
}
# A tool's own column that is not the id when the other is there: PyTerrier's `docid` is its
# index's internal number, `docno` the document's id. Dropped.
INTERNAL = {"docid": "docno"}
# Corpus and queries in BEIR's names (corpus.jsonl `_id`, `title`; queries.jsonl `_id`) and
# PyTerrier's topics (`qid`, `query`).
ALIASES = {"_id": "chunk_id", "title": "header"}
QUERY_ALIASES = {"_id": "query_id", "qid": "query_id", "query": "text"}
LABEL_ALIASES = {name: ours for layout in LAYOUTS.values() for name, ours in layout.items()}
LONG_ALIASES = {name: ours for name, ours in LABEL_ALIASES.items() if ours != "relevance"}
# Columns that hold ids under any of these names: read as text from CSV and TSV ("007" is not 7).
ID_COLUMNS = frozenset({"query_id", "chunk_id", "_id", *LONG_ALIASES})

_ARROW = {
    ID: pa.string(),
    IDS: pa.list_(pa.string()),
    FLOATS: pa.list_(pa.float64()),
    STR: pa.string(),
    INT: pa.int64(),
    GRADE: pa.int64(),
    FLOAT: pa.float64(),
    BOOL: pa.bool_(),
}


MAX_INT = 2**53  # integers read (counts, grades) stay below this: exact as floats and in JSON


def conform(
    loaded: Parsed, spec: dict[str, tuple[str, bool]], aliases: dict[str, str] | None = None
) -> pa.Table:
    """The contract's columns of `loaded`, coerced to their kinds; a file with no rows is refused."""
    table = loaded.table
    if table.num_rows == 0:
        raise InputError(loaded.path, "holds no rows")
    if aliases:
        names = [
            aliases.get(n, n) if aliases.get(n) not in table.column_names else n for n in table.column_names
        ]
        table = table.rename_columns(names)
    for name, (kind, required) in spec.items():
        if name not in table.column_names:
            if required:
                have = ", ".join(table.column_names) or "none"
                raise InputError(loaded.path, f"missing required column {name!r} (columns: {have})")
            continue
        col = single(table.column(name))
        fixed = _coerce(loaded, name, kind, col)
        if required or kind in (IDS, FLOATS):
            _no_nulls(loaded, name, fixed)
        table = table.set_column(table.column_names.index(name), name, fixed)
    return table


def single(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One contiguous array; a single chunk is taken as is (combine_chunks would copy it)."""
    if isinstance(col, pa.Array):
        return col
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def _cast(col: pa.Array, kind: str) -> pa.Array:
    target = _ARROW[kind]
    return col if col.type == target else pc.cast(col, target)


def _bad_type(loaded: Parsed, name: str, kind: str, t: pa.DataType) -> InputError:
    return InputError(loaded.path, f"column {name!r} has type {t}, expected {kind}")


def _coerce(loaded: Parsed, name: str, kind: str, col: pa.Array) -> pa.Array:
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    if pa.types.is_null(t):
        return pa.nulls(len(col), _ARROW[kind])
    if kind in (INT, GRADE, FLOAT) and name in loaded.oversize:  # an integer too large for Arrow
        r, value = loaded.oversize[name]
        raise InputError(
            loaded.path, f"{name!r} is {value:.3g}, expected a number below 2^53", loaded.where(r)
        )
    return _COERCE[kind](loaded, name, kind, col)


def _text(loaded: Parsed, name: str, kind: str, col: pa.Array) -> pa.Array:
    """An id or a text: strings or integers (a text may also be a boolean)."""
    t = col.type
    ok = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
    if kind == STR:
        ok = ok or pa.types.is_boolean(t)
    if not ok:
        raise _bad_type(loaded, name, kind + (" (ids are strings or integers)" if kind == ID else ""), t)
    return _cast(col, kind)


def _list(loaded: Parsed, name: str, kind: str, col: pa.Array) -> pa.Array:
    """A list of ids (strings or integers) or of numbers (finite), no element null."""
    t = col.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)):
        raise _bad_type(loaded, name, kind, t)
    vt = t.value_type
    ok = (
        pa.types.is_string(vt) or pa.types.is_large_string(vt) or pa.types.is_integer(vt)
        if kind == IDS
        else pa.types.is_integer(vt) or pa.types.is_floating(vt)
    )
    if not (ok or pa.types.is_null(vt)):
        raise _bad_type(loaded, name, kind, t)
    out = _cast(col, kind)
    flat = out.flatten()
    if flat.null_count:
        row = _first(pc.list_parent_indices(out).to_numpy()[_nulls(flat)])
        raise InputError(loaded.path, f"{name!r} holds an empty (null) element", loaded.where(row))
    if kind == FLOATS and not all(np.isfinite(c.to_numpy()).all() for c in _chunks(flat)):
        values = flat.to_numpy(zero_copy_only=False)
        bad = ~np.isfinite(values)
        if bad.any():
            row = _first(pc.list_parent_indices(out).to_numpy()[bad])
            raise InputError(loaded.path, f"{name!r} holds NaN or an infinite value", loaded.where(row))
    return out


def _integer(loaded: Parsed, name: str, kind: str, col: pa.Array) -> pa.Array:
    """An integer from 0 to 2^53 (a grade: from −2^53): integers, or floats without a fraction."""
    t = col.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        raise _bad_type(loaded, name, kind, t)
    v = col.to_numpy(zero_copy_only=False)
    low = -MAX_INT if kind == GRADE else 0
    out_of_range = ~_nulls(col) & ((v < low) | (v >= MAX_INT))
    if out_of_range.any():
        r = _first(out_of_range)
        shown = f"{v[r]:.3g}" if abs(float(v[r])) >= 1e15 else str(v[r])
        span = "from −2^53 to 2^53" if kind == GRADE else "from 0 to 2^53"
        raise InputError(loaded.path, f"{name!r} is {shown}, expected an integer {span}", loaded.where(r))
    if pa.types.is_integer(t):
        return _cast(col, kind)
    bad = np.isfinite(v) & (v != np.round(v)) | np.isinf(v)
    if bad.any():
        raise InputError(
            loaded.path, f"{name!r} is {v[_first(bad)]}, expected an integer", loaded.where(_first(bad))
        )
    return pc.cast(pc.if_else(pc.is_nan(col), None, col), pa.int64())


def _number(loaded: Parsed, name: str, kind: str, col: pa.Array) -> pa.Array:
    """A finite number: integers or floats."""
    t = col.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        raise _bad_type(loaded, name, kind, t)
    if pa.types.is_integer(t):  # beyond 2^53 an integer is no exact float
        v = col.to_numpy(zero_copy_only=False)
        big = ~_nulls(col) & ((v >= MAX_INT) | (v <= -MAX_INT))
        if big.any():
            r = _first(big)
            raise InputError(
                loaded.path,
                f"{name!r} is {v[r]:.3g}, expected a number between -2^53 and 2^53",
                loaded.where(r),
            )
    out = _cast(col, kind)
    v = out.to_numpy(zero_copy_only=False)
    bad = np.isinf(v) | (np.isnan(v) & ~_nulls(out))
    if bad.any():
        raise InputError(
            loaded.path, f"{name!r} is {v[_first(bad)]}, expected a finite number", loaded.where(_first(bad))
        )
    return out


def _boolean(loaded: Parsed, name: str, col: pa.Array) -> pa.Array:
    """A boolean column as is; integers 1 and 0 as true and false; anything else refused."""
    t = col.type
    if pa.types.is_boolean(t):
        return col
    if not pa.types.is_integer(t):
        raise _bad_type(loaded, name, BOOL, t)
    v = col.to_numpy(zero_copy_only=False)
    bad = ~_nulls(col) & (v != 0) & (v != 1)
    if bad.any():
        r = _first(bad)
        raise InputError(loaded.path, f"{name!r} is {v[r]}, expected true/false or 1/0", loaded.where(r))
    return pc.not_equal(col, 0)


_COERCE: dict[str, Callable[[Parsed, str, str, pa.Array], pa.Array]] = {
    ID: _text,
    STR: _text,
    IDS: _list,
    FLOATS: _list,
    BOOL: lambda loaded, name, _kind, col: _boolean(loaded, name, col),
    INT: _integer,
    GRADE: _integer,
    FLOAT: _number,
}


def _chunks(arr: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]


def _nulls(arr: pa.Array) -> np.ndarray:
    return arr.is_null().to_numpy(zero_copy_only=False)


def _first(mask_or_idx: np.ndarray) -> int:
    a = np.asarray(mask_or_idx)
    return int(np.flatnonzero(a)[0]) if a.dtype == bool else int(a[0])


def _no_nulls(loaded: Parsed, name: str, col: pa.Array) -> None:
    if col.null_count:
        row = _first(_nulls(col))
        hint = " (write an empty list for no results)" if name == "retrieved" else ""
        raise InputError(loaded.path, f"{name!r} is empty (null){hint}", loaded.where(row))


def unique_ids(
    loaded: Parsed, table: pa.Table, column: str = "query_id", adjacent: np.ndarray | None = None
) -> None:
    """Refuse a table in which one id names two rows; name both rows. `adjacent`: a value per
    id, ordered so that equal ids give equal neighbours (sorted fingerprints), when computed."""
    ids = single(table.column(column))
    if adjacent is None and (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
        adjacent = np.sort(fingerprint(ids))  # equal ids, equal fingerprints
    if adjacent is not None and not (adjacent[1:] == adjacent[:-1]).any():  # none equal: none repeated
        return
    if len(pc.unique(ids)) == len(ids):
        return
    counts = pc.value_counts(ids)
    dup = counts.field("values").filter(pc.greater(counts.field("counts"), 1))[0].as_py()
    rows = np.flatnonzero(pc.equal(ids, dup).to_numpy(zero_copy_only=False))
    places = " and ".join(loaded.where(int(r)) for r in rows[:2])
    raise InputError(loaded.path, f"duplicate {column} {dup!r} ({places})", loaded.where(int(rows[1])))
