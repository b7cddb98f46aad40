"""A review session: a reviewer's amendments written to disk and reflected in the numbers at once.

Every decision is one record (DESIGN §6). `g` is an add; a grade pressed next is a retract of that
add plus an add with the grade; `u` retracts the reviewer's last add in force. When the disk
refuses a write, the record stays in memory (applied, marked unsaved) and `retry` writes it later.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from triage.core.evaluation import Evaluation
from triage.core.paired import OUTCOME_NAMES
from triage.labels.amendments import (
    ADD,
    RETRACT,
    FrozenFileChanged,
    Record,
    Writer,
    default_folder,
    reviewer_name,
)


@dataclass(frozen=True)
class Change:
    """What one decision did: the query's outcome before and after, in words."""

    query_id: str
    before: str
    after: str
    saved: bool
    error: str = ""
    action: str = ""  # "amendment undone", "graded 3", … ("" for an add)

    @property
    def message(self) -> str:
        if self.before == "hit→miss" and self.after != "hit→miss":
            what = f"regression resolved by amendment (now {self.after})"
        elif self.before == "miss→hit" and self.after != "miss→hit":
            what = f"win no longer a flip (now {self.after})"
        elif self.before != self.after:
            what = f"{self.before} → {self.after}"
        else:
            what = f"outcome unchanged ({self.after})"
        action = f"{self.action}; " if self.action else ""
        return f"{self.query_id}: {action}{what}" + ("" if self.saved else f" — NOT SAVED: {self.error}")


class Review:
    def __init__(self, ev: Evaluation, reviewer: str | None = None) -> None:
        self.ev = ev
        spec, frozen = ev.spec, ev.labels.frozen
        self.writer = Writer(
            spec.amendments or default_folder(spec.labels),
            frozen.path,
            frozen.sha256,
            reviewer_name(reviewer),
        )
        self.last_add: Record | None = None  # the add a grade key refers to

    @property
    def reviewer(self) -> str:
        return self.writer.reviewer

    @property
    def unsaved(self) -> list[Record]:
        return self.ev.labels.pending

    def _record(self, record: Record) -> tuple[Record, bool, str]:
        """Write `record` (or keep it in memory) and apply it to the label state."""
        labels = self.ev.labels
        if labels.pending:  # keep the chain in order: earlier unsaved records go first
            self.retry()
        if labels.pending:
            labels.pending.append(record)
            return record, False, "earlier amendments are still unsaved"
        try:
            done = self.writer.append(record)
        except (OSError, FrozenFileChanged) as e:
            labels.pending.append(record)
            return record, False, str(e)
        labels.log.records.append(done)
        return done, True, ""

    def _apply(self, query_id: str, record: Record) -> Change:
        q = self.ev.query_index(query_id)
        before = OUTCOME_NAMES[int(self.ev.outcomes()[q])] if q >= 0 else "unknown query"
        done, saved, error = self._record(record)
        if q >= 0:
            self.ev.regold(q)
        after = OUTCOME_NAMES[int(self.ev.outcomes()[q])] if q >= 0 else "unknown query"
        self.ev.refresh_label_checks()
        if record.op == ADD:
            self.last_add = done
        return Change(query_id, before, after, saved, error)

    def add(
        self,
        query_id: str,
        chunk_id: str,
        relevance: int = 1,
        note: str = "",
        evidence: dict[str, object] | None = None,
    ) -> Change:
        return self._apply(
            query_id, self.writer.new_record(ADD, query_id, chunk_id, relevance, note, evidence=evidence)
        )

    def regrade(self, relevance: int) -> Change | None:
        """The grade for the add just made: retract it, add again with `relevance`."""
        last = self.last_add
        if last is None or last.relevance == relevance:
            return None
        first = self._apply(
            last.query_id,
            self.writer.new_record(
                RETRACT,
                last.query_id,
                last.chunk_id,
                last.relevance,
                note=f"regraded to {relevance}",
                retracts=last.id,
            ),
        )
        second = self.add(last.query_id, last.chunk_id, relevance, last.note, last.evidence)
        return Change(
            last.query_id,
            first.before,
            second.after,
            first.saved and second.saved,
            first.error or second.error,
            f"graded {relevance}",
        )

    def undo(self) -> Change | None:
        """Retract this reviewer's last add still in force (nothing is deleted)."""
        mine = [r for r in self.ev.labels.adds_in_force() if r.reviewer == self.reviewer]
        if not mine:
            return None
        last = mine[-1]
        self.last_add = None
        change = self._apply(
            last.query_id,
            self.writer.new_record(
                RETRACT, last.query_id, last.chunk_id, last.relevance, note="undo", retracts=last.id
            ),
        )
        return replace(change, action=f"amendment undone ({last.chunk_id})")

    def retry(self) -> int:
        """Write the records kept in memory, in order; returns how many were written."""
        labels = self.ev.labels
        written = 0
        while labels.pending:
            try:
                done = self.writer.append(labels.pending[0])
            except (OSError, FrozenFileChanged):
                break
            labels.pending.pop(0)
            labels.log.records.append(done)
            written += 1
        return written
