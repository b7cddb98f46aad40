"""`?` explains every screen: each table column has its sentence, each key one meaning and a sentence.

The app is walked screen by screen on the bundled sample; a column a screen's `TOPIC` does not list,
a key the footer offers that `?` does not explain, or a screen key that shadows an app key with
another action, fails here."""

from __future__ import annotations

import pytest
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from triage.report.columns import Column
from triage.ui import glossary
from triage.ui.app import TriageApp, every_screen
from triage.ui.screens.help import BACK, HELP_KEY, HelpScreen, anywhere, here, topic_of
from triage.ui.screens.overview import OverviewScreen
from triage.ui.table import VirtualTable

from app_helpers import wait_loaded

SIZE = (140, 45)

# (keys pressed from the overview, what the walk expects on screen): every screen of the app
WALK = [
    ((), "OverviewScreen"),
    (("f",), "FlipsScreen"),
    (("f", "enter"), "DetailScreen"),
    (("f", "enter", "enter"), "ChunkScreen"),
    (("f", "slash"), "SearchScreen"),
    (("a",), "AllQueriesScreen"),
    (("t",), "TenantsScreen"),
    (("t", "b"), "TenantsScreen"),
    (("t", "enter"), "SliceQueries"),
    (("s",), "SlicesScreen"),
    (("r",), "RankDropsScreen"),
    (("L",), "AmendmentsScreen"),
    (("J",), "QueueScreen"),
]


def titles(screen: Screen) -> set[str]:
    """Every column title the screen's tables show, and those it can show (hidden when empty)."""
    columns: list[Column] = [c for table in screen.query(VirtualTable) for c in table.columns]
    for name in ("columns", "COLUMNS", "BARS"):
        columns += [c for c in getattr(screen, name, []) if isinstance(c, Column)]
    return {c.title for c in columns if c.title}


def bindings(node: object) -> list[Binding]:
    """A node's bindings as this project declares them, its classes' merged (base classes first);
    Textual's own defaults (a scroll view's arrows, a screen's ctrl+c) are not this app's keys."""
    out: list[Binding] = []
    for cls in reversed(type(node).__mro__):
        if cls.__module__.startswith("textual"):
            continue
        for b in cls.__dict__.get("BINDINGS", []):
            out.append(b if isinstance(b, Binding) else Binding(*b))
    return out


# Pairs that read as one meaning: ↓ in the search box goes down into the results, ↓ there goes on.
SAME = {frozenset({"results", "move(1)"})}


def keymap(level: list[Binding]) -> dict[str, str]:
    """key → action, an `app.`/`screen.` prefix dropped (the same action from any node)."""
    out = {}
    for b in level:
        for key in b.key.split(","):
            out[key.strip()] = b.action.removeprefix("app.").removeprefix("screen.")
    return out


def clashes(app: TriageApp, screen: Screen) -> list[str]:
    """Keys bound to two different actions at two levels both reachable on `screen`: the app (not
    from a modal screen), the screen, and each of its focusable widgets (one focused at a time)."""
    levels = [("screen", keymap(bindings(screen)))]
    if not isinstance(screen, ModalScreen):
        levels.append(("app", keymap(bindings(app))))
    widgets = [w for w in screen.walk_children(Widget) if w.focusable and bindings(w)]
    found = []
    for w in [None, *widgets]:
        these = list(levels) + ([(type(w).__name__, keymap(bindings(w)))] if w is not None else [])
        for i, (name, keys) in enumerate(these):
            for other, more in these[i + 1 :]:
                for key in keys.keys() & more.keys():
                    if keys[key] != more[key] and frozenset({keys[key], more[key]}) not in SAME:
                        found.append(
                            f"{type(screen).__name__}: {key} is {keys[key]} ({name}), {more[key]} ({other})"
                        )
    return sorted(set(found))


async def walk(check) -> list[str]:  # type: ignore[no-untyped-def]
    problems: list[str] = []
    for keys, expected in WALK:
        app = TriageApp()
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            for key in keys:
                await pilot.press(key)
                await app.workers.wait_for_complete()
                await pilot.pause()
            assert type(app.screen).__name__ == expected, (keys, type(app.screen).__name__)
            problems += check(app, app.screen)
    return problems


@pytest.mark.slow  # opens every screen of the app: 10 s
async def test_every_column_of_every_screen_has_its_sentence_in_the_help() -> None:
    seen: dict[str, set[str]] = {}

    def check(app: TriageApp, screen: Screen) -> list[str]:
        topic = topic_of(type(screen))
        seen[type(screen).__name__] = titles(screen)
        drawn = [c for table in screen.query(VirtualTable) for c in table.columns if c.title]
        return [f"{type(screen).__name__}: column {t!r}" for t in titles(screen) if not topic.covers(t)] + [
            f"{type(screen).__name__}: {c.title!r} says another column's sentence"
            for c in drawn
            if topic.covers(c.title) and topic.explain(c.title) != c.means
        ]

    assert await walk(check) == []
    # the walk saw the tables it should: a check over no columns would pass on anything
    assert {"gold A", "plan B", "hint", "verdict"} <= seen["FlipsScreen"]
    assert {"other", "score", "chunk"} <= seen["DetailScreen"]
    assert {"h→m", "sel.", "B 95%"} <= seen["TenantsScreen"]
    assert {"elig=0", "rec A"} <= seen["SlicesScreen"]
    assert not topic_of(OverviewScreen).covers("a column nobody explained")


def test_every_term_a_screen_names_has_a_sentence() -> None:
    topics = [topic_of(screen) for screen in every_screen()]
    for screen, topic in zip(every_screen(), topics, strict=True):
        for term, sentence in topic.entries():
            assert sentence.endswith(".") and len(sentence) > 15, (screen, term)
        assert here(screen), screen
    assert glossary.size(topics) > len(glossary.TERMS) > 80


def unexplained(screen: type) -> list[str]:
    """The keys a screen's footer offers that `?` does not explain there (nor among the keys that
    work anywhere)."""
    explained = {key for key, _ in here(screen) + anywhere(TriageApp)}
    out = []
    for b in glossary.declared(screen):
        shown = b.show and b.description and b not in (HELP_KEY, BACK)
        if shown and not b.tooltip and glossary.SPELLED.get(b.key, b.key) not in explained:
            out.append(f"{screen.__name__}: {b.key}")
    return out


def test_every_key_a_footer_offers_is_in_the_help() -> None:
    assert [key for screen in every_screen() for key in unexplained(screen)] == []

    class Unexplained(Screen):
        BINDINGS = [Binding("x", "x", "something"), Binding("y", "y", "else", tooltip="why: y")]

    assert unexplained(Unexplained) == ["Unexplained: x"]
    assert here(Unexplained) == [("y", "why: y")]


def test_the_help_reads_the_keys_from_the_bindings() -> None:
    """Bindings sharing a sentence in a row are one line; a key bound twice is said once."""

    class Keys(Screen):
        BINDINGS = [
            Binding("n", "step(1)", "next", tooltip="next / previous"),
            Binding("p", "step(-1)", "previous", tooltip="next / previous"),
            Binding("j,down", "move(1)", tooltip="move"),
            Binding("k,up", "move(-1)", tooltip="move"),
            *[Binding(str(g), f"grade({g})", tooltip="a grade") for g in range(1, 10)],
            Binding("slash", "search", tooltip="search", key_display="/ (slash)"),
            Binding("n", "other", tooltip="shadowed"),
            Binding("escape", "app.pop_screen", "back"),  # no sentence: not listed
        ]

    assert here(Keys) == [
        ("n / p", "next / previous"),
        ("j / k, ↓ / ↑", "move"),
        ("1 … 9", "a grade"),
        ("/ (slash)", "search"),
    ]
    every = anywhere(TriageApp)
    assert ("escape", "back") in every and ("f", "the flips, hit→miss first") in every


@pytest.mark.slow  # presses every key on every screen: 10 s
async def test_a_key_means_one_thing_wherever_it_works() -> None:
    assert await walk(clashes) == []


def test_the_clash_check_finds_a_shadowed_app_key() -> None:
    """The queue's filters once were r, t and a: the check must have caught that."""

    class Shadowing(Screen):
        BINDINGS = [Binding("r", "regressions", "regressions only")]

    assert clashes(TriageApp(), Shadowing()) == ["Shadowing: r is regressions (screen), ranks (app)"]


async def test_help_shows_the_screens_own_keys_then_its_terms() -> None:
    app = TriageApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("t", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).render())
        lines = text.splitlines()
        assert lines[0].startswith("Tenants — keys here")
        assert lines[1].split()[0] == "b"  # the screen's own keys come first
        terms = text.index("Tenants — what it shows")
        assert text.index("Anywhere") > terms > text.index("bars of A's and B's hit rate")
        for term in ("h→m", "sel.", "few", "B 95%"):
            assert f"  {term} " in text[terms:]
        assert max(len(x) for x in lines) <= 80 - 6  # wrapped to the box at 80 columns
        await pilot.press("escape", "J", "question_mark")
        text = str(app.screen.query_one("#help-text", Static).render())
        assert text.startswith("Judging queue — keys here") and "tier 1" in text
