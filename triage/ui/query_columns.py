"""The columns of a list of queries, declared once: the flips, every query, a slice's queries, the
rank drops and the search's results draw theirs from these (`report.columns.Column`: title, cell,
sentence, layout)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

import pyarrow.compute as pc

from triage.core.evaluation import Arm
from triage.core.measures.paired import Outcome
from triage.labels.verdicts import Verdict
from triage.report import cells, columns
from triage.report.columns import Column
from triage.workspace.session import Session


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


class QueryLine(NamedTuple):
    """A row of a list of queries: its 0-based position, its query index, the session, and what the
    list's own cells read (the flips' screen: its hints; the rank drops' measure)."""

    i: int
    q: int
    session: Session
    context: Any


def _verdict(x: QueryLine) -> str:
    return verdict_cell(x.session.verdicts.for_query(x.session.query_id(x.q)))


def _gold(side: str) -> Callable[[QueryLine], str]:
    def cell(x: QueryLine) -> str:
        arm = x.session.ev.a if side == "a" else x.session.ev.b
        return rank_cell(arm, x.q, bool(arm.short[x.q]), x.session.ev.k)

    return cell


# The columns of a list of queries; the query's width is the evaluation's (`query_column`), the
# ranks' width is k's (`rank_column`).
NUMBER = Column[QueryLine]("#", columns.POSITION, lambda x: x.i + 1, 6, right=True, wide=True)
OUTCOME = Column[QueryLine](
    "outcome",
    "The query's paired result: both hit, both miss, hit→miss or miss→hit.",
    lambda x: Outcome(int(x.session.outcomes[x.q])).label,
    10,
    narrow=9,
)
QUERY = Column[QueryLine]("query", columns.QUERY, lambda x: x.session.query_id(x.q), 8)
TENANT = Column[QueryLine](
    "tenant", columns.TENANT, lambda x: x.session.tenant_of[x.q].as_py(), 18, wide=True
)
GOLD_A = Column[QueryLine]("gold A", columns.gold("A"), _gold("a"), 8, right=True)
GOLD_B = Column[QueryLine]("gold B", columns.gold("B"), _gold("b"), 8, right=True)
PLAN_A = Column[QueryLine]("plan A", columns.PLAN_A, lambda x: x.session.ev.a.value("plan", x.q), 10)
PLAN_B = Column[QueryLine]("plan B", columns.PLAN_B, lambda x: x.session.ev.b.value("plan", x.q), 10)
HINT = Column[QueryLine](
    "hint",
    "The likely cause of the flip, computed from the data; the detail shows its evidence.",
    lambda x: x.context.hint(x.q),
    7,
)
VERDICT = Column[QueryLine](
    "verdict",
    "The cause a reviewer recorded with v in the detail (or how many reviewers differ).",
    _verdict,
    8,
)
TEXT = Column[QueryLine]("text", columns.TEXT, lambda x: x.session.texts[x.q].as_py())


def query_column(session: Session) -> Column[QueryLine]:
    """The query column as wide as the evaluation's longest id (8 to 24 cells)."""
    return replace(QUERY, width=min(24, max(8, pc.max(pc.utf8_length(session.ev.query_ids)).as_py() or 0)))


def rank_column(column: Column[QueryLine], k: int) -> Column[QueryLine]:
    """A gold rank's column as wide as its widest cell, a short list's ("4 (4/5)")."""
    return replace(column, width=max(8, len(f"{k - 1} ({k - 1}/{k})")))
