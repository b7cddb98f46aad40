"""The gold pane: each gold chunk, its header (heading path) apart from its body, token counts; the
query's content words highlighted (`literal.marked`)."""

from __future__ import annotations

from typing import ClassVar, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.css.styles import RulesMap
from textual.widgets import Static

from triage.core.text.words import words
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
    """Scrolls with j/k; enter asks the screen to open the first gold chunk (`open_gold`). The keys
    are a list's (move, select), so each means one thing on the detail screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "move(1)", "down", show=False),
        Binding("k,up", "move(-1)", "up", show=False),
        Binding("enter", "select", "open gold", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="golds")

    def action_move(self, lines: int) -> None:
        (self.action_scroll_down if lines > 0 else self.action_scroll_up)()

    async def action_select(self) -> None:
        await self.run_action("screen.open_gold")

    def compose(self) -> ComposeResult:
        yield GoldText(id="gold-text")

    def show(self, d: QueryDetail, corpus_note: str) -> None:
        text, content = self.query_one(GoldText), golds(d, corpus_note)
        self._scroll_bar_for(text, content)
        redraw(text, content)

    def _scroll_bar_for(self, text: GoldText, content: Content) -> None:
        """Show the scroll bar now if the new text will need it, as the layout would decide (its
        lines at the width without a scroll bar outnumber the rows the pane has at its height
        cap). The layout then wraps the text once, at the width it keeps; left to Textual, the
        bar comes in one layout, the text is re-wrapped in a second and settled in a third."""
        cap, width = self.styles.max_height, text.size.width
        if cap is None or not cap.is_cells or not width:
            return  # not laid out yet, or a cap in other units: the layout decides alone
        rows = int(cap.value) - self.styles.gutter.height  # inside the border and padding
        if self.show_vertical_scrollbar:
            width += self.styles.scrollbar_size_vertical
        tall = content.get_height(cast(RulesMap, text.styles), width) > rows
        if tall != self.show_vertical_scrollbar:
            self.show_vertical_scrollbar = tall
            self.vertical_scrollbar.display = tall
