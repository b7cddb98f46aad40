"""`triage.ui.collect.RestingCollector`: Python's full collections move to when the keys rest."""

from __future__ import annotations

import gc

from triage.ui.app import TriageApp
from triage.ui.collect import NEVER, RestingCollector


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_full_collections_wait_for_the_keys_to_rest_and_the_thresholds_come_back() -> None:
    before = gc.get_threshold()
    collector = RestingCollector(rest=3600.0)
    collector.start()
    try:
        assert gc.get_threshold() == (before[0], before[1], NEVER)
        for _ in range(50_000):  # garbage in cycles: young collections promote some of it
            Cycle()
        gc.collect(1)  # as Python's own young collections do
        assert gc.get_count()[2] > 0
        assert not collector.tick()  # a key came less than `rest` ago: nothing
        collector.rest = 0.0
        collector.key()
        assert collector.tick() and collector.full == 1
        assert gc.get_count()[2] == 0
        assert not collector.tick()  # nothing new reached the oldest generation since
    finally:
        collector.stop()
    assert gc.get_threshold() == before


async def test_the_app_defers_full_collections_while_it_runs_and_restores_them() -> None:
    before = gc.get_threshold()
    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert gc.get_threshold()[2] == NEVER
        app.collector.rest = 0.0
        gc.collect(1)
        Cycle()
        gc.collect(1)
        assert app.collector.tick()
        rested = app.collector.last_key
        await pilot.press("f")
        assert app.collector.last_key > rested  # a key press is seen
    assert gc.get_threshold() == before
