"""A check: a level, a stable code and a one-line message that names its evidence. Checks never
change a number; they say whether to trust it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Level(StrEnum):
    OK = "ok"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """0 for the worst: checks are listed errors first."""
        return (Level.ERROR, Level.WARNING, Level.OK).index(self)


OK, WARNING, ERROR = Level.OK, Level.WARNING, Level.ERROR
SHOW = 5  # ids named in one message


@dataclass(frozen=True)
class Check:
    """`facts`: what the message says, as values a program can read (counts, flags)."""

    level: Level
    code: str
    message: str
    facts: Mapping[str, object] = field(default_factory=dict)


def worst_first(checks: list[Check]) -> list[Check]:
    return sorted(checks, key=lambda c: c.level.rank)


def some(values: list[str], total: int | None = None) -> str:
    """The first SHOW of `values`, and how many more."""
    total = len(values) if total is None else total
    shown = ", ".join(values[:SHOW])
    return shown + (f", … (+{total - SHOW})" if total > SHOW else "")
