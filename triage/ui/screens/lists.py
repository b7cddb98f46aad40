"""Lists of queries: the flips (hit→miss first) and every query, filterable by outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
import pyarrow.compute as pc
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from triage.core.evaluation import Arm
from triage.core.measures.paired import Outcome
from triage.core.views.hints import FlipHints
from triage.labels.verdicts import Verdict
from triage.report import cells
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.screens.help import HELP_KEY
from triage.ui.screens.live import LiveScreen
from triage.ui.table import Column, VirtualTable
from triage.workspace.session import Session, flip_label

TAGS = {Outcome.HIT_TO_MISS: "bad", Outcome.MISS_TO_HIT: "good", Outcome.UNSCORED: "muted"}
# whole, and its title shows the highlighted query's text in full


def empty_columns(session: Session) -> set[str]:
    """Titles of the list columns this evaluation leaves empty: `tenant` when no query has a
    tenant; `plan A` and `plan B` when neither run records a plan for any query."""
    hidden = set()
    if session.tenant_of.null_count == len(session.tenant_of):
        hidden.add("tenant")
    plans = [arm.aligned("plan") for arm in session.ev.arms]
    if all(p is None or p.null_count == len(p) for p in plans):
        hidden |= {"plan A", "plan B"}
    return hidden


def rank_cell(arm: Arm, q: int, short: bool, k: int) -> str:
    """The gold rank ("3", "12 (>k)", "absent"); for a short list, the rank or "–" when absent, then
    what the arm returned of k: "– (3/5)", "2 (3/5)"."""
    rank = int(arm.judged.gold_rank[q])
    if not short:
        return cells.rank(rank, k)
    n = arm.value("n_returned", q)
    return f"{cells.rank(rank, k) if rank else '–'} ({int(arm.depth[q]) if n is None else n}/{k})"


def verdict_cell(verdicts: tuple[Verdict, ...]) -> str:
    """The query's verdict for a list row: the cause its reviewers name, or how many differ."""
    causes = sorted({v.cause for v in verdicts})
    return causes[0].code if len(causes) == 1 else f"{len(causes)} differ" if causes else ""


class QueryList(LiveScreen):
    """A list of query indices (`order`); enter opens the detail with n/p walking this list."""

    HELP = "flips"
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        Binding("slash", "search", "search"),
        Binding("escape", "app.pop_screen", "back"),
    ]
    title_text = ""
    with_hints = False  # a column with each row's first cause hint (computed in a worker)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.order = np.zeros(0, np.int64)
        self.columns: list[Column] = []
        self.hidden: set[str] = set()  # titles of columns left out (empty for this evaluation)
        self.drawn_hints: FlipHints | None = None  # the flips' hints drawn (None: "…" drawn)

    def compose(self) -> ComposeResult:
        ev = self.session.ev
        width = min(24, max(8, pc.max(pc.utf8_length(ev.query_ids)).as_py() or 0))
        yield Static(id="list-title")
        rank_width = max(8, len(f"{ev.k - 1} ({ev.k - 1}/{ev.k})"))  # a short list's widest cell
        self.columns = [
            Column("#", 6, right=True),
            Column("outcome", 10),
            Column("query", width),
            Column("tenant", 18),
            Column("gold A", rank_width, right=True),
            Column("gold B", rank_width, right=True),
            Column("plan A", 10),
            Column("plan B", 10),
            Column("hint", 7),  # the first cause hint (flips list only)
            Column("verdict", 8),  # shown once any query has a verdict
            Column("text", 0),
        ]
        self.hidden = empty_columns(self.session) | (set() if self.with_hints else {"hint"})
        yield VirtualTable([c for c in self.columns if c.title not in self.hidden], id="queries")
        yield Keys()

    def fill(self, cursor: int | None = None) -> None:
        """Draw the list; the cursor stays where it was unless `cursor` says otherwise."""
        s, ev, verdicts = self.session, self.session.ev, self.session.verdicts
        self.order = self.rows()
        order = self.order
        short_a, short_b = ev.a.short, ev.b.short
        hidden = self.hidden | (set() if verdicts.by_query else {"verdict"}) | self.narrow_hidden()
        shown = [c.title not in hidden for c in self.columns]
        table = self.query_one(VirtualTable)
        table.columns = [
            Column("outcome", 9) if self.narrow and c.title == "outcome" else c
            for c, keep in zip(self.columns, shown, strict=True)
            if keep
        ]
        hints = s.hints_ready() if self.with_hints else None
        self.drawn_hints = hints
        if self.with_hints and hints is None:
            self.compute_hints()

        def hint(q: int) -> str:
            if not self.with_hints:
                return ""
            if hints is None:
                return "…"  # not computed yet
            first = s.first_hint(q, hints)  # of the hints drawn, not whichever are current by now
            return first.kind.code if first else ""

        def row(i: int) -> list[object]:
            q = int(order[i])
            values = [
                i + 1,
                Outcome(int(s.outcomes[q])).label,
                s.query_id(q),
                s.tenant_of[q].as_py(),
                rank_cell(ev.a, q, bool(short_a[q]), ev.k),
                rank_cell(ev.b, q, bool(short_b[q]), ev.k),
                ev.a.value("plan", q),
                ev.b.value("plan", q),
                hint(q),
                verdict_cell(verdicts.for_query(s.query_id(q))) if "verdict" not in hidden else "",
                s.texts[q].as_py(),
            ]
            return [v for v, keep in zip(values, shown, strict=True) if keep]

        cursor = table.cursor if cursor is None else cursor
        table.set_rows(len(order), row, lambda i: TAGS.get(Outcome(int(s.outcomes[order[i]]))), cursor)
        self.update_title(cursor)

    def rows(self) -> np.ndarray:
        raise NotImplementedError

    def narrow_hidden(self) -> set[str]:
        return {"tenant", "#"} if self.narrow else set()

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
    title_text = "Flips, hit→miss first"
    with_hints = True

    def rows(self) -> np.ndarray:
        return self.session.flips

    def position_label(self, i: int) -> str:
        return self.session.flip_label(i)

    def label_snapshot(self) -> Callable[[int], str]:
        n_reg, n = self.session.n_regressions, len(self.order)
        return lambda i: flip_label(i, n_reg, n)


FILTERS = {
    "0": None,
    "1": Outcome.BOTH_HIT,
    "2": Outcome.BOTH_MISS,
    "3": Outcome.HIT_TO_MISS,
    "4": Outcome.MISS_TO_HIT,
}


class AllQueriesScreen(QueryList):
    HELP = "all"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("0", "only('0')", "all"),
        Binding("1", "only('1')", "both hit"),
        Binding("2", "only('2')", "both miss"),
        Binding("3", "only('3')", "hit→miss"),
        Binding("4", "only('4')", "miss→hit"),
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
