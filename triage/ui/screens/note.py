"""`G` / `N`: a note for the judgement about to be written, worded for that judgement."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from triage.ui.literal import line


class NoteScreen(ModalScreen[str | None]):
    """Ask for the note of one judgement: `relevant` says which one, so the prompt matches it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, relevant: bool = True) -> None:
        super().__init__()
        self.relevant = relevant

    def compose(self) -> ComposeResult:
        if self.relevant:
            title, why = "note · relevant", "why this passage answers the query"
            example = "e.g. same paragraph as the gold, 2023 edition"
        else:
            title, why = "note · not relevant", "why this passage does not answer the query"
            example = "e.g. right product, wrong version"
        with Vertical(id="note-box"):
            yield Static(line((title, "bold"), (f"  {why}; enter saves, escape cancels", "$text-muted")))
            yield Input(placeholder=example, id="note-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
