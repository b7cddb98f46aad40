"""`triage labels judge | import | conflicts | agreement`: judgements made elsewhere, and reviewers
who disagree, from the command line. Every judgement goes through a review session's writer, and
`judge` and `import` exit 2 when one could not be saved: a headless command never exits 0 with a
decision held only in memory (it would be lost when the process ends)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.cli.labels_cmd import EXIT_NOT_SAVED, grade_text
from triage.core.errors import InputError
from triage.core.ids.codes import absent_from, positions
from triage.core.inputs.contract import LABELS, conform, single
from triage.core.inputs.shapes import read_table
from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import visible
from triage.labels.agreement import agreement as reviewer_agreement
from triage.labels.records import ADD, Record
from triage.labels.state import Conflict, LabelState
from triage.labels.writer import FrozenFileChanged
from triage.workspace.review import Change, Review
from triage.workspace.session import Session
from triage.workspace.snapshot import Snapshot, open_snapshot


def _absent_chunks(snapshot: Snapshot, chunk_ids: list[str]) -> set[str]:
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


def _absent_queries(snapshot: Snapshot, query_ids: list[str]) -> set[str]:
    """The query ids no input of the evaluation names (queries file, labels, either run)."""
    wanted = list(dict.fromkeys(query_ids))
    where = positions(wanted, snapshot.ev.query_ids)
    return {q for q, p in zip(wanted, where.tolist(), strict=True) if p < 0}


def _chunk_problem(snapshot: Snapshot, chunk_id: str) -> str:
    if snapshot.inputs.corpus is not None:
        return f"chunk {chunk_id!r} is not in the corpus"
    return f"chunk {chunk_id!r} is neither retrieved by either arm nor in the labels (no corpus given)"


def _frozen_grades(state: LabelState, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
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


def _conflict_of(state: LabelState, query_id: str, chunk_id: str) -> Conflict | None:
    return next((c for c in state.conflicts if (c.query_id, c.chunk_id) == (query_id, chunk_id)), None)


def _grades_text(conflict: Conflict) -> str:
    return ", ".join(f"{r}: {g}" for r, g in conflict.grades.items())


def judge(
    snapshot: Snapshot,
    query_id: str,
    chunk_id: str,
    grade: int,
    note: str = "",
    reviewer: str | None = None,
    resolves: bool = False,
) -> int:
    """Append one judgement through the app's writer; exit 2 (nothing written) for an id the
    evaluation does not know, and exit 2 when the disk refused it."""
    if _absent_queries(snapshot, [query_id]):
        raise InputError(
            "--query", f"{query_id!r} is not a query of this evaluation (no input names it); nothing written"
        )
    if _absent_chunks(snapshot, [chunk_id]):
        raise InputError("--chunk", _chunk_problem(snapshot, chunk_id) + "; nothing written")
    state = snapshot.labels
    conflict = _conflict_of(state, query_id, chunk_id)
    notes: list[str] = []
    names: tuple[str, ...] | None = None
    if resolves and conflict is not None:
        names = tuple(r.id for r in conflict.judgements)
    elif resolves:
        notes.append("--resolves: reviewers do not disagree on this pair; there is nothing to resolve")
    elif conflict is not None:
        notes.append(
            f"the pair is a conflict ({_grades_text(conflict)}): this judgement is one more reviewer's "
            "vote; --resolves settles it"
        )
    frozen = _frozen_grades(state, [(query_id, chunk_id)]).get((query_id, chunk_id))
    if frozen is not None:
        notes.append(
            f"the frozen file already judges this pair ({grade_text(frozen)}): frozen judgements stand, "
            "so this judgement is recorded but changes no number"
        )
    session = Session(snapshot, reviewer=reviewer)
    change = session.add(query_id, chunk_id, grade, note, {"source": "judge"}, names)
    writer = session.review.writer
    pair = f"{query_id} / {chunk_id}"
    if not change.saved:
        print(
            visible(
                f"triage: error: {pair}, {grade_text(grade)} by {writer.reviewer}: NOT SAVED to "
                f"{writer.path}: {change.error}; nothing was written",
                newlines=False,
            ),
            file=sys.stderr,
        )
        return EXIT_NOT_SAVED
    done = session.labels.saved[-1]
    print(
        visible(
            f"judged {pair}: {grade_text(grade)} by {writer.reviewer}"
            + (f", resolving {_grades_text(conflict)}" if names and conflict else ""),
            newlines=False,
        )
    )
    print(visible(f"  written to {writer.path} #{done.seq}", newlines=False))
    after = _conflict_of(session.labels, query_id, chunk_id)
    if after is not None:
        notes.append(
            f"reviewers now disagree on the pair ({_grades_text(after)}): it stays unjudged, favouring "
            "neither arm, until a judgement resolves it (triage labels judge … --resolves)"
        )
    print(visible(f"  {change.message}", newlines=False))
    for n in notes:
        print(visible(f"  note: {n}", newlines=False))
    return 0


def _read_judgements(source: Path) -> tuple[list[tuple[str, str, int]], list[str]]:
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


def import_judgements(snapshot: Snapshot, source: Path, note: str = "", reviewer: str | None = None) -> int:
    """Append one judgement per line of a qrels or JSON Lines file. Every line is checked first:
    one id the evaluation does not know refuses the file (exit 2, nothing written). Exit 2 also
    when the disk refuses a write, saying how many were written before it."""
    rows, places = _read_judgements(source)
    bad_q = _absent_queries(snapshot, [q for q, _, _ in rows])
    bad_c = _absent_chunks(snapshot, [c for _, c, _ in rows])
    refused = [
        (places[i], f"query {q!r} is not a query of this evaluation (no input names it)")
        if q in bad_q
        else (places[i], _chunk_problem(snapshot, c))
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
    for (q, c, g), where in zip(rows, places, strict=True):
        evidence: dict[str, object] = {"source": "import", "file": source.name, "line": where}
        record = writer.new_record(ADD, q, c, g, note, evidence=evidence)
        try:
            written.append(writer.append(record))
        except (OSError, FrozenFileChanged) as e:
            print(
                visible(
                    f"triage: error: {source} {where}: NOT SAVED to {writer.path}: {e}; "
                    f"{len(written)} of {len(rows)} judgements were written before it, the rest were not",
                    newlines=False,
                ),
                file=sys.stderr,
            )
            return EXIT_NOT_SAVED
    gold = sum(1 for _, _, g in rows if g >= 1)
    print(
        visible(
            f"imported {len(rows)} judgements from {source} ({gold} gold, {len(rows) - gold} not relevant) "
            f"by {writer.reviewer}",
            newlines=False,
        )
    )
    print(visible(f"  written to {writer.path} #1-#{written[-1].seq}", newlines=False))
    after = open_snapshot(snapshot.spec, snapshot.ev.cutoffs, apply_stale=state.log.applied_stale)
    before_out, after_out = snapshot.ev.outcomes, after.ev.outcomes
    changed: list[int] = np.flatnonzero(before_out != after_out).tolist()  # one query universe
    print(f"  {len(changed)} queries changed outcome")
    for i in changed:
        moved = Change(
            snapshot.ev.query_ids[i].as_py(), Outcome(int(before_out[i])), Outcome(int(after_out[i])), True
        )
        print(visible(f"    {moved.message}", newlines=False))
    frozen = _frozen_grades(state, [(q, c) for q, c, _ in rows])
    if frozen:
        print(
            f"  note: {len(frozen)} lines judge pairs the frozen file already judges: frozen judgements "
            "stand, so they are recorded but change no number"
        )
    new = len(after.labels.conflicts) - len(state.conflicts)
    if new > 0:
        print(
            f"  note: {new} pairs are now judged differently by different reviewers: each stays unjudged "
            "until resolved (triage labels conflicts)"
        )
    return 0


# -- reviewers who disagree ---------------------------------------------------------------------


def conflicts(snapshot: Snapshot) -> int:
    """Every conflict with each reviewer's grade, time and file#seq; exit 1 when any."""
    found = snapshot.labels.conflicts
    if not found:
        print("no conflicts: no pair is judged differently by different reviewers")
        return 0
    print(
        f"{_count(len(found), 'conflict')}: (query, chunk) pairs different reviewers judged "
        "differently, each kept unjudged (favouring neither arm) until a judgement resolves it"
    )
    for c in found:
        print(visible(f"{c.query_id}  {c.chunk_id}", newlines=False))
        for r in c.judgements:
            print(
                visible(
                    f"    {r.reviewer:<12} {grade_text(r.relevance):<13} {r.at}  {r.file}#{r.seq}",
                    newlines=False,
                )
            )
    print("resolve one: triage labels judge [PATH] --query Q --chunk C --grade G --resolves")
    return 1


def agreement(snapshot: Snapshot) -> int:
    """Per pair of reviewers: the pairs both judged and Cohen's kappa, relevant (≥ 1) vs not (0)."""
    found = reviewer_agreement(snapshot.labels)
    print(
        "agreement on relevant (grade ≥ 1) vs not relevant (0), each reviewer's latest judgement in "
        "force on a pair (resolved or not)"
    )
    if not found:
        print("fewer than two reviewers have judgements in force: nothing to compare")
        return 0
    for a in found:
        both_rel, first_only, second_only, both_not = a.table
        k = a.kappa
        print(visible(f"{a.first} × {a.second}: {_count(len(a.shared), 'pair')} both judged", newlines=False))
        if a.shared:
            print(
                visible(
                    f"  both relevant {both_rel}, only {a.first} relevant {first_only}, "
                    f"only {a.second} relevant {second_only}, both not relevant {both_not}",
                    newlines=False,
                )
            )
        if k.value is None:
            print(visible(f"  Cohen's kappa: undefined ({k.reason})", newlines=False))
        else:
            assert k.p_o is not None and k.p_e is not None
            print(
                f"  observed agreement {float(k.p_o):.3f}, by chance {float(k.p_e):.3f}, "
                f"Cohen's kappa {float(k.value):.3f}"
            )
        for s in a.shared:
            same = (s.first.relevance >= 1) == (s.second.relevance >= 1)
            print(
                visible(
                    f"    {'' if same else '≠ '}{s.query_id}  {s.chunk_id}  {a.first}: {s.first.relevance}  "
                    f"{a.second}: {s.second.relevance}",
                    newlines=False,
                )
            )
    return 0


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
