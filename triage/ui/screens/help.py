"""`?`: the keys of the screen it was opened on, then every column and term that screen shows, then
the keys that work anywhere and the other screens' keys. The keys are read from the screens' and
the app's bindings, what a screen shows from its `TOPIC` (`triage.ui.glossary`); this screen lays
them out, wrapped to the box's width."""

from __future__ import annotations

import textwrap
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from triage.ui.glossary import Topic, declared, keys
from triage.ui.literal import line

# Each screen's first binding: the footer lists a screen's keys before the app's, so `?` shows
# first however narrow the terminal (the app's own `?` binding does the same on a screen without it)
HELP_KEY = Binding("question_mark", "app.help", "help")
# Back to the screen below: one of the keys that work anywhere (`?` lists it there, not per screen)
BACK = Binding("escape", "app.pop_screen", "back", tooltip="back")

KEY = "$text-warning"
TERM = "$text-accent"


def rows(entries: list[tuple[str, str]], width: int, column: int, style: str) -> list[str | tuple[str, str]]:
    """`key  what` rows, `what` wrapped under itself; a key wider than its column on a line of its own."""
    out: list[str | tuple[str, str]] = []
    indent = " " * (column + 2)
    for key, what in entries:
        wrapped = textwrap.wrap(what, max(20, width - column - 2)) or [""]
        if len(key) >= column:
            out += [(f"  {key}", style), "\n"]
            first = indent + wrapped[0]
        else:
            out.append((f"  {key:<{column}}", style))
            first = wrapped[0]
        out += [first, "\n", *(f"{indent}{rest}\n" for rest in wrapped[1:])]
    return out


def here(screen: type) -> list[tuple[str, str]]:
    """The keys of `screen` for `?`: its bindings but those that work anywhere (`BACK`)."""
    return keys(b for b in declared(screen) if b != BACK)


def anywhere(app: type) -> list[tuple[str, str]]:
    """The keys that work on every screen: the app's, and `BACK`."""
    return keys([*declared(app), BACK])


def topic_of(screen: type) -> Topic:
    topic: Topic = getattr(screen, "TOPIC")  # noqa: B009 (every screen `?` is opened on has one)
    return topic


def text_of(screen: type, app: type, others: list[type], width: int) -> list[str | tuple[str, str]]:
    """The help for `screen` as `line` parts, for a box `width` cells wide inside: its keys and
    terms, the keys of the `app`, then those of the `others` screens."""
    column = 16 if width >= 60 else 12
    topic = topic_of(screen)
    parts: list[str | tuple[str, str]] = [(f"{topic.title} — keys here", "bold $text-accent"), "\n"]
    parts += rows(here(screen), width, column, KEY)
    parts += ["\n", (f"{topic.title} — what it shows", "bold $text-accent"), "\n"]
    parts += rows(topic.entries(), width, column, TERM)
    parts += ["\n", ("Anywhere", "bold"), "\n"]
    parts += rows(anywhere(app), width, column, KEY)
    for other in others:
        if other is not screen:
            parts += ["\n", (f"{topic_of(other).title} — keys", "bold"), "\n"]
            parts += rows(here(other), width, column, KEY)
    parts += ["\n", ("escape or ? closes this help", "$text-muted")]
    return parts


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "app.pop_screen", "close"),
        Binding("q", "app.quit", "quit"),  # a modal screen does not see the app's bindings
    ]

    def __init__(self, screen: type, others: list[type]) -> None:
        """The help for the screen class `screen`, then the keys of the `others`."""
        super().__init__()
        self.screen_help = screen
        self.others = others

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(id="help-text")

    def on_mount(self) -> None:
        self.draw()

    def on_resize(self) -> None:
        self.draw()

    def draw(self) -> None:
        # the box (styles: 90 cells, at most 95% of the screen) less its border, padding, scroll bar
        width = min(90, self.size.width * 95 // 100) - 6
        text = text_of(self.screen_help, type(self.app), self.others, width)
        self.query_one("#help-text", Static).update(line(*text))
