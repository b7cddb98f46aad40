"""The reading flow, driven with Pilot on the bundled sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from triage.core.measures.paired import Outcome
from triage.core.text.words import token_estimate
from triage.ui.app import TriageApp
from triage.ui.screens.chunk import ChunkScreen
from triage.ui.screens.detail import DetailScreen, GoldPane
from triage.ui.screens.help import HelpScreen
from triage.ui.screens.lists import AllQueriesScreen, FlipsScreen
from triage.ui.table import VirtualTable

from app_helpers import open_first_flip, wait_loaded

pytestmark = pytest.mark.slow  # whole-app Pilot runs: left out of the quick loop (docs/development.md)

REGRESSIONS = {"q155", "q113", "q061", "q150", "q031", "q046"}
SIZE = (120, 36)


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_overview_shows_numbers_then_flips_start_on_a_regression() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert "6 regressions, 40 wins" in text_of(app.screen, "#hint")
        await pilot.press("f")
        screen = app.screen
        assert isinstance(screen, FlipsScreen)
        table = screen.query_one(VirtualTable)
        assert table.has_focus and table.cursor == 0
        assert "regression 1 of 6" in text_of(screen, "#list-title")
        assert app.session is not None and app.session.outcomes[screen.order[0]] == 2  # hit→miss
        await pilot.press("j")
        assert "regression 2 of 6" in text_of(screen, "#list-title")
        await pilot.press("k", "down", "up")
        assert table.cursor == 0


async def test_n_walks_all_six_regressions_with_both_ranks_and_plans() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "enter")
        seen = []
        for i in range(6):
            screen = app.screen
            assert isinstance(screen, DetailScreen)
            d = screen.detail
            assert d is not None and d.outcome is Outcome.HIT_TO_MISS
            assert f"regression {i + 1} of 6" in text_of(screen, "#detail-title")
            arm_a, arm_b = text_of(screen, "#arm-a"), text_of(screen, "#arm-b")
            assert f"rank {d.a.gold_rank}, inside k" in arm_a
            assert "plan " + str(d.a.plan) in arm_a and "plan " + str(d.b.plan) in arm_b
            assert (
                ("absent" in arm_b)
                if d.b.gold_rank is None
                else (f"rank {d.b.gold_rank}, outside k" in arm_b)
            )
            seen.append(d.query_id)
            await pilot.press("n")
        assert set(seen) == REGRESSIONS and len(seen) == 6
        assert "win 1 of 40" in text_of(app.screen, "#detail-title")
        await pilot.press("p")
        assert app.screen.detail.query_id == seen[-1]
        await pilot.press("escape")
        assert isinstance(app.screen, FlipsScreen)


async def test_detail_shows_gold_header_apart_from_body_and_the_postfilter_short_list() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "enter")
        while app.screen.detail.query_id != "q031":
            await pilot.press("n")
        screen = app.screen
        d = screen.detail
        golds = text_of(screen, "#gold-text")
        g = d.golds[0]
        assert g.chunk is not None and g.chunk.header in golds
        head, body = token_estimate(g.chunk.header), token_estimate(g.chunk.text)
        assert f"header (~{head} tokens)" in golds and f"body (~{body} tokens)" in golds
        arm_b = text_of(screen, "#arm-b")
        assert "plan postfilter" in arm_b and f"n_returned {d.b.n_returned}" in arm_b
        assert d.b.n_returned is not None and d.b.n_returned < d.k
        assert f"n_eligible {d.b.n_eligible}" in arm_b
        assert "tenant acme-legal" in text_of(screen, "#query-text")


async def test_focus_moves_between_panes_and_enter_opens_the_chunk() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "enter")
        screen = app.screen
        assert app.focused is screen.query_one("#list-b")
        await pilot.press("shift+tab")
        assert app.focused is screen.query_one("#list-a")
        await pilot.press("shift+tab")
        assert isinstance(app.focused, GoldPane)
        await pilot.press("tab", "tab")
        assert app.focused is screen.query_one("#list-b")
        await pilot.press("j", "j")
        table = screen.query_one("#list-b", VirtualTable)
        assert table.cursor == 2
        row = screen.detail.b.rows[2]
        assert row.chunk_id in text_of(screen, "#preview")
        await pilot.press("enter")
        chunk = app.screen
        assert isinstance(chunk, ChunkScreen) and chunk.chunk_id == row.chunk_id
        assert row.chunk.text[:60] in text_of(chunk, "#chunk-body")
        await pilot.press("escape")
        assert app.screen is screen


async def test_all_queries_filter_and_search_open_a_query() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("a")
        screen = app.screen
        assert isinstance(screen, AllQueriesScreen) and len(screen.order) == 200
        await pilot.press("4")
        assert len(screen.order) == 40 and "miss→hit" in text_of(screen, "#list-title")
        await pilot.press("0", "slash")
        await pilot.press(*"q061")
        assert isinstance(app.focused, Input) and app.focused.value == "q061"  # q typed, not quit
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen) and app.screen.detail.query_id == "q061"


async def test_search_by_words_finds_the_users_phrasing() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "slash", *"work from home", "enter")
        assert isinstance(app.screen, DetailScreen) and app.screen.detail.query_id == "q150"
        assert "regression" in text_of(app.screen, "#detail-title")  # n/p keep walking the flips


async def test_help_lists_the_keys_and_q_quits() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = str(app.screen.query_one(Static).render())
        for key in ("n / p", "tab / shift+tab", "enter", "/", "ctrl+p", "0 … 4", "1 … 9"):
            assert key in shown
        await pilot.press("q")
    assert app.return_code == 0


async def test_palette_provider_finds_a_query_by_id_and_by_text() -> None:
    from triage.ui.palette import QueryCommands

    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        provider = QueryCommands(app.screen)
        hits = [h async for h in provider.search("q113")]
        assert hits and hits[0].text.startswith("q113")
        hits = [h async for h in provider.search("card keeps failing")]
        assert any(h.text.startswith("q113") for h in hits)
        hits[0].command()
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)


async def test_a_loading_error_is_shown_in_the_app_and_q_quits(tmp_path: Path) -> None:
    (tmp_path / "triage.toml").write_text(
        '[labels]\npath = "labels.parquet"\n[arms.a]\npath = "a.parquet"\n[arms.b]\npath = "b.parquet"\n'
    )
    app = TriageApp(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert app.session is None
        assert "could not load" in text_of(app.screen, "#title")
        assert "triage.toml" in text_of(app.screen, "#summary")
        assert "missing file" in text_of(app.screen, "#summary")
        await pilot.press("f")  # nothing to list: no crash
        await pilot.press("q")
    assert app.return_code == 0


async def test_small_terminal_still_reads() -> None:
    app = TriageApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        screen = await open_first_flip(pilot)
        assert screen.query_one("#list-b", VirtualTable).size.height >= 3
        await pilot.press("n")
        assert "regression 2 of 6" in text_of(screen, "#detail-title")


async def test_the_palette_finds_themes_by_name_and_switches() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert app.current_theme.dark
        await pilot.press("ctrl+p")
        await pilot.press(*"light")
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        await pilot.press("enter")
        await pilot.pause()
        assert not app.current_theme.dark and "light" in app.theme
        await pilot.press("ctrl+p")
        await pilot.press(*"dark")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.current_theme.dark


async def test_a_key_pressed_while_loading_is_kept_and_applied_once_loaded(monkeypatch) -> None:
    import threading

    import triage.ui.app as app_module

    gate = threading.Event()
    real = app_module.open_session

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(app_module, "open_session", slow)
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.session is None
        await pilot.press("f")
        await pilot.pause()
        assert any("opens once the evaluation has loaded" in str(n.message) for n in app._notifications)
        gate.set()
        await wait_loaded(pilot)
        await pilot.pause()
        assert isinstance(app.screen, FlipsScreen)  # the key was applied, not lost
