"""A filter's expression bound to a table's columns and evaluated as a boolean mask (docs/truth.md
"Filters"): `bind` refuses a leaf whose columns are missing or whose literals their types cannot
hold; `row_answers` gives each row's answer (TRUE, FALSE or NULL) under SQL's three-valued logic,
column-wise with pyarrow.compute.

A leaf's NULL and FALSE both leave a row out (the expression has no NOT above a leaf: `expression`).
Floats are ordered as DuckDB and PostgreSQL order them: NaN equals NaN and is above every number,
-0.0 equals 0.0; a literal compared with a float32 column is first rounded to float32; an integer
column is compared with a number exactly. A dictionary-encoded column is evaluated over its values.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.text.sanitize import visible
from triage.core.truth.expression import (
    DATE_TEXT,
    TIMESTAMP_TEXT,
    Between,
    Cmp,
    ColumnCmp,
    InList,
    IsBool,
    IsNull,
    Junction,
    Like,
    Node,
    Refused,
    Value,
    literal,
    sql,
)

Bools: TypeAlias = pa.ChunkedArray | pa.Array
KERNELS = {
    "=": pc.equal,
    "<>": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


# ---- binding to a schema -------------------------------------------------------------------------


def _field(schema: pa.Schema, name: str) -> pa.DataType:
    found = schema.get_all_field_indices(name)
    if len(found) == 1:
        return schema.field(found[0]).type
    if found:
        raise Refused(f"column {name!r} appears {len(found)} times in the corpus")
    names = schema.names
    same = [n for n in names if n.lower() == name.lower()]
    hint = f" (names are exact: did you mean {visible(same[0], cap=80)!r}?)" if same else ""
    listed = ", ".join(visible(n, cap=40) for n in names[:40]) + (" …" if len(names) > 40 else "")
    raise Refused(f"unknown column {visible(name, cap=80)!r}{hint}; the corpus has: {listed}")


def _kind(t: pa.DataType) -> str | None:
    """The family a column's type compares within, or None when a filter cannot compare it."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp"
    return None


def _comparable(name: str, t: pa.DataType) -> str:
    kind = _kind(t)
    if kind is None:
        raise Refused(
            f"column {visible(name, cap=80)!r} is {t}, which a filter cannot compare (IS NULL only)"
        )
    return kind


def bind(leaf: Node, schema: pa.Schema) -> None:
    """Refuses a leaf whose columns are missing or whose literals the columns' types cannot hold."""
    if isinstance(leaf, IsNull):
        _field(schema, leaf.column)
        return
    if isinstance(leaf, ColumnCmp):
        try:
            a, b = _field(schema, leaf.left), _field(schema, leaf.right)
        except Refused as e:
            raise Refused(
                f"{e} (double quotes name a column; a string is written in single quotes)"
            ) from None
        _pair(leaf, a, b)
        return
    assert not isinstance(leaf, Junction)
    t = _field(schema, leaf.column)
    kind = _comparable(leaf.column, t)
    if isinstance(leaf, IsBool) and kind != "boolean":
        raise Refused(f"{_quoted(leaf)}: column {leaf.column!r} is {t}, not boolean")
    if isinstance(leaf, Like) and kind != "string":
        raise Refused(f"{_quoted(leaf)}: LIKE matches strings; column {leaf.column!r} is {t}")
    for value in _values(leaf):
        _scalar(leaf, value, t)


def _values(leaf: Node) -> tuple[Value, ...]:
    match leaf:
        case Cmp(value=value):
            return (value,)
        case InList(values=values):
            return values
        case Between(low=low, high=high):
            return (low, high)
    return ()


def _pair(leaf: ColumnCmp, a: pa.DataType, b: pa.DataType) -> None:
    ka, kb = _comparable(leaf.left, a), _comparable(leaf.right, b)
    numbers = {"integer", "float"}
    same = ka == kb or {ka, kb} <= numbers
    if ka == "timestamp" and kb == "timestamp":
        same = (_value_type(a).tz is None) == (_value_type(b).tz is None)
    if not same:
        raise Refused(f"{_quoted(leaf)} compares {a} with {b}")


def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _scalar(leaf: Node, value: Value, t: pa.DataType) -> pa.Scalar | Value:
    """`value` as the column of type `t` compares with it; Refused when the type cannot hold it."""
    kind, vt = _kind(t), _value_type(t)
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if kind == "integer" and number is not None:
        return number  # compared exactly (`_integer_bound`)
    if kind == "float" and number is not None:
        return _float(leaf, number, vt)
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return pa.scalar(value)
    if kind == "date" and (isinstance(value, str) and DATE_TEXT.fullmatch(value) or _is_date(value)):
        return pa.scalar(_date(leaf, value), pa.date32())
    if kind == "timestamp" and (isinstance(value, str | dt.datetime) or _is_date(value)):
        return _timestamp(leaf, value, vt)
    raise Refused(
        f"{_quoted(leaf)}: column {_leaf_column(leaf)!r} is {t}; {literal(value)} is not {_kind_name(kind)}"
    )


def _float(leaf: Node, value: int | float, t: pa.DataType) -> pa.Scalar:
    """`value` rounded to the float column's type (float32 or float64), as DuckDB compares them."""
    try:
        with np.errstate(over="ignore"):
            rounded = np.dtype(t.to_pandas_dtype()).type(value)
    except OverflowError:
        rounded = math.inf
    if not math.isfinite(rounded):
        raise Refused(f"{_quoted(leaf)}: {literal(value)} is beyond the range of {t}")
    return pa.scalar(float(rounded), t)


def _quoted(leaf: Node) -> str:
    return f"`{visible(sql(leaf), cap=120)}`"


def _leaf_column(leaf: Node) -> str:
    return getattr(leaf, "column", "")


def _kind_name(kind: str | None) -> str:
    return {
        "integer": "a number",
        "float": "a number",
        "string": "a string ('…')",
        "boolean": "TRUE or FALSE",
        "date": "a date ('YYYY-MM-DD')",
        "timestamp": "a timestamp ('YYYY-MM-DD HH:MM:SS')",
    }.get(kind or "", "comparable")


def _is_date(value: Value) -> bool:
    return isinstance(value, dt.date) and not isinstance(value, dt.datetime)


def _date(leaf: Node, value: Value) -> dt.date:
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise Refused(f"{_quoted(leaf)}: '{visible(value, cap=40)}' is not a valid date") from None
    assert isinstance(value, dt.date)
    return value


def _timestamp(leaf: Node, value: Value, t: pa.TimestampType) -> pa.Scalar:
    if isinstance(value, str):
        if not TIMESTAMP_TEXT.fullmatch(value):
            raise Refused(
                f"{_quoted(leaf)}: '{visible(value, cap=40)}' is not an ISO timestamp ('YYYY-MM-DD HH:MM:SS')"
            )
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            raise Refused(f"{_quoted(leaf)}: '{visible(value, cap=40)}' is not a valid timestamp") from None
    if not isinstance(value, dt.datetime):
        assert isinstance(value, dt.date)
        value = dt.datetime(value.year, value.month, value.day)
    if t.tz is None and value.tzinfo is not None:
        raise Refused(
            f"{_quoted(leaf)}: the literal has a time zone and column {_leaf_column(leaf)!r} has none"
        )
    if t.tz is not None and value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)  # a naive literal against a zoned column: UTC
    try:
        return pa.scalar(value, pa.timestamp("ns" if t.unit == "ns" else "us", t.tz))
    except (pa.ArrowException, OverflowError, ValueError):
        raise Refused(f"{_quoted(leaf)}: {literal(value)} is out of the column's range") from None


# ---- evaluating ----------------------------------------------------------------------------------


def row_answers(node: Node, table: pa.Table) -> Bools:
    """Each row's answer to `node`: TRUE, FALSE or NULL (a bool array with nulls)."""
    if isinstance(node, Junction):
        combine = pc.and_kleene if node.op == "AND" else pc.or_kleene
        parts = [row_answers(item, table) for item in node.items]
        result = parts[0]
        for part in parts[1:]:
            result = combine(result, part)
        return result
    if isinstance(node, ColumnCmp):
        return _columns_compared(node, table)
    column = table.column(node.column)
    if isinstance(node, IsNull):  # a dictionary's value may be null as well as its index
        found = pc.fill_null(_on_values(column, pc.is_null), True)
        return pc.invert(found) if node.negated else found
    return _on_values(column, lambda values: _leaf(node, values, column.type))


def _on_values(column: pa.ChunkedArray, fn: Callable[[Bools], Bools]) -> Bools:
    """`fn` over the column's values; over each chunk's dictionary, then taken by its indices, when the
    column is dictionary-encoded (Parquet reads string columns so)."""
    if pa.types.is_dictionary(column.type):
        chunks = [pc.take(_as_plain(fn)(c.dictionary), c.indices) for c in column.chunks]
        return pa.chunked_array(chunks, pa.bool_())
    return _as_plain(fn)(column)


def _as_plain(fn: Callable[[Bools], Bools]) -> Callable[[Bools], Bools]:
    def plain(values: Bools) -> Bools:
        if pa.types.is_string_view(values.type):
            values = values.cast(pa.large_string())
        return fn(values)

    return plain


def _leaf(node: Node, values: Bools, t: pa.DataType) -> Bools:
    match node:
        case Cmp(_, op, value):
            return _compared(op, values, _scalar(node, value, t))
        case InList(_, items, negated):
            return _among(values, [_scalar(node, v, t) for v in items], negated)
        case Between(_, low, high, negated):
            lo, hi = _scalar(node, low, t), _scalar(node, high, t)
            if negated:
                return pc.or_kleene(_compared("<", values, lo), _compared(">", values, hi))
            return pc.and_kleene(_compared(">=", values, lo), _compared("<=", values, hi))
        case Like(_, pattern, negated, ignore_case):
            found = pc.match_like(values, pattern, ignore_case=ignore_case)
            return pc.invert(found) if negated else found
        case IsBool(_, value, negated):
            found = pc.fill_null(values if value else pc.invert(values), False)
            return pc.invert(found) if negated else found
    raise AssertionError(node)


def _compared(op: str, values: Bools, value: pa.Scalar | Value) -> Bools:
    """`values op value` under SQL's rules: exact for integers, in total order for floats."""
    if pa.types.is_integer(values.type):
        assert isinstance(value, int | float)
        bound = _integer_bound(op, value, values.type)
        if isinstance(bound, bool):
            return pc.is_valid(values) if bound else pc.and_kleene(pc.is_null(values), False)
        op, value = bound
        value = pa.scalar(value, values.type)
    found = KERNELS[op](values, value)
    if pa.types.is_floating(values.type) and op in (">", ">="):
        found = pc.or_kleene(found, pc.is_nan(values))  # NaN is above every number
    return found


def _integer_bound(op: str, value: int | float, t: pa.DataType) -> tuple[str, int] | bool:
    """`x op value` for an integer column x of type `t`, as `x op' n` with n in t's range, or the answer
    every non-null x gives (True or False)."""
    info = np.iinfo(t.to_pandas_dtype())
    if isinstance(value, float) and not value.is_integer():
        if op in ("=", "<>"):
            return op == "<>"
        op, value = ("<=", math.floor(value)) if op in ("<", "<=") else (">=", math.ceil(value))
    n = int(value)
    if n < info.min:
        return op in (">", ">=", "<>")
    if n > info.max:
        return op in ("<", "<=", "<>")
    return op, n


def _among(values: Bools, items: list[pa.Scalar | Value], negated: bool) -> Bools:
    t = values.type
    if pa.types.is_temporal(t):  # units and zones differ between column and literal: compared one by one
        found = _compared("=", values, items[0])
        for item in items[1:]:
            found = pc.or_kleene(found, _compared("=", values, item))
        return _negated_in(found, values) if negated else found
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        whole = [int(v) for v in items if isinstance(v, int) or float(v).is_integer()]  # type: ignore[arg-type]
        kept = pa.array([v for v in whole if info.min <= v <= info.max], t)
    else:
        kept = pa.array([v.as_py() if isinstance(v, pa.Scalar) else v for v in items], t)
    found = pc.is_in(values, value_set=kept)
    if pa.types.is_floating(t) and any(v == 0 for v in kept.to_pylist()):
        found = pc.or_(found, pc.fill_null(pc.equal(values, 0.0), False))  # -0.0 is 0.0
    return _negated_in(found, values) if negated else found


def _negated_in(found: Bools, values: Bools) -> Bools:
    return pc.and_kleene(pc.invert(found), pc.is_valid(values))  # NULL NOT IN (…) is not TRUE


def _columns_compared(node: ColumnCmp, table: pa.Table) -> Bools:
    a, b = (_decoded(table.column(n)) for n in (node.left, node.right))
    af, bf = pa.types.is_floating(a.type), pa.types.is_floating(b.type)
    if not (af or bf):
        return KERNELS[node.op](a, b)
    # NaN or not, NULL where the value is NULL (an integer column is never NaN)
    na, nb = (pc.is_nan(x) if xf else pc.invert(pc.equal(x, x)) for x, xf in ((a, af), (b, bf)))
    both = pc.and_kleene(na, nb)
    eq = pc.or_kleene(pc.equal(a, b), both)  # NaN = NaN
    lt = pc.or_kleene(pc.less(a, b), pc.and_kleene(pc.invert(na), nb))  # a number < NaN
    gt = pc.or_kleene(pc.greater(a, b), pc.and_kleene(na, pc.invert(nb)))
    return {
        "=": lambda: eq,
        "<>": lambda: pc.invert(eq),
        "<": lambda: lt,
        "<=": lambda: pc.or_kleene(lt, eq),
        ">": lambda: gt,
        ">=": lambda: pc.or_kleene(gt, eq),
    }[node.op]()


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    t = column.type
    if pa.types.is_dictionary(t):
        column, t = column.cast(t.value_type), t.value_type
    return column.cast(pa.large_string()) if pa.types.is_string_view(t) else column
