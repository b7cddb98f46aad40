"""The detail screen's focus and reading flow at 140×45, and a stale
worker result that must never reach a screen. Driven with Pilot on the bundled sample."""

from __future__ import annotations

import asyncio
import io
import shutil
import threading
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

import triage.workspace.session as session_module
from triage.core.bundled import bundled
from triage.core.measures.paired import Outcome
from triage.report import cells as fmt
from triage.ui.app import TriageApp
from triage.ui.messages import Amended
from triage.ui.screens.detail import DetailScreen
from triage.ui.screens.lists import AllQueriesScreen, FlipsScreen
from triage.ui.screens.slices import SliceQueries, SlicesScreen, TenantsScreen
from triage.ui.table import VirtualTable
from triage.ui.widgets.detail import GoldPane, Preview
from triage.workspace.snapshot import Snapshot

from app_helpers import open_first_flip, wait_loaded

pytestmark = pytest.mark.slow  # whole-app Pilot runs: left out of the quick loop (docs/development.md)

SIZE = (140, 45)
NEAR_DUPLICATE = "driftwood/handbook-2023#009"  # q150's B rank 1, nearly the gold's text


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def row_text(table: VirtualTable, index: int) -> str:
    """The rendered line of row `index` (line 0 is the header; the rows fit, nothing scrolled)."""
    return str(table.render_line(index + 1).text)


def tables(screen: DetailScreen) -> tuple[VirtualTable, VirtualTable]:
    return screen.query_one("#list-a", VirtualTable), screen.query_one("#list-b", VirtualTable)


def notes_of(app: TriageApp, monkeypatch) -> list[tuple[str, str]]:
    """Record each notification (title, message) the app raises, then raise it as usual."""
    seen: list[tuple[str, str]] = []
    notify = app.notify

    def recording(message, *, title="", **kw):  # type: ignore[no-untyped-def]
        seen.append((title, str(message)))
        notify(message, title=title, **kw)

    monkeypatch.setattr(app, "notify", recording)
    return seen


async def test_the_reading_flow_f_enter_n5_tab_n_escape(monkeypatch) -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        screen = await open_first_flip(pilot)
        assert "regression 1 of 6" in text_of(screen, "#detail-title")
        for i in range(2, 7):
            await pilot.press("j", "n")  # a row further down first: n must not keep it
            assert f"regression {i} of 6" in text_of(screen, "#detail-title")
            assert [t.cursor for t in tables(screen)] == [0, 0]
            d = screen.detail
            assert d is not None and d.outcome is Outcome.HIT_TO_MISS
            assert text_of(screen, "#preview").startswith(f"B #1  {d.b.rows[0].chunk_id}")
        await pilot.press("tab")
        assert isinstance(app.focused, GoldPane)
        before = screen.detail
        await pilot.press("n")
        d = screen.detail
        assert d is not None and d.query_id != before.query_id and d.outcome is Outcome.MISS_TO_HIT
        assert "win 1 of 40" in text_of(screen, "#detail-title")
        preview = screen.query_one(Preview)
        shown = text_of(screen, "#preview")
        assert preview.shown == (d.query_id, "", 0)  # the query on screen, no row
        assert shown.startswith(d.query_id) and "no retrieved passage selected" in shown
        assert before.query_id not in shown and before.b.rows[0].chunk_id not in shown
        assert [t.cursor for t in tables(screen)] == [0, 0]
        await pilot.press("escape")
        flips = app.screen
        assert isinstance(flips, FlipsScreen)
        table = flips.query_one(VirtualTable)
        assert int(flips.order[table.cursor]) == d.q  # where the reader was, not where they entered
        assert "win 1 of 40" in text_of(flips, "#list-title")
        assert d.query_id in row_text(table, table.cursor)
        await pilot.press("enter")  # and enter reopens that query
        assert isinstance(app.screen, DetailScreen) and app.screen.detail.query_id == d.query_id


async def test_tab_then_n_the_preview_is_the_new_querys_and_g_says_what_to_select(monkeypatch) -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        notes = notes_of(app, monkeypatch)
        await wait_loaded(pilot)
        await pilot.press("f", "enter", "n", "n")  # regression 3 of 6
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        old = screen.detail
        assert text_of(screen, "#preview").startswith(f"B #1  {old.b.rows[0].chunk_id}")
        await pilot.press("tab", "n")
        d = screen.detail
        assert isinstance(app.focused, GoldPane) and d.query_id != old.query_id
        assert screen.query_one(Preview).shown == (d.query_id, "", 0)
        assert f"B #1  {old.b.rows[0].chunk_id}" not in text_of(screen, "#preview")
        await pilot.press("g")
        assert app.session.labels.records == ()  # nothing amended
        status = text_of(screen, "#status")
        assert "nothing selected" in status and "select a retrieved passage" in status
        assert any("select a retrieved passage" in message for _, message in notes)
        await pilot.press("tab")  # arm A's list: its row 1 of this query
        assert app.focused is tables(screen)[0]
        assert screen.query_one(Preview).shown == (d.query_id, "a", 1)
        assert text_of(screen, "#preview").startswith(f"A #1  {d.a.rows[0].chunk_id}")
        await pilot.press("p")  # back, still on A: its row 1 of the previous query
        assert screen.query_one(Preview).shown == (old.query_id, "a", 1)


async def test_n_and_p_start_both_lists_at_rank_1() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "enter", "j", "j", "j", "shift+tab", "j")
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        a, b = tables(screen)
        assert (a.cursor, b.cursor) == (1, 3)
        await pilot.press("n")
        assert (a.cursor, b.cursor) == (0, 0)
        assert text_of(screen, "#preview").startswith(f"A #1  {screen.detail.a.rows[0].chunk_id}")
        await pilot.press("tab", "j", "j", "p")
        assert (a.cursor, b.cursor) == (0, 0) and "regression 1 of 6" in text_of(screen, "#detail-title")
        assert text_of(screen, "#preview").startswith(f"B #1  {screen.detail.b.rows[0].chunk_id}")


async def test_escape_points_the_all_queries_and_slice_lists_at_the_query_read() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("a", "3", "enter", "n", "n")  # every hit→miss query, the third one
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        read = screen.q
        await pilot.press("escape")
        assert isinstance(app.screen, AllQueriesScreen)
        table = app.screen.query_one(VirtualTable)
        assert table.cursor == 2 and int(app.screen.order[2]) == read
        assert "query 3 of 6" in text_of(app.screen, "#list-title")

        await pilot.press("t", "enter")  # acme-legal, the worst tenant by B: its queries
        assert isinstance(app.screen, SliceQueries)
        queries = app.screen
        await pilot.press("enter", "n", "n", "n")
        read = app.screen.q
        await pilot.press("escape")
        assert app.screen is queries
        table = queries.query_one(VirtualTable)
        assert table.cursor == 3 and int(queries.order[3]) == read
        assert app.session.query_id(read) in row_text(table, 3)


async def test_an_amendment_is_a_message_the_app_answers_and_the_grade_window_is_the_reviews(
    copy: Path, monkeypatch
) -> None:
    app = TriageApp(copy, reviewer="ana")
    amended: list[Amended] = []
    scheduled: list[float] = []
    answer = TriageApp.on_amended  # handlers are looked up on the class

    def on_amended(self: TriageApp, message: Amended) -> None:
        amended.append(message)
        answer(self, message)

    monkeypatch.setattr(TriageApp, "on_amended", on_amended)
    prepare_soon = app.prepare_soon
    monkeypatch.setattr(app, "prepare_soon", lambda delay=1.5: (scheduled.append(delay), prepare_soon(delay)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "enter")
        while app.screen.detail.query_id != "q150":
            await pilot.press("n")
        session = app.session
        await pilot.press("g")
        assert session.review.grade_window and len(amended) == 1 and scheduled == [1.5]
        assert amended[0].change.query_id == "q150" and amended[0].change.after is Outcome.BOTH_HIT
        await pilot.press("j")  # any other key shuts the window: a digit now grades nothing
        assert not session.review.grade_window
        await pilot.press("3")
        assert dict(session.ev.gold_of(app.screen.q))[NEAR_DUPLICATE] == 1 and len(amended) == 1
        await pilot.press("k", "u", "g", "2")  # undo, mark again, grade 2 right after
        assert dict(session.ev.gold_of(app.screen.q))[NEAR_DUPLICATE] == 2
        assert len(amended) == 4 and "graded 2" in text_of(app.screen, "#status")
        assert not session.review.grade_window  # one grade per add


async def test_a_stale_prepare_result_never_reaches_the_tenants_or_slices_screen(
    copy: Path, monkeypatch
) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "enter")
        while app.screen.detail.query_id != "q150":
            await pilot.press("n")
        session = app.session
        stale = session.snapshot
        q150 = app.screen.q

        # The prepare worker, started on the current snapshot, blocks inside its computation.
        entered, release = threading.Event(), threading.Event()
        stale_values: list[object] = []
        real = {"all_slices": session_module.all_slices, "tenants": session_module.tenants}

        def blocking(name: str):  # type: ignore[no-untyped-def]
            def compute(ev, *args):  # type: ignore[no-untyped-def]
                value = real[name](ev, *args)
                if ev is stale.ev:
                    stale_values.append(value)
                    entered.set()
                    assert release.wait(10), "never released"
                return value

            return compute

        for name in real:
            monkeypatch.setattr(session_module, name, blocking(name))
        offers: list[tuple[str, str, bool]] = []
        offer = session.offer

        def recording_offer(name: str, snapshot: Snapshot, value: object) -> bool:
            kept = offer(name, snapshot, value)
            offers.append((name, snapshot.version, kept))
            return kept

        returned: list[object] = []
        cached = session.cached

        def recording_cached(name, compute):  # type: ignore[no-untyped-def]
            value = cached(name, compute)
            returned.append(value)
            return value

        monkeypatch.setattr(session, "offer", recording_offer)
        monkeypatch.setattr(session, "cached", recording_cached)

        app.prepare(session, stale)
        assert await asyncio.to_thread(entered.wait, 10)
        await pilot.press("g")  # the near-duplicate: q150's regression resolved
        assert session.version != stale.version
        assert "regression resolved by amendment" in text_of(app.screen, "#status")
        release.set()
        await app.workers.wait_for_complete()
        assert len(stale_values) == 2  # slices and tenants, both computed on the stale snapshot
        assert [(n, kept) for n, v, kept in offers if v == stale.version] == [
            ("slices", False),
            ("tenants", False),
        ]

        await pilot.press("t")
        assert isinstance(app.screen, TenantsScreen)
        tenant = session.tenant_of[q150].as_py()
        fresh = next(t for t in real["tenants"](session.ev, session.floor).rows if t.name == tenant)
        old = next(t for t in real["tenants"](stale.ev, session.floor).rows if t.name == tenant)
        assert fmt.rate(fresh.slice.b.hit_rate) != fmt.rate(old.slice.b.hit_rate)  # the amendment shows
        table = app.screen.query_one(VirtualTable)
        line = next(row_text(table, i) for i in range(table.count) if tenant in row_text(table, i))
        assert f" {fmt.rate(fresh.slice.b.hit_rate)} " in line and f" {fresh.slice.hit_to_miss} " in line

        await pilot.press("s")
        assert isinstance(app.screen, SlicesScreen)
        key, rows = app.screen.current()
        plan = session.ev.b.value("plan", q150)
        assert key == "plan"
        fresh_plan = next(s for s in real["all_slices"](session.ev)["plan"] if s.value == plan)
        table = app.screen.query_one(VirtualTable)
        line = next(row_text(table, i) for i in range(table.count) if row_text(table, i).startswith(plan))
        assert f" {fmt.rate(fresh_plan.b.hit_rate)} " in line

        await pilot.press("o")  # the overview's paired cells: A hit 119 | 5, A miss 40 | 36
        await app.workers.wait_for_complete()  # the moved numbers are built in a worker
        await pilot.pause()
        console = Console(width=SIZE[0], record=True, file=io.StringIO())
        console.print(app.screen.query_one("#paired", Static).content)
        rows = [x.split() for x in console.export_text().splitlines() if x.split()[:1] == ["│"]]
        assert [r for r in rows if r[1] == "A"] == [
            ["│", "A", "hit", "│", "119", "│", "5", "│"],
            ["│", "A", "miss", "│", "40", "│", "36", "│"],
        ]
        assert returned and not any(v is s for v in returned for s in stale_values)


async def test_without_a_corpus_the_hint_line_says_so_once(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))
    manifest = copy / "triage.toml"
    manifest.write_text(manifest.read_text().replace('[corpus]\npath = "chunks.parquet"\n', ""))
    app = TriageApp(copy)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        await pilot.app.workers.wait_for_complete()
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        seen = 0
        for _ in range(6):  # every regression's hint line
            screen = app.screen
            assert isinstance(screen, DetailScreen)
            text = str(screen.query_one("HintLine", Static).render())
            assert text.count("text causes not examined") <= 1, text
            seen += "no corpus: text causes not examined" in text
            await pilot.press("n")
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
        assert seen >= 1  # the note is there to be said once


async def test_the_ranked_lists_text_gets_the_width_that_is_left() -> None:
    from triage.ui.widgets.detail.ranked import RankedTable

    app = TriageApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        await pilot.app.workers.wait_for_complete()
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for table in app.screen.query(RankedTable):
            titles = [c.title for c in table.columns]
            widths = dict(zip(titles, table._widths(table.size.width), strict=True))
            used = sum(widths.values()) + len(widths)
            assert used <= table.size.width + 1  # nothing pushed off the edge
            assert widths["text"] >= 2 * widths["header"] - 1 and widths["text"] >= 15, widths
            assert table.size.width - used <= 2  # the text takes what is left


def on_screen(screen, widget) -> bool:
    """Whether all of `widget` is inside the screen's visible region."""
    region = widget.region
    return region.area > 0 and screen.region.intersection(region) == region


async def test_at_80x24_the_detail_opens_on_the_query_and_g_acts_only_on_a_row_on_screen() -> None:
    # 80x24 cannot hold every region: the title and the preview stay put, the rest scrolls. A
    # query opens (and n/p land) at its top, no row selected, so g marks nothing unseen; tab goes
    # down the panes (gold, A, B), the focused list comes fully on screen, shift+tab goes back up.
    app = TriageApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        screen = await open_first_flip(pilot)
        title, preview = screen.query_one("#detail-title"), screen.query_one(Preview)
        for _ in range(2):
            d = screen.detail
            assert d is not None
            assert app.focused is None and screen.scroll_y == 0
            for name in ("#detail-title", "#query-text", "#hint-line"):
                assert on_screen(screen, screen.query_one(name)), name
            await pilot.press("g")
            assert app.session.labels.records == ()  # no row selected: nothing amended
            await pilot.press("tab", "tab")  # the gold pane, then A's list
            a = tables(screen)[0]
            assert app.focused is a and on_screen(screen, a) and on_screen(screen, title)
            assert on_screen(screen, preview) and text_of(screen, "#preview").startswith(
                f"A #1  {d.a.rows[0].chunk_id}"
            )
            assert d.query_id in text_of(screen, "#detail-title")  # pinned while scrolled
            await pilot.press("j", "j")
            assert on_screen(screen, a) and text_of(screen, "#preview").startswith("A #3")
            await pilot.press("shift+tab", "shift+tab")  # the gold pane, then the top again
            assert app.focused is None and screen.scroll_y == 0
            await pilot.press("tab", "tab", "tab")
            assert app.focused is tables(screen)[1] and on_screen(screen, tables(screen)[1])
            await pilot.press("n")
