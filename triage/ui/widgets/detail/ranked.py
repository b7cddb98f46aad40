"""The two ranked lists, A beside B: each a title over a `VirtualTable` of its first rows."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static

from triage.ui.literal import line
from triage.ui.table import Column, VirtualTable
from triage.ui.widgets.detail.text import clip, short_header
from triage.ui.widgets.redraw import OneLayout, redraw
from triage.workspace.detail import ArmView, Judgement, QueryDetail, Row

SNIPPET = 160  # characters of a chunk shown in a list row
COLUMNS = [
    Column("#", 3, right=True),
    Column("", 2),
    Column("chunk", 18),
    Column("other", 5, right=True),
    Column("score", 7, right=True),
    Column("header", 0, share=1),  # the heading path's last part: a third of what is left
    Column("text", 0, share=2),  # the body: the rest
]


LEGEND = "★ gold ✗ irrelevant · unjudged ≈ likely gold +amended"  # ✗: judged not relevant


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
        table.columns[2] = Column("chunk", id_width)
        rows = arm.rows
        table.rule_after = next((i for i, r in enumerate(rows) if r.rank == d.k), None)

        def cells(i: int) -> list[object]:
            r = rows[i]
            score = "" if r.score is None else f"{r.score:.4f}"
            other_rank = "–" if r.other_rank is None else str(r.other_rank)
            if r.chunk is None:
                return [r.rank, mark(r, d), r.chunk_id, other_rank, score, "", "(" + corpus_note + ")"]
            header = short_header(r.chunk.header, keep=1).removeprefix("… > ")
            return [r.rank, mark(r, d), r.chunk_id, other_rank, score, header, clip(r.chunk.text, SNIPPET)]

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
