"""Verdicts: a reader's conclusion about one query — a cause and a note. Review records, never labels.

A verdict is a `verdict` record in the review folder's session files (`records.py`), written like
any judgement (one writer per file, chained, hashed, fsync). Each reviewer's latest verdict on a
query (in merge order, as for judgements) replaces their earlier ones; reviewers whose latest
verdicts name different causes disagree, and the disagreement is listed, never resolved here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from triage.core.views.hints import HintKind


class Cause(StrEnum):
    """A verdict's cause: every hint kind (`core.views.hints.HintKind`), or one of the last three."""

    SHORT_LIST = "short-list"
    PLAN_CHANGE = "plan-change"
    HEADER_DOMINATES = "header-dominates"
    MISLEADING_PATH = "misleading-path"
    LIKELY_UNLABELLED = "likely-unlabelled"
    WINDOW = "window"
    PUSHED_OUT = "pushed-out"
    DROPPED = "dropped"
    REAL_REGRESSION = "real-regression"
    LABEL_ERROR = "label-error"
    OTHER = "other"

    @property
    def code(self) -> str:
        """The short code a list column shows: a hint kind's own code, else the first word."""
        return HintKind(self.value).code if self.value in _HINTED else self.value.split("-")[0]


_HINTED = frozenset(HintKind)


@dataclass(frozen=True)
class Verdict:
    id: str  # the record's id
    query_id: str
    cause: Cause
    note: str
    reviewer: str
    at: str  # UTC ISO 8601
    saved: bool = True  # False: held in memory, the disk refused it (yet)


@dataclass(frozen=True)
class Verdicts:
    """Every reviewer's latest verdict per query."""

    by_query: Mapping[str, tuple[Verdict, ...]] = field(default_factory=dict)

    @staticmethod
    def latest(in_order: Iterable[Verdict]) -> Verdicts:
        """From every verdict, oldest first (merge order, then those held in memory): each
        reviewer's later verdict on a query replaces their earlier one."""
        latest: dict[tuple[str, str], Verdict] = {}
        for v in in_order:
            latest[(v.query_id, v.reviewer)] = v
        by_query: dict[str, list[Verdict]] = {}
        for (query_id, _), v in sorted(latest.items()):  # reviewer order within a query
            by_query.setdefault(query_id, []).append(v)
        return Verdicts({q: tuple(vs) for q, vs in by_query.items()})

    def for_query(self, query_id: str) -> tuple[Verdict, ...]:
        """The latest verdict of each reviewer on `query_id`, in reviewer order (empty: none)."""
        return tuple(self.by_query.get(query_id, ()))

    def disagreements(self) -> list[str]:
        """Queries whose reviewers' latest verdicts name different causes."""
        return sorted(q for q, vs in self.by_query.items() if len({v.cause for v in vs}) > 1)

    @property
    def ids(self) -> frozenset[str]:
        """The record ids of the verdicts in force (a replaced verdict's id is not among them)."""
        return frozenset(v.id for vs in self.by_query.values() for v in vs)

    @property
    def count(self) -> int:
        """Verdicts in force: one per (query, reviewer)."""
        return sum(len(vs) for vs in self.by_query.values())
