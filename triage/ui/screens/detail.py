"""One query: its text and slice fields, the gold chunks, both arms' ranks, plans and lists."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from triage.core.paired import Outcome
from triage.core.sanitize import visible
from triage.report import cells as fmt
from triage.ui.keys import Keys
from triage.ui.literal import line
from triage.ui.table import Column, VirtualTable
from triage.workspace.detail import ArmView, QueryDetail, Row, token_label
from triage.workspace.session import Session

SNIPPET = 160  # characters of a chunk shown in a list row


class GoldPane(VerticalScroll, can_focus=True):
    """The gold chunks: header (heading path) apart from body, with token counts."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "scroll_down", "down", show=False),
        Binding("k,up", "scroll_up", "up", show=False),
        Binding("enter", "screen.open_gold", "open gold", show=False),
    ]


def _arm_summary(arm: ArmView, k: int, movement: int | None) -> Content:
    side = arm.side.upper()
    if not arm.present:
        return line(
            (f"{side} {arm.name}", "bold"), ("  did not answer this query (scored as a miss)", "$text-error")
        )
    where = (
        "absent from the stored list"
        if arm.gold_rank is None
        else (
            f"rank {arm.gold_rank}, inside k" if arm.inside(k) else f"rank {arm.gold_rank}, outside k = {k}"
        )
    )
    outcome = ("hit", "$text-success bold") if arm.hit else ("miss", "$text-error bold")
    moved = ""
    if arm.side == "b" and movement is not None and movement != 0:
        moved = f"  ({'down' if movement > 0 else 'up'} {abs(movement)} from A)"
    known = lambda v: "–" if v is None else str(v)  # noqa: E731
    return line(
        (f"{side} {arm.name}  ", "bold"),
        outcome,
        f"  gold {where}{moved}\n",
        ("plan ", "$text-muted"),
        known(arm.plan),
        ("   n_returned ", "$text-muted"),
        known(arm.n_returned),
        ("   n_eligible ", "$text-muted"),
        known(arm.n_eligible),
        ("   stored depth ", "$text-muted"),
        str(arm.depth),
    )


class DetailScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "step(1)", "next"),
        Binding("p", "step(-1)", "previous"),
        Binding("tab", "app.focus_next", "next pane", show=False),
        Binding("shift+tab", "app.focus_previous", "previous pane", show=False),
        Binding("escape", "app.pop_screen", "back"),
        Binding("g", "amend", "mark gold"),
        Binding("G", "amend_note", "gold + note"),
        Binding("u", "undo", "undo amendment"),
        *[Binding(str(n), f"grade({n})", f"grade {n}", show=False) for n in range(1, 10)],
    ]

    def __init__(
        self, session: Session, sequence: np.ndarray, position: int, label: Callable[[int], str]
    ) -> None:
        super().__init__()
        self.session = session
        self.sequence = sequence
        self.position = position
        self.label = label
        self.detail: QueryDetail | None = None
        self.grading = False  # True right after `g`: a digit sets the grade of that amendment

    def compose(self) -> ComposeResult:
        yield Static(id="detail-title")
        yield Static(id="status")
        yield Static(id="query-text")
        with Horizontal(id="arms"):
            yield Static(id="arm-a", classes="arm")
            yield Static(id="arm-b", classes="arm")
        with GoldPane(id="golds"):
            yield Static(id="gold-text")
        with Horizontal(id="lists"):
            for side in ("a", "b"):
                with Vertical(classes="arm-list"):
                    yield Static(id=f"list-{side}-title", classes="list-title")
                    yield VirtualTable(
                        [
                            Column("#", 3, right=True),
                            Column("", 2),
                            Column("chunk", 18),
                            Column("other", 5, right=True),
                            Column("score", 7, right=True),
                            Column("header │ text", 0),
                        ],
                        id=f"list-{side}",
                    )
        yield Static(id="preview")
        yield Keys()

    def on_mount(self) -> None:
        self.show()
        self.query_one("#list-b", VirtualTable).focus()

    # -- amendments ----------------------------------------------------------------------------
    def on_key(self, event) -> None:  # type: ignore[no-untyped-def]
        if self.grading and not (event.character or "").isdigit():
            self.grading = False  # the grade window closes at the next key that is not a digit

    def _selected(self) -> tuple[ArmView, Row] | None:
        focused = self.focused
        if self.detail is None or not isinstance(focused, VirtualTable) or not focused.count:
            self.notify("select a retrieved passage in arm A's or B's list first (tab)", timeout=3)
            return None
        arm = self.detail.a if focused.id == "list-a" else self.detail.b
        return arm, arm.rows[focused.cursor]

    def _said(self, change) -> None:  # type: ignore[no-untyped-def]
        """Show what a decision changed, redraw the numbers."""
        if change is None:
            return
        self.app.prepare_soon()  # type: ignore[attr-defined]  # tenants and slices, once the keys rest
        if not change.saved:  # the status line says it either way; a failure also raises a toast
            self.notify(
                visible(change.message),
                title="amendment NOT SAVED",
                severity="error",
                markup=False,
                timeout=30,
            )
        self.query_one("#status", Static).update(
            line(("amended  ", "bold $text-warning" if change.saved else "bold $text-error"), change.message)
        )
        self.show()

    def _amend(self, note: str = "") -> None:
        picked = self._selected()
        if picked is None:
            return
        arm, row = picked
        if row.grade:
            self.notify(f"already gold (grade {row.grade})", timeout=3, markup=False)
            return
        assert self.detail is not None
        change = self.session.add(
            self.detail.query_id, row.chunk_id, 1, note, evidence={"arm": arm.side, "rank": row.rank}
        )
        self._said(change)
        self.grading = True

    def action_amend(self) -> None:
        self._amend()

    def action_amend_note(self) -> None:
        if self._selected() is None:
            return
        from triage.ui.screens.note import NoteScreen

        def with_note(note: str | None) -> None:
            if note is not None:
                self._amend(note)

        self.app.push_screen(NoteScreen(), with_note)

    def action_grade(self, grade: int) -> None:
        if not self.grading:
            return
        self.grading = False
        self._said(self.session.regrade(grade))

    def action_undo(self) -> None:
        change = self.session.undo()
        if change is None:
            self.notify("nothing of yours to undo", timeout=3)
        self._said(change)

    # -- navigation ----------------------------------------------------------------------------
    def action_step(self, step: int) -> None:
        new = self.position + step
        if 0 <= new < len(self.sequence):
            self.position = new
            self.grading = False
            self.query_one("#status", Static).update("")
            self.show()
        else:
            self.notify("no more in this list" if step > 0 else "this is the first", timeout=2)

    def action_open_gold(self) -> None:
        if self.detail and self.detail.golds:
            from triage.ui.screens.chunk import ChunkScreen

            g = self.detail.golds[0]
            self.app.push_screen(ChunkScreen(self.session, g.chunk_id, g.chunk, self.detail, g.grade))

    def on_virtual_table_highlighted(self, event: VirtualTable.Highlighted) -> None:
        if self.detail is not None and event.table.has_focus:
            self._preview(event.table.id == "list-a", event.index)

    def on_descendant_focus(self) -> None:
        focused = self.focused
        if isinstance(focused, VirtualTable) and focused.count:
            self._preview(focused.id == "list-a", focused.cursor)

    def _preview(self, arm_a: bool, index: int) -> None:
        """The selected row in full: id, heading path, the start of its text."""
        assert self.detail is not None
        arm = self.detail.a if arm_a else self.detail.b
        if not 0 <= index < len(arm.rows):
            return
        r = arm.rows[index]
        d = self.detail
        if r.grade:
            who = f" (amended by {d.amended[r.chunk_id]}; u undoes yours)" if r.chunk_id in d.amended else ""
            gold = (f"  ★ gold, grade {r.grade}{who}", "$text-warning bold")
        elif r.chunk_id in d.suggestions:
            twin, sim = d.suggestions[r.chunk_id]
            gold = (f"  ≈ likely also gold: {sim:.0f}% like gold {twin}   g marks it gold", "$text-warning")
        else:
            gold = ("  not gold   g marks it gold, G with a note", "$text-muted")
        if r.chunk is None:
            body: list[str | tuple[str, str]] = [
                ("text unavailable: " + self.session.corpus_note, "$text-muted")
            ]
        else:
            body = [(r.chunk.header or "(no header)", "$text-accent"), "\n", _clip(r.chunk.text, 700)]
        self.query_one("#preview", Static).update(
            line(
                (f"{arm.side.upper()} #{r.rank}  ", "bold"),
                (r.chunk_id, "bold"),
                gold,
                "   enter: full text\n",
                *body,
            )
        )

    def on_virtual_table_selected(self, event: VirtualTable.Selected) -> None:
        if self.detail is None:
            return
        from triage.ui.screens.chunk import ChunkScreen

        arm = self.detail.a if event.table.id == "list-a" else self.detail.b
        row = arm.rows[event.index]
        self.app.push_screen(ChunkScreen(self.session, row.chunk_id, row.chunk, self.detail, row.grade))

    # -- drawing -------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="prefetch")
    def prefetch(self, q: int) -> None:
        self.session.prefetch(q)

    def show(self) -> None:
        q = int(self.sequence[self.position])
        d = self.detail = self.session.detail(q)
        if self.position + 1 < len(self.sequence):  # `n` is the likely next key
            self.prefetch(int(self.sequence[self.position + 1]))
        tag = {Outcome.HIT_TO_MISS: "$text-error", Outcome.MISS_TO_HIT: "$text-success"}.get(d.outcome, "")
        self.query_one("#detail-title", Static).update(
            line(
                (self.label(self.position), "bold $text-accent"),
                "  ",
                (d.query_id, "bold"),
                "  ",
                (d.outcome.label, f"bold {tag}".strip()),
                f"   k = {d.k}",
            )
        )
        fields = "   ".join(f"{k} {v}" for k, v in d.fields.items())
        self.query_one("#query-text", Static).update(
            line(
                ("query  ", "bold"),
                d.text if d.text is not None else "(no query text)",
                "\n",
                (fields, "$text-muted"),
            )
        )
        self.query_one("#arm-a", Static).update(_arm_summary(d.a, d.k, d.movement))
        self.query_one("#arm-b", Static).update(_arm_summary(d.b, d.k, d.movement))
        self.query_one("#gold-text", Static).update(self._golds(d))
        width = min(32, max([12] + [len(r.chunk_id) for arm in (d.a, d.b) for r in arm.rows]))
        for arm in (d.a, d.b):
            self._fill(arm, d, width)
        focused = self.focused
        if isinstance(focused, VirtualTable) and focused.count:
            self._preview(focused.id == "list-a", focused.cursor)

    def _golds(self, d: QueryDetail) -> Content:
        if not d.golds:
            return line(("no gold for this query: it is not scored", "$text-warning"))
        parts: list[str | tuple[str, str]] = []
        for g in d.golds:
            ranks = f"   A {fmt.rank(g.rank_a, d.k)}   B {fmt.rank(g.rank_b, d.k)}   grade {g.grade}"
            if g.chunk_id in d.amended:
                ranks += f"   added by amendment ({d.amended[g.chunk_id]})"
            parts += [("★ ", "$text-warning"), (g.chunk_id, "bold"), (ranks, "$text-muted"), "\n"]
            if g.chunk is None:
                parts += [("  text unavailable: " + self.session.corpus_note, "$text-muted"), "\n"]
                continue
            parts += [
                ("  header ", "$text-muted"),
                (f"({token_label(g.chunk.header)})  ", "$text-muted"),
                (g.chunk.header or "(none)", "$text-accent"),
                "\n",
                ("  body ", "$text-muted"),
                (f"({token_label(g.chunk.text)})  ", "$text-muted"),
                _clip(g.chunk.text, 600),
                "\n",
            ]
        return line(*parts[:-1])

    def _fill(self, arm: ArmView, d: QueryDetail, id_width: int) -> None:
        other = "B" if arm.side == "a" else "A"
        title = self.query_one(f"#list-{arm.side}-title", Static)
        title.update(
            line(
                (f"{arm.side.upper()} {arm.name}", "bold"),
                f"  {len(arm.rows)} of {arm.depth} shown",
                ("  ★ gold +amended ≈ likely · other: " + other + "'s rank", "$text-muted"),
            )
        )
        table = self.query_one(f"#list-{arm.side}", VirtualTable)
        table.columns[2] = Column("chunk", id_width)
        rows = arm.rows
        cut = next((i for i, r in enumerate(rows) if r.rank == d.k), None)
        table.rule_after = cut

        def cells(i: int) -> list[object]:
            r: Row = rows[i]
            if r.grade:
                mark = ("+" if r.chunk_id in d.amended else "★") + str(r.grade)
            else:
                mark = "≈" if r.chunk_id in d.suggestions else ""
            score = "" if r.score is None else f"{r.score:.4f}"
            other_rank = "–" if r.other_rank is None else str(r.other_rank)
            if r.chunk is None:
                body = "(" + self.session.corpus_note + ")"
            else:
                body = f"{short_header(r.chunk.header)} │ {_clip(r.chunk.text, SNIPPET)}"
            return [r.rank, mark, r.chunk_id, other_rank, score, body]

        def tag(i: int) -> str | None:
            if rows[i].grade:
                return "gold"
            return "suggest" if rows[i].chunk_id in d.suggestions else None

        table.set_rows(len(rows), cells, tag, table.cursor)


def short_header(header: str | None, keep: int = 2) -> str:
    """The most specific end of a heading path: "… > Leave > Annual leave"."""
    if not header:
        return ""
    parts = header.split(" > ")
    return header if len(parts) <= keep else "… > " + " > ".join(parts[-keep:])


def _clip(text: str | None, n: int) -> str:
    if not text:
        return ""
    return text if len(text) <= n else text[: n - 1] + "…"
