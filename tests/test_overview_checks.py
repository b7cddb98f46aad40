"""The overview's checks are exactly the report's: the same codes, as many times, and its folded
"N checks" row names every passing one."""

from __future__ import annotations

from collections import Counter

import pytest

from triage.core.bundled import sample_spec
from triage.core.checks.model import Level
from triage.report.build import build
from triage.report.sections.checks import check_rows
from triage.ui.app import TriageApp
from triage.ui.screens.live import report
from triage.workspace.snapshot import open_snapshot

from app_helpers import wait_loaded

pytestmark = pytest.mark.slow  # a whole-app Pilot run


async def test_the_overview_lists_every_check_the_report_has() -> None:
    expected = build(open_snapshot(sample_spec())).checks
    assert {"queries.generated_like", "queries.header_vocabulary"} <= {c.code for c in expected}
    app = TriageApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        session = app.session
        assert session is not None
        shown = report(session).checks
        assert Counter((c.code, c.level) for c in shown) == Counter((c.code, c.level) for c in expected)
        (folded,) = [row for row in check_rows(shown, compact=True) if row[0] == "ok"]
        passing = Counter(c.code for c in expected if c.level is Level.OK)
        assert folded[1] == f"{sum(passing.values())} checks"
        named = Counter()
        for part in folded[2].split(", "):
            code, _, times = part.partition(" ×")
            named[code] = int(times or 1)
        assert named == passing  # every passing check named, as many times as it passed
        # the headline, in view at 80×24, says what the table below holds: here its warnings
        warnings = sum(c.level is Level.WARNING for c in expected)
        head = str(app.screen.query_one("#headline").render())
        assert f"checks: {warnings} warnings" in head and "error" not in head
