"""Helpers for driving the app in tests: wait until the evaluation (and corpus) have loaded."""

from __future__ import annotations

import asyncio

from textual.pilot import Pilot

from triage.core.checks.suite import PENDING_CORPUS
from triage.ui.screens.detail import DetailScreen


async def wait_loaded(pilot: Pilot, corpus: bool = True) -> None:
    """Until the load worker has posted its result and, with `corpus`, the corpus is ready."""
    app = pilot.app
    for _ in range(500):
        await app.workers.wait_for_complete()
        await pilot.pause()
        session = getattr(app, "session", None)
        failed = app.screen.query("#summary") and "could not load" in str(
            app.screen.query_one("#title").render()
        )
        if failed:
            return
        pending = session is not None and any(c.code == PENDING_CORPUS for c in session.checks)
        if (
            session is not None
            and not pending
            and (not corpus or session.snapshot.spec.corpus is None or session.corpus is not None)
        ):
            await pilot.pause()
            return
        await asyncio.sleep(0.01)
    raise TimeoutError("the app did not finish loading")


async def open_flips(pilot: Pilot) -> None:
    """From the loaded overview, `f`: the flips list, its workers (the flips' hints) done."""
    await pilot.press("f")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def open_first_flip(pilot: Pilot) -> DetailScreen:
    """From the loaded overview, `f` `enter`: the first flip's detail screen."""
    await pilot.press("f", "enter")
    screen = pilot.app.screen
    assert isinstance(screen, DetailScreen)
    return screen
