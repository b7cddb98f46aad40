"""Quitting with decisions held in memory (the disk refused them): retry, write them to another
folder, or discard them — never lost without a word."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from triage.core.text.sanitize import visible
from triage.ui.glossary import declared, keys
from triage.ui.literal import line
from triage.workspace.session import Session


class UnsavedScreen(ModalScreen[bool]):
    """Dismissed with True when the app may quit (nothing unsaved is left, or the reader chose to
    discard), False to stay."""

    # The prompt spells these keys and says their tooltips, as `?` would (docs/keys.md lists them)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "retry", "retry", tooltip="retry"),
        Binding("w", "elsewhere", "write elsewhere", tooltip="write them to another folder"),
        Binding("d", "discard", "discard and quit", tooltip="discard them and quit"),
        Binding("escape", "stay", "stay", key_display="esc", tooltip="stay"),
    ]

    def __init__(self, session: Session, error: str) -> None:
        super().__init__()
        self.session = session
        self.error = error
        self.farewell = ""  # said on the terminal after the app has closed

    def compose(self) -> ComposeResult:
        with Vertical(id="unsaved-box"):
            yield Static(id="unsaved-text")

    def on_mount(self) -> None:
        self.say()

    def say(self, outcome: str = "") -> None:
        n = self.session.unsaved
        self.query_one("#unsaved-text", Static).update(
            line(
                (f"{n} decision{'s are' if n != 1 else ' is'} not saved", "bold $text-error"),
                f" — the disk refused them: {self.error}\n",
                (outcome + "\n" if outcome else "", "$text-warning"),
                *self.choices(),
            )
        )

    @classmethod
    def choices(cls) -> list[str | tuple[str, str]]:
        """ "r retry   w write them to another folder   …": the keys as their bindings say them."""
        out: list[str | tuple[str, str]] = []
        for key, what in keys(declared(cls)):
            out += ["   " if out else "", (key, "bold"), f" {what}"]
        return out

    def action_retry(self) -> None:
        self.session.retry()
        if not self.session.unsaved:
            self.dismiss(True)
        else:
            self.say("still refused")

    def action_elsewhere(self) -> None:
        """Ask for the folder (the box is mounted only now: until then r, w and d are keys)."""
        if self.query(Input):
            return
        box = Input(
            str(Path.cwd() / "triage-unsaved"), placeholder="a folder, then enter", id="unsaved-folder"
        )
        self.query_one("#unsaved-box").mount(box)
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.say("type the folder to write them to")
            return
        n = self.session.unsaved
        try:
            path = self.session.write_elsewhere(Path(event.value.strip()).expanduser())
        except OSError as e:
            self.say(f"that folder refused them too: {e}")
            return
        self.farewell = visible(
            f"triage: {n} decision{'s' if n != 1 else ''} written to {path}; move that file into the "
            "amendments folder to apply them",
            newlines=False,
        )
        self.dismiss(True)

    def action_discard(self) -> None:
        self.session.discard_unsaved()
        self.dismiss(True)

    def action_stay(self) -> None:
        self.dismiss(False)
