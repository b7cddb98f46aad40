"""The label state a number was computed on: the frozen file plus the amendments in force.

Named "frozen <sha12> + N amendments (head <sha12>)", where N counts the amendment records merged
(adds and retracts, saved or held in memory) and head is a hash over their ids in merge order.
A state is a value: a new record gives a new state (`with_saved`, `with_unsaved`), never a change.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

from triage.core.frozen import FrozenLabels
from triage.labels.log import Log
from triage.labels.records import ADD, RETRACT, Record


class LabelMode(StrEnum):
    AMENDED = "amended"  # frozen + the amendments in force
    FROZEN = "frozen"  # the frozen file alone; amendments are read and counted, not applied


@dataclass(frozen=True)
class LabelState:
    frozen: FrozenLabels
    log: Log  # as read from disk: its problems, stale files; `saved` grows past its records
    mode: LabelMode = LabelMode.AMENDED
    saved: tuple[Record, ...] = ()  # every record on disk, in merge order
    unsaved: tuple[Record, ...] = field(default=())  # applied, but the disk refused them (yet)

    @staticmethod
    def read(frozen: FrozenLabels, log: Log, mode: LabelMode = LabelMode.AMENDED) -> LabelState:
        return LabelState(frozen, log, mode, tuple(log.records))

    @property
    def amended(self) -> bool:
        return self.mode is LabelMode.AMENDED

    @property
    def records(self) -> tuple[Record, ...]:
        return self.saved + self.unsaved

    def with_saved(self, record: Record) -> LabelState:
        """This state and one more record, written."""
        return replace(self, saved=self.saved + (record,))

    def with_unsaved(self, record: Record) -> LabelState:
        """This state and one more record, applied but held in memory."""
        return replace(self, unsaved=self.unsaved + (record,))

    def with_unsaved_written(self, written: list[Record]) -> LabelState:
        """The first len(written) unsaved records, now on disk as `written`."""
        return replace(self, saved=self.saved + tuple(written), unsaved=self.unsaved[len(written) :])

    def without_unsaved(self) -> LabelState:
        """This state with the records held in memory dropped (the reviewer discarded them)."""
        return replace(self, unsaved=())

    @cached_property
    def in_force(self) -> tuple[Record, ...]:
        """Adds not retracted, in merge order (none in frozen mode); for one pair the latest add
        sets the grade."""
        if not self.amended:
            return ()
        retracted = {r.retracts for r in self.records if r.op == RETRACT}
        return tuple(r for r in self.records if r.op == ADD and r.id not in retracted)

    @cached_property
    def _frozen_pairs(self) -> frozenset[tuple[str, str]]:
        t = self.frozen.table
        return frozenset(zip(t.column("query_id").to_pylist(), t.column("chunk_id").to_pylist(), strict=True))

    @cached_property
    def added(self) -> dict[tuple[str, str], Record]:
        """(query, chunk) → the add in force, for pairs the frozen file does not already hold."""
        out: dict[tuple[str, str], Record] = {}
        for r in self.in_force:
            if (r.query_id, r.chunk_id) not in self._frozen_pairs:
                out[(r.query_id, r.chunk_id)] = r
        return out

    def gold_table(self) -> pa.Table:
        """The effective gold: (query_id, chunk_id, relevance ≥ 1), one row per pair."""
        added = self.added
        if not added:
            return self.frozen.table
        extra = pa.table(
            {
                "query_id": pa.array([q for q, _ in added], pa.string()),
                "chunk_id": pa.array([c for _, c in added], pa.string()),
                "relevance": pa.array([r.relevance for r in added.values()], pa.int64()),
            }
        )
        return pa.concat_tables([self.frozen.table, extra.cast(self.frozen.table.schema)])

    def gold_for(self, query_id: str) -> list[tuple[str, int]]:
        """One query's effective gold: (chunk id, grade)."""
        t = self.frozen.table
        rows = t.filter(pc.equal(t.column("query_id"), query_id))
        out = dict(
            zip(rows.column("chunk_id").to_pylist(), rows.column("relevance").to_pylist(), strict=True)
        )
        for (q, c), r in self.added.items():
            if q == query_id:
                out[c] = r.relevance
        return list(out.items())

    @cached_property
    def head(self) -> str | None:
        """sha256 over the merged record ids in order; None without records."""
        if not self.records:
            return None
        h = hashlib.sha256()
        for r in self.records:
            h.update(r.id.encode() + b"\n")
        return h.hexdigest()

    @property
    def version(self) -> str:
        """Names this state among all states of one session: cached numbers are keyed by it."""
        return f"{self.mode}:{self.head or 'frozen'}:{len(self.unsaved)}"

    def describe(self) -> str:
        text = f"frozen {self.frozen.sha256[:12]} + {len(self.records)} amendments"
        if self.head:
            text += f" (head {self.head[:12]})"
        if not self.amended and self.records:
            text += ", not applied (label state: frozen)"
        return text

    def by_arm(self) -> dict[str, int]:
        """Adds in force counted by the arm whose results they were taken from ("none": no evidence)."""
        counts = Counter(str((r.evidence or {}).get("arm") or "none") for r in self.in_force)
        return {k: counts.get(k, 0) for k in ("a", "b", "none")}
