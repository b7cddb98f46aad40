"""Each table's columns, declared once: a column's title, its cell, the sentence saying what it
holds, and how it is laid out.

The text, Markdown and HTML reports take their headers and cells from these, the app's tables
theirs (the tenants and slices screens the very ones their sections declare: `sections/tenants.py`
`TENANTS`, `sections/slices.py` `SLICES`; the app's own lists declare theirs beside them, with this
type), the app's `?` and docs/keys.md the sentences. A column added to a declaration is in every one
of them. The sentences of columns several tables share are here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from triage.report import cells

R = TypeVar("R")


def _blank(row: object) -> str:
    return ""


@dataclass(frozen=True)
class Column(Generic[R]):
    """One column of a table over rows of type `R`."""

    title: str
    means: str  # one sentence: what a cell holds (the app's `?`, docs/keys.md)
    cell: Callable[[R], object] = _blank  # the row's cell; None or "" is an empty cell
    width: int = 0  # the app's cells; 0: a share of what the fixed-width columns leave
    right: bool = False  # a figure: aligned right (the app, the text report)
    wide: bool = False  # wide-only: the app's narrow layout leaves it out
    narrow: int = 0  # the app's width when narrow (0: `width`)
    share: int = 1  # a width-0 column's share of the width left, against the other such columns

    def at(self, narrow: bool) -> Column[R]:
        """The column as laid out at the app's narrow width (`narrow`) or not."""
        return replace(self, width=self.narrow, narrow=0) if narrow and self.narrow else self


def titles(columns: Iterable[Column[Any]]) -> list[str]:
    return [c.title for c in columns]


def cells_of(columns: Iterable[Column[R]], value: R) -> list[str]:
    """A row's cells under `columns`, as text ("" for none)."""
    return [cells.text(c.cell(value)) for c in columns]


FLEX_MIN = 8  # cells the app gives a width-0 column at the least (its marks: "< floor")


def shown(
    columns: Sequence[Column[R]], hidden: Iterable[str] = (), narrow: bool = False, room: int = 0
) -> list[Column[R]]:
    """The columns drawn: all but the `hidden` titles and, `narrow`, the wide-only ones, each laid
    out for the width. With `room` (the app's cells across; 0: no limit), wide-only columns that
    would crowd the others out are left out too, in the order declared (the tenants' n % and B−A
    first), so that the row's marks stay."""
    out = set(hidden)
    kept = [c.at(narrow) for c in columns if c.title not in out and not (narrow and c.wide)]
    while room and sum((c.width or FLEX_MIN) + 1 for c in kept) > room:
        wide = [i for i, c in enumerate(kept) if c.wide]
        if not wide:
            break
        del kept[wide[0]]
    return kept


POSITION = "The row's position in this list."

TENANT = "The customer (tenant) the query was asked for."

QUERY = "The query's id, as the query file spells it."

TEXT = "The start of the query's (or chunk's) text."

PLAN_A = "The query plan arm A's run recorded (e.g. ann, postfilter, scan)."

PLAN_B = "The query plan arm B's run recorded."


def gold(arm: str) -> str:
    return (
        f"Where arm {arm} ranked the query's best gold chunk: a rank, (>k) when beyond k, absent when "
        "not stored."
    )
