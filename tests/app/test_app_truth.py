"""The app on the on-call's case judged against exact truth (tests/truth_folders.py `make_case`): the
overview leads with recall, the tenants screen ranks and floors on it, the flips are the recall
falls, and a query's detail names the true neighbours each arm missed."""

from __future__ import annotations

import pytest
from textual.widgets import Static
from truth_folders import Case, K, make_case

from triage.core.inputs.manifest import from_args
from triage.report.arms import ByArm
from triage.report.columns import cells_of
from triage.report.sections.tenants import TENANTS, TenantLine, TenantRow, TenantsSection, tenant_columns
from triage.ui.app import TriageApp
from triage.ui.screens.detail import DetailScreen
from triage.ui.screens.lists import FlipsScreen
from triage.ui.screens.slices import TenantsScreen
from triage.ui.table import VirtualTable
from triage.ui.widgets.detail.arms import arm_summary
from triage.workspace.detail import ArmView, Missed

from app_helpers import wait_loaded

SIZE = (140, 40)


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def _row(name: str, hit_b: float, recall_b: float | None) -> TenantRow:
    recall = None if recall_b is None else ByArm(1.0, recall_b)
    return TenantRow(
        name, 6, 1.0, hit_b, hit_b - 1.0, 0, 0, "ann", 1.0, 0.01, True, 0.1, 0.5, 1.0, 0.9, {}, recall
    )


def test_the_tenants_columns_read_recall_against_exact_truth() -> None:
    rows = (_row("pike", 1.0, 0.3), _row("t01", 1.0, 0.9))
    truth = TenantsSection(0.8, ByArm(0, 1), ByArm(None, None), rows[:1], rows, measure=f"recall@{K}")
    shown = tenant_columns(truth)
    titles = [c.title for c in shown]
    assert "rec A" in titles and "rec B" in titles and "hit A" not in titles and "B 95%" not in titles
    cells = dict(zip(titles, cells_of(shown, TenantLine(1, rows[0], truth)), strict=True))
    assert (cells["rec A"], cells["rec B"], cells["B−A"]) == ("1.000", "0.300", "-0.700")
    assert [r.tenant for r in truth.below()] == ["pike"]  # hit rate 1.0, recall 0.3: below on recall
    plain = (_row("pike", 1.0, None), _row("t01", 1.0, None))  # other labels: no recall on the rows
    hits = TenantsSection(0.8, ByArm(0, 0), ByArm(None, None), plain[:1], plain)
    assert tenant_columns(hits) == TENANTS and hits.below() == []


def test_an_arms_summary_names_the_true_neighbours_it_missed() -> None:
    missed = (Missed("d3", 4, 0.912, None), Missed("d7", 8, 0.87, 14))
    arm = ArmView(
        "b", "router", True, True, 1, 10, "ann", 10, 4500, [], recall=0.8, missed=missed, stand_ins=1
    )
    text = str(arm_summary(arm, 10, None, 1500))
    assert "plan ann" in text and "n_returned 10" in text and "n_eligible 4500" in text
    assert (
        "recall@10 0.80" in text and "exact n_eligible 1500" in text and "1 tied neighbour credited" in text
    )
    assert "missed 2: d3 (truth rank 4, 0.912), d7 (truth rank 8, 0.87, here 14)" in text
    assert "recall@10" not in str(arm_summary(arm, 10, None, None))  # other labels: no truth line


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    return make_case(tmp_path_factory.mktemp("case"))


@pytest.mark.slow
async def test_the_app_follows_recall_against_exact_truth(case: Case) -> None:
    app = TriageApp(from_args(case.run_a, case.run_b, case.truth))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        headline = text_of(app.screen, "#headline")
        assert headline.index(f"recall@{K}") < headline.index(f"hit rate@{K}")
        assert "tenants below 0.80 recall in B: " in text_of(app.screen, "#hint")
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, TenantsScreen)
        title = text_of(screen, "#tenants-title")
        assert "tenants below 0.80 recall: " in title and f"5th-percentile tenant recall@{K}" in title
        table = screen.query_one(VirtualTable)
        assert [c.title for c in table.columns][4:6] == ["rec A", "rec B"]
        t = screen.tenants()
        assert t is not None and t.rows[0].tenant == "sliver" and t.rows[0].recall is not None
        await pilot.press("escape", "f")
        flips = app.screen
        assert isinstance(flips, FlipsScreen)
        assert "recall@10 fell, the largest fall first" in text_of(flips, "#list-title")
        assert app.session is not None
        assert app.session.query_id(int(flips.order[0])).startswith("sliver")
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, DetailScreen)
        arm_b = text_of(detail, "#arm-b")
        assert "plan postfilter" in arm_b and "recall@10 0.00" in arm_b and "missed 10: " in arm_b
        assert "truth rank 1," in arm_b and "exact n_eligible 240" in arm_b
