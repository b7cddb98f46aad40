"""The checks section: every check the evaluation ran, errors first (core/checks)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from triage.core.checks.model import Check, Level
from triage.core.text.sanitize import counted
from triage.report.blocks import Block, Heading, Para, Table


def checks_tally(checks: Iterable[Check]) -> tuple[Level, str]:
    """The worst level among `checks` and a count to read at a glance: "checks: 12 ok", or
    "checks: 1 error, 2 warnings" (errors and warnings only, the passing ones then go unsaid)."""
    by = Counter(c.level for c in checks)
    if not by[Level.ERROR] and not by[Level.WARNING]:
        return Level.OK, f"checks: {by[Level.OK]} ok"
    bad = [counted(n, name) for name, n in (("error", by[Level.ERROR]), ("warning", by[Level.WARNING])) if n]
    return (Level.ERROR if by[Level.ERROR] else Level.WARNING), "checks: " + ", ".join(bad)


def check_rows(checks: Iterable[Check], compact: bool = False) -> list[list[str]]:
    """[level, code, message] per check; `compact` folds the passing ones into one row."""
    checks = list(checks)
    passing = [c for c in checks if c.level is Level.OK]
    rows = [[str(c.level), c.code, c.message] for c in checks if not (compact and c.level is Level.OK)]
    if compact and passing:
        codes = ", ".join(f"{c} ×{n}" if n > 1 else c for c, n in Counter(c.code for c in passing).items())
        rows.append([str(Level.OK), f"{len(passing)} checks", codes])
    return rows


def check_table(rows: list[list[str]]) -> Table:
    """(level, code, message) rows: the level marked, the code as code, the message never cut."""
    return Table(["level", "code", "message"], rows, code=frozenset({1}), level=0, prose=frozenset({2}))


def check_blocks(checks: Iterable[Check]) -> list[Block]:
    rows = [[level, code, message] for level, code, message in check_rows(checks)]
    return [Heading("Checks"), check_table(rows) if rows else Para("No checks.")]
