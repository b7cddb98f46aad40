"""Lists of queries: the flips (hit→miss first) and every query, filterable by outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from triage.core.measures.paired import Outcome
from triage.core.views.hints import FlipHints
from triage.report import columns
from triage.report.columns import Column
from triage.ui.glossary import Entry, Topic
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.query_columns import (
    GOLD_A,
    GOLD_B,
    HINT,
    NUMBER,
    OUTCOME,
    PLAN_A,
    PLAN_B,
    QUERY,
    TENANT,
    TEXT,
    VERDICT,
    QueryLine,
    empty_columns,
    query_column,
    rank_column,
)
from triage.ui.screens.help import BACK, HELP_KEY
from triage.ui.screens.live import LiveScreen
from triage.ui.table import LIST_KEYS, VirtualTable, opens
from triage.workspace.session import Session, flip_label

TAGS = {Outcome.HIT_TO_MISS: "bad", Outcome.MISS_TO_HIT: "good", Outcome.UNSCORED: "muted"}
# What a list of queries shows, for `?`: its columns, each with the marks its cells hold
SHOWN: tuple[Entry, ...] = (
    NUMBER,
    OUTCOME,
    QUERY,
    TENANT,
    GOLD_A,
    GOLD_B,
    "(>k)",
    "absent",
    "(3/5)",
    PLAN_A,
    PLAN_B,
    HINT,
    "short",
    "plan",
    "header",
    "path",
    "unlab",
    "window",
    "pushed",
    "dropped",
    "…",
    VERDICT,
    TEXT,
)


class QueryList(LiveScreen):
    """A list of query indices (`order`); enter opens the detail with n/p walking this list."""

    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        *LIST_KEYS,
        opens("open the query's detail"),
        Binding("slash", "search", "search", tooltip="fuzzy search; enter opens the best match"),
        BACK,
    ]
    title_text = ""
    with_hints = False  # a column with each row's first cause hint (computed in a worker)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.order = np.zeros(0, np.int64)
        self.columns: list[Column[QueryLine]] = []
        self.hidden: set[str] = set()  # titles of columns left out (empty for this evaluation)
        self.drawn_hints: FlipHints | None = None  # the flips' hints drawn (None: "…" drawn)

    def compose(self) -> ComposeResult:
        s = self.session
        yield Static(id="list-title")
        self.columns = [
            NUMBER,
            OUTCOME,
            query_column(s),
            TENANT,
            rank_column(GOLD_A, s.ev.k),
            rank_column(GOLD_B, s.ev.k),
            PLAN_A,
            PLAN_B,
            HINT,  # the first cause hint (flips list only)
            VERDICT,  # shown once any query has a verdict
            TEXT,
        ]
        self.hidden = empty_columns(self.session) | (set() if self.with_hints else {"hint"})
        yield VirtualTable(columns.shown(self.columns, self.hidden), id="queries")
        yield Keys()

    def fill(self, cursor: int | None = None) -> None:
        """Draw the list; the cursor stays where it was unless `cursor` says otherwise."""
        s = self.session
        self.order = self.rows()
        order = self.order
        hidden = self.hidden | (set() if s.verdicts.by_query else {"verdict"})
        table = self.query_one(VirtualTable)
        table.columns = shown = columns.shown(self.columns, hidden, self.narrow)
        self.drawn_hints = s.hints_ready() if self.with_hints else None
        if self.with_hints and self.drawn_hints is None:
            self.compute_hints()

        def row(i: int) -> list[object]:
            line = QueryLine(i, int(order[i]), s, self)
            return [c.cell(line) for c in shown]

        cursor = table.cursor if cursor is None else cursor
        table.set_rows(len(order), row, lambda i: TAGS.get(Outcome(int(s.outcomes[order[i]]))), cursor)
        self.update_title(cursor)

    def hint(self, q: int) -> str:
        """Query `q`'s first cause hint as drawn: "…" while the hints are computed."""
        if self.drawn_hints is None:
            return "…"  # not computed yet
        first = self.session.first_hint(q, self.drawn_hints)  # of the hints drawn, not the current
        return first.kind.code if first else ""

    def rows(self) -> np.ndarray:
        raise NotImplementedError

    def refill(self) -> None:
        if self.order is not None:  # narrower than NARROW: no tenant nor # (ids, ranks and plans stay)
            self.fill()

    @work(thread=True, exclusive=True, exit_on_error=False, group="hints")
    def compute_hints(self) -> None:
        """Every flip's hints, off the UI thread; the list is drawn again when they are in."""
        self.session.hints()
        self.app.call_from_thread(self.hints_in)

    def hints_in(self) -> None:
        """The flips' hints are computed: draw them if this list is on screen and shows "…";
        a list under another screen is drawn when it is back (a key there must not wait)."""
        if self.is_attached and self.app.screen is self and self._newer_hints():
            self.fill()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        if self._newer_hints():
            self.fill()

    def _newer_hints(self) -> bool:
        """Whether the flips' hints computed now (for this version and corpus state) are not the
        ones drawn: "…" was drawn, or the corpus came in since (its text hints)."""
        ready = self.session.hints_ready()
        return self.with_hints and ready is not None and ready is not self.drawn_hints

    def position_label(self, i: int) -> str:
        return f"query {i + 1} of {len(self.order)}"

    def label_snapshot(self) -> Callable[[int], str]:
        """Position labels for the list as it is now (amendments later must not renumber it)."""
        n = len(self.order)
        return lambda i: f"query {i + 1} of {n}"

    def update_title(self, i: int) -> None:
        where = self.position_label(i) if len(self.order) else "nothing to list"
        text: list[str | tuple[str, str]] = []
        if self.narrow and 0 <= i < len(self.order):  # the text column is short: the whole text here
            q = int(self.order[i])
            text = ["\n", (self.session.query_id(q), "bold"), "  ", self.session.texts[q].as_py() or ""]
        self.query_one("#list-title", Static).update(
            line((self.title_text, "bold"), "  ", (where, "$text-accent"), *text)
        )

    def on_virtual_table_highlighted(self, event: VirtualTable.Highlighted) -> None:
        self.update_title(event.index)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        self.open(event.index)

    def open(self, position: int) -> None:
        from triage.ui.screens.detail import DetailScreen

        self.app.push_screen(DetailScreen(self.session, self.order, position, self.label_snapshot()))

    def action_search(self) -> None:
        from triage.ui.screens.search import SearchScreen

        def opened(q: int | None) -> None:
            if q is None:
                return
            where = np.flatnonzero(self.order == q)
            if len(where):
                self.query_one(VirtualTable).cursor = int(where[0])
                self.open(int(where[0]))
            else:
                from triage.ui.screens.detail import DetailScreen

                self.app.push_screen(DetailScreen(self.session, np.array([q]), 0, lambda i: "search result"))

        self.app.push_screen(SearchScreen(self.session, self.order), opened)


class FlipsScreen(QueryList):
    TOPIC = Topic("Flips", ("flip", *SHOWN))
    with_hints = True

    @property
    def title_text(self) -> str:  # type: ignore[override]
        if self.session.ev.truth is not None:  # against exact truth: recall@k's changes
            return f"Flips, recall@{self.session.ev.k} fell, the largest fall first, then rose"
        return "Flips, hit→miss first"

    def rows(self) -> np.ndarray:
        return self.session.flips

    def position_label(self, i: int) -> str:
        return self.session.flip_label(i)

    def label_snapshot(self) -> Callable[[int], str]:
        n_reg, n = self.session.n_regressions, len(self.order)
        return lambda i: flip_label(i, n_reg, n)


ONLY = "every query / both hit / both miss / hit→miss / miss→hit"
FILTERS = {
    "0": None,
    "1": Outcome.BOTH_HIT,
    "2": Outcome.BOTH_MISS,
    "3": Outcome.HIT_TO_MISS,
    "4": Outcome.MISS_TO_HIT,
}


class AllQueriesScreen(QueryList):
    TOPIC = Topic("All queries", SHOWN)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            key, f"only('{key}')", name, tooltip="every query / both hit / both miss / hit→miss / miss→hit"
        )
        for key, name in (
            ("0", "all"),
            ("1", "both hit"),
            ("2", "both miss"),
            ("3", "hit→miss"),
            ("4", "miss→hit"),
        )
    ]
    outcome: Outcome | None = None

    @property
    def title_text(self) -> str:  # type: ignore[override]
        shown = "every query" if self.outcome is None else f"queries: {self.outcome.label}"
        return f"All queries — {shown}"

    def rows(self) -> np.ndarray:
        every = np.arange(self.session.ev.n)
        return every if self.outcome is None else every[self.session.outcomes == self.outcome]

    def action_only(self, key: str) -> None:
        self.outcome = FILTERS[key]
        self.fill(cursor=0)
