"""Amending from the keyboard, and the tenants and slices screens, with Pilot."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.measures.paired import Outcome
from triage.ui.app import TriageApp
from triage.ui.screens.amendments import AmendmentsScreen
from triage.ui.screens.detail import DetailScreen
from triage.ui.screens.live import report
from triage.ui.screens.slices import SliceQueries, SlicesScreen, TenantsScreen
from triage.ui.table import VirtualTable

from app_helpers import wait_loaded

pytestmark = pytest.mark.slow  # whole-app Pilot runs: left out of the quick loop (README, Development)

SIZE = (120, 36)
NEAR_DUPLICATE = "driftwood/handbook-2023#009"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def cells(capsys, path: Path, *extra: str) -> tuple[int, int, int, int]:
    assert main(["report", str(path), "--format", "json", *extra]) == 0
    p = json.loads(capsys.readouterr().out)["paired"]
    return p["both_hit"], p["both_miss"], p["a_miss_b_hit"], p["a_hit_b_miss"]


async def open_q150(pilot) -> DetailScreen:
    await wait_loaded(pilot)
    await pilot.press("f", "enter")
    while pilot.app.screen.detail.query_id != "q150":
        await pilot.press("n")
    return pilot.app.screen


async def test_g_on_the_flagged_near_duplicate_resolves_the_regression(copy: Path, capsys) -> None:
    labels = copy / "labels.parquet"
    before = (hashlib.sha256(labels.read_bytes()).hexdigest(), labels.stat().st_mtime_ns)
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        assert app.focused is screen.query_one("#list-b")
        row = screen.detail.b.rows[0]
        assert row.chunk_id == NEAR_DUPLICATE and NEAR_DUPLICATE in screen.detail.suggestions
        assert "likely also gold" in text_of(screen, "#preview")
        await pilot.press("g")
        assert "regression resolved by amendment" in text_of(screen, "#status")
        assert screen.detail.outcome is Outcome.BOTH_HIT and screen.detail.b.gold_rank == 1
        assert "+1" in str(screen.query_one("#list-b", VirtualTable).render_line(1).text)
        files = list((copy / "labels.amendments").glob("*.jsonl"))
        assert len(files) == 1 and files[0].name.startswith("ana@")
        record = json.loads(files[0].read_text().splitlines()[0])
        assert (record["op"], record["query_id"], record["chunk_id"], record["seq"], record["prev"]) == (
            "add",
            "q150",
            NEAR_DUPLICATE,
            1,
            None,
        )
        assert record["evidence"] == {"arm": "b", "rank": 1} and record["base"] == before[0]
        await pilot.press("3")  # right after g: the grade
        assert dict(app.session.ev.gold_of(screen.detail.q))[NEAR_DUPLICATE] == 3
        await pilot.press("escape", "escape")  # the overview redraws with the amended numbers
        assert app.screen.shown_version == app.session.version
        assert report(app.session).paired.both_hit == 119
    assert cells(capsys, copy) == (119, 36, 40, 5)
    assert cells(capsys, copy, "--label-state", "frozen") == (118, 36, 40, 6)
    assert (hashlib.sha256(labels.read_bytes()).hexdigest(), labels.stat().st_mtime_ns) == before


async def test_u_brings_the_numbers_back_and_nothing_is_deleted(copy: Path, capsys) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        await pilot.press("g", "j", "u")
        assert "amendment undone" in text_of(screen, "#status")
        assert screen.detail.outcome is Outcome.HIT_TO_MISS
        await pilot.press("L")
        assert isinstance(app.screen, AmendmentsScreen)
        table = app.screen.query_one(VirtualTable)
        assert table.count == 2
        assert "retract" in str(table.render_line(1).text) and "ana" in str(table.render_line(1).text)
    assert cells(capsys, copy) == (118, 36, 40, 6)
    lines = next((copy / "labels.amendments").glob("*.jsonl")).read_text().splitlines()
    assert [json.loads(x)["op"] for x in lines] == ["add", "retract"]
    assert main(["labels", "verify", str(copy)]) == 0


async def test_G_asks_for_a_note_and_g_refuses_gold_rows(copy: Path) -> None:
    app = TriageApp(copy, reviewer="bo")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        await pilot.press("shift+tab")  # arm A's list: row 1 is the frozen gold
        await pilot.press("g")
        assert app.session.labels.records == ()  # already gold: nothing written
        await pilot.press("tab")  # back to B: the near-duplicate
        await pilot.press("G")
        assert isinstance(app.focused, Input)
        await pilot.press(*"same [b]text[/b] q", "enter")
        record = app.session.labels.records[-1]
        assert record.note == "same [b]text[/b] q" and record.reviewer == "bo"
        assert screen.detail.outcome is Outcome.BOTH_HIT


async def test_a_refused_write_keeps_the_amendment_and_says_so(copy: Path) -> None:
    (copy / "labels.amendments").write_text("not a folder")  # the store cannot be created
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        await pilot.press("g")
        assert "NOT SAVED" in text_of(screen, "#status")
        assert len(app.session.labels.unsaved) == 1 and screen.detail.outcome is Outcome.BOTH_HIT
        (copy / "labels.amendments").unlink()
        assert app.session.retry() == 1 and not app.session.labels.unsaved
    assert len(next((copy / "labels.amendments").glob("*.jsonl")).read_text().splitlines()) == 1


async def test_tenants_screen_lists_the_three_below_the_floor_first_then_their_regressions() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, TenantsScreen)
        assert "3 in B" in text_of(screen, "#tenants-title")
        table = screen.query_one(VirtualTable)
        first = [str(table.render_line(i).text) for i in (1, 2, 3)]
        for line, name in zip(first, ("acme-legal", "borealis-health", "granite-insurance"), strict=True):
            assert name in line and "< floor" in line and "ann" in line
        assert "scan (100%)" in str(table.render_line(7).text) and "few" in str(table.render_line(7).text)
        await pilot.press("b")
        assert "┃" in str(table.render_line(1).text)
        await pilot.press("b", "enter")
        assert isinstance(app.screen, SliceQueries)
        assert app.session.query_id(int(app.screen.order[0])) == "q031"  # acme-legal's regression
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen) and app.screen.detail.query_id == "q031"


async def test_slices_screen_switches_keys_and_drills_in() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("s")
        screen = app.screen
        assert isinstance(screen, SlicesScreen)
        assert "by plan" in text_of(screen, "#slices-title") and "✓" in text_of(screen, "#slices-title")
        await pilot.press("right")
        assert "by selectivity" in text_of(screen, "#slices-title")
        await pilot.press("left", "enter")
        assert isinstance(app.screen, SliceQueries) and app.screen.slice.key == "plan"
