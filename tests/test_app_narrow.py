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


def drawn(table, index: int) -> str:  # type: ignore[no-untyped-def]
    """Row `index` of a VirtualTable as drawn at its width (-1: the header)."""
    return str(table.render_line(index + 1).text)


@pytest.mark.parametrize("bars", [False, True])
async def test_at_80_columns_the_tenants_keep_the_marks_and_both_rates(bars: bool) -> None:
    from triage.ui.table import VirtualTable

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        await walk(pilot, "t b" if bars else "t")
        table = app.screen.query_one(VirtualTable)
        t = app.screen.tenants()
        assert t is not None and table.size.width <= NARROW[0]
        lines = {x.tenant: drawn(table, i) for i, x in enumerate(t.rows)}
        for x in t.rows:
            line = lines[x.tenant]
            assert (f"{x.hit_rate_b:.3f}" in line) and (f"{x.hit_rate_a:.3f}" in line)  # both rates
            assert ("< floor" in line) is x.below(t.floor) and ("few" in line) is x.few, line
        assert any(x.few for x in t.rows) and any(x.below(t.floor) for x in t.rows)
        if not bars:
            assert "Δ q" in drawn(table, -1)


def test_a_bar_past_the_floor_still_marks_the_floor() -> None:
    from triage.report.cells import BAR, bar

    for width in (BAR, 10):
        at = int(0.8 * width)
        for rate in (0.5, 0.79, 0.85, 1.0):
            drawn_bar = bar(rate, 0.8, width)
            assert len(drawn_bar) == width and drawn_bar[at] == "┃", (rate, drawn_bar)
        assert bar(0.85, 0.8, width)[at - 1] == "█" and bar(0.5, 0.8, width)[at - 1] == "░"


async def test_at_80_columns_the_overview_stacks_the_paired_table_and_folds_the_origins() -> None:
    import io

    from rich.console import Console
    from textual.widgets import Static

    from triage.report.sections.origins import ORIGIN_HEAD

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        screen = app.screen
        paired = screen.query_one("#paired", Static)
        # B miss (where the regressions are counted) is inside the screen, under the metrics
        assert paired.region.right <= NARROW[0] and "B miss" in render(paired)
        box = screen.query_one("#origins", Static)
        assert box.region.right <= NARROW[0]
        out = io.StringIO()
        Console(file=out, width=box.content_size.width, color_system=None).print(box.content)
        text = out.getvalue()
        assert "…" not in text and all(len(x) <= box.content_size.width for x in text.splitlines())
        for name in ORIGIN_HEAD:
            assert name in text, name  # every column, in two or more tables
        assert "By query origin (1 of" in text


def render(widget) -> str:  # type: ignore[no-untyped-def]
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=widget.content_size.width, color_system=None).print(widget.content)
    return out.getvalue()


async def test_at_80_columns_a_query_list_keeps_ids_ranks_plans_and_shows_the_text() -> None:
    from textual.widgets import Static

    from triage.ui.table import VirtualTable

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        await walk(pilot, "f j")
        screen, session = app.screen, app.session
        table = screen.query_one(VirtualTable)
        head = drawn(table, -1)
        for name in ("outcome", "query", "gold A", "gold B", "plan A", "plan B", "hint", "text"):
            assert name in head, name
        q = int(screen.order[1])
        text = session.texts[q].as_py()
        assert session.query_id(q) in drawn(table, 1) and text[:10] in drawn(table, 1)  # some text
        assert text in str(screen.query_one("#list-title", Static).render())  # all of it, here


async def test_on_slices_the_arrows_change_the_key_as_the_screen_says() -> None:
    from textual.widgets import Static

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        await walk(pilot, "s")
        screen = app.screen
        keys = list(app.session.slices)

        def title() -> str:
            return str(screen.query_one("#slices-title", Static).render())

        assert "←/→" in title() and f"by {keys[0]}:" in title()
        await walk(pilot, "right")
        assert f"by {keys[1]}:" in title()
        await walk(pilot, "left left")
        assert f"by {keys[-1]}:" in title()
        await walk(pilot, "right_square_bracket")
        assert f"by {keys[0]}:" in title()


async def test_help_says_what_the_screens_show() -> None:
    from textual.widgets import Static

    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.help import here
    from triage.ui.screens.live import report
    from triage.ui.screens.overview import OverviewScreen
    from triage.ui.screens.queue import QueueScreen

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        r = report(app.session)
        # the wins / ties / losses cover every scored query, as the help now says
        for row in (r.ranks.mrr, r.ranks.ndcg):
            assert row.wins + row.ties + row.losses == r.n_scored > r.paired.both_hit
        wtl = OverviewScreen.TOPIC.explain("wins / ties / losses")
        assert "both-hit" not in wtl and "every scored query" in wtl
        # the title ties each arm's name to A or B, where the names first appear
        title = str(app.screen.query_one("#title", Static).render())
        assert f"A {r.arms.a.name}  →  B {r.arms.b.name}" in title
    overview_keys = dict(here(OverviewScreen))
    assert any("pgdn" in key and "scroll" in what for key, what in overview_keys.items())
    similar = QueueScreen.TOPIC.explain("body … similar")
    assert "0" in similar and "100" in similar
    assert "login" in DetailScreen.TOPIC.explain("verdicts")


def test_the_queue_says_a_tier_2_query_both_hits_now_and_counts_the_session_whatever_the_filter(
    tmp_path,
) -> None:
    import shutil
    from pathlib import Path

    from triage.core.bundled import bundled
    from triage.core.inputs.corpus import open_corpus
    from triage.core.measures.paired import Outcome
    from triage.ui.screens.queue import candidate_pane
    from triage.workspace.queue import Filters, JudgingQueue
    from triage.workspace.session import open_session

    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))
    session = open_session(copy, reviewer="ana")
    assert session.snapshot.spec.corpus is not None
    session.corpus = open_corpus(session.snapshot.spec.corpus)
    queue = JudgingQueue(session, session.corpus)
    # the first tier-2 candidate of a regression that B's top k holds: marking it gold resolves it
    c = queue.current()
    while c is not None and not (
        c.tier == 2 and c.rank_b is not None and session.ev.outcomes[c.q] == Outcome.HIT_TO_MISS
    ):
        queue.skip(c)
        c = queue.current()
    assert c is not None
    before = str(candidate_pane(queue.view(c, session.corpus), ""))
    assert "both arms hit it now" not in before
    queue.decide(c, 1)
    assert session.ev.outcomes[c.q] == Outcome.BOTH_HIT
    nxt = queue.current()
    assert nxt is not None and nxt.q == c.q and nxt.tier == 2  # the same query's next candidate
    assert "both arms hit it now" in str(candidate_pane(queue.view(nxt, session.corpus), ""))
    # a filter that leaves the resolved query out still counts what this session did
    queue.set_filters(Filters(regressions=True))
    progress = queue.progress()
    assert "this session 1 judged · 1 gold added · 1 regression resolved" in progress, progress
    assert progress.startswith("0 of ")


async def test_at_80_columns_slices_keep_the_flips_and_the_delta_q() -> None:
    from triage.ui.table import VirtualTable

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        await walk(pilot, "s")
        table = app.screen.query_one(VirtualTable)
        head = drawn(table, -1)
        for name in ("value", "hit A", "hit B", "h→m", "m→h", "short", "elig=0", "Δ q"):
            assert name in head, name
        _, rows = app.screen.current()
        for i in range(len(rows)):
            assert drawn(table, i).rstrip().endswith(("*", "–")) or " q " in drawn(table, i)  # Δ q whole


async def test_at_80x24_the_detail_scrolls_with_the_list_keys_while_nothing_is_focused() -> None:
    from triage.ui.screens.detail import DetailScreen

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        await walk(pilot, "f enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen) and app.focused is None
        await walk(pilot, "down down")
        assert screen.scroll_y == 2
        await walk(pilot, "pagedown")
        assert screen.scroll_y > 2
        await walk(pilot, "home")
        assert screen.scroll_y == 0


async def test_at_80x24_each_list_focused_shows_every_row_it_says_it_shows() -> None:
    """ "10 of 20 shown": with tab on a list, all ten rows are in view at once, not nine and a
    scroll bar (the list's own height held 9 rows at 24 lines)."""
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.table import VirtualTable

    app = TriageApp()
    async with app.run_test(size=NARROW) as pilot:
        await wait_loaded(pilot)
        await walk(pilot, "f enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        for list_id in ("list-a", "list-b"):
            while app.focused is None or app.focused.id != list_id:
                await walk(pilot, "tab")
            table = screen.query_one(f"#{list_id}", VirtualTable)
            rows = table.count
            assert rows >= 10
            assert table.max_scroll_y == 0, (list_id, rows)  # every row drawn, nothing to scroll
            top, bottom = table.region.y, table.region.bottom
            assert 0 < top and bottom <= 24 - 6  # above the preview docked at the bottom


def test_the_narrow_tenants_note_names_the_wide_columns_that_fit_then_an_ellipsis() -> None:
    from triage.report.sections.tenants import TENANTS
    from triage.ui.screens.slices import wider

    every = [c.title for c in TENANTS if c.wide]
    assert wider(TENANTS) == ", ".join(every) and len(every) >= 4
    assert wider(TENANTS, 1000) == ", ".join(every)
    cut = wider(TENANTS, len(", ".join(every)) - 1)
    assert cut.endswith(", …") and cut == ", ".join([*every[: cut.count(",")], "…"])
    assert all(len(wider(TENANTS, room)) <= room for room in range(3, 80))
