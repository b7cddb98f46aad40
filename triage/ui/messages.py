"""Messages workers post to the app (thread workers never touch widgets)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from triage.core.checks import Check
from triage.core.corpus import Corpus
from triage.workspace.session import Session


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
