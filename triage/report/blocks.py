"""The Markdown and HTML reports' building blocks: a heading, a paragraph, a list, a table, and a
section of them. Each section module makes its own blocks; `page.sections` lists them in order, and
`markdown` and `html` each render that one list, so the page carries every section the Markdown
carries, in the same order.

Every string is plain text. The HTML escapes all of it. The Markdown escapes data (names, ids,
query text, messages) and leaves triage's own words and figures as they are: a block says which of
its strings hold no data (`own`), and `code` spans in backticks in those are code.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2  # 2: a section; 3: a table's title within one
    own: bool = True  # triage's own words and figures, no data


@dataclass(frozen=True)
class Para:
    text: str
    strong: bool = False
    note: bool = False  # a legend or footnote (the HTML greys it)
    own: bool = False  # triage's own words and figures, no data (`code` spans shown as code)
    lead: str = ""  # a word in bold before the text ("Gate")


@dataclass(frozen=True)
class Items:
    lines: list[str]


@dataclass(frozen=True)
class Table:
    head: list[str]
    rows: list[list[str]]
    numeric: frozenset[int] = frozenset()  # columns of figures (the HTML aligns them right)
    own: frozenset[int] = frozenset()  # columns of triage's own words and figures, no data
    classes: list[str] | None = None  # per row (the HTML marks hit→miss and miss→hit)
    code: frozenset[int] = frozenset()  # columns of codes (`k.default`)
    level: int | None = None  # the column holding a check's level
    prose: frozenset[int] = frozenset()  # columns of sentences, never cut short (a check's message)


Block = Heading | Para | Items | Table


@dataclass(frozen=True)
class Section:
    id: str  # the HTML's section id; stable
    blocks: list[Block] = field(default_factory=list)


def numeric(head: list[str], first: int = 1) -> frozenset[int]:
    """The columns from `first` on: figures (the HTML aligns them right)."""
    return frozenset(range(first, len(head)))


def every_column(head: list[str]) -> frozenset[int]:
    return frozenset(range(len(head)))


def all_but(head: list[str], data: int) -> frozenset[int]:
    """Every column but `data` (a name or id) holds triage's own words and figures."""
    return every_column(head) - {data}
