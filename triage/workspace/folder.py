"""The review folder as an open session last read it (`Session.look`): its label state, read on from
look to look (`read_log(..., since=)`), and the records it gained since each of the last states read,
so that a look compares the few records gained with its snapshot's, not every record."""

from __future__ import annotations

from operator import attrgetter

from triage.labels.log import read_log
from triage.labels.records import Record
from triage.labels.state import LabelState

KEEP = 8  # states remembered: a look's snapshot was built on one of the last few
_ID = attrgetter("id")


class Folder:
    """The folder's label state (its records alone, nothing held in memory), read on by `read`."""

    def __init__(self, labels: LabelState) -> None:
        self.labels = labels
        self._gained: list[Record] = []  # the records it gained, in the order read
        self._marks: list[tuple[tuple[Record, ...], int]] = [(labels.saved, 0)]  # a state's, len(_gained)

    def read(self) -> bool:
        """Read on from the last look (only what was appended since); whether anything changed."""
        old = self.labels
        log = read_log(old.log.folder, old.frozen.sha256, old.log.apply_stale, since=old.log)
        if log is old.log:
            return False
        self.labels = old.with_log(log)
        if log.adds_to(old.log):
            self._gained += log.added
        else:  # a record went or moved: the next look compares record by record
            self._gained, self._marks = [], []
        marks = [*self._marks, (self.labels.saved, len(self._gained))][-KEEP:]
        first = marks[0][1]
        self._gained = self._gained[first:]
        self._marks = [(saved, at - first) for saved, at in marks]
        return True

    def changes(self, saved: tuple[Record, ...]) -> tuple[list[Record], list[Record]]:
        """The records the folder holds that `saved` (a snapshot's) does not, and those of `saved`
        it does not hold. When `saved` is a state read here and the snapshot's own records since,
        only the records gained since then and its own are looked at."""
        log = self.labels.log
        for state, at in reversed(self._marks):
            if saved is state or saved[: len(state)] == state:
                own = saved[len(state) :]
                mine = set(map(_ID, own))
                return [r for r in self._gained[at:] if r.id not in mine], [
                    r for r in own if not log.holds(r.id)
                ]
        known, held = set(map(_ID, saved)), set(map(_ID, self.labels.saved))
        return [r for r in self.labels.saved if r.id not in known], [r for r in saved if r.id not in held]
