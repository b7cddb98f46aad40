"""The label state a number was computed on: the frozen file plus the amendments in force.

Named "frozen <sha12> + N amendments (head <sha12>)", where N counts the amendment records merged
(adds and retracts, saved or held in memory) and head is a hash over their ids in merge order.
A state is a value: a new record gives a new state (`with_saved`, `with_unsaved`), never a change.
Verdict records travel with it (`saved` and `unsaved` keep every record in the order written, so
a refused verdict is retried in its place), but nothing here reads them: `records`, the version,
the head and every label are the judgements' alone.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from itertools import chain
from operator import attrgetter

import pyarrow as pa
import pyarrow.compute as pc

from triage.core.inputs.frozen import FrozenLabels
from triage.labels.log import Log
from triage.labels.records import ADD, JUDGEMENT_OPS, RETRACT, VERDICT, Record
from triage.labels.verdicts import Verdicts


@dataclass(frozen=True)
class Split:
    """Two or more reviewers whose latest unsettled judgements in force on one pair give different
    grades; settled by a later judgement naming them (`resolves`)."""

    query_id: str
    chunk_id: str
    judgements: tuple[Record, ...]

    @property
    def grades(self) -> dict[str, int]:
        return {r.reviewer: r.relevance for r in self.judgements}


class Conflict(Split):
    """Reviewers disagree on whether the pair answers the query: one relevant (grade ≥ 1), another
    not relevant (0). Until resolved the pair keeps its frozen state (unjudged)."""


class GradeDifference(Split):
    """Reviewers agree the pair is relevant and differ only in grade (1 against 2, …): the pair is
    gold in force at the lowest grade given (`GRADE_RULE`), and the difference is listed, not a
    conflict."""


GRADE_RULE = "the lowest grade any agreeing reviewer gave"
_ID = attrgetter("id")


Pair = tuple[str, str]


@dataclass
class _Index:
    """The judgements in force, by pair, and what decides each pair (see `LabelState.decided`).

    Per pair the frozen file leaves unjudged: the judgements in force are grouped by reviewer,
    each reviewer's latest counting; a judgement naming others in `resolves` settles them. When
    the reviewers' latest unsettled grades agree, the latest decides; when they differ, the pair
    is a conflict only when one says relevant (≥ 1) and another not relevant (0): until a judgement
    resolves it the pair keeps its frozen state (unjudged), a rule that favours neither arm. When
    all say relevant and differ in grade, the lowest grade decides (of those, the latest record),
    and the pair is listed in `differences`."""

    by_pair: dict[Pair, list[Record]]  # adds in force on the pairs the frozen file leaves unjudged, in order
    decided: dict[Pair, Record]
    conflicts: dict[Pair, Conflict]
    differences: dict[Pair, GradeDifference] = field(default_factory=dict)
    retracted: set[str] = field(default_factory=set)  # the ids retracts name
    by_query: dict[str, dict[str, Record]] = field(default_factory=dict)  # `decided`, query → chunk → record
    in_force: tuple[Record, ...] | None = None  # adds not retracted, in merge order (None: not listed yet)

    def settle(self, pair: Pair) -> None:
        """Decide `pair` again from its judgements in force (`by_query[pair[0]]` is this index's own)."""
        self.decided.pop(pair, None)
        self.conflicts.pop(pair, None)
        self.differences.pop(pair, None)
        chunks = self.by_query.setdefault(pair[0], {})
        chunks.pop(pair[1], None)
        records = self.by_pair.get(pair, [])
        settled = {i for r in records for i in (r.resolves or ())}
        latest: dict[str, Record] = {}
        for r in records:
            if r.id not in settled:
                latest[r.reviewer] = r
        if not latest:
            return
        judgements = tuple(latest.values())
        if len({r.relevance >= 1 for r in judgements}) > 1:
            self.conflicts[pair] = Conflict(pair[0], pair[1], judgements)
            return
        if len({r.relevance for r in judgements}) > 1:
            self.differences[pair] = GradeDifference(pair[0], pair[1], judgements)
        order = {r.id: i for i, r in enumerate(records)}
        chunks[pair[1]] = self.decided[pair] = min(judgements, key=lambda r: (r.relevance, -order[r.id]))

    def _copy(self) -> _Index:
        """A copy to change: its dicts are its own (a query's chunks are copied when it settles one)."""
        return _Index(
            dict(self.by_pair),
            dict(self.decided),
            dict(self.conflicts),
            dict(self.differences),
            set(self.retracted),
            dict(self.by_query),
            self.in_force,
        )

    def _settled(self, pairs: set[Pair]) -> _Index:
        for query_id in {q for q, _ in pairs}:
            self.by_query[query_id] = dict(self.by_query.get(query_id, {}))
        for pair in pairs:
            self.settle(pair)
        return self

    def plus(self, record: Record, frozen_pairs: frozenset[Pair]) -> _Index:
        """A new index with `record` applied after every record applied so far (this one is left as
        it is)."""
        out = self._copy()
        if record.op == ADD:
            if record.id in self.retracted:
                return out
            if self.in_force is not None:
                out.in_force = (*self.in_force, record)
            pair = (record.query_id, record.chunk_id)
            if pair in frozen_pairs:
                return out
            now = [r for r in self.by_pair.get(pair, []) if r.id != record.id] + [record]
        else:
            out.retracted.add(record.retracts or "")
            if self.in_force is not None:
                out.in_force = tuple(r for r in self.in_force if r.id != record.retracts)
            gone = self._find(record)
            if gone is None:
                return out
            pair = (gone.query_id, gone.chunk_id)
            now = [r for r in self.by_pair[pair] if r.id != gone.id]
        if now:
            out.by_pair[pair] = now
        else:
            out.by_pair.pop(pair, None)
        return out._settled({pair})

    def inserted(self, records: tuple[Record, ...], frozen_pairs: frozenset[Pair]) -> _Index:
        """A new index with `records` applied, each at its place in merge order (file name, then
        byte offset: the order of a log read whole); this one is left as it is. Every record
        applied so far was read from a file."""
        out = self._copy()
        touched: set[Pair] = set()
        came: list[Record] = []  # adds in force now, placed into `in_force`
        went: list[Record] = []  # adds in force before, retracted now
        known = True  # every retracted add was found: `in_force` is spliced, not listed again
        for record in records:
            if record.op == ADD:
                if record.id in out.retracted:
                    continue
                came.append(record)
                pair = (record.query_id, record.chunk_id)
                if pair in frozen_pairs:
                    continue
                now = sorted([*out.by_pair.get(pair, []), record], key=_place)
            elif record.op == RETRACT:
                out.retracted.add(record.retracts or "")
                gone = out._find(record)
                if gone is None:  # an add of a pair the frozen file judges, or none in force
                    known = False
                    continue
                if any(r is gone for r in came):  # added and retracted in one look
                    came.remove(gone)
                else:
                    went.append(gone)
                pair = (gone.query_id, gone.chunk_id)
                now = [r for r in out.by_pair[pair] if r.id != gone.id]
            else:
                continue
            if now:
                out.by_pair[pair] = now
            else:
                del out.by_pair[pair]
            touched.add(pair)
        out.in_force = spliced(self.in_force, came, went) if known and self.in_force is not None else None
        return out._settled(touched)

    def _find(self, retract: Record) -> Record | None:
        """The add in force (on a pair the frozen file leaves unjudged) that `retract` names."""
        named = self.by_pair.get((retract.query_id, retract.chunk_id), [])
        found = next((r for r in named if r.id == retract.retracts), None)
        if found is None:  # a retract names its add's pair; another record could name another
            found = next((r for rs in self.by_pair.values() for r in rs if r.id == retract.retracts), None)
        return found


def _place(record: Record) -> tuple[str, int]:
    """Where a record stands in merge order: its file's name, then its byte offset there."""
    return record.file, record.file_offset


def spliced(records: tuple[Record, ...], came: list[Record], went: list[Record]) -> tuple[Record, ...] | None:
    """`records` (read from files, in merge order) with `came` placed and `went` taken out, found by
    bisection on their places; None when one of `went` is not at its place."""
    cuts: list[tuple[int, int, tuple[str, int], Record]] = []  # (where, 0: insert | 1: skip, ...)
    for r in went:
        at = bisect_left(records, _place(r), key=_place)
        if at == len(records) or records[at] is not r:
            return None
        cuts.append((at, 1, _place(r), r))
    cuts += [(bisect_right(records, _place(r), key=_place), 0, _place(r), r) for r in came]
    parts, at = [], 0
    for where, skip, _, r in sorted(cuts, key=lambda cut: cut[:3]):
        parts += [records[at:where], () if skip else (r,)]
        at = where + skip
    parts.append(records[at:])
    return tuple(chain.from_iterable(parts))


class LabelMode(StrEnum):
    AMENDED = "amended"  # frozen + the amendments in force
    FROZEN = "frozen"  # the frozen file alone; amendments are read and counted, not applied


@dataclass(frozen=True, repr=False)  # it holds every record: a repr counts them
class LabelState:
    frozen: FrozenLabels
    log: Log  # as read from disk: its problems, stale files; `saved` grows past its records
    mode: LabelMode = LabelMode.AMENDED
    saved: tuple[Record, ...] = ()  # every record on disk (judgements and verdicts), in merge order
    unsaved: tuple[Record, ...] = field(default=())  # applied, but the disk refused them (yet)

    def __repr__(self) -> str:
        return f"LabelState({self.mode}, {len(self.saved)} saved, {len(self.unsaved)} unsaved)"

    @staticmethod
    def read(frozen: FrozenLabels, log: Log, mode: LabelMode = LabelMode.AMENDED) -> LabelState:
        return LabelState(frozen, log, mode, tuple(log.records))

    @property
    def amended(self) -> bool:
        return self.mode is LabelMode.AMENDED

    @cached_property
    def records(self) -> tuple[Record, ...]:
        """The judgements (adds and retracts), saved then unsaved: what the labels are made of."""
        return tuple(r for r in self.saved + self.unsaved if r.op in JUDGEMENT_OPS)

    @property
    def every_record(self) -> tuple[Record, ...]:
        """Every record, judgements and verdicts, saved then unsaved (what `labels log` lists)."""
        return self.saved + self.unsaved

    @cached_property
    def verdicts(self) -> Verdicts:
        """Every reviewer's latest verdict per query (read from the verdict records; no label)."""
        saved = (r.as_verdict() for r in self.saved)
        unsaved = (r.as_verdict(saved=False) for r in self.unsaved)
        return Verdicts.latest(v for v in (*saved, *unsaved) if v is not None)

    @cached_property
    def n_unsaved_judgements(self) -> int:
        return sum(1 for r in self.unsaved if r.op in JUDGEMENT_OPS)

    def with_saved(self, record: Record) -> LabelState:
        """This state and one more record, written."""
        return self._grown(replace(self, saved=self.saved + (record,)), record)

    def with_unsaved(self, record: Record) -> LabelState:
        """This state and one more record, applied but held in memory."""
        return self._grown(replace(self, unsaved=self.unsaved + (record,)), record)

    def with_log(self, log: Log) -> LabelState:
        """The state of `log` (saved: its records), in this state's mode, nothing held in memory.
        When `log` only adds records to this state's log (`Log.adds_to`) and this state holds that
        log's records alone, its index is carried over with the added ones applied in their places:
        the cost is the records added, not every record again."""
        fresh = LabelState(self.frozen, log, self.mode, log.records)
        if self.saved is not self.log.records or self.unsaved or not log.adds_to(self.log):
            return fresh
        index, records = self.__dict__.get("_index"), self.__dict__.get("records")
        if index is not None and self.amended:
            fresh.__dict__["_index"] = index.inserted(log.added, self._frozen_pairs)
        if records is not None:
            judgements = [r for r in log.added if r.op in JUDGEMENT_OPS]
            fresh.__dict__["records"] = spliced(records, judgements, []) or fresh.records
        return fresh

    def _grown(self, new: LabelState, record: Record) -> LabelState:
        """`new` (this state plus `record`) with its index derived from this one's when that is
        built: a decision then costs the pair it touches, not every record again."""
        index = self.__dict__.get("_index")
        if index is not None:
            new.__dict__["_index"] = index if record.op == VERDICT else index.plus(record, self._frozen_pairs)
        return new

    def with_unsaved_written(self, written: list[Record]) -> LabelState:
        """The first len(written) unsaved records, now on disk as `written`."""
        return replace(self, saved=self.saved + tuple(written), unsaved=self.unsaved[len(written) :])

    def without_unsaved(self) -> LabelState:
        """This state with the records held in memory dropped (the reviewer discarded them)."""
        return replace(self, unsaved=())

    @cached_property
    def _index(self) -> _Index:
        if not self.amended:
            return _Index({}, {}, {}, in_force=())
        retracted = {r.retracts or "" for r in self.records if r.op == RETRACT}
        in_force = tuple(r for r in self.records if r.op == ADD and r.id not in retracted)
        by_pair: dict[tuple[str, str], list[Record]] = {}
        for r in in_force:
            pair = (r.query_id, r.chunk_id)
            if pair not in self._frozen_pairs:
                by_pair.setdefault(pair, []).append(r)
        index = _Index(by_pair, {}, {}, retracted=retracted, in_force=in_force)
        for pair in by_pair:
            index.settle(pair)
        return index

    @property
    def in_force(self) -> tuple[Record, ...]:
        """Adds not retracted, in merge order (none in frozen mode); for one pair the latest add
        sets the grade."""
        index = self._index
        if index.in_force is None:  # records were inserted (`with_log`): listed once, when asked
            index.in_force = tuple(r for r in self.records if r.op == ADD and r.id not in index.retracted)
        return index.in_force

    @property
    def _frozen_pairs(self) -> frozenset[tuple[str, str]]:
        """Every pair the frozen file judges, gold or not: amendments never change those."""
        return self.frozen.judged_pairs

    @property
    def _judged(self) -> tuple[dict[tuple[str, str], Record], dict[tuple[str, str], Conflict]]:
        return self._index.decided, self._index.conflicts

    @property
    def decided(self) -> dict[tuple[str, str], Record]:
        """(query, chunk) → the judgement in force that decides it (any grade; 0: not relevant)."""
        return self._judged[0]

    @property
    def conflicts(self) -> list[Conflict]:
        """Pairs one reviewer judges relevant and another not relevant, unresolved; by pair."""
        return [c for _, c in sorted(self._judged[1].items())]  # the pairs compared, in C

    @property
    def grade_differences(self) -> list[GradeDifference]:
        """Pairs every reviewer judges relevant, at different grades: gold at the lowest grade; by
        pair."""
        return [d for _, d in sorted(self._index.differences.items())]

    @cached_property
    def added(self) -> dict[tuple[str, str], Record]:
        """(query, chunk) → the judgement that makes it gold, for pairs the frozen file leaves
        unjudged."""
        return {pair: r for pair, r in self.decided.items() if r.relevance >= 1}

    @cached_property
    def not_relevant(self) -> dict[tuple[str, str], Record]:
        """(query, chunk) → the judgement that says it does not answer the query."""
        return {pair: r for pair, r in self.decided.items() if r.relevance == 0}

    def gold_table(self) -> pa.Table:
        """The effective gold: (query_id, chunk_id, relevance ≥ 1), one row per pair."""
        return self._with(self.frozen.table, self.added)

    def judged_table(self) -> pa.Table:
        """Every judged pair in force, gold or not: (query_id, chunk_id, relevance ≥ 0)."""
        return self._with(self.frozen.judgements, self.decided)

    @staticmethod
    def _with(base: pa.Table, extra: dict[tuple[str, str], Record]) -> pa.Table:
        if not extra:
            return base
        rows = pa.table(
            {
                "query_id": pa.array([q for q, _ in extra], pa.string()),
                "chunk_id": pa.array([c for _, c in extra], pa.string()),
                "relevance": pa.array([r.relevance for r in extra.values()], pa.int64()),
            }
        )
        return pa.concat_tables([base, rows.cast(base.schema)])

    def _frozen_for(self, table: pa.Table, query_id: str) -> dict[str, int]:
        rows = table.filter(pc.equal(table.column("query_id"), query_id))
        return dict(
            zip(rows.column("chunk_id").to_pylist(), rows.column("relevance").to_pylist(), strict=True)
        )

    def decided_for(self, query_id: str) -> dict[str, Record]:
        """`decided` for one query: chunk id → the judgement that decides it (a look-up)."""
        return self._index.by_query.get(query_id, {})

    def gold_for(self, query_id: str) -> list[tuple[str, int]]:
        """One query's effective gold: (chunk id, grade ≥ 1)."""
        out = self._frozen_for(self.frozen.table, query_id)
        out.update({c: r.relevance for c, r in self.decided_for(query_id).items() if r.relevance >= 1})
        return list(out.items())

    def judged_for(self, query_id: str) -> dict[str, int]:
        """One query's judged chunks in force: chunk id → grade (0: judged not relevant)."""
        out = self._frozen_for(self.frozen.judgements, query_id)
        out.update({c: r.relevance for c, r in self.decided_for(query_id).items()})
        return out

    def reviewers(self) -> dict[str, int]:
        """Reviewer → judgements in force."""
        return dict(Counter(r.reviewer for r in self.in_force))

    @cached_property
    def head(self) -> str | None:
        """sha256 over the merged record ids in order; None without records."""
        if not self.records:
            return None
        return hashlib.sha256(("\n".join(map(_ID, self.records)) + "\n").encode()).hexdigest()

    @property
    def version(self) -> str:
        """Names this state among all states of one session: cached numbers are keyed by it."""
        return f"{self.mode}:{self.head or 'frozen'}:{self.n_unsaved_judgements}"

    def describe(self) -> str:
        text = f"frozen {self.frozen.sha256[:12]} + {len(self.records)} amendments"
        if self.head:
            text += f" (head {self.head[:12]})"
        if not self.amended and self.records:
            text += ", not applied (label state: frozen)"
        return text

    def by_arm(self) -> dict[str, int]:
        """Gold additions in force counted by the arm whose results they were taken from ("none": no
        evidence). Judgements of not relevant add no gold, so they cannot favour an arm."""
        counts = Counter(str((r.evidence or {}).get("arm") or "none") for r in self.added.values())
        return {k: counts.get(k, 0) for k in ("a", "b", "none")}
