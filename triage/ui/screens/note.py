"""`G`: a note for the amendment about to be written."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from triage.ui.literal import line


class NoteScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="note-box"):
            yield Static(
                line(
                    ("note", "bold"),
                    ("  why this passage answers the query; enter saves, escape cancels", "$text-muted"),
                )
            )
            yield Input(placeholder="e.g. same paragraph as the gold, 2023 edition", id="note-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
