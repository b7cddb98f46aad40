"""Quitting with decisions the disk refused (docs/labels.md "Label amendments": quitting with decisions
held in memory asks first): q and ctrl+c ask; retry, write elsewhere and discard each do what
they say."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_app_review import SIZE, open_q150, text_of

from triage.core.bundled import bundled
from triage.labels.records import read_file
from triage.ui.app import TriageApp
from triage.ui.screens.unsaved import UnsavedScreen


@pytest.fixture
def refused(tmp_path: Path) -> Path:
    """A copy of the sample whose amendments folder cannot be created (a file holds its name)."""
    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))
    (copy / "labels.amendments").write_text("not a folder")
    return copy


async def refused_decision(pilot) -> None:
    screen = await open_q150(pilot)
    await pilot.press("g")
    assert "NOT SAVED" in text_of(screen, "#status")


@pytest.mark.slow
@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_quitting_with_unsaved_decisions_asks_first(refused: Path, key: str) -> None:
    app = TriageApp(refused, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await refused_decision(pilot)
        await pilot.press(key)
        assert isinstance(app.screen, UnsavedScreen) and app.is_running
        assert "1 decision is not saved" in text_of(app.screen, "#unsaved-text")
        await pilot.press("escape")  # stay
        assert not isinstance(app.screen, UnsavedScreen) and app.is_running
        assert app.session.unsaved == 1


@pytest.mark.slow
async def test_retry_writes_them_once_the_disk_takes_them(refused: Path) -> None:
    app = TriageApp(refused, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await refused_decision(pilot)
        await pilot.press("q", "r")
        assert isinstance(app.screen, UnsavedScreen) and "still refused" in text_of(
            app.screen, "#unsaved-text"
        )
        (refused / "labels.amendments").unlink()
        await pilot.press("r")
        await pilot.pause()
        assert not app.is_running
    (written,) = (refused / "labels.amendments").glob("*.jsonl")
    assert len(read_file(written)[0]) == 1


@pytest.mark.slow
async def test_write_elsewhere_puts_them_in_another_folder(refused: Path, tmp_path: Path) -> None:
    app = TriageApp(refused, reviewer="ana")
    elsewhere = tmp_path / "rescue"
    async with app.run_test(size=SIZE) as pilot:
        await refused_decision(pilot)
        await pilot.press("q", "w")
        await pilot.pause()
        box = app.screen.query_one("#unsaved-folder")
        box.value = str(elsewhere)
        await pilot.press("enter")
        await pilot.pause()
        assert not app.is_running
    (written,) = elsewhere.glob("*.jsonl")
    records, problems = read_file(written)
    assert len(records) == 1 and problems == [] and records[0].query_id == "q150"


@pytest.mark.slow
async def test_discard_drops_them_and_quits(refused: Path) -> None:
    app = TriageApp(refused, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await refused_decision(pilot)
        await pilot.press("q", "d")
        await pilot.pause()
        assert not app.is_running
    assert app.session is not None and app.session.unsaved == 0
    assert app.session.ev.paired().a_hit_b_miss == 6  # the regression is back: nothing applied


@pytest.mark.slow
async def test_quitting_with_everything_saved_does_not_ask() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


def test_the_refusal_shown_is_the_disks_not_the_queue_behind_it(refused: Path) -> None:
    """A second decision held behind the first refused one keeps the disk's words for the prompt."""
    from triage.core.inputs.manifest import from_manifest
    from triage.labels.verdicts import Cause
    from triage.workspace.review import QUEUED
    from triage.workspace.session import Session
    from triage.workspace.snapshot import open_snapshot

    session = Session(open_snapshot(from_manifest(refused / "triage.toml")), reviewer="ana")
    first = session.add("q150", "driftwood/handbook-2023#009")
    assert not first.saved and first.error and first.error != QUEUED
    second = session.verdict("q150", Cause.LIKELY_UNLABELLED, "")
    assert not second.saved and second.error == QUEUED
    assert session.refusal == first.error and session.unsaved == 2
