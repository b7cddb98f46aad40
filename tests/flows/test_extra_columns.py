"""Extra columns of any type are kept (docs/data.md, the contract and "Input shapes"): a run in
either layout, as JSON Lines, Parquet or a DataFrame given to `triage.open`, carrying columns of any
Arrow type beside the contract's (objects and lists at any depth, dictionaries such as polars'
`Categorical` and `Enum` or pandas' `category`, views, timestamps, nulls) gives exactly the numbers
of the same run without them. A run one row per (query, id) reads as the same run one row per
query: a column with one value per query kept once, any other as a list per query in the order of
`retrieved`. What is refused names the file and the line or row, never an Arrow kernel."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import triage
from triage.core.bundled import bundled
from triage.core.errors import InputError
from triage.core.inputs.load import run_of
from triage.core.inputs.long_runs import same
from triage.core.inputs.readers import plain_array, plain_type
from triage.core.inputs.shapes import Role, read_input

SAMPLE = bundled("sample_runs")
NAMES = ("plain", "headers")
N_QUERIES = 12  # the sample's first queries: enough to hold hits, misses and flips


def sample_run(name: str, n: int | None = N_QUERIES) -> pa.Table:
    t = pq.read_table(SAMPLE / f"runs/{name}.parquet", columns=["query_id", "retrieved", "scores"])
    t = t.replace_schema_metadata(None)
    return t if n is None else t.slice(0, n)


def labels_table() -> pa.Table:
    return pq.read_table(SAMPLE / "labels.parquet").replace_schema_metadata(None)


def numbers(report: dict) -> dict:
    """What an evaluation found: each arm's metrics, the paired cells, the flips, the counts."""
    arms = {
        side: {k: v for k, v in arm.items() if k not in ("path", "meta", "name")}
        for side, arm in report["arms"].items()
    }
    keys = ("n_queries", "n_scored", "n_unlabelled", "missing", "paired", "k_cells", "flips", "ranks")
    return {"arms": arms, **{k: report[k] for k in keys}}


def opened(a: object, b: object, labels: object, **more: object) -> dict:
    return numbers(triage.open(a=a, b=b, labels=labels, k=5, names=NAMES, **more).report().to_json())


def lengths(run: pa.Table) -> np.ndarray:
    return pc.list_value_length(run.column("retrieved")).to_numpy()


def long_of(run: pa.Table, per_query: dict[str, pa.Array], per_id: dict[str, pa.Array]) -> pa.Table:
    """`run` one row per (query, id), rank 1 first, with a value a query or a value an id."""
    n = lengths(run)
    rows = pa.array(np.repeat(np.arange(run.num_rows), n))
    cols = {
        "query_id": run.column("query_id").take(rows),
        "chunk_id": pc.list_flatten(run.column("retrieved")),
        "score": pc.list_flatten(run.column("scores")),
        "rank": pa.array(np.concatenate([np.arange(1, k + 1) for k in n]), pa.int64()),
    }
    repeated = {k: pa.array([v[i].as_py() for i in rows.to_pylist()], v.type) for k, v in per_query.items()}
    return pa.table({**cols, **repeated, **per_id})


def flat_of(run: pa.Table, per_query: dict[str, pa.Array], per_id: dict[str, pa.Array]) -> pa.Table:
    """`run` one row per query, a value an id as a list beside `retrieved`."""
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths(run))]), pa.int32())
    lists = {k: pa.ListArray.from_arrays(offsets, v) for k, v in per_id.items()}
    return pa.table({**{c: run.column(c) for c in run.column_names}, **per_query, **lists})


def jsonable(v: object) -> object:
    if isinstance(v, dt.datetime | dt.date):
        return v.isoformat()
    raise TypeError(type(v).__name__)


def write(table: pa.Table, path: Path) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:
        lines = (json.dumps(r, default=jsonable, allow_nan=False) for r in table.to_pylist())
        path.write_text("".join(f"{line}\n" for line in lines), "utf-8")
    return path


def canon(v: Any) -> Any:
    """A value compared as triage compares them: NaN equals NaN."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list | tuple):
        return [canon(x) for x in v]
    if isinstance(v, dict):
        return {k: canon(x) for k, x in v.items()}
    return v


def grouped(lists: list[list[Any]]) -> list[Any]:
    """What a run one row per (query, id) keeps of a column whose values per query are `lists`:
    one value per query when each list holds one value, else the lists."""
    if all(all(canon(x) == canon(ls[0]) for x in ls) for ls in lists):
        return [ls[0] for ls in lists]
    return lists


def kept(path: Path) -> pa.Table:
    return run_of(read_input(path, Role.RUN), "x").table


# -- a fast look: nested fields in a JSON Lines run one row per (query, id) ---------------------------


def test_nested_fields_in_a_long_jsonl_run_read_as_the_flat_run(tmp_path: Path) -> None:
    a = sample_run("plain", 6)
    n = int(lengths(a).sum())
    meta = pa.array([{"source": "bm25", "params": {"k1": 0.9 + q}} for q in range(6)])  # one a query
    tags = pa.array([["x"] * (i % 3) for i in range(n)], pa.list_(pa.string()))  # one an id
    seen = pa.nulls(n)  # a column every line leaves null
    flat = kept(write(flat_of(a, {"meta": meta}, {"tags": tags}), tmp_path / "flat.jsonl"))
    long = kept(write(long_of(a, {"meta": meta}, {"tags": tags, "seen": seen}), tmp_path / "long.jsonl"))
    assert long.select(["query_id", "retrieved", "scores"]).equals(
        flat.select(["query_id", "retrieved", "scores"])
    )
    assert long.column("meta").to_pylist() == meta.to_pylist()  # kept once per query
    assert long.column("tags").to_pylist() == flat.column("tags").to_pylist()  # a list per query
    assert long.column("seen").to_pylist() == [None] * 6  # null throughout: one value per query


# -- every type, both layouts, both containers (Hypothesis) -------------------------------------------

_small = st.integers(-3, 3)
_text = st.sampled_from(["", "a", "b", "é", "q1", "x y"])
# kind -> (values, Arrow type, whether JSON Lines can hold it)
KINDS: dict[str, tuple[st.SearchStrategy[Any], pa.DataType, bool]] = {
    "int": (st.one_of(_small, st.sampled_from([2**63 - 1, -(2**63), 2**53 + 1])), pa.int64(), True),
    "float": (st.sampled_from([0.0, -0.0, 1.5, 1e300, -2.25]), pa.float64(), True),
    "nan": (st.sampled_from([math.nan, 1.0]), pa.float64(), False),  # JSON has no NaN
    "bool": (st.booleans(), pa.bool_(), True),
    "string": (_text, pa.string(), True),
    "null": (st.none(), pa.null(), True),
    "list": (st.lists(_small, max_size=3), pa.list_(pa.int64()), True),
    "list of text": (st.lists(_text, max_size=3), pa.list_(pa.string()), True),
    "struct": (
        st.fixed_dictionaries({"a": _small, "b": _text, "c": st.lists(_small, max_size=2)}),
        pa.struct([("a", pa.int64()), ("b", pa.string()), ("c", pa.list_(pa.int64()))]),
        True,
    ),
    "list of struct": (
        st.lists(st.fixed_dictionaries({"a": _small}), max_size=2),
        pa.list_(pa.struct([("a", pa.int64())])),
        True,
    ),
    "dictionary": (_text, pa.dictionary(pa.int8(), pa.string()), True),
    "dictionary16": (_text, pa.dictionary(pa.int16(), pa.large_string()), True),
    "timestamp": (
        st.sampled_from([dt.datetime(2024, 1, 1), dt.datetime(2024, 5, 6, 7, 8, 9)]),
        pa.timestamp("ms"),
        True,
    ),
    "timestamp tz": (
        st.sampled_from([dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.datetime(2025, 2, 3, tzinfo=dt.UTC)]),
        pa.timestamp("us", tz="UTC"),
        True,
    ),
    "date": (st.sampled_from([dt.date(2024, 1, 1), dt.date(1999, 12, 31)]), pa.date32(), True),
    "string view": (_text, pa.string_view(), False),
    "large list": (st.lists(_text, max_size=2), pa.large_list(pa.string()), False),
    "fixed list": (st.lists(_small, min_size=2, max_size=2), pa.list_(pa.int64(), 2), False),
    "map": (
        st.lists(st.tuples(_text, _small), max_size=2, unique_by=lambda kv: kv[0]),
        pa.map_(pa.string(), pa.int64()),
        False,
    ),
    "decimal": (st.sampled_from([0, 1, -7]), pa.decimal128(9, 2), False),
    "binary": (st.sampled_from([b"", b"\x00\xff"]), pa.binary(), False),
}
# id columns' types in Parquet: (the query ids', the chunk ids') — an int8 dictionary holds 127 ids
ID_TYPES = {
    "string": (pa.string(), pa.string()),
    "large string": (pa.large_string(), pa.large_string()),
    "dictionary": (pa.dictionary(pa.int8(), pa.string()), pa.dictionary(pa.int16(), pa.string())),
    "dictionary32": (pa.dictionary(pa.int32(), pa.large_string()), pa.dictionary(pa.int32(), pa.string())),
    "string view": (pa.string_view(), pa.string_view()),
}


@st.composite
def extras(draw: st.DrawFn, n_queries: int, n_ids: int) -> tuple[dict[str, pa.Array], dict[str, pa.Array]]:
    """One to three extra columns: each of a kind, with a value a query or a value an id (null
    now and then)."""
    per_query: dict[str, pa.Array] = {}
    per_id: dict[str, pa.Array] = {}
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(sorted(KINDS)))
        values, arrow_type, _ = KINDS[kind]
        per = draw(st.sampled_from(["query", "id"]))
        n = n_queries if per == "query" else n_ids
        drawn = draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n))
        (per_query if per == "query" else per_id)[f"x{i}_{kind}"] = pa.array(drawn, arrow_type)
    return per_query, per_id


def _json_able(per_query: dict[str, pa.Array], per_id: dict[str, pa.Array]) -> bool:
    names = [*per_query, *per_id]
    return all(KINDS[name.split("_", 1)[1]][2] for name in names)


def _with_ids(table: pa.Table, id_type: str) -> pa.Table:
    """`table`'s id columns (`query_id`, `chunk_id`, the ids in `retrieved`) of the types named."""
    query, chunk = ID_TYPES[id_type]
    for c, to in (("query_id", query), ("chunk_id", chunk), ("retrieved", chunk)):
        if c not in table.column_names:
            continue
        col = table.column(c).combine_chunks()
        cast = (
            pa.ListArray.from_arrays(col.offsets, col.values.cast(to)) if c == "retrieved" else col.cast(to)
        )
        table = table.set_column(table.column_names.index(c), c, cast)
    return table


@pytest.fixture(scope="module")
def plain_numbers(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, Path]:
    folder = tmp_path_factory.mktemp("plain")
    labels = write(labels_table(), folder / "labels.parquet")
    b = write(sample_run("headers"), folder / "b.parquet")
    return opened(write(sample_run("plain"), folder / "a.parquet"), b, labels), b, labels


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_extra_columns_of_any_type_give_the_plain_numbers(
    tmp_path_factory: pytest.TempPathFactory, plain_numbers: tuple[dict, Path, Path], data: st.DataObject
) -> None:
    expected, b, labels = plain_numbers
    a = sample_run("plain")
    per_query, per_id = data.draw(extras(a.num_rows, int(lengths(a).sum())))
    id_type = data.draw(st.sampled_from(sorted(ID_TYPES)))
    folder = tmp_path_factory.mktemp("extras")
    containers = ["parquet", "jsonl"] if _json_able(per_query, per_id) else ["parquet"]
    for container in containers:
        tables = {"long": long_of(a, per_query, per_id), "flat": flat_of(a, per_query, per_id)}
        if container == "parquet":
            tables = {form: _with_ids(t, id_type) for form, t in tables.items()}
        paths = {form: write(t, folder / f"{form}.{container}") for form, t in tables.items()}
        for form, path in paths.items():
            assert opened(path, b, labels) == expected, (form, container)
        flat, long = kept(paths["flat"]), kept(paths["long"])
        assert long.column("retrieved").equals(flat.column("retrieved"))
        for name in per_query:  # kept once per query, as the flat run keeps it
            assert canon(long.column(name).to_pylist()) == canon(flat.column(name).to_pylist()), name
        for name in per_id:  # a list per query, as the flat run gives it (one value: kept once)
            want = grouped(flat.column(name).to_pylist())
            assert canon(long.column(name).to_pylist()) == canon(want), name
        if container == "parquet":  # and as they were written, dictionaries and views made plain
            for name, values in per_query.items():
                assert canon(flat.column(name).to_pylist()) == canon(plain_array(values).to_pylist())
            for name, values in per_id.items():
                written = pc.list_flatten(flat.column(name)).to_pylist()
                assert canon(written) == canon(plain_array(values).to_pylist())


CONTRACT = (
    "plan",
    "tenant",
    "filter",
    "n_eligible",
    "n_returned",
    "latency_ms",
    "selectivity",
    "answer_correct",
)


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_contracts_columns_of_any_type_are_read_or_refused_by_name(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """A contract column (`plan`, `tenant`, …) holding a value of any kind, a query's or an id's,
    in either layout and container: read, or refused naming the file and the column, the line or
    the row; never an Arrow kernel's words."""
    a = sample_run("plain", 4)
    per_query, per_id = data.draw(extras(a.num_rows, int(lengths(a).sum())))
    name = data.draw(st.sampled_from(CONTRACT))
    renamed = lambda cols: {name if i == 0 else k: v for i, (k, v) in enumerate(cols.items())}  # noqa: E731
    per_query, per_id = (renamed(per_query), per_id) if per_query else (per_query, renamed(per_id))
    folder = tmp_path_factory.mktemp("contract")
    for container in ("parquet", "jsonl"):
        for form, table in (("long", long_of(a, per_query, per_id)), ("flat", flat_of(a, per_query, per_id))):
            try:
                path = write(table, folder / f"{form}.{container}")
            except (TypeError, ValueError):  # bytes, decimals or NaN: not JSON
                continue
            try:
                kept(path)
            except InputError as e:
                assert str(e).startswith(str(path)), e
                assert not any(w in str(e) for w in ("Arrow", "kernel", "Function '")), e
                assert repr(name) in str(e) or "line" in e.where or "row" in e.where, e


# -- plain and same over generated arrays: any nesting of views, dictionaries, run-end encodings -----

LEAVES = ("int", "float", "bool", "string", "view", "dictionary", "dictionary of views", "run-end", "null")
WRAPS = ("list", "large list", "list view", "fixed list", "map")
PLANS = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.tuples(st.sampled_from(WRAPS), inner) | st.tuples(st.just("struct"), inner, inner),
    max_leaves=4,
)
_VALUES = {
    "int": st.sampled_from([0, 1]),
    "float": st.sampled_from([0.0, -0.0, 1.5, math.nan]),
    "bool": st.booleans(),
}


def _leaf(draw: st.DrawFn, kind: str, n: int) -> tuple[pa.Array, list[Any]]:
    if kind == "null":
        return pa.nulls(n), [None] * n
    values = st.one_of(st.none(), _VALUES.get(kind, st.sampled_from(["a", "b", "é"])))
    py = draw(st.lists(values, min_size=n, max_size=n))
    if kind in ("int", "float", "bool", "string"):
        return pa.array(
            py, {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "string": pa.string()}[kind]
        ), py
    if kind == "view":
        return pa.array(py, pa.string_view()), py
    if kind == "dictionary":
        return pa.array(py, pa.dictionary(pa.int8(), pa.string())), py
    if kind == "run-end":
        return pa.RunEndEncodedArray.from_arrays(pa.array(range(1, n + 1), pa.int32()), pa.array(py)), py
    words = sorted({v for v in py if v is not None}) or ["a"]
    indices = pa.array([None if v is None else words.index(v) for v in py], pa.int8())
    return pa.DictionaryArray.from_arrays(indices, pa.array(words, pa.string_view())), py


@st.composite
def arrays(draw: st.DrawFn, plan: Any, n: int) -> tuple[pa.Array, list[Any]]:
    """An array of `n` rows built to `plan` (a leaf's kind, or (wrapper, plan…)), with nulls at
    every level, and its values as Python holds them."""
    if isinstance(plan, str):
        return _leaf(draw, plan, n)
    nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    mask = pa.array(nulls, pa.bool_())
    if plan[0] == "struct":
        (a, pa_), (b, pb) = draw(arrays(plan[1], n)), draw(arrays(plan[2], n))
        arr = pa.StructArray.from_arrays([a, b], names=["a", "b"], mask=mask)
        return arr, [None if z else {"a": x, "b": y} for x, y, z in zip(pa_, pb, nulls, strict=True)]
    if plan[0] == "fixed list":
        child, py = draw(arrays(plan[1], 2 * n))
        arr = pa.FixedSizeListArray.from_arrays(child, 2, mask=mask)
        return arr, [None if z else py[2 * i : 2 * i + 2] for i, z in enumerate(nulls)]
    sizes = [0 if z else draw(st.integers(0, 2)) for z in nulls]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    child, py = draw(arrays(plan[1], int(offsets[-1])))
    rows = [None if z else py[offsets[i] : offsets[i + 1]] for i, z in enumerate(nulls)]
    if plan[0] == "map":
        keys = pa.array([f"k{i}" for i in range(int(offsets[-1]))], pa.string())
        arr = pa.MapArray.from_arrays(pa.array(offsets), keys, child, mask=mask)
        starts = offsets[:-1]
        return arr, [
            None if r is None else [(f"k{s + j}", v) for j, v in enumerate(r)]
            for s, r in zip(starts, rows, strict=True)
        ]
    if plan[0] == "list view":
        arr = pa.ListViewArray.from_arrays(
            pa.array(offsets[:-1]), pa.array(sizes, pa.int32()), child, mask=mask
        )
    elif plan[0] == "large list":
        arr = pa.LargeListArray.from_arrays(pa.array(offsets.astype(np.int64)), child, mask=mask)
    else:
        arr = pa.ListArray.from_arrays(pa.array(offsets), child, mask=mask)
    return arr, rows


@st.composite
def sliced(draw: st.DrawFn, plan: Any, n: int) -> tuple[pa.Array, list[Any]]:
    arr, py = draw(arrays(plan, n))
    start = draw(st.integers(0, n))
    return arr.slice(start), py[start:]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(data=st.data(), plan=PLANS, n=st.integers(0, 6))
def test_plain_keeps_every_value_in_plain_types(data: st.DataObject, plan: Any, n: int) -> None:
    arr, py = data.draw(sliced(plan, n))
    out = plain_array(arr)
    out.validate(full=True)
    assert out.type == plain_type(arr.type)
    assert not any(w in str(out.type) for w in ("view", "dictionary", "run_end"))
    assert canon(out.to_pylist()) == canon(py)
    out.take(pa.array(np.arange(len(out))))  # Arrow's kernels take it


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(data=st.data(), plan=PLANS, n=st.integers(0, 6))
def test_same_says_which_rows_hold_the_same_value(data: st.DataObject, plan: Any, n: int) -> None:
    (a, pa_), (b, pb) = data.draw(sliced(plan, n)), data.draw(sliced(plan, n))
    assume(a.type == b.type)  # `same` compares one column's rows: one type (two draws may differ)
    rows = min(len(a), len(b))
    a, b, pa_, pb = a.slice(0, rows), b.slice(0, rows), pa_[:rows], pb[:rows]
    assert same(a, b).tolist() == [canon(x) == canon(y) for x, y in zip(pa_, pb, strict=True)]
    assert same(a, a).all()


@pytest.mark.parametrize(
    "arr",
    [
        pa.array([["a", None], None, []], pa.list_(pa.string_view())),
        pa.DictionaryArray.from_arrays(
            pa.array([0, None, 1], pa.uint32()), pa.array(["x", "y"], pa.string_view())
        ),
        pa.ListArray.from_arrays(
            pa.array([0, 1, 1, 3]),
            pa.DictionaryArray.from_arrays(
                pa.array([0, 1, 0], pa.uint32()), pa.array(["x", "y"], pa.string_view())
            ),
            mask=pa.array([False, True, False]),
        ).slice(1),
        pa.array([{"a": "x"}, None, {"a": None}], pa.struct([("a", pa.string_view())])),
    ],
    ids=["views in lists", "Categorical", "List(Categorical), sliced", "views in structs"],
)
def test_polars_arrays_are_made_plain(arr: pa.Array) -> None:
    out = plain_array(arr)
    assert out.to_pylist() == arr.to_pylist() if "dictionary" not in str(arr.type) else True
    assert "view" not in str(out.type) and "dictionary" not in str(out.type)
    out.validate(full=True)


# -- DataFrames: polars' Categorical and Enum, pandas' category and string dtypes ---------------------


def _polars(table: pa.Table, columns: tuple[str, ...], dtype: str) -> Any:
    pl = pytest.importorskip("polars")
    frame = pl.from_arrow(table)
    for column in columns:
        col = table.column(column)
        listed = pa.types.is_list(col.type)
        kind = pl.Categorical
        if dtype == "Enum":
            kind = pl.Enum(sorted(set((pc.list_flatten(col) if listed else col).to_pylist())))
        frame = frame.with_columns(pl.col(column).cast(pl.List(kind) if listed else kind))
    return frame


def _pandas(table: pa.Table, columns: tuple[str, ...], dtype: str) -> Any:
    pd = pytest.importorskip("pandas")
    frame = table.to_pandas()
    arrow = {
        "dictionary[pyarrow]": pa.dictionary(pa.int32(), pa.string()),
        "large_string[pyarrow]": pa.large_string(),
    }
    for column in columns:
        frame[column] = frame[column].astype(pd.ArrowDtype(arrow[dtype]) if dtype in arrow else dtype)
    return frame


# (library, dtype) -> how a table's column becomes a frame's column of that dtype
FRAMES = {
    ("polars", "Categorical"): _polars,
    ("polars", "Enum"): _polars,
    ("pandas", "category"): _pandas,
    ("pandas", "string"): _pandas,
    ("pandas", "string[pyarrow]"): _pandas,
    ("pandas", "large_string[pyarrow]"): _pandas,
    ("pandas", "dictionary[pyarrow]"): _pandas,
}


def _tenants(run: pa.Table) -> pa.Table:
    return run.append_column("tenant", pa.array([f"t{i % 3}" for i in range(run.num_rows)]))


def _labelled(run: pa.Table) -> pa.Table:
    return run.append_column("source", pa.array([f"s{i % 2}" for i in range(run.num_rows)]))


# role -> (layout, the column given as a categorical, how the run gets it)
ROLES = {
    "query id": ("flat", "query_id", None),
    "query id, long": ("long", "query_id", None),
    "chunk id, long": ("long", "chunk_id", None),
    "retrieved": ("flat", "retrieved", None),
    "tenant": ("flat", "tenant", _tenants),
    "tenant, long": ("long", "tenant", _tenants),
    "extra": ("flat", "source", _labelled),
    "extra, long": ("long", "source", _labelled),
}


def _frames(role: str, library: str | None, dtype: str) -> tuple[Any, Any]:
    """The sample's runs for `role`, the column as a frame's of `dtype` (no library: as tables)."""
    layout, column, add = ROLES[role]
    runs = []
    for name in NAMES:
        run = sample_run(name, None)
        run = add(run) if add is not None else run
        if layout == "long":
            extra = {
                c: run.column(c).combine_chunks()
                for c in run.column_names
                if c not in ("query_id", "retrieved", "scores")
            }
            run = long_of(run.select(["query_id", "retrieved", "scores"]), extra, {})
        runs.append(run if library is None else FRAMES[library, dtype](run, (column,), dtype))
    return runs[0], runs[1]


CASES = [
    (role, library, dtype)
    for role in ROLES
    for library, dtype in FRAMES
    if role != "retrieved" or library == "polars"  # a pandas column of lists holds Python lists
]


@pytest.mark.slow
@pytest.mark.parametrize(("role", "library", "dtype"), CASES, ids=["-".join(c) for c in CASES])
def test_categorical_columns_of_dataframes_give_the_numbers_of_plain_ones(
    role: str, library: str, dtype: str
) -> None:
    a, b = _frames(role, library, dtype)
    assert opened(a, b, labels_table()) == opened(*_frames(role, None, dtype), labels_table())


@pytest.mark.slow
@pytest.mark.parametrize(("library", "dtype"), list(FRAMES), ids=["-".join(c) for c in FRAMES])
def test_categorical_ids_in_labels_and_queries(library: str, dtype: str) -> None:
    convert = FRAMES[library, dtype]
    labels = convert(labels_table(), ("query_id", "chunk_id"), dtype)
    ids = sample_run("plain", None).column("query_id")
    queries = convert(
        pa.table({"query_id": ids, "tenant": pa.array(["t"] * len(ids))}), ("query_id", "tenant"), dtype
    )
    a, b = sample_run("plain", None), sample_run("headers", None)
    plain = pa.table({"query_id": ids, "tenant": pa.array(["t"] * len(ids))})
    assert opened(a, b, labels, queries=queries) == opened(a, b, labels_table(), queries=plain)


def test_a_polars_categorical_run_reads_as_its_plain_table() -> None:
    pl = pytest.importorskip("polars")
    from triage.core.inputs.readers import from_table
    from triage.core.inputs.shapes import in_layout

    run = sample_run("plain", 8)
    long = long_of(run, {"tenant": _tenants(run).column("tenant").combine_chunks()}, {})
    frame = pl.from_arrow(long).with_columns(
        pl.col("query_id").cast(pl.Categorical),
        pl.col("chunk_id").cast(pl.Enum(sorted(set(long.column("chunk_id").to_pylist())))),
        pl.col("tenant").cast(pl.Categorical),
    )
    want = run_of(in_layout(from_table("run a", long), Role.RUN), "a").table
    got = run_of(in_layout(from_table("run a", pa.table(frame)), Role.RUN), "a").table
    assert got.select(["query_id", "retrieved", "scores"]).equals(
        want.select(["query_id", "retrieved", "scores"])
    )
    assert got.column("tenant").to_pylist() == want.column("tenant").to_pylist()


# -- what JSON Lines holds that Arrow's reader mishandles: read exactly, or refused by line ------------

_ROWS = [("q1", "d1", 1), ("q1", "d2", 2), ("q2", "d3", 1)]


def _long_jsonl(path: Path, extra: list[dict[str, Any]]) -> Path:
    rows = [{"query_id": q, "chunk_id": c, "rank": r, **x} for (q, c, r), x in zip(_ROWS, extra, strict=True)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


REFUSED = {
    "an object, then text": (
        [{"m": {"a": 1}}, {"m": "a"}, {}],
        "line 2",
        "column 'm' holds a string here but an object",
    ),
    "a list, then an object": (
        [{"m": [1]}, {}, {"m": {"a": 1}}],
        "line 3",
        "column 'm' holds an object here but a list",
    ),
    "a contract column changing within a query": (
        [{"plan": "ann"}, {"plan": "scan"}, {"plan": "ann"}],
        "line 2",
        "column 'plan' changes within query 'q1'",
    ),
    "a bool, then a number": (
        [{"m": True}, {"m": 1}, {}],
        "line 2",
        "column 'm' holds an integer here but a boolean",
    ),
    "nulls as scores": ([{"score": None}, {"score": 1.0}, {"score": 2.0}], "line 1", "score is empty (null)"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_what_a_long_jsonl_run_cannot_hold_is_refused_by_its_line(tmp_path: Path, case: str) -> None:
    extra, where, problem = REFUSED[case]
    path = _long_jsonl(tmp_path / "run.jsonl", extra)
    with pytest.raises(InputError) as e:
        kept(path)
    assert e.value.path == str(path) and e.value.where == where and problem in e.value.problem
    assert not any(w in str(e.value) for w in ("Arrow", "kernel", "Function '"))


def test_a_scores_column_beside_chunk_ids_is_refused_by_name(tmp_path: Path) -> None:
    path = _long_jsonl(tmp_path / "run.jsonl", [{"scores": [1.0]}] * 3)
    with pytest.raises(InputError, match="holds a column 'scores' beside 'chunk_id'"):
        kept(path)


KEPT = {  # per row of the long run -> what the run keeps, a value per query (q1, q2)
    "lists of objects unlike each other": (
        [{"m": [{"a": 1}]}, {"m": [{"a": 1}]}, {"m": [{"a": "x"}]}],
        ['[{"a": 1}]', '[{"a": "x"}]'],
    ),
    "an integer beyond int64 in an object": (
        [{"m": {"a": 2**70 + 1}}, {"m": {"a": 2**70 + 1}}, {"m": {"a": 1}}],
        ['{"a": 1180591620717411303425}', '{"a": 1}'],
    ),
    "nulls, then a number, in lists": (
        [{"m": [None, None]}, {"m": [None]}, {"m": [None, 3]}],
        [[[None, None], [None]], [[None, 3]]],
    ),
    "lists of nulls": ([{"m": [None]}, {"m": [None, None]}, {"m": []}], [[[None], [None, None]], [[]]]),
    "nulls in an object's list": (
        [{"m": {"a": [None]}}, {"m": {"a": [None]}}, {"m": {"a": [None, None]}}],
        [{"a": [None]}, {"a": [None, None]}],
    ),
    "-0.0 and 0.0, one value": ([{"m": -0.0}, {"m": 0.0}, {"m": 1e300}], [-0.0, 1e300]),
}


@pytest.mark.parametrize("case", list(KEPT))
def test_what_arrows_json_reader_mishandles_is_kept_exactly(tmp_path: Path, case: str) -> None:
    extra, want = KEPT[case]
    table = kept(_long_jsonl(tmp_path / "run.jsonl", extra))
    table.validate(full=True)
    assert table.column("retrieved").to_pylist() == [["d1", "d2"], ["d3"]]
    assert table.column("m").to_pylist() == want


def test_lists_of_nulls_as_ids_are_refused_by_line_not_read_out_of_bounds(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"query_id": "q1", "retrieved": [null]}\n{"query_id": "q2", "retrieved": [null, null]}\n'
    )
    with pytest.raises(InputError, match=r"line 1: 'retrieved' holds an empty \(null\) element"):
        kept(path)


@pytest.mark.parametrize("value", [2**63 - 1, -(2**63), 2**53])
@pytest.mark.parametrize("name", ["latency_ms", "selectivity"])
def test_an_integer_no_float_holds_exactly_is_refused_by_row(tmp_path: Path, name: str, value: int) -> None:
    run = pa.table(
        {"query_id": ["q1", "q2"], "retrieved": [["a"], ["b"]], name: pa.array([1, value], pa.int64())}
    )
    path = write(run, tmp_path / "run.parquet")
    with pytest.raises(InputError, match=rf"row 2: '{name}' is -?9\.\d+e\+\d+, expected a number between"):
        kept(path)
