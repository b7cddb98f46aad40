"""Filters: a SQL `WHERE` clause over a corpus's metadata columns, as a small expression and as a
boolean mask over an Arrow table (docs/truth.md "Filters").

The grammar is what vector stores' users write (`tenant = 'acme' AND doc_type IN ('sow','amendment')`):
a column compared with a literal or another column (= != <> < <= > >=), IN, BETWEEN, LIKE, ILIKE,
IS [NOT] NULL, IS [NOT] TRUE/FALSE, a boolean column alone, AND, OR, NOT and parentheses. sqlglot reads
the text; whatever else it finds (a function, a subquery, arithmetic, a cast, a parameter) is refused
by name, as is a literal whose type the column cannot hold. Nothing is converted silently.

The expression is kept in negation normal form: NOT is pushed down into the leaves (`NOT a < 1` is
`a >= 1`, `NOT (p AND q)` is `NOT p OR NOT q`), AND and OR are flattened and their operands sorted.
Its SQL text is the predicate's `key`. Under SQL's three-valued logic a row is eligible where the whole
is TRUE; with no NOT above a leaf, that holds exactly where the leaves' TRUE answers make it so, so a
leaf's NULL and FALSE both leave a row out. Floats are ordered as DuckDB and PostgreSQL order them:
NaN equals NaN and is above every number, -0.0 equals 0.0; a literal compared with a float32 column is
first rounded to float32.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeAlias, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp, tokens
from sqlglot.dialects.dialect import Dialect

from triage.core.errors import InputError
from triage.core.text.sanitize import visible

# A literal: a string, an integer, a float, a boolean, or a typed DATE/TIMESTAMP literal.
Value: TypeAlias = str | int | float | bool | dt.date | dt.datetime
Bools: TypeAlias = pa.ChunkedArray | pa.Array

OPS: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
SWAPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}  # a op b == b SWAPPED[op] a
NEGATED = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}  # NOT a op b == a NEGATED[op] b
KERNELS = {
    "=": pc.equal,
    "<>": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}
ALLOWED = "a filter compares columns with literals or columns (=, <>, <, >, IN, BETWEEN, LIKE, IS NULL …)"
ARITHMETIC: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.DPipe: "||",
}
TYPED = {exp.DataType.Type.DATE: "DATE", exp.DataType.Type.TIMESTAMP: "TIMESTAMP"}
TYPED[exp.DataType.Type.TIMESTAMPTZ] = "TIMESTAMPTZ"
DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")
TIMESTAMP_TEXT = re.compile(
    r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?"
)
KEYWORD_HINT = ' (a column named like a SQL word is written in double quotes: "order")'
PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")  # written bare in a key unless a SQL word
SQL_WORDS = frozenset(word for keyword in tokens.Tokenizer.KEYWORDS for word in keyword.split())


class FilterError(InputError):
    """A filter that cannot be read or does not fit the corpus: the message names the construct (and,
    when the caller gave them, the file and the row the filter came from)."""

    def __init__(self, problem: str, path: Path | str = "", where: str = "") -> None:
        super().__init__(path, problem, where)

    @property
    def message(self) -> str:
        return ": ".join(part for part in (self.path, self.where, self.problem) if part)


class _Refused(Exception):
    """A construct refused while reading or binding; raised again as a FilterError with its place."""


class _Dialect(Dialect):
    """sqlglot's own dialect, with backticks quoting a column name as LanceDB's filters write them."""

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ['"', "`"]


# ---- the expression ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cmp:
    """`column op value`."""

    column: str
    op: str
    value: Value


@dataclass(frozen=True)
class ColumnCmp:
    """`left op right`, two columns."""

    left: str
    op: str
    right: str


@dataclass(frozen=True)
class InList:
    """`column [NOT] IN (values)`: two or more values, sorted, none repeated."""

    column: str
    values: tuple[Value, ...]
    negated: bool


@dataclass(frozen=True)
class Between:
    """`column [NOT] BETWEEN low AND high`, both bounds included."""

    column: str
    low: Value
    high: Value
    negated: bool


@dataclass(frozen=True)
class Like:
    """`column [NOT] [I]LIKE pattern`; the pattern escapes a literal %, _ or \\ with a backslash."""

    column: str
    pattern: str
    negated: bool
    ignore_case: bool


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool


@dataclass(frozen=True)
class IsBool:
    """`column IS [NOT] TRUE|FALSE`: never NULL."""

    column: str
    value: bool
    negated: bool


@dataclass(frozen=True)
class Junction:
    """`a AND b AND …` or `a OR b OR …`: two or more operands, none itself the same junction."""

    op: str
    items: tuple[Node, ...]


Node: TypeAlias = Cmp | ColumnCmp | InList | Between | Like | IsNull | IsBool | Junction


@dataclass(frozen=True)
class Predicate:
    """A parsed filter. Two predicates are equal when their keys are."""

    key: str  # the canonical SQL text; "" when unfiltered
    node: Node | None = field(compare=False)  # None when unfiltered
    text: str | None = field(compare=False, default=None)  # as given

    @property
    def unfiltered(self) -> bool:
        return self.node is None

    @property
    def columns(self) -> frozenset[str]:
        return frozenset(_columns(self.node)) if self.node is not None else frozenset()

    def mask(self, table: pa.Table, path: Path | str = "", where: str = "") -> np.ndarray:
        """One bool per row of `table`: True where the filter is TRUE. Checks the columns first
        (`check`); FilterError naming `path` and `where` when they do not fit."""
        if self.node is None:
            return np.ones(table.num_rows, dtype=bool)
        check(self, table.schema, path, where)
        try:
            result = _evaluate(self.node, table)
        except pa.ArrowException as e:  # a type pair the checks let through and Arrow cannot compare
            raise FilterError(f"{self._shown()}: cannot be evaluated: {e}", path, where) from None
        return np.asarray(pc.fill_null(result, False), dtype=bool).reshape(table.num_rows)

    def _shown(self) -> str:
        return f"filter {visible(self.text if self.text is not None else self.key, cap=200)!r}"


def parse_filter(text: str | None, path: Path | str = "", where: str = "") -> Predicate:
    """The predicate `text` writes; None, empty or blank text is the unfiltered predicate.
    FilterError (naming `path` and `where`, e.g. "queries.jsonl", "line 12") on anything refused."""
    if text is None or not text.strip():
        return Predicate("", None, text)
    try:
        node = _node(_syntax(text))
    except _Refused as e:
        raise FilterError(f"filter {visible(text, cap=200)!r}: {e}", path, where) from None
    except RecursionError:
        raise FilterError(f"filter {visible(text, cap=200)!r}: nested too deeply", path, where) from None
    return Predicate(_sql(node), node, text)


def check(predicate: Predicate, schema: pa.Schema, path: Path | str = "", where: str = "") -> None:
    """FilterError unless every column the predicate names is in `schema` once, with a type its
    literals and comparisons fit. Reads no data."""
    if predicate.node is None:
        return
    try:
        for leaf in _leaves(predicate.node):
            _bind(leaf, schema)
    except _Refused as e:
        raise FilterError(f"{predicate._shown()}: {e}", path, where) from None


# ---- reading SQL ---------------------------------------------------------------------------------


def _syntax(text: str) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(text, read=_Dialect)
    except sqlglot.errors.ParseError as e:
        first = e.errors[0] if e.errors else {}
        at = f" at line {first['line']}, column {first['col']}" if first.get("line") else ""
        raise _Refused(f"not a SQL condition: {first.get('description', e)}{at}{KEYWORD_HINT}") from None
    except sqlglot.errors.SqlglotError as e:
        raise _Refused(f"not a SQL condition: {str(e).splitlines()[0]}") from None
    if not isinstance(tree, exp.Expression) or isinstance(tree, exp.Block):
        raise _Refused("holds more than one statement; a filter is one condition")
    return tree


def _node(e: exp.Expression) -> Node:
    if isinstance(e, exp.Paren):
        return _node(e.this)
    if isinstance(e, exp.Not):
        return _negate(_node(e.this))
    if isinstance(e, exp.And | exp.Or):  # a chain of one connector, read without recursion
        return _junction(
            "AND" if isinstance(e, exp.And) else "OR",
            tuple(_node(cast(exp.Expression, x)) for x in e.flatten()),
        )
    if type(e) in OPS:
        return _comparison(OPS[type(e)], _operand(e.this), _operand(e.expression), e)
    if isinstance(e, exp.In | exp.Between):
        node = _in(e) if isinstance(e, exp.In) else _between(e)
        return _negate(node) if e.args.get("negate") else node
    if isinstance(e, exp.Like | exp.ILike | exp.Escape):
        return _like(e)
    if isinstance(e, exp.Is):
        return _is(e)
    if isinstance(e, exp.Column):
        return Cmp(_column(e), "=", True)  # a boolean column alone
    raise _Refused(_construct(e))


def _construct(e: exp.Expression) -> str:
    """What `e` is, named for a refusal."""
    shown = f"`{visible(e.sql(), cap=80)}`"
    if isinstance(e, exp.Alias):
        return f"unexpected `{visible(e.alias, cap=80)}` after `{visible(e.this.sql(), cap=80)}`"
    if isinstance(e, exp.Literal | exp.Boolean):
        return f"{shown} is a literal, not a condition; compare a column with it"
    if isinstance(e, exp.Placeholder):
        return f"a parameter {shown} is not allowed; write the value itself"
    if isinstance(e, exp.Cast):
        return f"a cast {shown} is not allowed; the only typed literals are DATE '…' and TIMESTAMP '…'"
    if isinstance(e, exp.Select | exp.Subquery | exp.Exists) or e.find(exp.Select):
        what = f"a subquery {shown}"
    elif isinstance(e, exp.Func):
        what = f"function {e.name if isinstance(e, exp.Anonymous) else e.sql_name()}"
    elif type(e) in ARITHMETIC:
        what = f"arithmetic `{ARITHMETIC[type(e)]}` in {shown}"
    else:
        what = shown
    return f"{what} is not allowed: {ALLOWED}"


def _column(e: exp.Expression) -> str:
    while isinstance(e, exp.Paren):
        e = e.this
    if not isinstance(e, exp.Column):
        raise _Refused(_construct(e))
    if e.args.get("table") is not None:
        raise _Refused(f"column `{visible(e.sql(), cap=80)}` is qualified; name the column alone")
    return e.name


def _operand(e: exp.Expression) -> str | _Literal:
    """A column's name, or a literal."""
    if isinstance(e, exp.Column | exp.Paren) and isinstance(e.unnest(), exp.Column):
        return _column(e)
    return _Literal(_value(e))


@dataclass(frozen=True)
class _Literal:
    value: Value


def _value(e: exp.Expression) -> Value:
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.Column):
        raise _Refused(f"`{visible(e.sql(), cap=80)}` is a column where a literal belongs")
    if isinstance(e, exp.Literal) and e.is_string:
        return e.this
    if isinstance(e, exp.Literal):
        return _number(e.this)
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        return -_number(e.this.this)
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Null):
        shown = visible(e.parent.sql() if e.parent else "NULL", cap=80)
        raise _Refused(f"`{shown}` is never true (NULL equals nothing); write IS NULL or IS NOT NULL")
    if isinstance(e, exp.Cast) and isinstance(e.this, exp.Literal) and e.this.is_string:
        kind = TYPED.get(e.to.this)
        if kind is not None:
            return _typed(kind, e.this.this)
    raise _Refused(_construct(e))


def _number(text: str) -> int | float:
    if text.isdigit():
        return int(text)
    x = float(text)
    if not math.isfinite(x):
        raise _Refused(f"number {text} is out of range")
    return x


def _typed(kind: str, text: str) -> dt.date | dt.datetime:
    try:
        if kind == "DATE" and DATE_TEXT.fullmatch(text):
            return dt.date.fromisoformat(text)
        if kind != "DATE" and TIMESTAMP_TEXT.fullmatch(text):
            stamp = dt.datetime.fromisoformat(text)
            if kind == "TIMESTAMPTZ" and stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=dt.UTC)
            return stamp
    except ValueError:
        pass
    form = "YYYY-MM-DD" if kind == "DATE" else "YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][+HH:MM]"
    raise _Refused(f"{kind} '{visible(text, cap=80)}' is not a valid {kind.lower()} ({form})")


def _comparison(op: str, a: str | _Literal, b: str | _Literal, e: exp.Expression) -> Node:
    if isinstance(a, _Literal) and isinstance(b, _Literal):
        raise _Refused(f"`{visible(e.sql(), cap=80)}` compares two literals; compare a column")
    if isinstance(a, str) and isinstance(b, str):
        return _column_cmp(a, op, b)
    column, value = (a, b) if isinstance(a, str) else (b, a)
    op = op if isinstance(a, str) else SWAPPED[op]
    assert isinstance(column, str) and isinstance(value, _Literal)
    return _cmp(column, op, value.value)


def _column_cmp(a: str, op: str, b: str) -> ColumnCmp:
    """`a op b` with the columns in name order (`x > x` is `x < x`)."""
    if a == b:
        return ColumnCmp(a, min(op, SWAPPED[op]), b)
    return ColumnCmp(a, op, b) if a < b else ColumnCmp(b, SWAPPED[op], a)


def _cmp(column: str, op: str, value: Value) -> Cmp:
    if isinstance(value, bool):
        if op not in ("=", "<>"):
            raise _Refused(f"`{column} {op} {_literal(value)}`: booleans are compared with = and <> only")
        return Cmp(column, "=", value if op == "=" else not value)
    return Cmp(column, op, value)


def _in(e: exp.In) -> Node:
    if e.args.get("query") is not None or e.args.get("unnest") is not None:
        raise _Refused(f"a subquery in `{visible(e.sql(), cap=80)}` is not allowed: {ALLOWED}")
    column = _column(e.this)
    if not e.expressions:
        raise _Refused(f"`{visible(e.sql(), cap=80)}` lists no values")
    values = [_value(v) for v in e.expressions]
    return _in_list(column, values, False)


def _in_list(column: str, values: list[Value], negated: bool) -> Node:
    unique = sorted({(type(v).__name__, v) for v in values}, key=lambda tv: (tv[0], _literal(tv[1])))
    kept = tuple(v for _, v in unique)
    if len(kept) == 1:
        return _cmp(column, "<>" if negated else "=", kept[0])
    return InList(column, kept, negated)


def _between(e: exp.Between) -> Node:
    if e.args.get("symmetric"):
        raise _Refused("BETWEEN SYMMETRIC is not allowed; order the bounds")
    low, high = _value(e.args["low"]), _value(e.args["high"])
    if isinstance(low, bool) or isinstance(high, bool):
        raise _Refused(f"`{visible(e.sql(), cap=80)}`: booleans are compared with = and <> only")
    return Between(_column(e.this), low, high, False)


def _like(e: exp.Expression) -> Node:
    escape = None
    if isinstance(e, exp.Escape):
        given = _value(e.expression)
        if not isinstance(given, str) or len(given) != 1:
            raise _Refused(f"ESCAPE takes one character, found {visible(_literal(given), cap=40)}")
        escape, e = given, e.this
    if not isinstance(e, exp.Like | exp.ILike):
        raise _Refused(_construct(e))
    pattern = _value(e.expression) if isinstance(e.expression, exp.Literal) else None
    if not isinstance(pattern, str):
        raise _Refused(f"`{visible(e.sql(), cap=80)}`: a LIKE pattern is a string literal")
    return Like(
        _column(e.this), _pattern(pattern, escape), bool(e.args.get("negate")), isinstance(e, exp.ILike)
    )


def _pattern(raw: str, escape: str | None) -> str:
    """`raw` with its escape character replaced by a backslash (Arrow's LIKE escape)."""
    if escape is None:
        if "\\" in raw:
            raise _Refused(
                f"LIKE pattern '{visible(raw, cap=80)}' holds a backslash: engines differ on whether it "
                "escapes; say so with ESCAPE '\\' (or another character)"
            )
        return raw
    out, chars = [], iter(raw)
    for ch in chars:
        if ch != escape:
            out.append("\\" + ch if ch == "\\" else ch)
            continue
        nxt = next(chars, None)
        if nxt not in ("%", "_", escape):
            raise _Refused(
                f"LIKE pattern '{visible(raw, cap=80)}': the escape {escape!r} comes before %, _ or itself"
            )
        out.append("\\" + nxt if nxt in ("%", "_", "\\") else nxt)  # an escaped escape is itself
    return "".join(out)


def _is(e: exp.Is) -> Node:
    column = _column(e.this)
    if isinstance(e.expression, exp.Null):
        return IsNull(column, False)
    if isinstance(e.expression, exp.Boolean):
        return IsBool(column, bool(e.expression.this), False)
    raise _Refused(f"`{visible(e.sql(), cap=80)}`: IS takes NULL, TRUE or FALSE")


# ---- the canonical form --------------------------------------------------------------------------


def _negate(node: Node) -> Node:
    match node:
        case Cmp(column, op, value):
            return _cmp(column, NEGATED[op], value)
        case ColumnCmp(left, op, right):
            return _column_cmp(left, NEGATED[op], right)
        case InList() | Between() | Like() | IsNull() | IsBool():
            return _toggled(node)
        case Junction(op, items):
            return _junction("OR" if op == "AND" else "AND", tuple(_negate(i) for i in items))
    raise AssertionError(node)


def _toggled(node: InList | Between | Like | IsNull | IsBool) -> Node:
    return replace(node, negated=not node.negated)


def _junction(op: str, items: tuple[Node, ...]) -> Node:
    flat: dict[str, Node] = {}
    for item in items:
        for part in item.items if isinstance(item, Junction) and item.op == op else (item,):
            flat.setdefault(_sql(part), part)
    if len(flat) == 1:
        return next(iter(flat.values()))
    return Junction(op, tuple(flat[k] for k in sorted(flat)))


def _name(column: str) -> str:
    plain = PLAIN_NAME.fullmatch(column) and column.upper() not in SQL_WORDS
    return column if plain else '"' + column.replace('"', '""') + '"'


def _literal(value: Value) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP{'TZ' * (value.tzinfo is not None)} '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    return repr(value)


def _sql(node: Node) -> str:
    match node:
        case Cmp(column, op, value):
            return f"{_name(column)} {op} {_literal(value)}"
        case ColumnCmp(left, op, right):
            return f"{_name(left)} {op} {_name(right)}"
        case InList(column, values, negated):
            return f"{_name(column)} {'NOT ' * negated}IN ({', '.join(map(_literal, values))})"
        case Between(column, low, high, negated):
            return f"{_name(column)} {'NOT ' * negated}BETWEEN {_literal(low)} AND {_literal(high)}"
        case Like(column, pattern, negated, ignore_case):
            escape = " ESCAPE '\\'" if "\\" in pattern else ""
            return f"{_name(column)} {'NOT ' * negated}{'I' * ignore_case}LIKE {_literal(pattern)}{escape}"
        case IsNull(column, negated):
            return f"{_name(column)} IS {'NOT ' * negated}NULL"
        case IsBool(column, value, negated):
            return f"{_name(column)} IS {'NOT ' * negated}{_literal(value)}"
        case Junction(op, items):
            return f" {op} ".join(f"({_sql(i)})" if isinstance(i, Junction) else _sql(i) for i in items)
    raise AssertionError(node)


def _leaves(node: Node) -> list[Node]:
    return [leaf for item in node.items for leaf in _leaves(item)] if isinstance(node, Junction) else [node]


def _columns(node: Node) -> set[str]:
    names: set[str] = set()
    for leaf in _leaves(node):
        if isinstance(leaf, ColumnCmp):
            names |= {leaf.left, leaf.right}
        elif not isinstance(leaf, Junction):
            names.add(leaf.column)
    return names


# ---- binding to a schema -------------------------------------------------------------------------


def _field(schema: pa.Schema, name: str) -> pa.DataType:
    found = schema.get_all_field_indices(name)
    if len(found) == 1:
        return schema.field(found[0]).type
    if found:
        raise _Refused(f"column {name!r} appears {len(found)} times in the corpus")
    names = schema.names
    same = [n for n in names if n.lower() == name.lower()]
    hint = f" (names are exact: did you mean {visible(same[0], cap=80)!r}?)" if same else ""
    listed = ", ".join(visible(n, cap=40) for n in names[:40]) + (" …" if len(names) > 40 else "")
    raise _Refused(f"unknown column {visible(name, cap=80)!r}{hint}; the corpus has: {listed}")


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
        raise _Refused(
            f"column {visible(name, cap=80)!r} is {t}, which a filter cannot compare (IS NULL only)"
        )
    return kind


def _bind(leaf: Node, schema: pa.Schema) -> None:
    """Refuses a leaf whose columns are missing or whose literals the columns' types cannot hold."""
    if isinstance(leaf, IsNull):
        _field(schema, leaf.column)
        return
    if isinstance(leaf, ColumnCmp):
        try:
            a, b = _field(schema, leaf.left), _field(schema, leaf.right)
        except _Refused as e:
            raise _Refused(
                f"{e} (double quotes name a column; a string is written in single quotes)"
            ) from None
        _pair(leaf, a, b)
        return
    assert not isinstance(leaf, Junction)
    t = _field(schema, leaf.column)
    kind = _comparable(leaf.column, t)
    if isinstance(leaf, IsBool) and kind != "boolean":
        raise _Refused(f"{_quoted(leaf)}: column {leaf.column!r} is {t}, not boolean")
    if isinstance(leaf, Like) and kind != "string":
        raise _Refused(f"{_quoted(leaf)}: LIKE matches strings; column {leaf.column!r} is {t}")
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
        raise _Refused(f"{_quoted(leaf)} compares {a} with {b}")


def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _scalar(leaf: Node, value: Value, t: pa.DataType) -> pa.Scalar | Value:
    """`value` as the column of type `t` compares with it; _Refused when the type cannot hold it."""
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
    raise _Refused(
        f"{_quoted(leaf)}: column {_leaf_column(leaf)!r} is {t}; {_literal(value)} is not {_kind_name(kind)}"
    )


def _float(leaf: Node, value: int | float, t: pa.DataType) -> pa.Scalar:
    """`value` rounded to the float column's type (float32 or float64), as DuckDB compares them."""
    try:
        with np.errstate(over="ignore"):
            rounded = np.dtype(t.to_pandas_dtype()).type(value)
    except OverflowError:
        rounded = math.inf
    if not math.isfinite(rounded):
        raise _Refused(f"{_quoted(leaf)}: {_literal(value)} is beyond the range of {t}")
    return pa.scalar(float(rounded), t)


def _quoted(leaf: Node) -> str:
    return f"`{visible(_sql(leaf), cap=120)}`"


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
            raise _Refused(f"{_quoted(leaf)}: '{visible(value, cap=40)}' is not a valid date") from None
    assert isinstance(value, dt.date)
    return value


def _timestamp(leaf: Node, value: Value, t: pa.TimestampType) -> pa.Scalar:
    if isinstance(value, str):
        if not TIMESTAMP_TEXT.fullmatch(value):
            raise _Refused(
                f"{_quoted(leaf)}: '{visible(value, cap=40)}' is not an ISO timestamp ('YYYY-MM-DD HH:MM:SS')"
            )
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            raise _Refused(f"{_quoted(leaf)}: '{visible(value, cap=40)}' is not a valid timestamp") from None
    if not isinstance(value, dt.datetime):
        assert isinstance(value, dt.date)
        value = dt.datetime(value.year, value.month, value.day)
    if t.tz is None and value.tzinfo is not None:
        raise _Refused(
            f"{_quoted(leaf)}: the literal has a time zone and column {_leaf_column(leaf)!r} has none"
        )
    if t.tz is not None and value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)  # a naive literal against a zoned column: UTC
    try:
        return pa.scalar(value, pa.timestamp("ns" if t.unit == "ns" else "us", t.tz))
    except (pa.ArrowException, OverflowError, ValueError):
        raise _Refused(f"{_quoted(leaf)}: {_literal(value)} is out of the column's range") from None


# ---- evaluating ----------------------------------------------------------------------------------


def _evaluate(node: Node, table: pa.Table) -> Bools:
    if isinstance(node, Junction):
        combine = pc.and_kleene if node.op == "AND" else pc.or_kleene
        parts = [_evaluate(item, table) for item in node.items]
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
