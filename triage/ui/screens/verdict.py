"""`v`: the reader's verdict on a query — one key picks the cause, then an optional note.

v, a cause's key, enter: three keys for a verdict without a note. The keys are fixed per cause
(a mnemonic letter, the same on every query); the query's hinted causes are listed first and
marked. Enter with an empty note records no note; escape cancels the whole verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from triage.labels.verdicts import Cause, Verdict
from triage.ui.literal import line

CAUSE_KEYS: dict[Cause, str] = {
    Cause.SHORT_LIST: "s",
    Cause.PLAN_CHANGE: "c",
    Cause.HEADER_DOMINATES: "h",
    Cause.MISLEADING_PATH: "m",
    Cause.LIKELY_UNLABELLED: "u",
    Cause.WINDOW: "w",
    Cause.PUSHED_OUT: "p",
    Cause.DROPPED: "d",
    Cause.REAL_REGRESSION: "r",
    Cause.LABEL_ERROR: "l",
    Cause.OTHER: "o",
}
BY_KEY = {key: cause for cause, key in CAUSE_KEYS.items()}


def cause_order(hinted: Sequence[Cause]) -> list[Cause]:
    """Every cause once: the hinted ones first (in hint order), then the rest in enum order."""
    first = list(dict.fromkeys(hinted))
    return first + [c for c in Cause if c not in first]


class VerdictScreen(ModalScreen[tuple[Cause, str] | None]):
    """Dismissed with (cause, note) — note "" for none — or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]
    AUTO_FOCUS = ""  # none: the cause keys come to the screen; the note box takes the focus after

    def __init__(self, query_id: str, hinted: Sequence[Cause] = (), current: Verdict | None = None) -> None:
        super().__init__()
        self.query_id = query_id
        self.hinted = tuple(hinted)
        self.current = current  # this reviewer's verdict in force on the query, if any
        self.cause: Cause | None = None  # picked: the note is asked next

    def compose(self) -> ComposeResult:
        with Vertical(id="verdict-box"):
            yield Static(self._choices(), id="verdict-causes")
            note = Input(placeholder="optional; enter with none records no note", id="verdict-note")
            note.display = False  # until a cause is picked
            yield note

    def _choices(self) -> Content:
        parts: list[str | tuple[str, str]] = [
            ("verdict  ", "bold"),
            self.query_id,
            ("   press a cause's key; escape cancels", "$text-muted"),
        ]
        if self.current is not None:
            parts += ["\n", ("yours now: ", "$text-muted"), self.current.cause]
            parts.append(("  (a new one replaces it)", "$text-muted"))
        for cause in cause_order(self.hinted):
            parts += ["\n", (f"  {CAUSE_KEYS[cause]}  ", "bold $text-warning"), cause]
            if cause in self.hinted:
                parts.append(("  hinted", "$text-accent"))
        return line(*parts)

    def on_key(self, event: events.Key) -> None:
        if self.cause is not None:  # the note box has the keys
            return
        cause = BY_KEY.get(event.key)
        if cause is None:
            return
        event.stop()
        event.prevent_default()
        self.cause = cause
        self.query_one("#verdict-causes", Static).update(
            line(
                ("verdict  ", "bold"),
                self.query_id,
                "  ",
                (cause, "bold $text-warning"),
                ("\nnote (optional): enter records the verdict, escape cancels", "$text-muted"),
            )
        )
        box = self.query_one(Input)
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.cause is not None:
            self.dismiss((self.cause, event.value.strip()))

    def action_cancel(self) -> None:
        self.dismiss(None)
