"""A screen and the report cannot disagree: the tenants and slices screens draw exactly the cells
`cells` makes of `build(...)`'s rows, and the Markdown report prints the same strings. And the
JSON is one documented, strict, versioned object."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from triage.cli.main import main
from triage.core.bundled import bundled, sample_manifest
from triage.core.checks.model import Level
from triage.core.inputs.manifest import from_manifest
from triage.core.measures.paired import Outcome
from triage.report import cells, columns, markdown
from triage.report.build import build
from triage.report.model import Report, dumps_report
from triage.report.sections.labels import label_state_rows
from triage.report.sections.slices import SLICES
from triage.report.sections.tenants import TENANT_BARS, TENANTS, below_floor_line, plan, tenant_lines
from triage.ui.app import TriageApp
from triage.ui.screens.slices import SlicesScreen, TenantsScreen
from triage.ui.table import VirtualTable
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from app_helpers import wait_loaded
from conftest import ROOT

SIZE = (140, 36)  # room for every tenants column (narrower, wide-only ones leave: tests/unit/report)
REPORT_JSON = ROOT / "docs" / "report-json.md"
NEAR_DUPLICATE = "driftwood/handbook-2023#009"


def sample_report() -> Report:
    return build(open_snapshot(from_manifest(sample_manifest())))


def body(text: str, heading: str) -> list[list[str]]:
    """The body rows of the Markdown table under `heading`, split into cells."""
    rows = []
    lines = text.splitlines()
    for line in lines[lines.index(heading) + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("| ") and not line.startswith("|---"):
            rows.append(line[2:-2].split(" | "))
    return rows[1:]  # past the header


def drawn(table: VirtualTable) -> list[list[str]]:
    return [table.cells(i) for i in range(table.count)]


def assert_fits(table: VirtualTable, rows: list[list[str]]) -> None:
    """What reaches the screen is those cells, fitted to their columns."""
    for i, row in enumerate(rows[:20]):  # the rows on screen
        line = str(table.render_line(i + 1).text)
        for column, value in zip(table.columns, row, strict=False):
            if value and column.width and len(value) <= column.width:
                assert value in line, (value, line)


@pytest.mark.slow
async def test_tenants_and_slices_screens_draw_the_report_cells() -> None:
    expected = sample_report()
    md = markdown.render_markdown(expected)
    tenants = expected.tenants
    assert tenants is not None and expected.slices
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        hint = str(app.screen.query_one("#hint").render())
        assert below_floor_line(tenants) in hint and "3 tenants below 0.80 in B" in hint
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, TenantsScreen)
        table = screen.query_one(VirtualTable)
        rows = drawn(table)
        want = [columns.cells_of(TENANTS, t) for t in tenant_lines(tenants)]
        assert rows == want and len(rows) == 8
        assert columns.titles(table.columns) == columns.titles(TENANTS)
        assert_fits(table, rows)
        assert body(md, "## Tenants, worst first by B") == [[markdown.cell(c) for c in r] for r in rows]
        plan = columns.titles(TENANTS).index("plan")
        assert any(r[plan] == "scan (100%)" for r in rows)  # the plan cell, one spelling everywhere
        await pilot.press("b")
        bars = [columns.cells_of(TENANT_BARS, t) for t in tenant_lines(tenants)]
        assert drawn(table) == bars
        await pilot.press("escape", "s")
        screen = app.screen
        assert isinstance(screen, SlicesScreen)
        table = screen.query_one(VirtualTable)
        for key, slice_rows in expected.slices.items():
            assert f"by {key}:" in str(screen.query_one("#slices-title").render())
            rows = drawn(table)
            assert rows == [[*columns.cells_of(SLICES, s), ""] for s in slice_rows]
            assert_fits(table, rows)
            printed = body(md, f"## By {key}")
            assert printed and rows
            assert printed == [[markdown.cell(c) for c in r[:-1]] for r in rows[: cells.SLICE_CAP]]
            await pilot.press("right")


@pytest.mark.slow
async def test_the_screens_follow_an_amendment(tmp_path: Path) -> None:
    """The screens read the report cached per snapshot version: amended numbers reach them."""
    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("t")
        before = drawn(app.screen.query_one(VirtualTable))
        app.session.add("q150", NEAR_DUPLICATE, 1, evidence={"arm": "b", "rank": 1})
        await pilot.press("escape", "t")
        after = drawn(app.screen.query_one(VirtualTable))
        now = build(app.session.snapshot)
        assert now.tenants is not None and after != before
        assert after == [columns.cells_of(TENANTS, t) for t in tenant_lines(now.tenants)]


def documented_keys() -> list[str]:
    """The first column of the first table of the JSON's page (docs/report-json.md)."""
    section = REPORT_JSON.read_text("utf-8")
    table = section[section.index("| key |") :].split("\n\n")[0]
    return [m.group(1) for m in re.finditer(r"^\| `([a-z0-9_]+)` \|", table, re.M)]


def test_json_has_schema_1_and_exactly_the_documented_keys(capsys) -> None:
    assert main(["report", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schema"] == 1 and next(iter(d)) == "schema"
    assert list(d) == documented_keys()
    assert d["gate"] is None and d["k_cells"] is None and d["tenants"] is not None


@pytest.fixture
def amended(tmp_path: Path) -> Session:
    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))
    session = Session(open_snapshot(from_manifest(copy)), reviewer="ana")
    session.add("q150", NEAR_DUPLICATE, 1, evidence={"arm": "b", "rank": 1})
    return session


def test_every_outcome_in_the_json_is_spelled_as_outcome_json(amended: Session) -> None:
    r = build(amended.snapshot)
    assert all(isinstance(f.direction, Outcome) for f in r.flips)
    assert all(isinstance(c.level, Level) for c in r.checks)
    d = json.loads(dumps_report(r), parse_constant=lambda c: pytest.fail(f"{c} in strict JSON"))
    spellings = {o.json for o in Outcome}
    directions = {f["direction"] for f in d["flips"]}
    assert directions == {Outcome.HIT_TO_MISS.json, Outcome.MISS_TO_HIT.json}
    changed = d["frozen"]["changed"]
    assert changed == [{"query_id": "q150", "frozen": "hit->miss", "amended": "both-hit"}]
    assert {c[side] for c in changed for side in ("frozen", "amended")} <= spellings
    assert {c["level"] for c in d["checks"]} <= {str(x) for x in Level}
    assert d["labels"]["applied"] and d["paired"]["reconciles"] and d["frozen"]["paired"]["reconciles"]


@pytest.mark.slow
def test_the_report_and_its_markdown_say_the_same_label_state_rows(amended: Session) -> None:
    r = build(amended.snapshot)
    rows = label_state_rows(r)
    assert rows is not None and rows[-1] == ("  q150", "hit→miss", "both hit")
    md = markdown.render_markdown(r)
    assert "|   q150 | hit→miss | both hit |" in md


def test_a_tenants_share_is_of_every_tenants_scored_queries() -> None:
    tenants = sample_report().tenants
    assert tenants is not None and tenants.scored == sum(t.n for t in tenants.rows) > 0
    share = columns.titles(TENANTS).index("n %")
    drawn = [columns.cells_of(TENANTS, t)[share] for t in tenant_lines(tenants)]
    assert drawn == [f"{t.n / tenants.scored:.0%}" for t in tenants.rows]
    assert 95 <= sum(int(x.rstrip("%")) for x in drawn) <= 105  # whole percentages, rounded each
    assert cells.share(1, 1000) == "<1%" and cells.share(0, 10) == "0%" and cells.share(5, 0) == cells.NONE
    assert cells.share(10, 10) == "100%" and cells.share(5, 1000) == "<1%" and cells.share(6, 1000) == "1%"


def test_undefined_numbers_are_null_and_drawn_as_a_dash() -> None:
    assert cells.rate(None) == cells.band(None) == cells.p_value(None) == cells.delta(0.5, None) == "–"
    assert cells.rank(None, 5) == cells.rank(0, 5) == "absent" and cells.rank(7, 5) == "7 (>k)"
    assert plan("scan", 1.0) == "scan (100%)" and plan(None, 0.0) == "–"
    assert cells.k_cell(None) == "depth too short" and cells.k_cell(0.625) == "0.625"


def test_the_checks_tally_names_the_worst_level_and_counts_only_what_is_not_ok() -> None:
    from triage.core.checks.model import Check, Level
    from triage.report.sections.checks import checks_tally

    def of(*levels: Level) -> list[Check]:
        return [Check(level, f"code.{i}", "message") for i, level in enumerate(levels)]

    ok, warn, err = Level.OK, Level.WARNING, Level.ERROR
    assert checks_tally(of(ok, ok, ok)) == (ok, "checks: 3 ok")
    assert checks_tally(of()) == (ok, "checks: 0 ok")
    assert checks_tally(of(ok, warn, ok)) == (warn, "checks: 1 warning")
    assert checks_tally(of(warn, ok, err, warn)) == (err, "checks: 1 error, 2 warnings")
    assert checks_tally(of(err, err)) == (err, "checks: 2 errors")
