"""`L`: the amendments — reviewer, time, what, note, evidence — the verdicts among them (the cause
in the chunk column), and any damaged lines."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from triage.core.text.sanitize import counted
from triage.labels.records import RETRACT, VERDICT
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.messages import OpenQuery
from triage.ui.screens.help import HELP_KEY
from triage.ui.screens.live import LiveScreen
from triage.ui.table import Column, VirtualTable
from triage.workspace.session import Session


class AmendmentsScreen(LiveScreen):
    HELP = "amendments"
    BINDINGS: ClassVar[list[BindingType]] = [HELP_KEY, Binding("escape", "app.pop_screen", "back")]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        yield Static(id="amend-title")
        yield Static(id="amend-problems")
        yield VirtualTable(
            [
                Column("when (UTC)", 19),
                Column("reviewer", 12),
                Column("what", 16),
                Column("query", 10),
                Column("chunk", 28),
                Column("grade", 5, right=True),
                Column("from", 8),
                Column("note", 0),
            ],
            id="amendments",
        )
        yield Keys()

    def fill(self) -> None:
        state = self.session.labels
        records = list(reversed(state.every_record))  # newest first
        # adds not retracted, and each reviewer's latest verdict per query
        in_force = {r.id for r in state.in_force} | state.verdicts.ids
        unsaved = {r.id for r in state.unsaved}

        def what(i: int) -> str:
            r = records[i]
            if r.op == RETRACT:
                text = "retract"
            elif r.op == VERDICT:
                text = "verdict" if r.id in in_force else "verdict (replaced)"
            else:
                text = "add" if r.id in in_force else "add (retracted)"
            return text + (" UNSAVED" if r.id in unsaved else "")

        def row(i: int) -> list[object]:
            r = records[i]
            ev = r.evidence or {}
            where = f"{str(ev.get('arm', '')).upper()} #{ev.get('rank', '')}" if ev else ""
            return [
                r.at.replace("T", " ")[:19],
                r.reviewer,
                what(i),
                r.query_id,
                r.chunk_id if r.cause is None else f"cause {r.cause}",
                r.relevance if r.cause is None else "",
                where,
                r.note,
            ]

        self.query_one(VirtualTable).set_rows(
            len(records),
            row,
            lambda i: (
                "bad"
                if records[i].id in unsaved
                else ("muted" if records[i].op == RETRACT or records[i].id not in in_force else None)
            ),
        )
        folder = state.log.folder
        self.query_one("#amend-title", Static).update(
            line(
                ("Amendments  ", "bold"),
                state.describe(),
                (
                    f"; {counted(len(state.in_force), 'judgement')} in force" if state.records else "",
                    "$text-muted",
                ),
                ("   folder ", "$text-muted"),
                str(folder),
                ("   newest first; enter opens the query", "$text-muted"),
            )
        )
        problems = [str(p) for p in state.log.problems]
        if state.unsaved:
            problems.insert(
                0,
                f"{len(state.unsaved)} decisions are not saved yet (kept in memory; "
                "the next decision retries)",
            )
        self.query_one("#amend-problems", Static).update(
            line(*[(p + "\n", "$text-error") for p in problems]) if problems else ""
        )

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        records = list(reversed(self.session.labels.every_record))
        q = self.session.ev.query_index(records[event.index].query_id)
        if q >= 0:
            self.post_message(OpenQuery(q))
