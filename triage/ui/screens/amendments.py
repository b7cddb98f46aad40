"""`L`: the amendments — reviewer, time, what, note, evidence — the verdicts among them (the cause
in the chunk column), and any damaged lines."""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Static

from triage.core.text.sanitize import counted
from triage.labels.records import RETRACT, VERDICT, Record
from triage.report import columns
from triage.report.columns import Column
from triage.ui.glossary import TERMS, Topic
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.messages import OpenQuery
from triage.ui.screens.help import BACK, HELP_KEY
from triage.ui.screens.live import LiveScreen
from triage.ui.table import LIST_KEYS, VirtualTable, opens
from triage.workspace.session import Session


class Entry(NamedTuple):
    """An amendments-table row: the record, whether it is in force, whether it is unsaved."""

    record: Record
    in_force: bool
    unsaved: bool


def _when(x: Entry) -> str:
    return x.record.at.replace("T", " ")[:19]


def _what(x: Entry) -> str:
    r = x.record
    if r.op == RETRACT:
        text = "retract"
    elif r.op == VERDICT:
        text = "verdict" if x.in_force else "verdict (replaced)"
    else:
        text = "add" if x.in_force else "add (retracted)"
    return text + (" UNSAVED" if x.unsaved else "")


def _from(x: Entry) -> str:
    ev = x.record.evidence or {}
    return f"{str(ev.get('arm', '')).upper()} #{ev.get('rank', '')}" if ev else ""


COLUMNS: tuple[Column[Entry], ...] = (
    Column(
        "when (UTC)", "When the record was written, in UTC.", lambda x: x.record.at.replace("T", " ")[:19], 19
    ),
    Column(
        "reviewer",
        "Who made the decision: --reviewer, else TRIAGE_REVIEWER, else the login name.",
        lambda x: x.record.reviewer,
        12,
    ),
    Column(
        "what",
        "add (gold added), retract (an add undone), verdict (a cause); UNSAVED when the disk refused it.",
        _what,
        16,
    ),
    Column("query", columns.QUERY, lambda x: x.record.query_id, 10),
    Column(
        "chunk",
        "The passage amended (for a verdict: its cause).",
        lambda x: x.record.chunk_id if x.record.cause is None else f"cause {x.record.cause}",
        28,
    ),
    Column("grade", TERMS["grade"], lambda x: x.record.relevance if x.record.cause is None else "", 5, True),
    Column("from", "The evidence: which arm and rank the passage was marked from.", _from, 8),
    Column("note", "The reviewer's note.", lambda x: x.record.note),
)


class AmendmentsScreen(LiveScreen):
    TOPIC = Topic("Amendments", COLUMNS)
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        BACK,
        *LIST_KEYS,
        opens("open the amended query's detail"),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        yield Static(id="amend-title")
        yield Static(id="amend-problems")
        yield VirtualTable(
            COLUMNS,
            id="amendments",
        )
        yield Keys()

    def fill(self) -> None:
        state = self.session.labels
        records = list(reversed(state.every_record))  # newest first
        # adds not retracted, and each reviewer's latest verdict per query
        in_force = {r.id for r in state.in_force} | state.verdicts.ids
        unsaved = {r.id for r in state.unsaved}

        def row(i: int) -> list[object]:
            entry = Entry(records[i], records[i].id in in_force, records[i].id in unsaved)
            return [c.cell(entry) for c in COLUMNS]

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
