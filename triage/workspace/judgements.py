"""Judgements made outside the app (`triage labels judge | import | conflicts | agreement`): one
judgement, or a qrels / JSON Lines file of them, checked against the evaluation's ids and written
through a review's writer; and reviewers who disagree.

Each verb returns what it did as data (what was written where, what it changed, what the caller
should be told); the wording is the command line's (`cli.judge_cmd`). An id the evaluation does not
know refuses the whole request before anything is written (`InputError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.ids.codes import absent_from, positions_in
from triage.core.inputs.contract import LABELS, conform, single
from triage.core.inputs.shapes import read_table
from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import bytes_shown
from triage.labels.agreement import Agreement, reviewer_agreement
from triage.labels.records import ADD, MAX_INT, Record
from triage.labels.state import Conflict, LabelState
from triage.labels.writer import FrozenFileChanged
from triage.workspace.review import Change, Review
from triage.workspace.session import Session
from triage.workspace.snapshot import Snapshot, open_snapshot

MAX_GRADE = MAX_INT  # a grade is a whole number below this (the records' integer bound)


def absent_chunks(snapshot: Snapshot, chunk_ids: list[str]) -> set[str]:
    """The chunk ids the evaluation does not know: absent from the corpus when one is given, else
    absent from both arms' retrieved lists and from the frozen labels."""
    wanted = list(dict.fromkeys(chunk_ids))
    if not wanted:
        return set()
    corpus = snapshot.inputs.corpus
    if corpus is not None:
        return set(corpus.absent(wanted))
    left = pa.array(wanted, pa.string())
    inputs = snapshot.inputs
    for known in (
        inputs.a.retrieved.flatten(),
        inputs.b.retrieved.flatten(),
        single(inputs.frozen.judgements.column("chunk_id")),
    ):
        if len(left) == 0:
            break
        left = absent_from(left, known.cast(pa.string()))
    return set(left.to_pylist())


def absent_queries(snapshot: Snapshot, query_ids: list[str]) -> set[str]:
    """The query ids no input of the evaluation names (queries file, labels, either run)."""
    wanted = list(dict.fromkeys(query_ids))
    where = positions_in(wanted, snapshot.ev.query_ids)
    return {q for q, p in zip(wanted, where.tolist(), strict=True) if p < 0}


def chunk_problem(snapshot: Snapshot, chunk_id: str) -> str:
    if snapshot.inputs.corpus is not None:
        return f"chunk {chunk_id!r} is not in the corpus"
    return f"chunk {chunk_id!r} is neither retrieved by either arm nor in the labels (no corpus given)"


def frozen_grades(state: LabelState, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The frozen file's grade of each of `pairs` it judges."""
    t = state.frozen.judgements
    wanted = pa.array(list(dict.fromkeys(q for q, _ in pairs)), pa.string())
    rows = t.filter(pc.is_in(t.column("query_id"), value_set=wanted))
    judged = {
        (q, c): int(g)
        for q, c, g in zip(
            rows.column("query_id").to_pylist(),
            rows.column("chunk_id").to_pylist(),
            rows.column("relevance").to_pylist(),
            strict=True,
        )
    }
    return {p: judged[p] for p in pairs if p in judged}


def conflict_of(state: LabelState, query_id: str, chunk_id: str) -> Conflict | None:
    return next((c for c in state.conflicts if (c.query_id, c.chunk_id) == (query_id, chunk_id)), None)


@dataclass(frozen=True)
class Judged:
    """One judgement appended (or refused by the disk: `change.saved` is False, `seq` None)."""

    change: Change
    reviewer: str
    path: Path  # the reviewer's amendment file
    seq: int | None  # the record's place in that file; None: not saved
    resolves: bool  # asked to settle a conflict
    before: Conflict | None  # reviewers disagreed on the pair before this judgement
    after: Conflict | None  # … and after it
    frozen: int | None  # the frozen file's grade of the pair (it stands); None: not judged there


def judge(
    snapshot: Snapshot,
    query_id: str,
    chunk_id: str,
    grade: int,
    note: str = "",
    reviewer: str | None = None,
    resolves: bool = False,
    where: tuple[str, str] = ("--query", "--chunk"),
) -> Judged:
    """Append one judgement through a review session's writer; `resolves` settles the pair's
    conflict (when there is one). An id the evaluation does not know is an `InputError` naming
    `where` (the query's and the chunk's argument), and nothing is written."""
    if absent_queries(snapshot, [query_id]):
        raise InputError(
            where[0], f"{query_id!r} is not a query of this evaluation (no input names it); nothing written"
        )
    if absent_chunks(snapshot, [chunk_id]):
        raise InputError(where[1], chunk_problem(snapshot, chunk_id) + "; nothing written")
    state = snapshot.labels
    before = conflict_of(state, query_id, chunk_id)
    names = tuple(r.id for r in before.judgements) if resolves and before is not None else None
    frozen = frozen_grades(state, [(query_id, chunk_id)]).get((query_id, chunk_id))
    session = Session(snapshot, reviewer=reviewer)
    change = session.add(query_id, chunk_id, grade, note, {"source": "judge"}, names)
    writer = session.review.writer
    if not change.saved:
        return Judged(change, writer.reviewer, writer.path, None, resolves, before, None, frozen)
    seq = session.labels.saved[-1].seq
    after = conflict_of(session.labels, query_id, chunk_id)
    return Judged(change, writer.reviewer, writer.path, seq, resolves, before, after, frozen)


def read_judgements(source: Path) -> tuple[list[tuple[str, str, int]], list[str]]:
    """The (query, chunk, grade) rows of a qrels or JSON Lines file, and each one's place."""
    loaded = read_table(source, trec="qrels")
    table = conform(loaded, LABELS)
    n = table.num_rows
    if "relevance" in table.column_names:
        rel = single(table.column("relevance"))
        if rel.null_count:
            row = int(np.flatnonzero(rel.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(source, "relevance is empty (null); write 0 for not relevant", loaded.where(row))
        grades = [int(g) for g in rel.to_pylist()]
        below = next((i for i, g in enumerate(grades) if g < 0), None)
        if below is not None:  # a label file may hold one (trec_eval's "pooled, unjudged"); a review not
            raise InputError(
                source,
                f"'relevance' is {grades[below]}: a judgement's grade is 0 (not relevant) or more",
                loaded.where(below),
            )
    else:
        grades = [1] * n
    rows = list(
        zip(
            single(table.column("query_id")).to_pylist(),
            single(table.column("chunk_id")).to_pylist(),
            grades,
            strict=True,
        )
    )
    return rows, [loaded.where(i) for i in range(n)]


@dataclass(frozen=True)
class NotSaved:
    """The write the disk refused: the line, the error, and how many were written before it."""

    where: str
    error: str
    written: int


@dataclass(frozen=True)
class Imported:
    """A file of judgements appended, or stopped at the first write the disk refused (`failed`;
    then nothing after the refused line was written and no outcome is reported)."""

    rows: int
    gold: int  # rows graded ≥ 1
    reviewer: str
    path: Path  # the reviewer's amendment file
    last_seq: int  # the last record written (the first is #1)
    failed: NotSaved | None = None
    changed: tuple[Change, ...] = ()  # each query whose outcome the file changed
    frozen: int = 0  # pairs the frozen file already judges (those judgements stand)
    new_conflicts: int = 0  # pairs different reviewers now judge differently, beyond those before


def import_judgements(
    snapshot: Snapshot, source: Path, note: str = "", reviewer: str | None = None
) -> Imported:
    """Append one judgement per line of a qrels or JSON Lines file. Every line is checked first:
    one id the evaluation does not know refuses the file (`InputError` naming the line; nothing
    written). A write the disk refuses stops the import (`Imported.failed`)."""
    rows, places = read_judgements(source)
    bad_q = absent_queries(snapshot, [q for q, _, _ in rows])
    bad_c = absent_chunks(snapshot, [c for _, c, _ in rows])
    refused = [
        (places[i], f"query {q!r} is not a query of this evaluation (no input names it)")
        if q in bad_q
        else (places[i], chunk_problem(snapshot, c))
        for i, (q, c, _) in enumerate(rows)
        if q in bad_q or c in bad_c
    ]
    if refused:
        where, problem = refused[0]
        more = f" (and {len(refused) - 1} more lines refused)" if len(refused) > 1 else ""
        raise InputError(source, f"{problem}{more}; nothing written", where)
    state = snapshot.labels
    writer = Review(snapshot, reviewer).writer
    written: list[Record] = []
    gold = sum(1 for _, _, g in rows if g >= 1)
    name = bytes_shown(source.name)  # a byte of the name that is not UTF-8 as \xff: records hold text
    for (q, c, g), where in zip(rows, places, strict=True):
        evidence: dict[str, object] = {"source": "import", "file": name, "line": where}
        record = writer.new_record(ADD, q, c, g, note, evidence=evidence)
        try:
            written.append(writer.append(record))
        except (OSError, FrozenFileChanged) as e:
            failed = NotSaved(where, str(e), len(written))
            last = written[-1].seq if written else 0
            return Imported(len(rows), gold, writer.reviewer, writer.path, last, failed)
    after = open_snapshot(  # for the outcomes alone: no corpus check
        snapshot.spec, snapshot.ev.cutoffs, apply_stale=state.log.applied_stale, corpus_check=False
    )
    before_out, after_out = snapshot.ev.outcomes, after.ev.outcomes
    changed: list[int] = np.flatnonzero(before_out != after_out).tolist()  # one query universe
    ids = snapshot.ev.query_ids
    moved = tuple(
        Change(ids[i].as_py(), Outcome(int(before_out[i])), Outcome(int(after_out[i])), True) for i in changed
    )
    return Imported(
        len(rows),
        gold,
        writer.reviewer,
        writer.path,
        written[-1].seq,
        changed=moved,
        frozen=len(frozen_grades(state, [(q, c) for q, c, _ in rows])),
        new_conflicts=len(after.labels.conflicts) - len(state.conflicts),
    )


def agreement(snapshot: Snapshot) -> list[Agreement]:
    """Per pair of reviewers: the pairs both judged and Cohen's kappa (`labels.agreement`)."""
    return reviewer_agreement(snapshot.labels)
