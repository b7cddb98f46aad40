"""The first screen: label state, checks, each arm's metrics, the paired table, the k cells."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import LoadingIndicator, Static

from triage.report import terminal as report_text
from triage.ui.keys import Keys
from triage.ui.literal import line, plain
from triage.ui.screens.live import report
from triage.workspace.session import Session


class OverviewScreen(Screen):
    """Shows "loading" at once; `show` fills it when the worker has loaded the evaluation."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("slash", "search", "search")]

    def compose(self) -> ComposeResult:
        yield Static(line(("triage", "bold"), "  loading the evaluation…"), id="title")
        yield LoadingIndicator(id="loading")
        with VerticalScroll(id="overview"):
            yield Static(id="summary")
            yield Static(id="checks")
            with Horizontal(id="numbers"):
                yield Static(id="metrics")
                yield Static(id="paired")
            yield Static(id="k-cells")
            yield Static(id="label-states")
            yield Static(id="hint")
        yield Keys()

    shown_version = -1

    def on_screen_resume(self) -> None:
        session = getattr(self.app, "session", None)
        if session is not None and session.version != self.shown_version:
            self.show(session)  # amendments moved the numbers

    def show(self, session: Session) -> None:
        self.shown_version = session.version
        d = report(session)
        self.query_one("#loading").display = False
        a, b = d["arms"]["a"], d["arms"]["b"]
        self.query_one("#title", Static).update(
            line(
                ("triage  ", "bold"), a["name"], ("  →  ", "bold"), b["name"], (f"  at k = {d['k']}", "bold")
            )
        )
        self.query_one("#summary", Static).update(report_text.summary(d))
        self.query_one("#checks", Static).update(report_text.checks_table(d, compact=True))
        self.query_one("#metrics", Static).update(report_text.metrics_table(d))
        self.query_one("#paired", Static).update(report_text.paired_view(d))
        cells = report_text.k_cells_table(d)
        k_cells = self.query_one("#k-cells", Static)
        k_cells.display = cells is not None
        if cells is not None:
            k_cells.update(cells)
        states = report_text.label_states_table(d)
        box = self.query_one("#label-states", Static)
        box.display = states is not None
        if states is not None:
            box.update(states)
        tenants = d["tenants"]
        below = ""
        if tenants is not None:
            names = [
                r["tenant"]
                for r in tenants["rows"]
                if r["hit_rate_b"] is not None and r["hit_rate_b"] < tenants["floor"]
            ]
            below = (
                f"\n{len(names)} tenants below {tenants['floor']:.2f} in B"
                + (f": {', '.join(names[:3])}{' …' if len(names) > 3 else ''}" if names else "")
                + "   t: tenants   s: slices"
            )
        n = len(d["flips"])
        self.query_one("#hint", Static).update(
            line(
                (f"{session.n_regressions} regressions, {n - session.n_regressions} wins.", "bold"),
                "  f: read the flips   a: all queries   /: search   ?: keys",
                below,
            )
        )

    def action_search(self) -> None:
        session = getattr(self.app, "session", None)
        if session is None:
            return
        from triage.ui.screens.search import SearchScreen

        def opened(q: int | None) -> None:
            if q is not None:
                self.app.open_query(q)  # type: ignore[attr-defined]

        self.app.push_screen(SearchScreen(session, session.flips), opened)

    def show_error(self, message: str) -> None:
        self.query_one("#loading").display = False
        self.query_one("#title", Static).update(
            line(("triage  ", "bold"), ("could not load the evaluation", "$text-error bold"))
        )
        self.query_one("#summary", Static).update(plain(message))
        self.query_one("#hint", Static).update(line(("q", "bold"), " quits."))
        self.query_one("#numbers").display = False
