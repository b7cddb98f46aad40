"""SVG snapshots of the main screens at 120×36 on the bundled sample (pytest-textual-snapshot).

Update after an intended change with `pytest tests/app/test_snapshots.py --snapshot-update`, and look
at the report it writes before committing."""

from __future__ import annotations

import pytest

from triage.ui.app import TriageApp

from app_helpers import wait_loaded

pytestmark = pytest.mark.slow  # whole-app SVG snapshots: left out of the quick loop (README, Development)

SIZE = (120, 36)


def _app() -> TriageApp:
    return TriageApp()


def test_overview(snap_compare) -> None:
    assert snap_compare(_app(), terminal_size=SIZE, run_before=wait_loaded)


def test_flips(snap_compare) -> None:
    async def before(pilot) -> None:
        await wait_loaded(pilot)
        await pilot.press("f", "j")
        await pilot.app.workers.wait_for_complete()  # the hints column's worker
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_detail_of_the_near_duplicate_regression(snap_compare) -> None:
    async def before(pilot) -> None:
        await wait_loaded(pilot)
        await pilot.press("f", "enter", "n", "n", "n", "n")  # regression 5 of 6: q150

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_help(snap_compare) -> None:
    async def before(pilot) -> None:
        await wait_loaded(pilot)
        await pilot.press("question_mark")

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_chunk_best_passage(snap_compare) -> None:
    """q046's gold in full after `w`: the query words marked, the last passage shaded."""

    async def before(pilot) -> None:
        await wait_loaded(pilot)
        await pilot.press("f", "enter", "tab", "enter", "w")

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_rank_drops(snap_compare) -> None:
    async def before(pilot) -> None:
        await wait_loaded(pilot)
        await pilot.press("r", "j")
        await pilot.app.workers.wait_for_complete()  # a large list is ordered in a worker
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


# -- every main screen at the smallest usual terminal and a roomy one ---------------------------------
SIZES = {"80x24": (80, 24), "140x45": (140, 45)}
SCREENS = {
    "overview": (),
    "flips": ("f", "j"),
    "detail": ("f", "enter"),
    "tenants": ("t",),
    "slices": ("s",),
    "queue": ("J",),
    "ranks": ("r",),
    "help_on_ranks": ("r", "question_mark"),
    "help_on_flips": ("f", "question_mark"),
    "help_on_detail": ("f", "enter", "question_mark"),
}


def _walk(keys: tuple[str, ...]):  # type: ignore[no-untyped-def]
    async def before(pilot) -> None:
        await wait_loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.app.workers.wait_for_complete()  # the hints column's, the queue's worker
            await pilot.pause()

    return before


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_at_size(snap_compare, screen: str, size: str) -> None:
    assert snap_compare(_app(), terminal_size=SIZES[size], run_before=_walk(SCREENS[screen]))


@pytest.mark.parametrize("size", list(SIZES))
def test_overview_with_measures_at_size(snap_compare, size: str) -> None:
    """The measures table and the Δ plot under it (widgets/forest.py), above the keys at 80×24."""
    import triage

    app = triage.open(measures="nDCG@10,AP,R@100").app()
    assert snap_compare(app, terminal_size=SIZES[size], run_before=_walk(()))
