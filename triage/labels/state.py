"""The label state a number was computed on: the frozen file plus the amendments in force.

Named "frozen <sha12> + N amendments (head <sha12>)", where N counts the amendment records merged
(adds and retracts) and head is a hash over their ids in merge order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

from triage.labels.amendments import ADD, RETRACT, Log, Record
from triage.labels.frozen import FrozenLabels


@dataclass
class LabelState:
    frozen: FrozenLabels
    log: Log
    amended: bool = True  # False: `--label-state frozen`, the amendments are read but not applied
    pending: list[Record] = field(default_factory=list)  # kept in memory: the disk refused them

    @property
    def records(self) -> list[Record]:
        return self.log.records + self.pending

    def adds_in_force(self) -> list[Record]:
        """Adds not retracted, in merge order; for one pair the latest add sets the grade."""
        if not self.amended:
            return []
        retracted = {r.retracts for r in self.records if r.op == RETRACT}
        return [r for r in self.records if r.op == ADD and r.id not in retracted]

    def added_pairs(self) -> dict[tuple[str, str], Record]:
        """(query, chunk) → the add in force, for pairs the frozen file does not already hold."""
        frozen = self.frozen_pairs()
        out: dict[tuple[str, str], Record] = {}
        for r in self.adds_in_force():
            if (r.query_id, r.chunk_id) not in frozen:
                out[(r.query_id, r.chunk_id)] = r
        return out

    @cached_property
    def _frozen_pairs(self) -> frozenset[tuple[str, str]]:
        t = self.frozen.table
        return frozenset(zip(t.column("query_id").to_pylist(), t.column("chunk_id").to_pylist(), strict=True))

    def frozen_pairs(self) -> frozenset[tuple[str, str]]:
        return self._frozen_pairs

    def effective_table(self) -> pa.Table:
        added = self.added_pairs()
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

    def pairs_for(self, query_id: str) -> list[tuple[str, int]]:
        """One query's effective gold: (chunk id, grade)."""
        t = self.frozen.table
        rows = t.filter(pc.equal(t.column("query_id"), query_id))
        out = dict(
            zip(rows.column("chunk_id").to_pylist(), rows.column("relevance").to_pylist(), strict=True)
        )
        for (q, c), r in self.added_pairs().items():
            if q == query_id:
                out[c] = r.relevance
        return list(out.items())

    def head(self) -> str | None:
        import hashlib

        if not self.records:
            return None
        h = hashlib.sha256()
        for r in self.records:
            h.update(r.id.encode() + b"\n")
        return h.hexdigest()

    def describe(self) -> str:
        text = f"frozen {self.frozen.sha256[:12]} + {len(self.records)} amendments"
        head = self.head()
        if head:
            text += f" (head {head[:12]})"
        if not self.amended and self.records:
            text += ", not applied (label state: frozen)"
        return text

    def by_arm(self) -> dict[str, int]:
        """Adds in force counted by the arm whose results they were taken from ("none": no evidence)."""
        counts = Counter(str((r.evidence or {}).get("arm") or "none") for r in self.adds_in_force())
        return {k: counts.get(k, 0) for k in ("a", "b", "none")}
