"""The app on the bundled on-call case (sample_runs/oncall/), judged against the exact truth the
README's first two steps make: `t` shows the tenants below the floor in each arm, the 5th
percentile and the worst three first, each line read from the report's tenants (themselves checked
against a computation apart in tests/flows/test_oncall_sample.py); granite's scan beside its
postfiltered neighbours."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

import triage
from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_args
from triage.ui.app import TriageApp
from triage.ui.screens.slices import TenantsScreen
from triage.ui.table import VirtualTable

from app_helpers import wait_loaded

ONCALL = bundled("sample_runs") / "oncall"
SIZE = (160, 45)


@pytest.fixture(scope="module")
def truth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's `triage sample` and `triage truth`, from Python."""
    tmp = tmp_path_factory.mktemp("oncall")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIAGE_CACHE", str(tmp_path_factory.mktemp("cache")))
        triage.sample(ONCALL / "log.jsonl", ONCALL / "corpus.parquet", tmp / "q.parquet")
        triage.truth(ONCALL / "corpus.parquet", tmp / "q.parquet", 10, tmp / "truth")
    return tmp / "truth"


@pytest.mark.slow
async def test_t_shows_the_tenants_below_the_floor_the_5th_percentile_and_the_worst_three(
    truth: Path,
) -> None:
    runs = ONCALL / "runs"
    report = triage.open(a=runs / "a.parquet", b=runs / "b.parquet", labels=truth).report()
    tenants = report.tenants
    assert tenants is not None and tenants.measure == "recall@10"
    app = TriageApp(from_args(runs / "a.parquet", runs / "b.parquet", truth))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        hint = str(app.screen.query_one("#hint", Static).render())
        assert f"tenants below 0.80 recall in B: {tenants.below_floor.b}" in hint
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, TenantsScreen)
        title = str(screen.query_one("#tenants-title", Static).render())
        below = f"tenants below 0.80 recall: {tenants.below_floor.a} in A, {tenants.below_floor.b} in B"
        assert below in title
        assert f"5th-percentile tenant recall@10 A {tenants.p5.a:.3f}, B {tenants.p5.b:.3f}" in title
        table = screen.query_one(VirtualTable)
        titles = [c.title for c in table.columns]
        assert {"rec A", "rec B", "plan", "sel."} <= set(titles) and "hit B" not in titles
        lines = [dict(zip(titles, table.cells(i), strict=True)) for i in range(len(tenants.rows))]
        assert [x["tenant"] for x in lines[:3]] == [r.tenant for r in tenants.worst]
        assert [x["tenant"] for x in lines] == [r.tenant for r in tenants.rows]
        for x, r in zip(lines, tenants.rows, strict=True):
            assert r.recall is not None
            assert (x["rec A"], x["rec B"]) == (f"{r.recall.a:.3f}", f"{r.recall.b:.3f}")
        for x, r in zip(lines, tenants.rows, strict=True):
            sel = "–" if r.median_selectivity is None else f"{r.median_selectivity:.2%}"  # (none): unfiltered
            assert (x["plan"], x["sel."]) == (f"{r.plan} ({r.plan_share:.0%})", sel)
            assert x[""] == ", ".join(m for m, on in (("< floor", r.below(0.8)), ("few", r.few)) if on)
        # granite, 300 chunks, scanned at 1.000 beside evergreen and fjord, whose B postfilters
        granite = next(x for x in lines if x["tenant"] == "granite")
        assert (granite["rec B"], granite["plan"]) == ("1.000", "scan (100%)")
        assert [x["tenant"] for x in lines if x[""].startswith("< floor")] == [
            r.tenant for r in tenants.below()
        ]
        assert len(tenants.below()) == tenants.below_floor.b > tenants.below_floor.a
