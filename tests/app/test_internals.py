"""The Textual internals the app leans on (`triage/ui/internals.py`) are still there, with the
shape used, and still behave as relied on -- so a Textual upgrade that changes one fails here
instead of slowing or breaking the app. And nowhere else in `triage.ui` touches Textual's
private names."""

from __future__ import annotations

import functools
import gc
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
import textual
from textual import _time
from textual import timer as timer_module
from textual._context import active_app
from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.reactive import Reactive
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Static

import triage.ui
from triage.ui import internals
from triage.ui.internals import Keys, OneLayout, freeze_garbage, prompt_frames

# -- 1. the paint timer -----------------------------------------------------------------------

INTERVAL = 1.0


async def ticks_after_a_long_frame(monkeypatch: pytest.MonkeyPatch, skip: bool) -> list[float]:
    """When a timer's ticks come, on a fake clock, when its first tick takes 1.5 periods."""
    clock = [0.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(_time, "get_time", lambda: clock[0])
    monkeypatch.setattr(timer_module, "sleep", sleep)
    ticks: list[float] = []

    def tick() -> None:
        ticks.append(clock[0])
        if len(ticks) == 1:
            clock[0] += 1.5 * INTERVAL  # a frame longer than the period

    timer = Timer(App(), INTERVAL, name="probe", callback=tick, repeat=3)
    timer._skip = skip
    token = active_app.set(App())
    try:
        await timer._run()
    finally:
        active_app.reset(token)
    return ticks


async def test_a_timer_not_skipping_ticks_at_once_when_behind_and_one_skipping_waits(monkeypatch) -> None:
    # What `prompt_frames` relies on: `_skip` is what makes a late timer wait for a later period.
    prompt = await ticks_after_a_long_frame(monkeypatch, skip=False)
    assert prompt[:2] == [INTERVAL, 2.5 * INTERVAL]  # the second tick as soon as the first ended
    assert prompt[2] == 3 * INTERVAL  # and then on its schedule again
    skipping = await ticks_after_a_long_frame(monkeypatch, skip=True)
    assert skipping[0] == INTERVAL and skipping[1] > 2.5 * INTERVAL  # Textual's default still waits


def test_timers_skip_by_default_in_the_private_attribute_prompt_frames_sets() -> None:
    assert inspect.signature(Timer).parameters["skip"].default is True
    assert Timer(App(), 1 / 60, name="probe", pause=True)._skip is True
    assert "self._skip" in inspect.getsource(Timer._run)  # still read where a tick is scheduled


async def test_a_screens_paint_timer_is_the_private_property_prompt_frames_reaches() -> None:
    assert isinstance(inspect.getattr_static(Screen, "_update_timer"), property)
    app = App()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        timer = app.screen._update_timer
        assert isinstance(timer, Timer) and timer is app.screen._update_timer  # one per screen
        assert timer._skip is True
        prompt_frames(app.screen)
        assert timer._skip is False


# -- 2. one layout per change -----------------------------------------------------------------


@pytest.mark.parametrize("cls", [Widget, ScrollView])
def test_size_updated_has_the_signature_one_layout_overrides(cls: type[Widget]) -> None:
    ours = inspect.signature(OneLayout._size_updated)
    theirs = inspect.signature(cls._size_updated)
    assert list(theirs.parameters) == list(ours.parameters)
    assert theirs.parameters["layout"].default is True
    assert theirs.return_annotation in (bool, "bool")


class Probe(Static):
    """Counts the layouts it asks for."""

    layouts = 0

    def refresh(self, *regions, layout: bool = False, **kwargs) -> Probe:  # type: ignore[override]
        self.layouts += layout
        return super().refresh(*regions, layout=layout, **kwargs)


class OneLayoutProbe(OneLayout, Probe):
    pass


class Probes(App[None]):
    def compose(self) -> ComposeResult:
        yield Probe("plain", id="plain")
        yield OneLayoutProbe("one", id="one")


async def test_a_new_virtual_size_asks_for_a_layout_unless_one_layout_says_no() -> None:
    app = Probes()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        plain, one = app.query_one("#plain", Probe), app.query_one("#one", OneLayoutProbe)
        for w in (plain, one):
            w.layouts = 0
            size, container = Size(w.size.width, w.size.height + 1), app.screen.size
            assert w._size_updated(size, Size(size.width, 7), container) is True  # a Resize follows
            assert w.virtual_size == Size(size.width, 7)  # stored either way
        assert plain.layouts == 1  # Textual's own answer: a layout of the screen again
        assert one.layouts == 0


# -- 3. the footer of keys --------------------------------------------------------------------


def test_the_footer_internals_keys_overrides_are_there() -> None:
    ready = inspect.getattr_static(Footer, "_bindings_ready")
    assert isinstance(ready, Reactive) and ready._default is False
    assert list(inspect.signature(Footer.bindings_changed).parameters) == ["self", "screen"]
    assert "self.bindings_changed" in inspect.getsource(Footer.on_mount)  # subscribed by name
    assert "self._bindings_ready" in inspect.getsource(Footer.compose)  # nothing shown before


class Counting(Keys):
    changes = 0
    rebuilds = 0

    def bindings_changed(self, screen: Screen) -> None:
        self.changes += 1
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        self.rebuilds += 1
        await super().recompose()


class Bound(App[None]):
    BINDINGS = [("x", "toggle", "exes"), ("y", "bell", "whys")]
    shown_y = True

    def compose(self) -> ComposeResult:
        yield Counting()

    def action_toggle(self) -> None:
        self.shown_y = not self.shown_y
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.shown_y if action == "bell" else True


def shown(app: App) -> list[str]:
    from textual.widgets._footer import FooterKey

    return [str(k.description) for k in app.query(FooterKey) if not k.disabled]


async def test_keys_hears_each_bindings_change_and_rebuilds_only_when_what_it_shows_changes() -> None:
    app = Bound()
    async with app.run_test(size=(60, 8)) as pilot:
        await pilot.pause()
        keys = app.query_one(Counting)
        assert keys.changes >= 1 and "exes" in shown(app) and "whys" in shown(app)
        assert keys._signature() == keys._shown  # read as (node, binding, enabled, tooltip)
        before = keys.rebuilds
        app.refresh_bindings()  # a change that shows the same keys
        await pilot.pause()
        await pilot.pause()
        assert keys.rebuilds == before
        await pilot.press("x")  # one that disables a key
        await pilot.pause()
        await pilot.pause()
        assert keys.rebuilds == before + 1 and "whys" not in shown(app) and "exes" in shown(app)


# -- 4. frozen garbage ------------------------------------------------------------------------


def test_freeze_garbage_moves_the_objects_alive_out_of_the_collectors_sight() -> None:
    kept = [[] for _ in range(1000)]  # noqa: F841 - alive while frozen
    frozen = gc.get_freeze_count()
    freeze_garbage()
    assert gc.get_freeze_count() >= frozen + 1000


# -- nowhere else -----------------------------------------------------------------------------

PRIVATE = re.compile(r"(?:def |self\.|^\s+)(_[a-z]\w*)", re.M)  # defined or set
TEXTUAL = Path(textual.__file__).parent


@functools.cache
def privates_of(path: str) -> frozenset[str]:
    return frozenset(PRIVATE.findall(Path(path).read_text(encoding="utf-8")))


def textual_private_names() -> set[str]:
    """Every `_name` (not dunder) that Textual defines or sets anywhere in its source, and its
    private modules' names (`_footer`)."""
    modules = {path.stem for path in TEXTUAL.rglob("_*.py") if not path.stem.startswith("__")}
    return modules.union(*(privates_of(str(path)) for path in TEXTUAL.rglob("*.py")))


def listed_in_internals() -> set[str]:
    doc = internals.__doc__ or ""
    return set(re.findall(r"\b(_[a-z]\w*)", doc))


def test_no_other_ui_module_touches_a_private_name_of_textuals() -> None:
    """In every `triage.ui` module but `internals`: no `x._name` on another object that is one of
    Textual's private names, and no class built on Textual that defines or sets one."""
    private = textual_private_names()
    offences: list[str] = []
    for info in pkgutil.walk_packages(triage.ui.__path__, "triage.ui."):
        if info.name == internals.__name__:
            continue
        module = importlib.import_module(info.name)
        source = inspect.getsource(module)
        for receiver, name in re.findall(r"(\w+|\))\.(_[a-z]\w*)", source):
            if receiver not in ("self", "cls") and name in private:
                offences.append(f"{info.name}: {receiver}.{name}")
        for cls in vars(module).values():
            if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            bases = [b for b in cls.__mro__[1:] if b.__module__.startswith("textual")]
            if not bases:
                continue
            own = set(PRIVATE.findall(inspect.getsource(cls)))
            theirs = set().union(*(privates_of(inspect.getfile(b)) for b in bases))  # their modules
            offences += [f"{info.name}.{cls.__name__}: {name}" for name in sorted(own & theirs)]
    assert offences == []


def test_the_internals_docstring_lists_each_private_name_the_module_uses() -> None:
    source = inspect.getsource(internals).split('"""', 2)[2]  # the code, after the docstring
    used = set(re.findall(r"\.(_[a-z]\w*)", source)) | set(re.findall(r"def (_[a-z]\w*)", source))
    ours = {"_signature", "_rebuild", "_shown", "_pending"}  # Keys' own, not Textual's
    assert used - ours <= listed_in_internals()
    assert used - ours <= textual_private_names()  # each one really is Textual's
    footer = set().union(*(PRIVATE.findall(inspect.getsource(b)) for b in Footer.__mro__[:-1]))
    assert not ours & footer  # and Keys' own names shadow none of the Footer's
