"""Rank drops (`r`): every scored query that moved, by B − A of a chosen measure, worst first (`M`
cycles the measure; the gold rank of the queries both arms hit is one of the choices), beside the
histogram of gold-rank changes. The order is core/views/deltas.py's; the histogram the ranks
section's cells (report/sections/ranks.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from triage.core.views.deltas import GOLD_RANK, Choice, Deltas, by_name, choices, deltas
from triage.report import cells, columns
from triage.report.columns import Column
from triage.report.sections.ranks import RanksSection, change, histogram_line, histogram_rows
from triage.ui.glossary import Topic
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.query_columns import QUERY, TENANT, TEXT, QueryLine, empty_columns, query_column
from triage.ui.screens.lists import QueryList
from triage.ui.screens.live import report
from triage.ui.table import VirtualTable
from triage.workspace.session import Session

HISTOGRAM_BAR = 20  # cells of the longest bar
NARROW_BAR = 10  # on a narrow terminal, so the list keeps room for the query text
HISTOGRAM_WIDTH, NARROW_HISTOGRAM = 36, 26  # the histogram pane, with its padding and border


def histogram(x: RanksSection, bar: int = HISTOGRAM_BAR) -> Content:
    """The rank-change histogram as bars: B ranked the gold lower in red, higher in green."""
    h = x.histogram
    parts: list[str | tuple[str, str]] = [("Gold rank A − B", "bold"), "\n"]
    parts += [("+: B ranked it higher", "$text-muted"), "\n"]
    for c, (label, count, drawn) in histogram_rows(h, bar):
        style = "$text-error" if c < 0 else ("$text-success" if c > 0 else "$text-accent")
        parts += [(f"{label:>4} {count:>4} ", "$text-muted" if count == "0" else ""), (drawn, style), "\n"]
    if not h.changes:
        parts += ["no query has a gold id in both lists\n"]
    parts += ["\n", (histogram_line(h), "$text-muted")]
    return line(*parts)


def value_cell(v: float, rank: bool) -> str:
    """A per-query value: a measure to three decimals, a gold rank whole."""
    return "" if np.isnan(v) else (str(int(v)) if rank else cells.rate(float(v)))


def delta_cell(d: float, rank: bool) -> str:
    """A per-query Δ: "-0.369"; for the gold rank, places gained ("−3": B ranked it 3 lower)."""
    return change(int(d)) if rank else cells.signed(float(d))


def _choice(x: QueryLine) -> Choice:
    """The measure a rank-drops row is of (its line's context)."""
    choice: Choice = x.context
    return choice


# A: B: and Δ of the measure the list is ordered on; "(for the gold rank …)" in each sentence.
MEASURE_A = Column[QueryLine](
    "A",
    "Arm A's value of the measure for the query (for the gold rank: where A ranked the gold).",
    lambda x: value_cell(_choice(x).a[x.q], _choice(x).rank),
    5,  # "0.631"; a gold rank within k
    right=True,
)
MEASURE_B = Column[QueryLine](
    "B",
    "Arm B's value of the measure for the query (for the gold rank: where B ranked the gold).",
    lambda x: value_cell(_choice(x).b[x.q], _choice(x).rank),
    5,
    right=True,
)
MEASURE_DELTA = Column[QueryLine](
    "Δ",
    "B − A for the query: negative, red, means B is worse. For the gold rank it is A's rank − B's, "
    "places gained, so a fall is negative too.",
    lambda x: delta_cell(_choice(x).delta[x.q], _choice(x).rank),
    6,  # "-0.631"
    right=True,
)


class RankDropsScreen(QueryList):
    """The moved queries of one measure, worst first; enter opens a query's detail, n/p walking
    this list. Orders of more than SYNC_LIMIT queries are computed in a thread worker."""

    TOPIC = Topic(
        "Rank drops",
        (
            "worst first",
            (
                "measure",
                "What the list is ordered on: each measure named with --measures, then ndcg, recall, mrr "
                "and the hit rate at k, then the gold rank. It opens on the first named measure, else on "
                "ndcg@k: it moves with every rank change within k and weighs the grades, where the hit "
                "rate's Δ is only the flips (f lists those).",
            ),
            QUERY,
            TENANT,
            MEASURE_A,
            MEASURE_B,
            MEASURE_DELTA,
            TEXT,
            "gold rank",
            "gold rank A − B",
        ),
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "M",
            "measure",
            "next measure",
            tooltip="the next measure to order by (the title names it and the one after it)",
        )
    ]
    title_text = "Rank drops"
    SYNC_LIMIT = 50_000  # queries: up to this many the order is computed at once (a few ms)

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.choices = choices(session.ev)
        self.chosen = self.choices[0]
        self.drawn: Deltas | None = None  # the list drawn (None: still being ordered)
        self.names: np.ndarray | None = None  # the query ids' sorted positions (they never change)

    def compose(self) -> ComposeResult:
        self.columns = [query_column(self.session), TENANT, MEASURE_A, MEASURE_B, MEASURE_DELTA, TEXT]
        self.hidden = empty_columns(self.session)
        yield Static(id="list-title")
        with Horizontal(id="ranks-body"):
            yield VirtualTable(self.columns, id="drops")
            with VerticalScroll(id="ranks-histogram"):
                yield Static(id="histogram")
        yield Keys()

    # -- the order ----------------------------------------------------------------------------
    def key(self, name: str) -> str:
        return f"deltas:{name}"

    def ordered(self, name: str) -> Deltas:
        """The list for `name` on the current snapshot (cached by the session per version)."""
        s = self.session
        if self.names is None:
            self.names = by_name(s.ev.query_ids)
        names = self.names
        return s.cached(self.key(name), lambda snapshot: deltas(snapshot.ev, name, names))

    @work(thread=True, exclusive=True, exit_on_error=False, group="deltas")
    def order_in_worker(self, name: str) -> None:
        self.ordered(name)
        self.app.call_from_thread(self.ordered_in, name)

    def ordered_in(self, name: str) -> None:
        """An order computed in the worker: draw it if it is still the one wanted."""
        if self.is_attached and name == self.chosen and self.drawn is None:
            self.fill(cursor=0)

    def action_measure(self) -> None:
        """The next choice of measure; the list starts again at its worst query."""
        self.chosen = self.choices[(self.choices.index(self.chosen) + 1) % len(self.choices)]
        self.fill(cursor=0)

    def rows(self) -> np.ndarray:
        return self.order

    # -- drawing ------------------------------------------------------------------------------
    def fill(self, cursor: int | None = None) -> None:
        s = self.session
        d = s.ready(self.key(self.chosen))
        if d is None and s.ev.n <= self.SYNC_LIMIT:
            d = self.ordered(self.chosen)
        self.drawn = d
        table = self.query_one(VirtualTable)
        cursor = table.cursor if cursor is None else cursor
        table.columns = columns.shown(self.columns, self.hidden, self.narrow)
        if d is None:
            self.order = np.zeros(0, np.int64)
            table.set_rows(0, lambda i: [], None, 0)
            self.order_in_worker(self.chosen)
        else:
            self.order = d.order
            self._set_rows(table, d, cursor)
        pane = self.query_one("#ranks-histogram", VerticalScroll)
        pane.styles.width = NARROW_HISTOGRAM if self.narrow else HISTOGRAM_WIDTH
        x = report(s).ranks
        self.query_one("#histogram", Static).update(
            histogram(x, NARROW_BAR if self.narrow else HISTOGRAM_BAR)
        )
        self.update_title(table.cursor)

    def _set_rows(self, table: VirtualTable, d: Deltas, cursor: int) -> None:
        s, order, shown = self.session, d.order, table.columns

        def row(i: int) -> list[object]:
            line = QueryLine(i, int(order[i]), s, d.choice)
            return [c.cell(line) for c in shown]

        delta = d.choice.delta
        table.set_rows(len(order), row, lambda i: "bad" if delta[order[i]] < 0 else "good", cursor)

    def heading(self) -> tuple[str, Content]:
        """What the list is ordered on (for the title line), and the lines under it: what moved, the keys."""
        name, d = self.chosen, self.drawn
        what = f"Δ {name} (both hit) = A − B" if name == GOLD_RANK else f"Δ {name} = B − A"
        following = self.choices[(self.choices.index(name) + 1) % len(self.choices)]
        keys = (f"M: {following} next   enter: the detail, n/p walk the list", "$text-muted")
        if d is None:
            return what, line(("ordering the queries…", "$text-muted"), "\n", keys)
        counts: list[str | tuple[str, str]] = [
            (f"{d.fell} fell", "$text-error"),
            " · ",
            (f"{d.rose} rose", "$text-success"),
            f" · {d.same} unchanged (not listed)",
        ]
        if d.not_compared:
            counts.append(f" · {d.not_compared} {'not hit by both' if name == GOLD_RANK else 'not compared'}")
        return f"{what}, worst first", line(*counts, "\n", keys)

    def update_title(self, i: int) -> None:
        where = (
            self.position_label(i) if len(self.order) else ("…" if self.drawn is None else "nothing moved")
        )
        what, below = self.heading()
        self.query_one("#list-title", Static).update(
            Content.assemble(
                line((self.title_text, "bold"), "  ", (what, "bold"), "   ", (where, "$text-accent")),
                "\n",
                below,
            )
        )

    def position_label(self, i: int) -> str:
        return f"query {i + 1} of {len(self.order)}"

    def label_snapshot(self) -> Callable[[int], str]:
        n, name = len(self.order), self.chosen
        return lambda i: f"Δ {name}: {i + 1} of {n}, worst first"
