"""Rank drops (`r`): the queries both arms hit whose gold B ranked lower, largest drop first, beside
the histogram of gold-rank changes. Every figure is a report cell (report/cells.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow.compute as pc
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from triage.core.ids import codes
from triage.report import cells
from triage.report.model import RanksSection
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.screens.lists import QueryList
from triage.ui.screens.live import report
from triage.ui.table import Column, VirtualTable

HISTOGRAM_BAR = 20  # cells of the longest bar


def histogram(x: RanksSection) -> Content:
    """The rank-change histogram as bars: B ranked the gold lower in red, higher in green."""
    h = x.histogram
    parts: list[str | tuple[str, str]] = [("Gold rank A − B", "bold"), "\n"]
    parts += [("+: B ranked it higher", "$text-muted"), "\n"]
    for c, (label, count, bar) in cells.histogram_rows(h, HISTOGRAM_BAR):
        style = "$text-error" if c < 0 else ("$text-success" if c > 0 else "$text-accent")
        parts += [(f"{label:>4} {count:>4} ", "$text-muted" if count == "0" else ""), (bar, style), "\n"]
    if not h.changes:
        parts += ["no query has a gold id in both lists\n"]
    parts += ["\n", (cells.histogram_line(h), "$text-muted")]
    return line(*parts)


class RankDropsScreen(QueryList):
    """The report's drops; enter opens a query's detail, n/p walking the drops."""

    HELP = "ranks"
    title_text = "Rank drops"

    def compose(self) -> ComposeResult:
        width = min(24, max(8, pc.max(pc.utf8_length(self.session.ev.query_ids)).as_py() or 0))
        yield Static(id="list-title")
        with Horizontal(id="ranks-body"):
            yield VirtualTable(
                [
                    Column("#", 5, right=True),
                    Column("query", width),
                    Column("tenant", 18),
                    Column("gold A → B", 11, right=True),
                    Column("drop", 5, right=True),
                    Column("text", 0),
                ],
                id="drops",
            )
            with VerticalScroll(id="ranks-histogram"):
                yield Static(id="histogram")
        yield Keys()

    def rows(self) -> np.ndarray:
        drops = report(self.session).ranks.drops
        where = codes.encode(drops.columns["query_id"], self.session.ev.query_ids)
        return np.asarray(where, np.int64)

    def fill(self, cursor: int | None = None) -> None:
        r = report(self.session)
        x = r.ranks
        self.order = self.rows()
        drops, texts = x.drops, self.session.texts
        order = self.order

        def row(i: int) -> list[object]:
            return [*cells.drop_cells(i + 1, drops[i]), texts[int(order[i])].as_py()]

        table = self.query_one(VirtualTable)
        cursor = table.cursor if cursor is None else cursor
        table.set_rows(len(drops), row, None, cursor)
        self.query_one("#histogram", Static).update(histogram(x))
        self.heading = line(
            (cells.drops_line(x, r.k), "$text-error"),
            ("   enter: the detail, n/p walk the drops", "$text-muted"),
            "\n",
            cells.wins_ties_losses(x, r.k),
        )
        self.update_title(cursor)

    heading: Content = Content("")

    def update_title(self, i: int) -> None:
        where = self.position_label(i) if len(self.order) else "nothing to list"
        self.query_one("#list-title", Static).update(
            Content.assemble(
                line((self.title_text, "bold"), "  ", (where, "$text-accent")), "\n", self.heading
            )
        )

    def position_label(self, i: int) -> str:
        return f"drop {i + 1} of {len(self.order)}"

    def label_snapshot(self) -> Callable[[int], str]:
        n = len(self.order)
        return lambda i: f"rank drop {i + 1} of {n}"
