"""Messages to the app: from thread workers (which never touch widgets), and from screens that
ask the app to act (screens never call into the app)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from triage.core.checks.model import Check
from triage.core.inputs.corpus import Corpus
from triage.core.text.sanitize import visible
from triage.ui.literal import line
from triage.workspace.review import Change
from triage.workspace.session import Session, Synced


@dataclass
class SessionReady(Message):
    session: Session


@dataclass
class LoadFailed(Message):
    message: str  # names the file, the row or line, and the problem


@dataclass
class CorpusReady(Message):
    corpus: Corpus | None
    note: str  # "" when ready, else why chunk text is unavailable


@dataclass
class CorpusProgress(Message):
    fraction: float


@dataclass
class CorpusChecked(Message):
    """The deferred corpus check finished: its checks."""

    checks: list[Check]


@dataclass
class Amended(Message):
    """A decision (add, grade, undo) swapped in a new snapshot: the app recomputes tenants and
    slices once the keys rest."""

    change: Change


@dataclass
class Looked(Message):
    """A look at the review folder (a thread worker) found other sessions' records and built the
    snapshot they give: the app swaps it in if the session is still where the look began."""

    session: Session
    found: Synced


@dataclass
class OpenQuery(Message):
    """Open query index `q`'s detail."""

    q: int


@dataclass
class DetailClosed(Message):
    """The detail screen was left while showing query index `q`: the list below points at it."""

    q: int


def announce(widget: Widget, change: Change, what: str) -> Content:
    """Tell the app a decision was made (`Amended`), raise a toast when the disk refused it, and
    give the status line saying what it changed: "<what>  q150: regression resolved …"."""
    widget.post_message(Amended(change))
    if not change.saved:  # the status line says it either way; a failure also raises a toast
        widget.notify(
            visible(change.message), title=f"{what}: NOT SAVED", severity="error", markup=False, timeout=30
        )
    return line((f"{what}  ", "bold $text-warning" if change.saved else "bold $text-error"), change.message)
