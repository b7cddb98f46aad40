"""One chunk in full: id, document, heading path and body, scrollable. Long text is capped for
display; `m` shows more."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from triage.core.corpus import Chunk
from triage.core.sanitize import DISPLAY_CAP
from triage.report import cells as fmt
from triage.ui.keys import Keys
from triage.ui.literal import line, plain
from triage.workspace.detail import QueryDetail, token_label
from triage.workspace.session import Session


class ChunkScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "back"),
        Binding("j,down", "scroll(1)", "down", show=False),
        Binding("k,up", "scroll(-1)", "up", show=False),
        Binding("m", "more", "show more"),
    ]

    def __init__(
        self, session: Session, chunk_id: str, chunk: Chunk | None, detail: QueryDetail, grade: int
    ) -> None:
        super().__init__()
        self.session = session
        self.chunk_id = chunk_id
        self.chunk = chunk
        self.detail = detail
        self.grade = grade
        self.cap = DISPLAY_CAP

    def compose(self) -> ComposeResult:
        yield Static(id="chunk-title")
        with VerticalScroll(id="chunk-scroll"):
            yield Static(id="chunk-header")
            yield Static(id="chunk-body")
        yield Keys()

    def on_mount(self) -> None:
        d = self.detail
        rank_a = next((r.rank for r in d.a.rows if r.chunk_id == self.chunk_id), None)
        rank_b = next((r.rank for r in d.b.rows if r.chunk_id == self.chunk_id), None)
        gold = (
            (f"gold, grade {self.grade}", "$text-warning bold") if self.grade else ("not gold", "$text-muted")
        )
        self.query_one("#chunk-title", Static).update(
            line(
                ("chunk ", "bold"),
                (self.chunk_id, "bold"),
                "   ",
                gold,
                f"   for {d.query_id}:  A {fmt.rank(rank_a, d.k)}   B {fmt.rank(rank_b, d.k)}",
            )
        )
        self.draw()
        self.query_one("#chunk-scroll").focus()

    def draw(self) -> None:
        c = self.chunk
        if c is None:
            self.query_one("#chunk-body", Static).update(
                plain("text unavailable: " + self.session.corpus_note)
            )
            return
        meta = "   ".join(f"{k} {v}" for k, v in (("doc", c.doc_id), ("source", c.source_type)) if v)
        self.query_one("#chunk-header", Static).update(
            line(
                ("header ", "bold"),
                (f"({token_label(c.header)})  ", "$text-muted"),
                (c.header or "(none)", "$text-accent"),
                "\n",
                (meta, "$text-muted"),
                "\n",
                ("body ", "bold"),
                (f"({token_label(c.text)})", "$text-muted"),
            )
        )
        self.query_one("#chunk-body", Static).update(plain(c.text or "", self.cap))

    def action_scroll(self, step: int) -> None:
        scroll = self.query_one("#chunk-scroll", VerticalScroll)
        scroll.scroll_relative(y=step, animate=False)

    def action_more(self) -> None:
        if self.chunk and self.chunk.text and len(self.chunk.text) > self.cap:
            self.cap *= 4
            self.draw()
        else:
            self.notify("the whole text is shown", timeout=2)
