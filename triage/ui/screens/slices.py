"""Tenants (`t`) and slices (`s`): where a blended mean hides a collapsed customer.

Both list slices of the scored queries with each arm's numbers; `enter` opens a slice's queries
(flips first) and from there the same detail screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import numpy as np
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from triage.core.measures.paired import Outcome
from triage.core.views.slices import FEW, Slice
from triage.report import cells, columns
from triage.report import terminal as report_text
from triage.report.columns import Column
from triage.report.sections.slices import LEGEND, SLICES, SliceRow
from triage.report.sections.tenants import (
    NARROW_BAR,
    RECALL_COLUMNS,
    TENANT_BARS,
    TENANTS,
    TenantLine,
    TenantOrder,
    TenantRow,
    TenantsSection,
    below_floor,
    p5,
    tenant_columns,
)
from triage.ui.glossary import Topic
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.screens.help import BACK, HELP_KEY
from triage.ui.screens.lists import SHOWN, QueryList
from triage.ui.screens.live import LiveScreen, report
from triage.ui.table import LIST_KEYS, VirtualTable, opens
from triage.workspace.session import Session


def wider(columns: Iterable[Column[Any]], room: int | None = None) -> str:
    """The columns only a wide screen shows: "B 95%, rec A, rec B"; with `room`, as many as fit in
    that many characters, then "…" (`?` names every one)."""
    titles = [c.title for c in columns if c.wide]
    said = ", ".join(titles)
    while room is not None and len(said) > room and titles:
        titles.pop()
        said = ", ".join([*titles, "…"])
    return said


NARROW_NOTE = ("worst three highlighted · wider: ", " · ? explains each")  # around the wide-only columns


def slice_named(session: Session, key: str, value: str) -> Slice:
    """The core slice behind a report row: its query indices, for drilling in."""
    return next(s for s in session.slices[key] if s.value == value)


def empty_tenant_columns(rows: Sequence[TenantRow]) -> set[str]:
    """Titles of the tenant columns empty for every tenant: `plan` (no run records a plan) and
    `sel.` (no query has a selectivity)."""
    empty = set()
    if all(t.plan is None for t in rows):
        empty.add("plan")
    if all(t.median_selectivity is None for t in rows):
        empty.add("sel.")
    return empty


class SliceQueries(QueryList):
    """One slice's queries: regressions first, then wins, then the rest."""

    TOPIC = Topic("A tenant's or slice's queries", SHOWN)

    def __init__(self, session: Session, slice_: Slice) -> None:
        super().__init__(session)
        self.slice = slice_

    @property
    def title_text(self) -> str:  # type: ignore[override]
        return f"{self.slice.key} {self.slice.value}: {self.slice.n} scored queries, flips first"

    def rows(self) -> np.ndarray:
        q = self.slice.queries
        rank = np.select(
            [
                self.session.outcomes[q] == Outcome.HIT_TO_MISS,
                self.session.outcomes[q] == Outcome.MISS_TO_HIT,
            ],
            [0, 1],
            2,
        )
        return q[np.lexsort((q, rank))]

    def label_snapshot(self) -> Callable[[int], str]:
        n, key, value = len(self.order), self.slice.key, self.slice.value
        return lambda i: f"{key} {value}: query {i + 1} of {n}"


class TenantsScreen(LiveScreen):
    TOPIC = Topic(
        "Tenants",
        (*TENANTS, *RECALL_COLUMNS, "< floor", "few", "floor", "5th-percentile", "bars", *TENANT_BARS),
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        BACK,
        Binding(
            "b",
            "bars",
            "bars / table",
            tooltip="bars of A's and B's hit rate per tenant (and back to the table)",
        ),
        Binding(
            "l",
            "order",
            "by rate / lower bound",
            tooltip="order by the low end of B's 95% interval instead of B's hit rate (and back)",
        ),
        *LIST_KEYS,
        opens("the tenant's queries, regressions first; enter again for the detail"),
    ]
    COLUMNS = TENANTS
    BARS = TENANT_BARS
    # Narrower than NARROW the table keeps #, tenant, n, both rates, the flips, Δ q and the marks
    # (< floor, few), the wide-only columns left out; the bars are shorter.

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.show_bars = False
        self.order = TenantOrder.HIT_RATE

    def compose(self) -> ComposeResult:
        yield Static(id="tenants-title")
        yield VirtualTable(self.COLUMNS, id="tenants")
        yield Keys()

    def tenants(self) -> TenantsSection | None:
        """The report's tenants in this screen's order."""
        t = report(self.session).tenants
        return None if t is None else t.ordered(self.order)

    def fill(self) -> None:
        t = self.tenants()
        table = self.query_one(VirtualTable)
        if t is None:
            self.query_one("#tenants-title", Static).update(
                report_text.unfilled_line(report(self.session), "tenants")
            )
            table.set_rows(0, lambda i: [])
            return
        rows, floor = t.rows, t.floor
        decision = next((name for r in rows for name in r.compare), None)  # Δ q's measure
        of = f" of {decision}" if decision is not None else ""
        before, after = NARROW_NOTE
        listed = wider(self.COLUMNS, self.size.width - len(before) - len(after))
        note = (
            f"\n{before}{listed}{after}"
            if self.narrow
            else "\nthe worst three are highlighted; few = fewer than "
            f"{FEW} scored queries; B 95%: Wilson interval of B's hit rate; Δ q: B − A{of} and its "
            "Benjamini–Hochberg q across tenants (* q < 0.05); b: bars (┃ marks the floor); l: order "
            "by hit rate / by the interval's low end; enter: the tenant's queries"
        )
        self.query_one("#tenants-title", Static).update(
            line(
                (f"Tenants, {t.order.label}  ", "bold"),
                (below_floor(t), "$text-error bold"),
                f"   {p5(t)}",
                (note, "$text-muted"),
            )
        )
        bar = NARROW_BAR if self.narrow else cells.BAR
        shown = columns.shown(
            tenant_columns(t, self.show_bars), empty_tenant_columns(rows), self.narrow, self.size.width
        )

        def row(i: int) -> list[str]:
            return columns.cells_of(shown, TenantLine(i + 1, rows[i], t, bar))

        def tag(i: int) -> str | None:
            x = rows[i]
            if i < 3:
                return "bad" if x.below(floor) else "gold"
            return "muted" if x.few else None

        table.columns = shown
        table.set_rows(len(rows), row, tag, table.cursor)

    def action_bars(self) -> None:
        self.show_bars = not self.show_bars
        self.fill()

    def action_order(self) -> None:
        low = TenantOrder.LOWER_BOUND
        self.order = TenantOrder.HIT_RATE if self.order is low else low
        self.fill()

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        t = self.tenants()
        if t is not None:
            tenant = slice_named(self.session, "tenant", t.rows[event.index].tenant)
            self.app.push_screen(SliceQueries(self.session, tenant))


KEY_STEP = "the previous / next slice key"


class SlicesScreen(LiveScreen):
    TOPIC = Topic("Slices", (*SLICES, "partition", "noise band"))
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        BACK,
        # the arrows before the table, which would take them to scroll sideways
        Binding(
            "left",
            "key(-1)",
            "previous key",
            show=False,
            priority=True,
            key_display="← / →, [ / ]",
            tooltip=KEY_STEP,
        ),
        Binding("right", "key(1)", "next key", show=False, priority=True, tooltip=KEY_STEP),
        Binding("right_square_bracket", "key(1)", "next key", tooltip=KEY_STEP),
        Binding("left_square_bracket", "key(-1)", "previous key", tooltip=KEY_STEP),
        *LIST_KEYS,
        opens("the slice's queries, regressions first; enter again for the detail"),
    ]
    COLUMNS: ClassVar[tuple[Column[SliceRow], ...]] = (*SLICES, Column("", "", width=0))  # the last: filler
    # Narrower than NARROW the wide-only ones leave (said in the title), and the filler

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.key_index = 0

    def compose(self) -> ComposeResult:
        yield Static(id="slices-title")
        yield VirtualTable(self.COLUMNS, id="slices")
        yield Static(LEGEND, id="slices-legend")
        yield Keys()

    def current(self) -> tuple[str, tuple[SliceRow, ...]]:
        slices = report(self.session).slices
        key = list(slices)[self.key_index % len(slices)]
        return key, slices[key]

    def fill(self) -> None:
        r = report(self.session)
        if not r.slices:
            self.query_one("#slices-title", Static).update(report_text.unfilled_line(r, "slices"))
            return
        key, rows = self.current()
        part = r.partition[key]
        check = (
            ("✓ partitions the scored queries", "$text-success")
            if part.ok
            else ("✗ does not partition the scored queries", "$text-error bold")
        )
        tabs: list[str | tuple[str, str]] = []
        for k in r.slices:
            tabs += [(f" {k} ", "reverse bold" if k == key else "$text-muted")]
        self.query_one("#slices-title", Static).update(
            line(
                ("Slices  ", "bold"),
                *tabs,
                ("   ←/→ or [ ]: key", "$text-muted"),
                (f"  · wider: {wider(self.COLUMNS)}" if self.narrow else "", "$text-muted"),
                "\n",
                f"by {key}: {len(rows)} slices, n sums to {part.sum} of {part.scored} scored  ",
                check,
            )
        )
        table = self.query_one(VirtualTable)
        hidden = {""} if self.narrow else set()
        table.columns = columns.shown(self.COLUMNS, hidden, self.narrow, self.size.width)
        table.set_rows(
            len(rows),
            lambda i: columns.cells_of(table.columns, rows[i]),
            lambda i: "bad" if rows[i].b_below_a else None,
        )

    def action_key(self, step: int) -> None:
        n = len(report(self.session).slices)
        if n:
            self.key_index = (self.key_index + step) % n
            self.fill()

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        key, rows = self.current()
        self.app.push_screen(
            SliceQueries(self.session, slice_named(self.session, key, rows[event.index].value))
        )
