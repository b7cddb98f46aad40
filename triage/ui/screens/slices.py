"""Tenants (`t`) and slices (`s`): where a blended mean hides a collapsed customer.

Both list slices of the scored queries with each arm's numbers; `enter` opens a slice's queries
(flips first) and from there the same detail screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from triage.core.paired import Outcome
from triage.core.slices import FEW, Slice, Tenant
from triage.report import cells as fmt
from triage.report.model import slice_row
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.screens.lists import QueryList
from triage.ui.screens.live import LiveScreen
from triage.ui.table import Column, VirtualTable
from triage.workspace.session import Session

BAR = 24  # cells of a full (1.0) bar


def bar(rate: float, floor: float) -> str:
    """A hit rate as a bar of BAR cells (eighths for the last one) on a light track, with the
    floor marked ┃ where the bar does not reach it."""
    if rate != rate:  # NaN
        return "–".ljust(BAR, "░")
    eighths = round(rate * BAR * 8)
    filled = "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]
    track = list(filled.ljust(BAR, "░"))
    at = min(BAR - 1, int(floor * BAR))
    if at >= len(filled):
        track[at] = "┃"
    return "".join(track)


class SliceQueries(QueryList):
    """One slice's queries: regressions first, then wins, then the rest."""

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
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "back"),
        Binding("b", "bars", "bars / table"),
    ]
    COLUMNS = [
        Column("#", 4, right=True),
        Column("tenant", 24),
        Column("n", 5, right=True),
        Column("hit A", 6, right=True),
        Column("hit B", 6, right=True),
        Column("B−A", 7, right=True),
        Column("±B", 6, right=True),
        Column("h→m", 4, right=True),
        Column("m→h", 4, right=True),
        Column("plan", 16),
        Column("sel.", 7, right=True),
        Column("", 0),
    ]
    BARS = [
        Column("#", 4, right=True),
        Column("tenant", 24),
        Column("n", 5, right=True),
        Column("A", BAR + 7),
        Column("B", BAR + 7),
        Column("", 0),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.show_bars = False

    def compose(self) -> ComposeResult:
        yield Static(id="tenants-title")
        yield VirtualTable(self.COLUMNS, id="tenants")
        yield Keys()

    def fill(self) -> None:
        t = self.session.tenants
        table = self.query_one(VirtualTable)
        if t is None:
            self.query_one("#tenants-title", Static).update(
                line(("no tenant column in the queries or runs", "bold"))
            )
            table.set_rows(0, lambda i: [])
            return
        rows = t.rows
        floor = t.floor
        self.query_one("#tenants-title", Static).update(
            line(
                ("Tenants, worst first by B  ", "bold"),
                (
                    f"{t.below_floor['a']} below the floor {floor:.2f} in A, {t.below_floor['b']} in B",
                    "$text-error bold",
                ),
                f"   5th-percentile tenant hit rate A {fmt.rate(t.p5['a'])}, B {fmt.rate(t.p5['b'])}",
                (
                    "\nthe worst three are highlighted; few = fewer than "
                    f"{FEW} scored queries; b: bars (┃ marks the floor); enter: the tenant's queries",
                    "$text-muted",
                ),
            )
        )

        def marks(x: Tenant) -> str:
            out = []
            if x.slice.b.hit_rate < floor:
                out.append("< floor")
            if x.few:
                out.append("few")
            return ", ".join(out)

        def cells(i: int) -> list[object]:
            x = rows[i]
            s = x.slice
            if self.show_bars:
                return [
                    i + 1,
                    x.name,
                    s.n,
                    f"{bar(s.a.hit_rate, floor)} {fmt.rate(s.a.hit_rate)}",
                    f"{bar(s.b.hit_rate, floor)} {fmt.rate(s.b.hit_rate)}",
                    marks(x),
                ]
            plan = f"{x.plan} {x.plan_share:.0%}" if x.plan else "–"
            sel = "–" if x.median_selectivity != x.median_selectivity else f"{x.median_selectivity:.2%}"
            return [
                i + 1,
                x.name,
                s.n,
                fmt.rate(s.a.hit_rate),
                fmt.rate(s.b.hit_rate),
                fmt.delta(s.a.hit_rate, s.b.hit_rate),
                fmt.band(s.b.noise_band),
                s.hit_to_miss,
                s.miss_to_hit,
                plan,
                sel,
                marks(x),
            ]

        def tag(i: int) -> str | None:
            x = rows[i]
            if i < 3:
                return "bad" if x.slice.b.hit_rate < floor else "gold"
            return "muted" if x.few else None

        table.columns = list(self.BARS if self.show_bars else self.COLUMNS)
        table.set_rows(len(rows), cells, tag, table.cursor)

    def action_bars(self) -> None:
        self.show_bars = not self.show_bars
        self.fill()

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        t = self.session.tenants
        if t is not None:
            self.app.push_screen(SliceQueries(self.session, t.rows[event.index].slice))


class SlicesScreen(LiveScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "back"),
        Binding("right_square_bracket,right", "key(1)", "next key"),
        Binding("left_square_bracket,left", "key(-1)", "previous key"),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.key_index = 0

    def compose(self) -> ComposeResult:
        yield Static(id="slices-title")
        yield VirtualTable(
            [
                Column("value", 24),
                Column("n", 6, right=True),
                Column("hit A", 6, right=True),
                Column("hit B", 6, right=True),
                Column("±B", 6, right=True),
                Column("B−A", 7, right=True),
                Column("rec A", 6, right=True),
                Column("rec B", 6, right=True),
                Column("h→m", 4, right=True),
                Column("m→h", 4, right=True),
                Column("short", 6, right=True),
                Column("elig=0", 6, right=True),
                Column("", 0),
            ],
            id="slices",
        )
        yield Static(fmt.LEGEND, id="slices-legend")
        yield Keys()

    def current(self) -> tuple[str, list[Slice]]:
        keys = list(self.session.slices)
        key = keys[self.key_index % len(keys)]
        return key, self.session.slices[key]

    def fill(self) -> None:
        if not self.session.slices:
            self.query_one("#slices-title", Static).update(line(("no slice columns in the inputs", "bold")))
            return
        key, rows = self.current()
        keys = list(self.session.slices)
        scored = int(self.session.ev.scored.sum())
        total = sum(s.n for s in rows)
        check = (
            ("✓ partitions the scored queries", "$text-success")
            if total == scored
            else ("✗ does not partition the scored queries", "$text-error bold")
        )
        tabs: list[str | tuple[str, str]] = []
        for k in keys:
            tabs += [(f" {k} ", "reverse bold" if k == key else "$text-muted")]
        self.query_one("#slices-title", Static).update(
            line(
                ("Slices  ", "bold"),
                *tabs,
                ("   ←/→ or [ ]: key", "$text-muted"),
                "\n",
                f"by {key}: {len(rows)} slices, n sums to {total} of {scored} scored  ",
                check,
            )
        )

        def cells(i: int) -> list[object]:
            return [*fmt.slice_cells(slice_row(rows[i])), ""]

        def tag(i: int) -> str | None:
            s = rows[i]
            return "bad" if s.b.hit_rate < s.a.hit_rate else None

        self.query_one(VirtualTable).set_rows(len(rows), cells, tag)

    def action_key(self, step: int) -> None:
        if self.session.slices:
            self.key_index = (self.key_index + step) % len(self.session.slices)
            self.fill()

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        _, rows = self.current()
        self.app.push_screen(SliceQueries(self.session, rows[event.index]))
