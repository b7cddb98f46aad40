"""A screen of numbers: drawn by `fill`, drawn again when amendments have moved them."""

from __future__ import annotations

from textual import events
from textual.screen import Screen

from triage.labels.verdicts import Verdicts
from triage.report.build import report_of
from triage.report.model import Report
from triage.ui.table import VirtualTable
from triage.workspace.session import Session


def report(session: Session) -> Report:
    """The report of the session's current snapshot (`Session.results_of`, mapped), built once per
    version and corpus state."""
    chunks = session.corpus  # read once: the name says what the report was built with
    return session.cached(
        _name(chunks is not None), lambda snapshot: report_of(session.results_of(snapshot, chunks))
    )


def report_ready(session: Session) -> bool:
    """Whether `report(session)` is built already for the session as it is now."""
    return session.ready(_name(session.corpus is not None)) is not None


def _name(corpus: bool) -> str:
    return f"report:{corpus}"


NARROW = 100  # columns: a narrower screen of numbers leaves its least-needed columns out (it says which)


class LiveScreen(Screen):
    session: Session
    narrow = False  # narrower than NARROW (set on resize; each screen's `fill` reads it)
    width_drawn = 0  # the width of the last resize
    shown_version: str | None = None  # the session.version last drawn
    shown_verdicts: Verdicts | None = None  # the verdicts last drawn (a verdict keeps the version)

    def fill(self) -> None:
        raise NotImplementedError

    def draw(self) -> None:
        self.shown_version = self.session.version
        self.shown_verdicts = self.session.verdicts
        self.fill()

    def on_mount(self) -> None:
        self.draw()
        tables = self.query(VirtualTable)
        if tables:
            tables.first().focus()

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW
        # across NARROW; or, wide, at another width (a table keeps the wide-only columns that fit)
        if narrow != self.narrow or (not narrow and event.size.width != self.width_drawn):
            self.narrow = narrow
            self.width_drawn = event.size.width
            if self.is_mounted and self.shown_version is not None:
                self.refill()

    def refill(self) -> None:
        """Drawn again at a new width (across NARROW)."""
        self.fill()

    # -- a list's keys (`table.LIST_KEYS`), on the screen's first list wherever the focus is ---
    def action_move(self, step: int) -> None:
        self.query(VirtualTable).first().action_move(step)

    def action_page(self, direction: int) -> None:
        self.query(VirtualTable).first().action_page(direction)

    def action_jump(self, where: int) -> None:
        self.query(VirtualTable).first().action_jump(where)

    def action_select(self) -> None:
        self.query(VirtualTable).first().action_select()

    def on_screen_resume(self) -> None:
        if self.session.version != self.shown_version or self.session.verdicts is not self.shown_verdicts:
            self.draw()
