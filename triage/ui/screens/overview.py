"""The first screen: label state, checks, each arm's metrics, the paired table, each named
measure's paired test (A, B, Δ, interval, p, MDE), the intervals drawn (widgets/forest.py), and
each arm's metrics at every k when there are several (`--k 1,5,10`, or arms whose k differ)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import LoadingIndicator, Static

from triage.core.checks.model import Level
from triage.report import cells
from triage.report import terminal as report_text
from triage.report.model import Report
from triage.report.page import at_k
from triage.report.sections.answers import answer_change
from triage.report.sections.checks import checks_tally
from triage.report.sections.cost import cost_line, cost_recorded
from triage.report.sections.holdout import holdout_summary
from triage.report.sections.origins import quote_line
from triage.report.sections.paired import flip_counts, mcnemar, regressions_and_wins
from triage.report.sections.ranks import drops_line, wins_ties_losses
from triage.report.sections.tenants import below_floor_line
from triage.ui.glossary import Topic
from triage.ui.keys import Keys
from triage.ui.literal import line, plain
from triage.ui.screens.help import HELP_KEY
from triage.ui.screens.live import report, report_ready
from triage.ui.widgets.forest import Forest
from triage.workspace.session import Session

# the checks' tally in the headline, coloured by the worst level
TALLY = {Level.OK: "$text-success", Level.WARNING: "bold $text-warning", Level.ERROR: "bold $text-error"}


def headline(r: Report) -> Content:
    """Each arm's metrics at k, B − A, the flips with McNemar's p and the checks' tally, in three
    short lines: the numbers a reader came for (and whether anything but the treatment changed),
    above everything that can push them below the first screen. Against exact truth recall@k, the
    decision measure, comes first."""
    a, b = r.arms.a, r.arms.b
    level, tally = checks_tally(r.checks)
    parts: list[str | tuple[str, str]] = []
    rows = [
        ("hit rate", a.hit_rate, b.hit_rate),
        ("recall", a.recall, b.recall),
        ("mrr", a.mrr, b.mrr),
        ("ndcg", a.ndcg, b.ndcg),
    ]
    if r.truth is not None:  # against exact truth recall@k decides: it leads
        rows.insert(0, rows.pop(1))
    for i, (name, x, y) in enumerate(rows):
        parts += [(f"{name}@{r.k} ", "$text-muted"), f"A {cells.rate(x)} → B {cells.rate(y)} "]
        parts += [(f"({cells.delta(x, y)})", "bold")]
        if i == 0:  # the first line: the tally fits beside it at 80 columns
            parts += ["   ", (tally, TALLY[level])]
        parts += ["\n" if i in (0, 2) else "   "]
    p = r.paired
    parts[-1] = "\n"
    parts += [(flip_counts(p), "bold"), "   ", (mcnemar(p), "bold $text-accent")]
    return line(*parts)


SCROLL = "scroll the overview (home / end: its top, its end)"
# What the overview shows, for `?`
SHOWN = (
    "A / B",
    "k",
    "labels",
    "scored",
    "unlabelled",
    "missing from A / B",
    "checks",
    "level",
    "code",
    "message",
    "hit_rate@k",
    "recall@k",
    "mrr@k",
    "ndcg@k",
    "95% low / high",
    "judged@k",
    "unjudged in top k",
    "upper",
    "B − A",
    "measure",
    "Δ",
    "95% interval",
    "p corr.",
    "MDE",
    "Δ plot",
    "├─●─┤",
    "│ 0",
    "green / red / grey",
    "arm plot",
    "paired outcomes",
    "hit→miss",
    "miss→hit",
    "McNemar",
    "held out",
    "blend",
    "origin",
    "overlap",
    "evidence × answer",
    "header tax",
    "tokens",
    "floor",
    "5th-percentile",
    "wins / ties / losses",
    "rank drops",
    "stored depth",
    "recall@depth",
)


class OverviewScreen(Screen):
    """Shows "loading" at once; `show` fills it when the worker has loaded the evaluation."""

    TOPIC = Topic("Overview", SHOWN)
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        Binding(
            "slash",
            "search",
            "search",
            tooltip="fuzzy search over query ids and texts; enter opens the best match",
        ),
        # the overview's scroll (its VerticalScroll binds these), said once for `?`
        Binding("pagedown", "page_down", show=False, key_display="pgdn / pgup, ↓ / ↑", tooltip=SCROLL),
        Binding("pageup", "page_up", show=False, tooltip=SCROLL),
        Binding("down", "scroll_down", show=False, tooltip=SCROLL),
        Binding("up", "scroll_up", show=False, tooltip=SCROLL),
    ]

    def compose(self) -> ComposeResult:
        yield Static(line(("triage", "bold"), "  loading the evaluation…"), id="title")
        yield LoadingIndicator(id="loading")
        with VerticalScroll(id="overview"):
            yield Static(id="headline")  # both arms' figures and McNemar's p: in view at 80×24
            yield Static(id="measures")  # each named measure's paired test, compact: in view too
            yield Forest(id="forest")  # those Δs and each arm's rates with their intervals, drawn
            yield Static(id="summary")
            yield Static(id="checks")
            with Horizontal(id="numbers"):
                yield Static(id="metrics")
                yield Static(id="paired")
            yield Static(id="k-cells")
            yield Static(id="label-states")
            yield Static(id="hint")
            yield Static(id="origins")  # per query origin beside the blend: below the keys, in view
            yield Static(id="answers")
            yield Static(id="cost")
        yield Keys()

    shown_version: str | None = None

    def on_screen_resume(self) -> None:
        session = getattr(self.app, "session", None)
        if session is None or session.version == self.shown_version:
            return
        if report_ready(session):
            self.show(session)  # amendments moved the numbers
        else:  # built in a worker (a second at a million queries), drawn when ready
            self.query_one("#title", Static).update(line(("triage", "bold"), "  updating the numbers…"))
            self.app.redraw_overview(session)  # type: ignore[attr-defined]

    def show(self, session: Session) -> None:
        self.shown_version = session.version
        r = report(session)
        self.query_one("#loading").display = False
        self.query_one("#title", Static).update(
            line(
                ("triage  A ", "bold"),
                r.arms.a.name,
                ("  →  B ", "bold"),
                r.arms.b.name,
                ("  " + at_k(r), "bold"),
                f"  (also k = {', '.join(map(str, r.ks[1:]))})" if len(r.ks) > 1 else "",
            )
        )
        self.query_one("#headline", Static).update(headline(r))
        summary = report_text.summary(r)
        if r.origin_quote is not None:  # real and generated queries: which figure to quote, on top
            summary = summary + "\n" + Text(quote_line(r.origin_quote), "bold")
        self.query_one("#summary", Static).update(summary)
        self.query_one("#checks", Static).update(report_text.checks_table(r, compact=True))
        self.query_one("#metrics", Static).update(report_text.metrics_table(r))
        self.query_one("#paired", Static).update(report_text.paired_view(r))
        measures = report_text.compare_overview(r)
        box = self.query_one("#measures", Static)
        box.display = measures is not None
        if measures is not None:
            box.update(measures)
        self.query_one("#forest", Forest).show(r)
        origins = report_text.origins_view(r)
        box = self.query_one("#origins", Static)
        box.display = origins is not None
        if origins is not None:
            box.update(origins)
        k_cells = report_text.k_cells_table(r)
        box = self.query_one("#k-cells", Static)
        box.display = k_cells is not None
        if k_cells is not None:
            box.update(k_cells)
        states = report_text.label_states_table(r)
        box = self.query_one("#label-states", Static)
        box.display = states is not None
        if states is not None:
            box.update(states)
        self._cost(r)
        below = ""
        if r.tenants is not None:
            below = f"\n{below_floor_line(r.tenants)}   t: tenants   s: slices"
        held = holdout_summary(r)
        self.query_one("#hint", Static).update(
            line(
                (regressions_and_wins(r.paired), "bold"),
                "  f: read the flips   a: all queries   /: search   ?: keys",
                f"\n{held}" if held else "",
                f"\n{wins_ties_losses(r.ranks, r.k)}",
                f"\n{drops_line(r.ranks, r.k)}   r: rank drops",
                below,
                *([f"\n{cost_line(r.cost, r.k)}"] if r.cost is not None and cost_recorded(r.cost) else []),
                *([f"\n{answer_change(r.answers)}"] if r.answers is not None else []),
            )
        )

    def _cost(self, r: Report) -> None:
        """The evidence × answer tables and the cost table, below the numbers."""
        for name, part in (
            ("#answers", report_text.answers_view(r)),
            ("#cost", report_text.cost_view(r, slices=False)),
        ):
            box = self.query_one(name, Static)
            box.display = part is not None
            if part is not None:
                box.update(part)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "search" and getattr(self.app, "session", None) is None:
            return False if getattr(self.app, "load_failed", False) else None
        return True

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
