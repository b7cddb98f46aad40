"""The two ranked lists, A beside B: each a title over a `VirtualTable` of its first rows."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static

from triage.report.columns import Column
from triage.ui.literal import line
from triage.ui.table import VirtualTable
from triage.ui.widgets.detail.text import clip, short_header
from triage.ui.widgets.redraw import OneLayout, redraw
from triage.workspace.detail import ArmView, Judgement, QueryDetail, Row

SNIPPET = 160  # characters of a chunk shown in a list row
LEGEND = "★ gold ✗ irrelevant · unjudged ≈ likely gold +amended"  # ✗: judged not relevant


class Ranked(NamedTuple):
    """A ranked-list row: the result, the query's detail, why a chunk has no text (no corpus)."""

    row: Row
    detail: QueryDetail
    corpus_note: str


def _header(x: Ranked) -> str:
    chunk = x.row.chunk
    return "" if chunk is None else short_header(chunk.header, keep=1).removeprefix("… > ")


def _text(x: Ranked) -> str:
    chunk = x.row.chunk
    return f"({x.corpus_note})" if chunk is None else clip(chunk.text, SNIPPET)


COLUMNS: tuple[Column[Ranked], ...] = (
    Column("#", "The chunk's rank in this arm's stored list.", lambda x: x.row.rank, 3, right=True),
    Column("", "The chunk's mark (★ + ✗ · ≈, each explained below).", lambda x: mark(x.row, x.detail), 2),
    Column("chunk", "The result's chunk id.", lambda x: x.row.chunk_id, 18),
    Column(
        "other",
        "The chunk's rank in the other arm's stored list (– when it is not there).",
        lambda x: "–" if x.row.other_rank is None else str(x.row.other_rank),
        5,
        right=True,
    ),
    Column(
        "score",
        "The retriever's score for this chunk, as the run stored it.",
        lambda x: "" if x.row.score is None else f"{x.row.score:.4f}",
        7,
        right=True,
    ),
    Column("header", "The last part of the chunk's heading path.", _header, share=1),  # a third of the rest
    Column("text", "The start of the chunk's body.", _text, share=2),  # the rest
)


def mark(row: Row, d: QueryDetail) -> str:
    """★2 frozen gold of grade 2, +1 gold by amendment, ✗ judged not relevant, ≈ unjudged and
    likely also gold, · unjudged."""
    if row.judgement is Judgement.GOLD:
        return ("+" if row.chunk_id in d.amended else "★") + str(row.grade)
    if row.judgement is Judgement.NOT_RELEVANT:
        return "✗"
    return "≈" if row.chunk_id in d.suggestions else "·"


class ListTitle(OneLayout, Static):
    """A list's arm, how many rows it shows, the legend."""


class RankedTable(OneLayout, VirtualTable):
    """A list's rows."""


class RankedList(OneLayout, Vertical):
    """One arm's list (`side` "a" or "b"): its title, then rank, mark, chunk, other arm's rank,
    score and the start of the text; a rule under rank k."""

    def __init__(self, side: str) -> None:
        super().__init__(classes="arm-list")
        self.side = side

    def compose(self) -> ComposeResult:
        yield ListTitle(id=f"list-{self.side}-title", classes="list-title")
        yield RankedTable(COLUMNS, id=f"list-{self.side}")

    @property
    def table(self) -> VirtualTable:
        return self.query_one(VirtualTable)

    def arm(self, d: QueryDetail) -> ArmView:
        return d.a if self.side == "a" else d.b

    def show(self, d: QueryDetail, id_width: int, corpus_note: str, cursor: int | None) -> None:
        """Draw this arm's rows of `d`; the cursor moves to `cursor` (None: stays)."""
        arm = self.arm(d)
        other = "B" if arm.side == "a" else "A"
        redraw(
            self.query_one(ListTitle),
            line(
                (f"{arm.side.upper()} {arm.name}", "bold"),
                f"  {len(arm.rows)} of {arm.depth} shown",
                (f"  {LEGEND}  other: {other}'s rank", "$text-muted"),
            ),
        )
        table = self.table
        table.columns[2] = replace(COLUMNS[2], width=id_width)
        rows = arm.rows
        table.rule_after = next((i for i, r in enumerate(rows) if r.rank == d.k), None)

        def cells(i: int) -> list[object]:
            line = Ranked(rows[i], d, corpus_note)
            return [c.cell(line) for c in COLUMNS]

        def tag(i: int) -> str | None:
            judged = rows[i].judgement
            if judged is Judgement.GOLD:
                return "gold"
            return "suggest" if judged is Judgement.UNJUDGED and rows[i].chunk_id in d.suggestions else None

        # not announced: the screen draws the preview once both lists are drawn (`sync_preview`)
        table.set_rows(len(rows), cells, tag, table.cursor if cursor is None else cursor, announce=False)


class RankedLists(OneLayout, Horizontal):
    """A's list beside B's."""

    def __init__(self) -> None:
        super().__init__(id="lists")

    def compose(self) -> ComposeResult:
        yield RankedList("a")
        yield RankedList("b")

    def show(self, d: QueryDetail, corpus_note: str, cursor: int | None = None) -> None:
        width = min(32, max([12] + [len(r.chunk_id) for arm in (d.a, d.b) for r in arm.rows]))
        for ranked in self.query(RankedList):
            ranked.show(d, width, corpus_note, cursor)

    def list_of(self, widget: Widget | None) -> RankedList | None:
        """The list whose table `widget` is (None: not one of these tables)."""
        for ranked in self.query(RankedList):
            if widget is ranked.table:
                return ranked
        return None

    def table(self, side: str) -> VirtualTable:
        return next(r.table for r in self.query(RankedList) if r.side == side)
