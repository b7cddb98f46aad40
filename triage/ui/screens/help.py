"""`?`: the keys of the screen it was opened on, then every column and term that screen shows, then
the keys that work anywhere and the other screens' keys. The text is the glossary's
(`triage.ui.glossary`); this screen lays it out, wrapped to the box's width."""

from __future__ import annotations

import textwrap
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from triage.ui.glossary import ANYWHERE, TOPICS, Topic
from triage.ui.literal import line

# Each screen's first binding: the footer lists a screen's keys before the app's, so `?` shows
# first however narrow the terminal (the app's own `?` binding does the same on a screen without it)
HELP_KEY = Binding("question_mark", "app.help", "help")

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


def text_of(topic: Topic, width: int) -> list[str | tuple[str, str]]:
    """The help for `topic` as `line` parts, for a box `width` cells wide inside."""
    column = 16 if width >= 60 else 12
    terms = [(term, topic.explain(term)) for term in topic.terms] + [
        (term, meaning) for term, meaning in topic.own.items() if term not in topic.terms
    ]
    parts: list[str | tuple[str, str]] = [(f"{topic.title} — keys here", "bold $text-accent"), "\n"]
    parts += rows(list(topic.keys), width, column, KEY)
    parts += ["\n", (f"{topic.title} — what it shows", "bold $text-accent"), "\n"]
    parts += rows(terms, width, column, TERM)
    parts += ["\n", ("Anywhere", "bold"), "\n"]
    parts += rows(list(ANYWHERE), width, column, KEY)
    for other in TOPICS.values():
        if other is not topic:
            parts += ["\n", (f"{other.title} — keys", "bold"), "\n"]
            parts += rows(list(other.keys), width, column, KEY)
    parts += ["\n", ("escape or ? closes this help", "$text-muted")]
    return parts


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "app.pop_screen", "close"),
        Binding("q", "app.quit", "quit"),  # a modal screen does not see the app's bindings
    ]

    def __init__(self, topic: Topic | None = None) -> None:
        super().__init__()
        self.topic = topic or TOPICS["overview"]

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
        self.query_one("#help-text", Static).update(line(*text_of(self.topic, width)))
