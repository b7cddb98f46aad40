"""One chunk in full: id, document, heading path and body, scrollable, the query's content words
highlighted. Long text is capped for display; `m` shows more. `w` jumps to the passage sharing the
most query words (`core.text.words.passages`), again to the next best; `W` goes back."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from triage.core.inputs.corpus import Chunk
from triage.core.text.sanitize import DISPLAY_CAP, counted, visible
from triage.core.text.words import Passage, best_passages, normal, passages, spans, words
from triage.report import cells as fmt
from triage.ui.glossary import Topic
from triage.ui.keys import Keys
from triage.ui.literal import heading, line, marked, plain
from triage.ui.screens.help import BACK, HELP_KEY
from triage.workspace.detail import QueryDetail, token_label
from triage.workspace.session import Session

PASSAGE = "on $primary-muted"  # the passage `w` went to, under the query words' own style


def in_query_order(query: str, found: frozenset[str]) -> list[str]:
    """The words of `found` in the order the query first uses them (as the query spells them)."""
    out: dict[str, str] = {}
    for start, end in spans(query, found):
        out.setdefault(normal(query[start:end]), query[start:end])
    return list(out.values())


class ChunkScreen(Screen):
    TOPIC = Topic("Chunk", ("heading path", "tokens", "doc / source", "passage", "query words", "grade"))
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        BACK,
        Binding("j,down", "scroll(1)", "down", show=False, tooltip="scroll"),
        Binding("k,up", "scroll(-1)", "up", show=False, tooltip="scroll"),
        Binding(
            "w",
            "passage(1)",
            "best passage",
            tooltip="the passage holding the most query words; again: the next best",
        ),
        Binding(
            "W", "passage(-1)", "previous passage", show=False, tooltip="back to the previous best passage"
        ),
        Binding("m", "more", "show more", tooltip="show more of a very long text"),
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
        self.query_words = words(detail.text)
        self.shown = ""  # the body as displayed: `visible` of the text, capped
        self.found: list[Passage] = []  # the passages of `shown`, in order
        self.ranking: list[Passage] = []  # those sharing a query word, best first
        self.at: int | None = None  # position in `ranking` of the passage jumped to

    def compose(self) -> ComposeResult:
        yield Static(id="chunk-title")
        yield Static(id="chunk-where")
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
            self.where()
            return
        meta = "   ".join(f"{k} {v}" for k, v in (("doc", c.doc_id), ("source", c.source_type)) if v)
        self.query_one("#chunk-header", Static).update(
            line(
                ("header ", "bold"),
                (f"({token_label(c.header)})  ", "$text-muted"),
                heading(c.header, self.query_words),
                "\n",
                (meta, "$text-muted"),
                "\n",
                ("body ", "bold"),
                (f"({token_label(c.text)})", "$text-muted"),
            )
        )
        self.shown = visible(c.text or "", self.cap)
        self.found = passages(self.shown, self.query_words)
        self.ranking = best_passages(self.found)
        self.at = None
        self.paint()

    def current(self) -> Passage | None:
        return None if self.at is None else self.ranking[self.at]

    def paint(self) -> None:
        """The body with the query's words marked and the current passage shaded."""
        body = marked(self.shown, self.query_words, cap=None)
        p = self.current()
        if p is not None:
            body = body.stylize_before(PASSAGE, p.start, p.end)
        self.query_one("#chunk-body", Static).update(body)
        self.where()

    def where(self) -> None:
        """The line under the title: where the reader is among the passages."""
        n_query = len(self.query_words)
        p = self.current()
        if self.chunk is None or not self.shown:
            text = line(("no text", "$text-muted"))
        elif not n_query:
            text = line(("the query has no content words: nothing to highlight", "$text-muted"))
        elif p is None:
            holding = (
                f"{counted(len(self.found), 'passage')}, {len(self.ranking)} holding some of the "
                f"{counted(n_query, 'query word')}"
            )
            jump = "   w: the passage holding the most" if self.ranking else ""
            text = line((holding + jump, "$text-muted"))
        else:
            shared = ", ".join(in_query_order(self.detail.text or "", p.shared))
            text = line(
                (f"passage {p.index + 1} of {len(self.found)}", "bold"),
                (f" · {len(p.shared)} of {n_query} query words ", "$text-accent"),
                f"({shared})",
                (f"   best {(self.at or 0) + 1} of {len(self.ranking)}", "$text-muted"),
                ("   w: next best   W: back", "$text-muted"),
            )
        self.query_one("#chunk-where", Static).update(text)

    def action_passage(self, step: int) -> None:
        """Go to the next (`step` 1) or previous (-1) passage in the ranking, wrapping around."""
        if not self.ranking:
            self.notify("no passage shares a word with the query", timeout=2)
            return
        n = len(self.ranking)
        self.at = (0 if step > 0 else n - 1) if self.at is None else (self.at + step) % n
        self.paint()
        p = self.current()
        if p is not None:
            self.scroll_to_offset(p.start)

    def line_of(self, offset: int) -> int:
        """The display line (0-based, as wrapped at the body's width) where character `offset` of
        the body falls; off by at most one when the offset is mid-line."""
        width = max(1, self.query_one("#chunk-body", Static).content_size.width)
        if not offset:
            return 0
        return max(0, len(Content(self.shown[:offset]).wrap(width)) - 1)

    def scroll_to_offset(self, offset: int) -> None:
        body = self.query_one("#chunk-body", Static)
        scroll = self.query_one("#chunk-scroll", VerticalScroll)
        scroll.scroll_to(y=body.virtual_region.y + self.line_of(offset), animate=False)

    def action_scroll(self, step: int) -> None:
        scroll = self.query_one("#chunk-scroll", VerticalScroll)
        scroll.scroll_relative(y=step, animate=False)

    def action_more(self) -> None:
        if self.chunk and self.chunk.text and len(self.chunk.text) > self.cap:
            self.cap *= 4
            self.draw()
        else:
            self.notify("the whole text is shown", timeout=2)
