"""Verdicts: a reader's conclusion about one query — a cause and a note. Review records, never labels.

(Skeleton: the value types are fixed here; reading and writing them is being written.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Cause(StrEnum):
    """A verdict's cause: every hint kind (`core.hints.HintKind`), or one of the last three."""

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


@dataclass(frozen=True)
class Verdict:
    id: str  # the record's id
    query_id: str
    cause: Cause
    note: str
    reviewer: str
    at: str  # UTC ISO 8601


@dataclass(frozen=True)
class Verdicts:
    """Every reviewer's latest verdict per query."""

    by_query: Mapping[str, tuple[Verdict, ...]] = field(default_factory=dict)

    def for_query(self, query_id: str) -> tuple[Verdict, ...]:
        """The latest verdict of each reviewer on `query_id`, in reviewer order (empty: none)."""
        return tuple(self.by_query.get(query_id, ()))

    def disagreements(self) -> list[str]:
        """Queries whose reviewers' latest verdicts name different causes."""
        return sorted(q for q, vs in self.by_query.items() if len({v.cause for v in vs}) > 1)
