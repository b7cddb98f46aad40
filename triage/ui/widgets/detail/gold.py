"""The gold pane: each gold chunk, its header (heading path) apart from its body, token counts; the
query's content words highlighted (`literal.marked`)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from triage.core.words import words
from triage.report import cells as fmt
from triage.ui.literal import Part, heading, line, marked
from triage.ui.widgets.detail.text import clip
from triage.ui.widgets.redraw import OneLayout, redraw
from triage.workspace.detail import QueryDetail, token_label

BODY = 600  # characters of a gold body shown here (enter opens the whole chunk)


def golds(d: QueryDetail, corpus_note: str) -> Content:
    if not d.golds:
        return line(("no gold for this query: it is not scored", "$text-warning"))
    query = words(d.text)
    parts: list[Part] = []
    for g in d.golds:
        ranks = f"   A {fmt.rank(g.rank_a, d.k)}   B {fmt.rank(g.rank_b, d.k)}   grade {g.grade}"
        if g.chunk_id in d.amended:
            ranks += f"   added by amendment ({d.amended[g.chunk_id]})"
        parts += [("★ ", "$text-warning"), (g.chunk_id, "bold"), (ranks, "$text-muted"), "\n"]
        if g.chunk is None:
            parts += [("  text unavailable: " + corpus_note, "$text-muted"), "\n"]
            continue
        parts += [
            ("  header ", "$text-muted"),
            (f"({token_label(g.chunk.header)})  ", "$text-muted"),
            heading(g.chunk.header, query),
            "\n",
            ("  body ", "$text-muted"),
            (f"({token_label(g.chunk.text)})  ", "$text-muted"),
            marked(clip(g.chunk.text, BODY), query),
            "\n",
        ]
    return line(*parts[:-1])


class GoldText(OneLayout, Static):
    """The gold chunks' text, scrolled by the pane."""


class GoldPane(OneLayout, VerticalScroll, can_focus=True):
    """Scrolls with j/k; enter asks the screen to open the first gold chunk (`open_gold`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "scroll_down", "down", show=False),
        Binding("k,up", "scroll_up", "up", show=False),
        Binding("enter", "screen.open_gold", "open gold", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="golds")

    def compose(self) -> ComposeResult:
        yield GoldText(id="gold-text")

    def show(self, d: QueryDetail, corpus_note: str) -> None:
        redraw(self.query_one(GoldText), golds(d, corpus_note))
