"""`triage labels log | verify | export | suggest | judge | import | conflicts | agreement`: the
label store from the command line.

Output is plain text (or JSON); data is passed through `visible`, so no escape sequence from a
note or an id reaches the terminal. `judge` and `import` write through the same writer as the app
and exit 2 when a judgement could not be saved: a headless command never exits 0 with a decision
held only in memory (it would be lost when the process ends).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.contract import LABELS, conform, single
from triage.core.errors import InputError
from triage.core.ids import absent_from, positions
from triage.core.paired import Outcome
from triage.core.readers import read_table
from triage.core.sanitize import visible
from triage.labels.agreement import agreement as reviewer_agreement
from triage.labels.export import export as export_labels
from triage.labels.records import ADD, RETRACT, ProblemKind, Record, read_file
from triage.labels.state import Conflict, LabelState
from triage.labels.writer import FrozenFileChanged
from triage.workspace.review import Change, Review
from triage.workspace.session import Session
from triage.workspace.snapshot import Snapshot, open_snapshot

EXIT_NOT_SAVED = 2  # as an input that cannot be read: the command did not do what it was asked


def log(snapshot: Snapshot) -> int:
    state = snapshot.labels
    print(visible(f"labels: {state.describe()}  ·  folder {state.log.folder}"))
    in_force = {r.id for r in state.in_force}
    by_id = {r.id: r for r in state.records}
    for r in state.records:
        mark = "retract" if r.op == RETRACT else ("add" if r.id in in_force else "add (retracted)")
        note = f"  note: {r.note}" if r.note else ""
        resolves = ""
        if r.resolves:
            named = [
                f"{by_id[i].reviewer} {grade_text(by_id[i].relevance)} ({i})" if i in by_id else i
                for i in r.resolves
            ]
            resolves = f"  resolves {', '.join(named)}"
        print(
            visible(
                f"{r.at}  {r.reviewer:<12} {mark:<16} {r.query_id}  {r.chunk_id}  "
                f"{grade_text(r.relevance)}{evidence_text(r)}{resolves}{note}  [{r.file} #{r.seq}]",
                newlines=False,
            )
        )
    for p in state.log.problems:
        print(visible(f"problem: {p}", newlines=False))
    return 0


def verify(snapshot: Snapshot) -> int:
    """Every file, record hash, chain and base; exit 1 naming each problem. A tear a later write
    repaired is reported, and is not a failure: nothing acknowledged was lost."""
    frozen = snapshot.labels.frozen
    log = snapshot.labels.log
    folder = log.folder
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    failed = 0
    if folder != Path() and (folder.exists() or folder.is_symlink()) and not folder.is_dir():
        print(visible(f"FAIL {folder}: not a folder; no amendment can be saved there", newlines=False))
        failed += 1
    for path in files:
        special = [p for p in log.problems if p.file == path.name and p.kind is ProblemKind.SPECIAL]
        if special:
            print(visible(f"FAIL {special[0]}", newlines=False))
            failed += 1
            continue
        records, problems = read_file(path)
        wrong_base = [r for r in records if r.base != frozen.sha256]
        bad = [p for p in problems if p.kind is not ProblemKind.REPAIRED]
        for p in problems:
            print(visible(f"{'note' if p.kind is ProblemKind.REPAIRED else 'FAIL'} {p}", newlines=False))
        for r in wrong_base[:1]:
            print(
                visible(
                    f"FAIL {path.name}: base {r.base[:12]} is not the frozen file's "
                    f"{frozen.sha256[:12]} ({len(wrong_base)} records)",
                    newlines=False,
                )
            )
        failed += len(bad) + (1 if wrong_base else 0)
        if not bad and not wrong_base:
            print(
                visible(f"ok   {path.name}: {len(records)} records, hashes and chain intact", newlines=False)
            )
    for p in log.problems:
        if p.kind is ProblemKind.DUPLICATE:
            print(visible(f"FAIL {p}", newlines=False))
            failed += 1
    if not files:
        print(visible(f"ok   no amendment files in {folder}"))
    return 1 if failed else 0


def export(snapshot: Snapshot, out: Path) -> int:
    """Frozen + amendments as a new label file: Parquet, or TREC qrels for .qrels/.txt/.trec."""
    table = export_labels(snapshot.labels, out, snapshot.spec.inputs())
    not_relevant = int(pc.sum(pc.equal(table.column("relevance"), 0)).as_py() or 0)
    print(
        visible(
            f"wrote {out}: {table.num_rows - not_relevant} gold rows, {not_relevant} judged not relevant, "
            f"{snapshot.labels.describe()}"
        )
    )
    return 0


def suggest(snapshot: Snapshot, fmt: str) -> int:
    from triage.core.corpus import open_corpus
    from triage.core.suggest import THRESHOLD
    from triage.workspace.suggestions import suggestions_for

    spec = snapshot.spec
    if spec.corpus is None:
        raise InputError(spec.manifest or "command line", "suggestions compare chunk texts: give a corpus")
    found = suggestions_for(snapshot, open_corpus(spec.corpus))
    if fmt == "json":
        print(
            json.dumps(
                {
                    "threshold": THRESHOLD,
                    "scorer": "rapidfuzz fuzz.ratio (body and heading path)",
                    "suggestions": [s.__dict__ for s in found],
                },
                ensure_ascii=False,
            )
        )
        return 0
    print(
        f"{len(found)} retrieved passages are likely also gold "
        f"(body and heading path ≥ {THRESHOLD:g}% similar "
        "to a gold chunk):"
    )
    for s in found:
        ranks = f"A {s.rank_a or '–'} / B {s.rank_b or '–'}"
        print(
            visible(
                f"  {s.query_id}  {s.chunk_id}  ~ gold {s.gold_id}  {s.similarity:.1f}%  ranked {ranks}",
                newlines=False,
            )
        )
    return 0


def grade_text(relevance: int) -> str:
    """ "not relevant" for grade 0, else "grade N"."""
    return "not relevant" if relevance == 0 else f"grade {relevance}"


def evidence_text(r: Record) -> str:
    ev = r.evidence or {}
    if not ev:
        return ""
    if "arm" in ev:
        return f"  from {str(ev.get('arm', '?')).upper()} rank {ev.get('rank', '?')}"
    if ev.get("source") == "import":
        line = f" {ev['line']}" if "line" in ev else ""
        return f"  imported from {ev.get('file', '?')}{line}"
    if ev.get("source") == "judge":
        return "  by labels judge"
    return "  evidence " + json.dumps(ev, ensure_ascii=False, sort_keys=True)


# -- judging from the command line --------------------------------------------------------------


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
    after = open_snapshot(snapshot.spec, snapshot.ev.k, apply_stale=state.log.applied_stale)
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
