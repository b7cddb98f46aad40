"""A review session: a reviewer's decisions, each one record written at once, each giving the next
snapshot.

Every decision is one record (docs/labels.md "Label amendments"). `add` opens the grade window: a grade
given next (`regrade`) is a retract of that add plus an add with the grade; any other decision, or `close`,
shuts the window. `undo` retracts the reviewer's last add in force. When the disk refuses a write,
the record is applied and held in memory (unsaved); the next decision, or `retry`, writes it first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from triage.core.errors import InputError
from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import not_utf8
from triage.labels.log import default_folder
from triage.labels.records import ADD, RETRACT, VERDICT, Record, reviewer_name, reviewer_source
from triage.labels.state import LabelState
from triage.labels.verdicts import Cause
from triage.labels.writer import FrozenFileChanged, Writer
from triage.workspace.snapshot import Snapshot

QUEUED = "earlier decisions are still unsaved"  # a change held back behind unsaved ones, not refused


@dataclass(frozen=True)
class Change:
    """What one decision did to its query's outcome."""

    query_id: str
    before: Outcome | None  # None: a query no input knows
    after: Outcome | None
    saved: bool
    error: str = ""
    action: str = ""  # "amendment undone", "graded 3", "verdict other", … ("" for an add)
    verdict: bool = False  # a verdict: no label, no outcome moved

    @property
    def message(self) -> str:
        if self.verdict:
            what = f"{self.query_id}: {self.action} (no label or number changes)"
            return what + ("" if self.saved else f" — NOT SAVED: {self.error}")
        before, after = (o.label if o is not None else "unknown query" for o in (self.before, self.after))
        if self.before is Outcome.HIT_TO_MISS and self.after is not Outcome.HIT_TO_MISS:
            what = f"regression resolved by amendment (now {after})"
        elif self.before is Outcome.MISS_TO_HIT and self.after is not Outcome.MISS_TO_HIT:
            what = f"win no longer a flip (now {after})"
        elif self.before != self.after:
            what = f"{before} → {after}"
        else:
            what = f"outcome unchanged ({after})"
        action = f"{self.action}; " if self.action else ""
        return f"{self.query_id}: {action}{what}" + ("" if self.saved else f" — NOT SAVED: {self.error}")


def _outcome(snapshot: Snapshot, query_id: str) -> Outcome | None:
    q = snapshot.ev.query_index(query_id)
    return Outcome(int(snapshot.ev.outcomes[q])) if q >= 0 else None


def _next(snapshot: Snapshot, labels: LabelState, record: Record) -> Snapshot:
    """The snapshot of `labels`, which adds `record` to `snapshot`'s: a verdict judges nothing again."""
    if record.op == VERDICT:
        return snapshot.with_verdicts(labels)
    return snapshot.with_labels(labels, [record.query_id])


def storable(texts: Mapping[str, str | None], reviewer: str | None = None) -> None:
    """Refuse, before anything is read or written, text a record would hold that UTF-8 cannot: a byte
    that is not UTF-8, as an argument or the environment may carry. `texts`: each text by the option
    that gave it; `reviewer`: --reviewer (None: TRIAGE_REVIEWER, else the login name, is checked).
    An `InputError` names the option, the byte and its place."""
    name, source = reviewer_source(reviewer)
    for where, text in [*texts.items(), (source, name)]:
        problem = not_utf8(text) if text else None
        if problem is not None:
            raise InputError(where, f"{problem}; records hold UTF-8 text, nothing was written")


class Review:
    def __init__(self, snapshot: Snapshot, reviewer: str | None = None) -> None:
        spec, frozen = snapshot.spec, snapshot.labels.frozen
        self.writer = Writer(
            spec.amendments or default_folder(spec.labels),
            None if "labels" in snapshot.inputs.given else frozen.path,
            frozen.sha256,
            reviewer_name(reviewer),
            inputs=spec.inputs(),
            forbidden=spec.forbidden(),
        )
        self.last_add: Record | None = None  # the add a grade refers to: the grade window
        self._before_add: Outcome | None = None  # its query's outcome before that add

    @property
    def reviewer(self) -> str:
        return self.writer.reviewer

    @property
    def grade_window(self) -> bool:
        """Whether a grade given now applies to the add just made."""
        return self.last_add is not None

    def close(self) -> None:
        """Shut the grade window (the reader moved on)."""
        self.last_add = None

    def _record(self, snapshot: Snapshot, record: Record) -> tuple[Snapshot, Record, bool, str]:
        """Write `record` (or hold it in memory) and give the snapshot that applies it."""
        if snapshot.labels.unsaved:  # keep the chain in order: earlier unsaved records go first
            snapshot, _ = self.retry(snapshot)
        labels = snapshot.labels
        if labels.unsaved:
            return (
                _next(snapshot, labels.with_unsaved(record), record),
                record,
                False,
                QUEUED,
            )
        try:
            done = self.writer.append(record)
        except (OSError, FrozenFileChanged) as e:
            return _next(snapshot, labels.with_unsaved(record), record), record, False, str(e)
        return _next(snapshot, labels.with_saved(done), record), done, True, ""

    def _apply(self, snapshot: Snapshot, record: Record) -> tuple[Snapshot, Change]:
        before = _outcome(snapshot, record.query_id)
        after_snapshot, done, saved, error = self._record(snapshot, record)
        self.last_add = done if record.op == ADD else None
        self._before_add = before
        return after_snapshot, Change(
            record.query_id, before, _outcome(after_snapshot, record.query_id), saved, error
        )

    def add(
        self,
        snapshot: Snapshot,
        query_id: str,
        chunk_id: str,
        relevance: int = 1,
        note: str = "",
        evidence: dict[str, object] | None = None,
        resolves: tuple[str, ...] | None = None,
    ) -> tuple[Snapshot, Change]:
        """One judgement: `relevance` ≥ 1 is gold, 0 is judged not relevant; `resolves` names the
        conflicting judgements of the pair this one settles."""
        record = self.writer.new_record(
            ADD, query_id, chunk_id, relevance, note, evidence=evidence, resolves=resolves
        )
        return self._apply(snapshot, record)

    def verdict(
        self, snapshot: Snapshot, query_id: str, cause: Cause, note: str = ""
    ) -> tuple[Snapshot, Change]:
        """The reader's verdict on `query_id`: written like a judgement, read by no label; it
        replaces this reviewer's earlier verdict on the query, and shuts the grade window."""
        record = self.writer.new_verdict(query_id, cause, note)
        outcome = _outcome(snapshot, query_id)
        after, _, saved, error = self._record(snapshot, record)
        self.last_add = None
        return after, Change(query_id, outcome, outcome, saved, error, f"verdict {cause}", verdict=True)

    def regrade(self, snapshot: Snapshot, relevance: int) -> tuple[Snapshot, Change] | None:
        """The grade for the add just made: retract it, add again with `relevance`. None when the
        grade window is shut or the grade is the one given."""
        last, before = self.last_add, self._before_add
        if last is None or last.relevance == relevance:
            return None
        retract = self.writer.new_record(
            RETRACT,
            last.query_id,
            last.chunk_id,
            last.relevance,
            note=f"regraded to {relevance}",
            retracts=last.id,
        )
        snapshot, first = self._apply(snapshot, retract)
        snapshot, second = self.add(
            snapshot, last.query_id, last.chunk_id, relevance, last.note, last.evidence
        )
        self.last_add = None  # one grade per add
        return snapshot, Change(  # the gesture as a whole: from before the add to after the grade
            last.query_id,
            before,
            second.after,
            first.saved and second.saved,
            first.error or second.error,
            f"graded {relevance}",
        )

    def undo(self, snapshot: Snapshot) -> tuple[Snapshot, Change] | None:
        """Retract this reviewer's last add still in force (nothing is deleted); None if none."""
        mine = [r for r in snapshot.labels.in_force if r.reviewer == self.reviewer]
        if not mine:
            return None
        last = mine[-1]
        retract = self.writer.new_record(
            RETRACT, last.query_id, last.chunk_id, last.relevance, note="undo", retracts=last.id
        )
        snapshot, change = self._apply(snapshot, retract)
        return snapshot, replace(change, action=f"amendment undone ({last.chunk_id})")

    def write_elsewhere(self, snapshot: Snapshot, folder: Path) -> tuple[Snapshot, Path]:
        """Write the records held in memory, in order, to a new session file in `folder` (when the
        amendments folder refuses them); OSError if that folder refuses too."""
        elsewhere = Writer(
            folder,
            self.writer.frozen,
            self.writer.base,
            self.reviewer,
            inputs=snapshot.spec.inputs(),
            forbidden=self.writer.forbidden,
        )
        written = [elsewhere.append(r) for r in snapshot.labels.unsaved]
        return replace(snapshot, labels=snapshot.labels.with_unsaved_written(written)), elsewhere.path

    def discard(self, snapshot: Snapshot) -> Snapshot:
        """Drop the records held in memory; the queries they named are judged again without them."""
        names = [r.query_id for r in snapshot.labels.unsaved]
        self.last_add = None
        return snapshot.with_labels(snapshot.labels.without_unsaved(), names)

    def retry(self, snapshot: Snapshot) -> tuple[Snapshot, int]:
        """Write the records held in memory, in order; the snapshot that knows, and how many."""
        written: list[Record] = []
        for record in snapshot.labels.unsaved:
            try:
                written.append(self.writer.append(record))
            except (OSError, FrozenFileChanged):
                break
        if not written:
            return snapshot, 0
        return replace(snapshot, labels=snapshot.labels.with_unsaved_written(written)), len(written)
