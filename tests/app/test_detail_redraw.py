"""What one detail key costs in Textual: a region is redrawn only when its
content changed and laid out only when its height may change (`triage.ui.widgets.redraw`), and
the detail screen never scrolls, so no scroll bar comes and goes (re-wrapping every region) and the
title line is always on screen. Driven with Pilot on small apps and on the bundled sample."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Static

from triage.ui.app import TriageApp
from triage.ui.screens.detail import DetailScreen
from triage.ui.widgets.detail import DetailTitle, Preview, RankedLists
from triage.ui.widgets.redraw import redraw

from app_helpers import open_flips, wait_loaded

SIZE = (120, 36)  # the sample's first flip (q046) leaves its preview under 4 rows here


class Two(App[None]):
    CSS = "Static { padding: 0 1; } #auto { height: auto; } #fixed { height: 3; }"

    def compose(self) -> ComposeResult:
        yield Static("one line", id="auto")
        yield Static("one line", id="fixed")


def record_updates(monkeypatch) -> list[tuple[str | None, bool]]:
    """Every `Static.update` from now on: (widget id, whether it asked for a layout)."""
    seen: list[tuple[str | None, bool]] = []
    update = Static.update

    def recording(self: Static, content: object = "", *, layout: bool = True) -> None:
        seen.append((self.id, layout))
        update(self, content, layout=layout)  # type: ignore[arg-type]

    monkeypatch.setattr(Static, "update", recording)
    return seen


async def test_redraw_does_nothing_for_the_same_content_and_lays_out_only_for_a_new_height(
    monkeypatch,
) -> None:
    app = Two()
    async with app.run_test(size=(40, 10)) as pilot:
        auto, fixed = app.query_one("#auto", Static), app.query_one("#fixed", Static)
        redraw(auto, Content("first"))
        redraw(fixed, Content("first"))
        await pilot.pause()
        seen = record_updates(monkeypatch)

        assert not redraw(auto, Content("first"))  # the same text and styles: nothing at all
        assert seen == []
        assert redraw(auto, Content.styled("first", "bold"))  # same text, new style: repainted
        assert redraw(auto, Content("second, still one line"))
        assert seen == [("auto", False), ("auto", False)]  # the height stays one line

        seen.clear()
        two_lines = Content("a line that is far too long for a screen of forty cells")
        assert redraw(auto, two_lines)
        assert redraw(fixed, two_lines)  # three lines high whatever it shows
        assert seen == [("auto", True), ("fixed", False)]
        await pilot.pause()
        assert auto.size.height == 2 and fixed.size.height == 3
        assert "far too" in str(auto.render())


async def _first_flip(pilot) -> DetailScreen:  # type: ignore[no-untyped-def]
    await wait_loaded(pilot)
    await open_flips(pilot)
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, DetailScreen)
    return screen


@pytest.mark.slow
async def test_the_detail_title_stays_on_screen_and_no_scroll_bar_comes_and_goes() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _first_flip(pilot)
        squeezed = 0
        for _ in range(12):
            title = screen.query_one(DetailTitle)
            assert screen.scroll_y == 0 and not screen.show_vertical_scrollbar
            assert title.region.y == 0 and title.region.width == SIZE[0]  # the whole width
            assert screen.label(screen.position) in str(title.render())
            # nothing below the room: a screen taller than its room is repainted whole
            assert screen.virtual_size.height == screen.size.height
            squeezed += screen.query_one(Preview).outer_size.height < 4
            await pilot.press("n")
            await pilot.pause()
        assert squeezed  # the cause was present: some queries leave the preview under 4 rows


@pytest.mark.slow
async def test_a_short_detail_screen_opens_on_the_query_and_scrolls_to_a_list_on_tab() -> None:
    # 80x24: the regions above the lists take the whole height. The screen opens on the query and
    # its hint, on every query; the lists below stay in reach: it scrolls to the list focused.
    app = TriageApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _first_flip(pilot)
        for _ in range(3):
            assert screen.has_class("-short") and screen.scroll_y == 0
            for name in ("#query-text", "#hint-line"):
                assert screen.query_one(name).region.intersection(screen.region).area > 0
            assert screen.virtual_size.height > screen.size.height  # the lists are below
            await pilot.press("n")
            await pilot.pause()
        table = screen.query_one(RankedLists).table("a")
        for _ in range(3):
            if table.has_focus:
                break
            await pilot.press("tab")
            await pilot.pause()
        assert table.has_focus and table.region.intersection(screen.region).area > 0


@pytest.mark.slow
async def test_n_redraws_only_the_regions_that_changed_and_lays_out_only_for_new_heights(
    monkeypatch,
) -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _first_flip(pilot)
        for _ in range(3):  # q060 -> q154 -> q112 -> q149: some regions change, some keep
            statics = {w.id: w for w in screen.query(Static) if w.id}
            before = {i: (w.visual, w.size) for i, w in statics.items()}
            seen = record_updates(monkeypatch)
            await pilot.press("n")
            await pilot.pause()
            monkeypatch.undo()

            changed = {i for i, (old, _) in before.items() if not old.is_same(statics[i].visual)}  # type: ignore[attr-defined]
            kept = set(before) - changed
            updated = {i for i, _ in seen}
            assert "detail-title" in changed and "status" in kept  # both causes present
            assert updated == changed
            for i, layout in seen:
                w = statics[i]
                old, size = before[i]
                if layout:  # only a region whose lines at its width changed in number
                    assert old.get_height(w.styles, size.width) != w.visual.get_height(w.styles, size.width)  # type: ignore[attr-defined]
            assert ("preview", True) not in seen  # 1fr high: its content has no say
            assert ("detail-title", True) not in seen


@pytest.mark.slow
async def test_each_n_and_p_lays_the_screen_out_once(monkeypatch) -> None:
    """Even when regions change height and the gold pane's scroll bar comes or goes (both
    present in these keys), one layout places everything: none follows that changes nothing."""
    from textual._compositor import Compositor

    layouts: list[int] = []
    reflow = Compositor.reflow

    def counting(self, parent, size):  # type: ignore[no-untyped-def]
        layouts.append(1)
        return reflow(self, parent, size)

    monkeypatch.setattr(Compositor, "reflow", counting)
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _first_flip(pilot)
        gold = screen.query_one("#golds")
        per_key, bar_changes, resized = [], 0, 0
        for key in "n" * 16 + "p" * 8:
            bar, heights = gold.show_vertical_scrollbar, [w.size.height for w in screen.children]
            layouts.clear()
            await pilot.press(key)
            await pilot.pause()
            per_key.append(len(layouts))
            bar_changes += gold.show_vertical_scrollbar != bar
            resized += heights != [w.size.height for w in screen.children]
        assert bar_changes and resized  # the causes were present
        assert per_key == [1] * len(per_key)


@pytest.mark.slow
async def test_n_posts_no_worker_state_and_no_highlight_messages(monkeypatch) -> None:
    """The next query's detail is built ahead by `Ahead` (no Textual worker, whose state changes
    travel the DOM), and the lists' new rows are not announced (the screen draws the preview)."""
    from textual.message_pump import MessagePump
    from textual.worker import Worker

    from triage.ui.table import VirtualTable

    posted: list[type] = []
    post = MessagePump.post_message

    def recording(self, message):  # type: ignore[no-untyped-def]
        posted.append(type(message))
        return post(self, message)

    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _first_flip(pilot)
        monkeypatch.setattr(MessagePump, "post_message", recording)
        before = screen.ahead.done
        for _ in range(3):
            await pilot.press("n")
            await pilot.pause()
        for _ in range(100):  # the thread builds the next query's detail meanwhile
            if screen.ahead.done >= before + 3:
                break
            await asyncio.sleep(0.01)
        monkeypatch.undo()
        assert screen.ahead.done >= before + 3
        assert Worker.StateChanged not in posted and VirtualTable.Highlighted not in posted
        nxt = int(screen.sequence[screen.position + 1])
        assert screen.session.detail(nxt) is screen.session.detail(nxt)  # the one built ahead
        assert "B #1" in str(screen.query_one(Preview).render())  # still drawn: list B has the focus
