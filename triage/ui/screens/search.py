"""`/`: fuzzy search over query ids and texts; results update as you type, enter opens."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from triage.core.measures.paired import Outcome
from triage.ui.glossary import Topic
from triage.ui.literal import line
from triage.ui.query_columns import OUTCOME, QUERY, TEXT, QueryLine
from triage.ui.table import VirtualTable, opens
from triage.workspace.session import Session

TAGS = {Outcome.HIT_TO_MISS: "bad", Outcome.MISS_TO_HIT: "good"}
COLUMNS = (replace(QUERY, width=14), OUTCOME, TEXT)


class SearchScreen(ModalScreen[int | None]):
    TOPIC = Topic("Search", COLUMNS)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "results", "results", show=False, tooltip="choose a result (then j / k, ↓ / ↑)"),
        opens("open the best (or chosen) match"),  # the box's and the results' enter
        Binding("escape", "cancel", "close", tooltip="close"),
    ]

    def __init__(self, session: Session, current: np.ndarray) -> None:
        super().__init__()
        self.session = session
        self.current = current
        self.results: list[int] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="search-box"):
            yield Static(
                line(("search", "bold"), ("  query id or words; enter opens the best match", "$text-muted"))
            )
            yield Input(placeholder="e.g. q061 or parental leave", id="search-input")
            yield VirtualTable(COLUMNS, id="search-results")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def search(self, needle: str) -> None:
        found = self.session.searcher.search(needle, limit=50, prefer=self.current)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.show, found)

    def show(self, found: list[int]) -> None:
        self.results = found
        s = self.session
        table = self.query_one(VirtualTable)
        table.set_rows(
            len(found),
            lambda i: [c.cell(QueryLine(i, found[i], s, None)) for c in COLUMNS],
            lambda i: TAGS.get(Outcome(int(s.outcomes[found[i]]))),
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        # The search may still be running for the last keystroke: finish it here.
        self.results = self.session.searcher.search(event.value, limit=50, prefer=self.current)
        self.dismiss(self.results[0] if self.results else None)

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        self.dismiss(self.results[event.index])

    def action_results(self) -> None:
        if self.results:
            self.query_one(VirtualTable).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
