"""A filter's expression: the restricted SQL condition a filter reads into (`predicate`), in negation
normal form, and its canonical SQL text, the predicate's key (docs/truth.md "Filters").

NOT is pushed down into the leaves (`NOT a < 1` is `a >= 1`, `NOT (p AND q)` is `NOT p OR NOT q`),
AND and OR are flattened and their operands sorted by their SQL text and repeats dropped: spellings
of one condition share one key. With no NOT above a leaf, a row is eligible exactly where the leaves'
TRUE answers make the whole TRUE (`mask`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from typing import TypeAlias

from sqlglot import tokens

# A literal: a string, an integer, a float, a boolean, or a typed DATE/TIMESTAMP literal.
Value: TypeAlias = str | int | float | bool | dt.date | dt.datetime

SWAPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}  # a op b == b SWAPPED[op] a
NEGATED = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}  # NOT a op b == a NEGATED[op] b
DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")
TIMESTAMP_TEXT = re.compile(
    r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?"
)
PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")  # written bare in a key unless a SQL word
SQL_WORDS = frozenset(word for keyword in tokens.Tokenizer.KEYWORDS for word in keyword.split())


class Refused(Exception):
    """A construct refused while reading or binding; raised again as a FilterError with its place."""


# ---- the nodes -----------------------------------------------------------------------------------


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


def column_cmp(a: str, op: str, b: str) -> ColumnCmp:
    """`a op b` with the columns in name order (`x > x` is `x < x`)."""
    if a == b:
        return ColumnCmp(a, min(op, SWAPPED[op]), b)
    return ColumnCmp(a, op, b) if a < b else ColumnCmp(b, SWAPPED[op], a)


def cmp(column: str, op: str, value: Value) -> Cmp:
    """`column op value`; a boolean is compared by = alone (`x <> TRUE` is `x = FALSE`)."""
    if isinstance(value, bool):
        if op not in ("=", "<>"):
            raise Refused(f"`{column} {op} {literal(value)}`: booleans are compared with = and <> only")
        return Cmp(column, "=", value if op == "=" else not value)
    return Cmp(column, op, value)


# ---- the canonical form --------------------------------------------------------------------------


def negate(node: Node) -> Node:
    match node:
        case Cmp(column, op, value):
            return cmp(column, NEGATED[op], value)
        case ColumnCmp(left, op, right):
            return column_cmp(left, NEGATED[op], right)
        case InList() | Between() | Like() | IsNull() | IsBool():
            return _toggled(node)
        case Junction(op, items):
            return junction("OR" if op == "AND" else "AND", tuple(negate(i) for i in items))
    raise AssertionError(node)


def _toggled(node: InList | Between | Like | IsNull | IsBool) -> Node:
    return replace(node, negated=not node.negated)


def junction(op: str, items: tuple[Node, ...]) -> Node:
    flat: dict[str, Node] = {}
    for item in items:
        for part in item.items if isinstance(item, Junction) and item.op == op else (item,):
            flat.setdefault(sql(part), part)
    if len(flat) == 1:
        return next(iter(flat.values()))
    return Junction(op, tuple(flat[k] for k in sorted(flat)))


def _name(column: str) -> str:
    plain = PLAIN_NAME.fullmatch(column) and column.upper() not in SQL_WORDS
    return column if plain else '"' + column.replace('"', '""') + '"'


def literal(value: Value) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP{'TZ' * (value.tzinfo is not None)} '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    return repr(value)


def sql(node: Node) -> str:
    match node:
        case Cmp(column, op, value):
            return f"{_name(column)} {op} {literal(value)}"
        case ColumnCmp(left, op, right):
            return f"{_name(left)} {op} {_name(right)}"
        case InList(column, values, negated):
            return f"{_name(column)} {'NOT ' * negated}IN ({', '.join(map(literal, values))})"
        case Between(column, low, high, negated):
            return f"{_name(column)} {'NOT ' * negated}BETWEEN {literal(low)} AND {literal(high)}"
        case Like(column, pattern, negated, ignore_case):
            escape = " ESCAPE '\\'" if "\\" in pattern else ""
            return f"{_name(column)} {'NOT ' * negated}{'I' * ignore_case}LIKE {literal(pattern)}{escape}"
        case IsNull(column, negated):
            return f"{_name(column)} IS {'NOT ' * negated}NULL"
        case IsBool(column, value, negated):
            return f"{_name(column)} IS {'NOT ' * negated}{literal(value)}"
        case Junction(op, items):
            return f" {op} ".join(f"({sql(i)})" if isinstance(i, Junction) else sql(i) for i in items)
    raise AssertionError(node)


def leaves(node: Node) -> list[Node]:
    return [leaf for item in node.items for leaf in leaves(item)] if isinstance(node, Junction) else [node]


def columns_of(node: Node) -> set[str]:
    names: set[str] = set()
    for leaf in leaves(node):
        if isinstance(leaf, ColumnCmp):
            names |= {leaf.left, leaf.right}
        elif not isinstance(leaf, Junction):
            names.add(leaf.column)
    return names
