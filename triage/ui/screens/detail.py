"""One query: its text and slice fields, the gold chunks, both arms' ranks, plans and lists.

The regions are widgets (`triage.ui.widgets.detail`), each drawn from the `QueryDetail`; this
screen composes them and maps keys to the session's decisions. The grade window is the review's
(`Session.add` opens it, a digit right after is `Session.regrade`, any other key closes it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget

from triage.core.inputs.corpus import Chunk
from triage.labels.verdicts import Cause
from triage.ui.ahead import Ahead
from triage.ui.glossary import Topic
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.messages import DetailClosed, announce
from triage.ui.query_columns import HINT
from triage.ui.screens.help import HELP_KEY
from triage.ui.table import VirtualTable, opens
from triage.ui.widgets.detail import (
    ArmSummaries,
    DetailTitle,
    GoldPane,
    HintLine,
    Preview,
    QueryText,
    RankedList,
    RankedLists,
    StatusLine,
    VerdictLine,
)
from triage.ui.widgets.detail.preview import SELECT
from triage.ui.widgets.detail.ranked import COLUMNS as RANKED
from triage.ui.widgets.redraw import OneLayout
from triage.workspace.detail import QueryDetail, Row
from triage.workspace.review import Change
from triage.workspace.session import Session

__all__ = ["DetailScreen", "GoldPane"]

SHORT = 30  # rows: a detail screen shorter than this scrolls
# with nothing focused, lines (10: a page, 0: the top) each key scrolls the screen by
STEP = "next / previous query of the list you came from"
PANES = (
    "move the focus: gold pane, arm A's list, arm B's list; a short terminal opens each query at its top "
    "(the query and its hint, no passage selected) and tab scrolls down to the focused pane"
)
MOVE = (
    "move the selection in the focused list (scroll the gold pane; with nothing focused, the screen; "
    "pgdn / pgup and home too)"
)


class DetailScreen(OneLayout, Screen[int]):
    """Query `sequence[position]`; n/p walk `sequence`. Dismissed with the query index shown."""

    # A screen of the usual size never scrolls: no scroll bar comes and goes between queries
    # (re-wrapping every region). A short one scrolls, as a screen does, to the focused list:
    # its regions cannot all fit, and hidden ones would be out of reach.
    DEFAULT_CSS = "DetailScreen { overflow-y: hidden; } DetailScreen.-short { overflow-y: auto; }"
    # Narrower than 120 cells, A's list stands above B's (styles: `.-narrow #lists`), so each
    # keeps room for the heading and the text beside the ids.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    TOPIC = Topic(
        "Detail",
        (
            HINT,
            "hit / miss",
            "inside k / outside k",
            ("plan", "The query plan the arm's run recorded for this query (e.g. ann, postfilter, scan)."),
            "n_returned",
            "n_eligible",
            "stored depth",
            "short list",
            "answer",
            "gold pane",
            "heading path",
            "tokens",
            "grade",
            RANKED[0],
            "★",  # the marks (the second column)
            "+",
            "✗",
            "·",
            "≈",
            *RANKED[2:],
            "rule under k",
            "verdicts",
        ),
    )
    AUTO_FOCUS = ""  # none: the focus is set on mount (`on_mount`), or left on the top when short
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        Binding("n", "step(1)", "next", tooltip=STEP),
        Binding("p", "step(-1)", "previous", tooltip=STEP),
        Binding("tab", "pane(1)", "next pane", show=False, tooltip=PANES),
        Binding("shift+tab", "pane(-1)", "previous pane", show=False, tooltip=PANES),
        # a list's and the gold pane's keys; with nothing focused (a short screen's top) they scroll it
        Binding("j,down", "move(1)", "down", show=False, key_display="j / k", tooltip=MOVE),
        Binding("k,up", "move(-1)", "up", show=False, tooltip=MOVE),
        Binding("pagedown,space", "page(1)", "page down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("home", "jump(0)", "first", show=False),
        opens("open the selected chunk's full text (in the gold pane: the first gold)"),
        Binding("escape", "back", "back"),
        Binding(
            "g",
            "amend",
            "mark gold",
            tooltip="mark the selected passage as additional gold (written at once, grade 1)",
        ),
        *[
            Binding(
                str(n),
                f"grade({n})",
                f"grade {n}",
                show=False,
                tooltip="right after g: the grade of that amendment",
            )
            for n in range(1, 10)
        ],
        Binding("G", "amend_note", "gold + note", tooltip="the same, after asking for a note"),
        Binding(
            "u", "undo", "undo", tooltip="undo your last amendment (a retract record: nothing is deleted)"
        ),
        Binding(
            "v",
            "verdict",
            "verdict",
            tooltip="your verdict on the query: its cause (one key each, hinted first), then an optional "
            "note",
        ),
    ]

    def __init__(
        self, session: Session, sequence: np.ndarray, position: int, label: Callable[[int], str]
    ) -> None:
        super().__init__()
        self.session = session
        self.sequence = sequence
        self.position = position
        self.label = label
        self.detail: QueryDetail | None = None
        self.ahead = Ahead(session.prefetch, "detail-ahead")  # the next query's detail

    @property
    def q(self) -> int:
        """The query index on screen."""
        return int(self.sequence[self.position])

    def compose(self) -> ComposeResult:
        yield DetailTitle(id="detail-title")
        yield StatusLine(id="status")
        yield QueryText(id="query-text")
        yield HintLine(id="hint-line")
        yield VerdictLine(id="verdicts")
        yield ArmSummaries()
        yield GoldPane()
        yield RankedLists()
        yield Preview(id="preview")
        yield Keys()

    @property
    def short(self) -> bool:
        """Too short for every region: the title and the preview are pinned, the rest scrolls."""
        return self.app.size.height < SHORT

    def on_mount(self) -> None:
        self.set_class(self.short, "-short")
        self.show()
        if not self.short:  # B's list has the keys (its row 1 is on screen, in the preview)
            self.query_one(RankedLists).table("b").focus(scroll_visible=False)
        # A short screen opens on the query and its hint with no row selected (B's list would
        # be below the screen: `g` would mark a row nobody saw); tab goes down to the lists.

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < SHORT, "-short")

    def _panes(self) -> list[Widget | None]:
        """The tab order: the gold pane, A's list, B's list; a short screen has its top first
        (None: nothing focused, the query and its hint on screen)."""
        lists = self.query_one(RankedLists)
        panes: list[Widget | None] = [self.query_one(GoldPane), lists.table("a"), lists.table("b")]
        return [None, *panes] if self.short else panes

    # -- with nothing focused (a short screen's top), a list's keys scroll the screen ---------------
    def action_move(self, lines: int) -> None:
        if self.focused is None:
            self.scroll_relative(y=lines, animate=False)

    def action_page(self, direction: int) -> None:
        if self.focused is None:
            (self.scroll_page_down if direction > 0 else self.scroll_page_up)(animate=False)

    def action_jump(self, where: int) -> None:
        if self.focused is None:
            self.scroll_home(animate=False)

    def action_pane(self, step: int) -> None:
        """tab / shift+tab: the next (previous) pane, round."""
        panes = self._panes()
        at = panes.index(self.focused) if self.focused in panes else (0 if step > 0 else len(panes))
        self._go_to(panes[(at + step) % len(panes)])

    def _go_to(self, pane: Widget | None) -> None:
        if pane is None:  # the top: the query and its hint, no row selected
            self.set_focus(None)
            self.scroll_home(animate=False)
            self.sync_preview()
            return
        self.set_focus(pane, scroll_visible=False)  # now: a second tab at once sees it
        ranked = self.query_one(RankedLists).list_of(pane)
        # a list comes into view whole, its title with it (a short screen scrolls to it)
        self.call_after_refresh((ranked or pane).scroll_visible, animate=False)

    def on_unmount(self) -> None:
        self.ahead.close()

    # -- drawing -------------------------------------------------------------------------------
    def show(self, cursor: int | None = None) -> None:
        """Draw the current query; the lists' cursors move to `cursor` (None: they stay)."""
        d = self.detail = self.session.detail(self.q)
        if self.position + 1 < len(self.sequence):  # `n` is the likely next key: built once
            # this one is painted, so the thread's Python does not hold the GIL meanwhile
            self.call_after_refresh(self.ahead.want, int(self.sequence[self.position + 1]))
        note = self.session.corpus_note
        self.query_one(DetailTitle).show(d, self.label(self.position))
        self.query_one(QueryText).show(d)
        self.query_one(HintLine).show(self.session.hints_of(self.q), self.hint_note())
        self.query_one(VerdictLine).show(self.session.verdicts.for_query(d.query_id))
        self.query_one(ArmSummaries).show(d)
        self.query_one(GoldPane).show(d, note)
        self.query_one(RankedLists).show(d, note, cursor)
        self.sync_preview()

    def hint_note(self) -> str:
        """What the hint line says of the text hints it could not give yet (empty: none)."""
        if self.session.corpus is not None:
            return ""
        if self.session.snapshot.spec.corpus is None:
            return "no corpus: text causes not examined"
        return "text causes once the corpus is loaded"

    def _focused_list(self) -> RankedList | None:
        return self.query_one(RankedLists).list_of(self.focused)

    def sync_preview(self) -> None:
        """The preview follows the focus: the focused list's selected row, else what to select."""
        if self.detail is None:
            return
        preview = self.query_one(Preview)
        ranked = self._focused_list()
        if ranked is not None and ranked.table.count:
            preview.show_row(
                self.detail, ranked.arm(self.detail), ranked.table.cursor, self.session.corpus_note
            )
        elif ranked is not None:
            preview.show_hint(self.detail, f"arm {ranked.side.upper()} retrieved nothing")
        elif self.focused is None:
            preview.show_hint(self.detail, "top of the query")
        else:
            preview.show_hint(self.detail, "the gold pane has the focus")

    def on_virtual_table_highlighted(self, event: VirtualTable.Highlighted) -> None:
        if event.table.has_focus:
            self.sync_preview()

    def on_descendant_focus(self) -> None:
        self.sync_preview()

    # -- amendments ----------------------------------------------------------------------------
    def on_key(self, event: events.Key) -> None:
        # Runs before the key's binding: a digit right after `g` is the grade, any other key
        # shuts the grade window.
        if not (event.character or "").isdigit() and self.session.grade_window:
            self.session.review.close()

    def _selected(self) -> tuple[str, Row] | None:
        """The focused list's selected row (and its arm's side); else say what to select."""
        ranked = self._focused_list()
        if self.detail is None or ranked is None or not ranked.table.count:
            self.query_one(StatusLine).say(line(("nothing selected  ", "bold $text-warning"), SELECT))
            self.notify(SELECT, title="g: which passage?", severity="warning", timeout=4, markup=False)
            self.sync_preview()
            return None
        return ranked.side, ranked.arm(self.detail).rows[ranked.table.cursor]

    def _said(self, change: Change | None) -> None:
        """Show what a decision changed, redraw the numbers, tell the app."""
        if change is None:
            return
        self.query_one(StatusLine).say(announce(self, change, "amended"))
        self.show()

    def _amend(self, note: str = "") -> None:
        picked = self._selected()
        if picked is None:
            return
        side, row = picked
        if row.grade:
            self.notify(f"already gold (grade {row.grade})", timeout=3, markup=False)
            return
        assert self.detail is not None
        evidence: dict[str, object] = {"arm": side, "rank": row.rank}
        self._said(self.session.add(self.detail.query_id, row.chunk_id, 1, note, evidence=evidence))

    def action_amend(self) -> None:
        self._amend()

    def action_amend_note(self) -> None:
        if self._selected() is None:
            return
        from triage.ui.screens.note import NoteScreen

        def with_note(note: str | None) -> None:
            if note is not None:
                self._amend(note)

        self.app.push_screen(NoteScreen(), with_note)

    def action_grade(self, grade: int) -> None:
        self._said(self.session.regrade(grade))  # None unless the grade window is open

    def action_undo(self) -> None:
        change = self.session.undo()
        if change is None:
            self.notify("nothing of yours to undo", timeout=3)
        self._said(change)

    # -- verdicts ------------------------------------------------------------------------------
    def action_verdict(self) -> None:
        """Ask for the cause (one key) and a note, then record the verdict on the query shown."""
        from triage.ui.screens.verdict import VerdictScreen

        q = self.q
        query_id = self.session.query_id(q)
        reviewer = self.session.review.reviewer
        mine = next((v for v in self.session.verdicts.for_query(query_id) if v.reviewer == reviewer), None)

        def record(picked: tuple[Cause, str] | None) -> None:
            if picked is None:
                return
            change = self.session.verdict(query_id, *picked)
            self.query_one(StatusLine).say(announce(self, change, "verdict"))
            self.show()

        self.app.push_screen(VerdictScreen(query_id, self.session.hinted_causes(q), mine), record)

    # -- navigation ----------------------------------------------------------------------------
    def action_step(self, step: int) -> None:
        """The next (previous) query, both lists at rank 1."""
        new = self.position + step
        if 0 <= new < len(self.sequence):
            self.position = new
            self.query_one(StatusLine).clear()
            self.show(cursor=0)
            if self.short:  # it lands at the top, as a query opens: its id, text and hint
                self._go_to(None)
        else:
            self.notify("no more in this list" if step > 0 else "this is the first", timeout=2)

    def action_back(self) -> None:
        """Back to the screen below, which is told the query being read."""
        self.app.post_message(DetailClosed(self.q))
        self.dismiss(self.q)

    def _open_chunk(self, chunk_id: str, chunk: Chunk | None, grade: int) -> None:
        from triage.ui.screens.chunk import ChunkScreen

        if self.detail is not None:
            self.app.push_screen(ChunkScreen(self.session, chunk_id, chunk, self.detail, grade))

    def action_open_gold(self) -> None:
        if self.detail and self.detail.golds:
            g = self.detail.golds[0]
            self._open_chunk(g.chunk_id, g.chunk, g.grade)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        ranked = self.query_one(RankedLists).list_of(event.table)
        if self.detail is not None and ranked is not None:
            row = ranked.arm(self.detail).rows[event.index]
            self._open_chunk(row.chunk_id, row.chunk, row.grade)
