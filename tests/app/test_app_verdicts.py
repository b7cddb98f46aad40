"""`v` on the detail: a verdict in three keys, shown on the detail and in the flips list,
kept across a restart, held in memory when the disk refuses it (Pilot)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_app_review import SIZE, open_q150, text_of

from triage.core.bundled import bundled
from triage.core.views import hints
from triage.core.views.hints import Hint, HintKind
from triage.labels.records import read_file
from triage.labels.verdicts import Cause
from triage.ui.app import TriageApp
from triage.ui.screens.amendments import AmendmentsScreen
from triage.ui.screens.detail import DetailScreen
from triage.ui.screens.help import HelpScreen
from triage.ui.screens.lists import FlipsScreen
from triage.ui.screens.unsaved import UnsavedScreen
from triage.ui.screens.verdict import VerdictScreen
from triage.ui.table import VirtualTable
from triage.workspace import session as session_module

from app_helpers import wait_loaded

pytestmark = pytest.mark.slow  # whole-app Pilot runs: left out of the quick loop (docs/development.md)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def verdict_files(copy: Path) -> list[Path]:
    folder = copy / "labels.amendments"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def flips_row(app: TriageApp, query_id: str) -> dict[str, str]:
    """The flips list's row of `query_id`, by column title, as drawn."""
    table = app.screen.query_one(VirtualTable)
    i = [app.session.query_id(int(q)) for q in app.screen.order].index(query_id)
    return dict(zip([c.title for c in table.columns], table.cells(i), strict=True))


async def test_v_key_enter_writes_a_verdict_that_survives_a_restart(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        assert not screen.query_one("#verdicts").display  # none yet: the line takes no room
        version = app.session.version
        await pilot.press("v", "u", "enter")  # three keys: v, the cause's key, enter (no note)
        assert isinstance(app.screen, DetailScreen)
        assert "verdict  q150: verdict likely-unlabelled" in text_of(screen, "#status")
        assert "ana: likely-unlabelled" in text_of(screen, "#verdicts")
        assert app.session.version == version  # no number moved
        (path,) = verdict_files(copy)
        records, problems = read_file(path)
        assert problems == [] and [(r.op, r.query_id, r.cause, r.note) for r in records] == [
            ("verdict", "q150", Cause.LIKELY_UNLABELLED, "")
        ]
    again = TriageApp(copy, reviewer="bo")  # a new app on the same review folder
    async with again.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        assert screen.query_one("#verdicts").display
        assert "ana: likely-unlabelled" in text_of(screen, "#verdicts")
        await pilot.press("escape")
        assert isinstance(again.screen, FlipsScreen)
        row = flips_row(again, "q150")
        assert row["verdict"] == "unlab" and flips_row(again, "q155")["verdict"] == ""


async def test_a_note_is_typed_after_the_cause_and_the_flips_list_follows(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        flips = app.screen
        assert "verdict" not in [c.title for c in flips.query_one(VirtualTable).columns]  # none yet
        await pilot.press("enter")
        screen = app.screen
        query_id = screen.detail.query_id
        await pilot.press("v", "h")
        assert isinstance(app.screen, VerdictScreen)
        await pilot.press(*"40-token header", "enter")
        assert "ana: header-dominates — 40-token header" in text_of(screen, "#verdicts")
        await pilot.press("escape")
        assert app.screen is flips
        assert flips_row(app, query_id)["verdict"] == "header"
        line = str(flips.query_one(VirtualTable).render_line(1).text)
        assert "window  header   how long" in line  # the hint column, then the verdict's code
        (path,) = verdict_files(copy)
        assert json.loads(path.read_text())["note"] == "40-token header"


async def test_escape_cancels_the_verdict_at_either_step(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        await pilot.press("v", "escape")  # at the cause
        assert app.screen is screen
        await pilot.press("v", "x", "h", *"half a note", "escape")  # x is no cause: nothing picked
        assert app.screen is screen
        assert verdict_files(copy) == [] and app.session.verdicts.for_query("q150") == ()


async def test_a_second_reviewer_who_differs_is_shown_beside_the_first(copy: Path) -> None:
    for reviewer, key in (("ana", "u"), ("bo", "r")):
        app = TriageApp(copy, reviewer=reviewer)
        async with app.run_test(size=SIZE) as pilot:
            await open_q150(pilot)
            await pilot.press("v", key, "enter")
    app = TriageApp(copy, reviewer="cy")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        shown = text_of(screen, "#verdicts")
        assert "ana: likely-unlabelled" in shown and "bo: real-regression" in shown
        assert "reviewers disagree" in shown
        await pilot.press("escape")
        assert flips_row(app, "q150")["verdict"] == "2 differ"
        await pilot.press("L")
        assert isinstance(app.screen, AmendmentsScreen)
        rows = [app.screen.query_one(VirtualTable).cells(i) for i in range(2)]
        assert {r[2] for r in rows} == {"verdict"} and {r[4] for r in rows} == {
            "cause likely-unlabelled",
            "cause real-regression",
        }


async def test_the_hinted_causes_are_offered_first(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def hinted(ev, qs, corpus):  # the hints helper's signature; one hint for every query
        return {int(q): (Hint(HintKind.WINDOW, "b", "past the window"),) for q in qs}

    monkeypatch.setattr(session_module, "hints_for", hinted)
    assert hints.hints_for is not hinted  # only the session's look-up is replaced
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await open_q150(pilot)
        await pilot.press("v")
        causes = text_of(app.screen, "#verdict-causes").splitlines()
        assert causes[1].split() == ["w", "window", "hinted"]
        assert [line.split()[1] for line in causes[2:]] == [c.value for c in Cause if c is not Cause.WINDOW]


async def test_no_hint_lists_the_causes_in_their_order(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "hints_for", lambda ev, qs, corpus: {int(q): () for q in qs})
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await open_q150(pilot)
        await pilot.press("v")
        causes = text_of(app.screen, "#verdict-causes").splitlines()[1:]
        assert [line.split()[1] for line in causes] == [c.value for c in Cause]
        assert not any("hinted" in line for line in causes)


async def test_the_samples_own_hint_is_offered_first(copy: Path) -> None:
    """q150's computed hint (a retrieved near-duplicate of its gold) leads the causes; the key stays."""
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await open_q150(pilot)
        await pilot.press("v")
        causes = text_of(app.screen, "#verdict-causes").splitlines()[1:]
        assert causes[0].split() == ["u", "likely-unlabelled", "hinted"]
        assert sum("hinted" in line for line in causes) == 1


async def test_a_refused_verdict_is_kept_and_the_quit_prompt_counts_it(copy: Path) -> None:
    (copy / "labels.amendments").write_text("not a folder")
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        await pilot.press("v", "o", "enter")
        assert "NOT SAVED" in text_of(screen, "#status")
        assert "NOT SAVED" in text_of(screen, "#verdicts")
        assert app.session.unsaved == 1
        await pilot.press("q")
        assert isinstance(app.screen, UnsavedScreen)
        assert "1 decision is not saved" in text_of(app.screen, "#unsaved-text")
        (copy / "labels.amendments").unlink()
        await pilot.press("r")
        await pilot.pause()
        assert not app.is_running
    (path,) = verdict_files(copy)
    records, _ = read_file(path)
    assert [(r.query_id, r.cause) for r in records] == [("q150", Cause.OTHER)]


async def test_help_lists_v(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("Static").render())
        (line,) = [x for x in text.splitlines() if "your verdict on the query" in x]
        assert line.split()[0] == "v" and "one key each" in line
