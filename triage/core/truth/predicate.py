"""Filters: a SQL `WHERE` clause over a corpus's metadata columns, read into a small expression
(`expression`) and evaluated as a boolean mask over an Arrow table (`mask`); docs/truth.md "Filters".

The grammar is what vector stores' users write (`tenant = 'acme' AND doc_type IN ('sow','amendment')`):
a column compared with a literal or another column (= != <> < <= > >=), IN, BETWEEN, LIKE, ILIKE,
IS [NOT] NULL, IS [NOT] TRUE/FALSE, a boolean column alone, AND, OR, NOT and parentheses. sqlglot reads
the text; whatever else it finds (a function, a subquery, arithmetic, a cast, a parameter) is refused
by name, as is a literal whose type the column cannot hold. Nothing is converted silently.

The expression is kept in negation normal form, and its canonical SQL text is the predicate's `key`
(`expression`). Under SQL's three-valued logic a row is eligible where the whole is TRUE (`mask`).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp, tokens
from sqlglot.dialects.dialect import Dialect

from triage.core.errors import InputError
from triage.core.text.sanitize import visible
from triage.core.truth.expression import (
    DATE_TEXT,
    SWAPPED,
    TIMESTAMP_TEXT,
    Between,
    Cmp,
    InList,
    IsBool,
    IsNull,
    Like,
    Node,
    Refused,
    Value,
    cmp,
    column_cmp,
    columns_of,
    junction,
    leaves,
    literal,
    negate,
    sql,
)
from triage.core.truth.mask import bind, row_answers

OPS: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
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
KEYWORD_HINT = ' (a column named like a SQL word is written in double quotes: "order")'


class FilterError(InputError):
    """A filter that cannot be read or does not fit the corpus: the message names the construct (and,
    when the caller gave them, the file and the row the filter came from)."""

    def __init__(self, problem: str, path: Path | str = "", where: str = "") -> None:
        super().__init__(path, problem, where)

    @property
    def message(self) -> str:
        return ": ".join(part for part in (self.path, self.where, self.problem) if part)


class _Dialect(Dialect):
    """sqlglot's own dialect, with backticks quoting a column name as LanceDB's filters write them."""

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ['"', "`"]


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
        return frozenset(columns_of(self.node)) if self.node is not None else frozenset()

    def mask(self, table: pa.Table, path: Path | str = "", where: str = "") -> np.ndarray:
        """One bool per row of `table`: True where the filter is TRUE. Checks the columns first
        (`check`); FilterError naming `path` and `where` when they do not fit."""
        if self.node is None:
            return np.ones(table.num_rows, dtype=bool)
        check(self, table.schema, path, where)
        try:
            result = row_answers(self.node, table)
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
    except Refused as e:
        raise FilterError(f"filter {visible(text, cap=200)!r}: {e}", path, where) from None
    except RecursionError:
        raise FilterError(f"filter {visible(text, cap=200)!r}: nested too deeply", path, where) from None
    return Predicate(sql(node), node, text)


def check(predicate: Predicate, schema: pa.Schema, path: Path | str = "", where: str = "") -> None:
    """FilterError unless every column the predicate names is in `schema` once, with a type its
    literals and comparisons fit. Reads no data."""
    if predicate.node is None:
        return
    try:
        for leaf in leaves(predicate.node):
            bind(leaf, schema)
    except Refused as e:
        raise FilterError(f"{predicate._shown()}: {e}", path, where) from None


# ---- reading SQL ---------------------------------------------------------------------------------


def _syntax(text: str) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(text, read=_Dialect)
    except sqlglot.errors.ParseError as e:
        first = e.errors[0] if e.errors else {}
        at = f" at line {first['line']}, column {first['col']}" if first.get("line") else ""
        raise Refused(f"not a SQL condition: {first.get('description', e)}{at}{KEYWORD_HINT}") from None
    except sqlglot.errors.SqlglotError as e:
        raise Refused(f"not a SQL condition: {str(e).splitlines()[0]}") from None
    if not isinstance(tree, exp.Expression) or isinstance(tree, exp.Block):
        raise Refused("holds more than one statement; a filter is one condition")
    return tree


def _node(e: exp.Expression) -> Node:
    if isinstance(e, exp.Paren):
        return _node(e.this)
    if isinstance(e, exp.Not):
        return negate(_node(e.this))
    if isinstance(e, exp.And | exp.Or):  # a chain of one connector, read without recursion
        return junction(
            "AND" if isinstance(e, exp.And) else "OR",
            tuple(_node(cast(exp.Expression, x)) for x in e.flatten()),
        )
    if type(e) in OPS:
        return _comparison(OPS[type(e)], _operand(e.this), _operand(e.expression), e)
    if isinstance(e, exp.In | exp.Between):
        node = _in(e) if isinstance(e, exp.In) else _between(e)
        return negate(node) if e.args.get("negate") else node
    if isinstance(e, exp.Like | exp.ILike | exp.Escape):
        return _like(e)
    if isinstance(e, exp.Is):
        return _is(e)
    if isinstance(e, exp.Column):
        return Cmp(_column(e), "=", True)  # a boolean column alone
    raise Refused(_construct(e))


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
        raise Refused(_construct(e))
    if e.args.get("table") is not None:
        raise Refused(f"column `{visible(e.sql(), cap=80)}` is qualified; name the column alone")
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
        raise Refused(f"`{visible(e.sql(), cap=80)}` is a column where a literal belongs")
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
        raise Refused(f"`{shown}` is never true (NULL equals nothing); write IS NULL or IS NOT NULL")
    if isinstance(e, exp.Cast) and isinstance(e.this, exp.Literal) and e.this.is_string:
        kind = TYPED.get(e.to.this)
        if kind is not None:
            return _typed(kind, e.this.this)
    raise Refused(_construct(e))


def _number(text: str) -> int | float:
    if text.isdigit():
        return int(text)
    x = float(text)
    if not math.isfinite(x):
        raise Refused(f"number {text} is out of range")
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
    raise Refused(f"{kind} '{visible(text, cap=80)}' is not a valid {kind.lower()} ({form})")


def _comparison(op: str, a: str | _Literal, b: str | _Literal, e: exp.Expression) -> Node:
    if isinstance(a, _Literal) and isinstance(b, _Literal):
        raise Refused(f"`{visible(e.sql(), cap=80)}` compares two literals; compare a column")
    if isinstance(a, str) and isinstance(b, str):
        return column_cmp(a, op, b)
    column, value = (a, b) if isinstance(a, str) else (b, a)
    op = op if isinstance(a, str) else SWAPPED[op]
    assert isinstance(column, str) and isinstance(value, _Literal)
    return cmp(column, op, value.value)


def _in(e: exp.In) -> Node:
    if e.args.get("query") is not None or e.args.get("unnest") is not None:
        raise Refused(f"a subquery in `{visible(e.sql(), cap=80)}` is not allowed: {ALLOWED}")
    column = _column(e.this)
    if not e.expressions:
        raise Refused(f"`{visible(e.sql(), cap=80)}` lists no values")
    values = [_value(v) for v in e.expressions]
    return _in_list(column, values, False)


def _in_list(column: str, values: list[Value], negated: bool) -> Node:
    unique = sorted({(type(v).__name__, v) for v in values}, key=lambda tv: (tv[0], literal(tv[1])))
    kept = tuple(v for _, v in unique)
    if len(kept) == 1:
        return cmp(column, "<>" if negated else "=", kept[0])
    return InList(column, kept, negated)


def _between(e: exp.Between) -> Node:
    if e.args.get("symmetric"):
        raise Refused("BETWEEN SYMMETRIC is not allowed; order the bounds")
    low, high = _value(e.args["low"]), _value(e.args["high"])
    if isinstance(low, bool) or isinstance(high, bool):
        raise Refused(f"`{visible(e.sql(), cap=80)}`: booleans are compared with = and <> only")
    return Between(_column(e.this), low, high, False)


def _like(e: exp.Expression) -> Node:
    escape = None
    if isinstance(e, exp.Escape):
        given = _value(e.expression)
        if not isinstance(given, str) or len(given) != 1:
            raise Refused(f"ESCAPE takes one character, found {visible(literal(given), cap=40)}")
        escape, e = given, e.this
    if not isinstance(e, exp.Like | exp.ILike):
        raise Refused(_construct(e))
    pattern = _value(e.expression) if isinstance(e.expression, exp.Literal) else None
    if not isinstance(pattern, str):
        raise Refused(f"`{visible(e.sql(), cap=80)}`: a LIKE pattern is a string literal")
    return Like(
        _column(e.this), _pattern(pattern, escape), bool(e.args.get("negate")), isinstance(e, exp.ILike)
    )


def _pattern(raw: str, escape: str | None) -> str:
    """`raw` with its escape character replaced by a backslash (Arrow's LIKE escape)."""
    if escape is None:
        if "\\" in raw:
            raise Refused(
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
            raise Refused(
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
    raise Refused(f"`{visible(e.sql(), cap=80)}`: IS takes NULL, TRUE or FALSE")
