"""The app at 80×24: every footer fits and shows `?` first and the screen's own keys; the tables
keep their columns. Driven with Pilot on the bundled sample."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from triage.ui.app import TriageApp

from app_helpers import wait_loaded

pytestmark = pytest.mark.slow  # whole-app Pilot runs

NARROW = (80, 24)


async def walk(pilot, keys: str) -> None:  # type: ignore[no-untyped-def]
    for key in keys.split():
        await pilot.press(key)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def footer(app: TriageApp) -> list[tuple[str, str, int]]:
    """The footer's keys as drawn: (key, description, right edge)."""
    return [(k.key_display, k.description, k.region.right) for k in app.screen.query(FooterKey)]


@pytest.mark.parametrize(
    ("keys", "wanted"),
    [
        ("", {"search", "flips", "judge", "tenants", "slices"}),
        ("f", {"search", "back"}),
        ("f enter", {"next", "previous", "back", "mark gold", "gold + note", "undo", "verdict"}),
        ("J", {"relevant", "irrelevant", "skip", "undo", "back", "regressions"}),
        ("t", {"back", "bars / table"}),
        ("s", {"back", "next key", "previous key"}),
    ],
)
async def test_at_80_columns_each_footer_fits_with_help_first_and_the_screens_keys(
    keys: str, wanted: set[str]
) -> None:
    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        await walk(pilot, keys)
        await pilot.pause()
        shown = footer(app)
        assert shown[0][:2] == ("?", "help")
        assert all(right <= NARROW[0] for _, _, right in shown), shown  # nothing cut at the edge
        assert wanted <= {what for _, what, _ in shown}
