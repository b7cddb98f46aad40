"""Every screen of the app paints a key's changes as soon as they are ready (`prompt_frames` in
`ui/internals.py`, whose Textual internals `tests/app/test_internals.py` checks)."""

from __future__ import annotations

import pytest

from app_helpers import open_flips, wait_loaded


@pytest.mark.slow
async def test_each_screen_of_the_app_paints_without_skipping_a_frame_period() -> None:
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.help import HelpScreen

    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        seen = [app.screen]
        await open_flips(pilot)
        seen.append(app.screen)
        await pilot.press("enter")
        await pilot.pause()
        seen.append(app.screen)
        await pilot.press("question_mark")
        await pilot.pause()
        seen.append(app.screen)
        assert isinstance(seen[2], DetailScreen) and isinstance(seen[3], HelpScreen)
        assert [s._update_timer._skip for s in seen] == [False] * 4
