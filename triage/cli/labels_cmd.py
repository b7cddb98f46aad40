"""`triage labels log | verify | export | suggest`: the label store from the command line (the
judging verbs are `judge_cmd`).

Output is plain text (or JSON); data is passed through `visible`, so no escape sequence from a
note or an id reaches the terminal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.text.sanitize import visible
from triage.labels.export import export as export_labels
from triage.labels.records import RETRACT, ProblemKind, Record, read_file
from triage.workspace.snapshot import Snapshot

EXIT_NOT_SAVED = 2  # as an input that cannot be read: the command did not do what it was asked


def log(snapshot: Snapshot) -> int:
    state = snapshot.labels
    verdicts = state.verdicts
    counted = f"  ·  {verdicts.count} verdicts in force" if verdicts.count else ""
    print(visible(f"labels: {state.describe()}{counted}  ·  folder {state.log.folder}"))
    in_force = {r.id for r in state.in_force}
    latest = verdicts.ids
    by_id = {r.id: r for r in state.records}
    for r in state.every_record:
        if r.cause is not None:
            mark = "verdict" if r.id in latest else "verdict (replaced)"
            note = f"  note: {r.note}" if r.note else ""
            print(
                visible(
                    f"{r.at}  {r.reviewer:<12} {mark:<16} {r.query_id}  cause {r.cause}{note}  "
                    f"[{r.file} #{r.seq}]",
                    newlines=False,
                )
            )
            continue
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
    for query_id in verdicts.disagreements():
        who = ", ".join(f"{v.reviewer} {v.cause}" for v in verdicts.for_query(query_id))
        print(visible(f"verdicts disagree on {query_id}: {who}", newlines=False))
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
                visible(
                    f"ok   {path.name}: {len(records)} records{_verdicts_among(records)}, "
                    "hashes and chain intact",
                    newlines=False,
                )
            )
    for p in log.problems:
        if p.kind is ProblemKind.DUPLICATE:
            print(visible(f"FAIL {p}", newlines=False))
            failed += 1
    if not files:
        print(visible(f"ok   no amendment files in {folder}"))
    return 1 if failed else 0


def _verdicts_among(records: list[Record]) -> str:
    n = sum(1 for r in records if r.cause is not None)
    return f" ({n} verdict{'s' if n != 1 else ''})" if n else ""


def export(snapshot: Snapshot, out: Path) -> int:
    """Frozen + amendments as a new label file: Parquet, or TREC qrels for .qrels/.txt/.trec."""
    folder = snapshot.labels.log.folder
    forbidden = snapshot.spec.forbidden(folder if folder != Path() else None)
    table = export_labels(snapshot.labels, out, forbidden)
    not_relevant = int(pc.sum(pc.equal(table.column("relevance"), 0)).as_py() or 0)
    print(
        visible(
            f"wrote {out}: {table.num_rows - not_relevant} gold rows, {not_relevant} judged not relevant, "
            f"{snapshot.labels.describe()}"
        )
    )
    return 0


def suggest(snapshot: Snapshot, fmt: str) -> int:
    from triage.core.inputs.corpus import open_corpus
    from triage.core.text.suggest import THRESHOLD
    from triage.workspace.suggestions import suggestions_for

    spec = snapshot.spec
    if spec.corpus is None:
        raise InputError(spec.manifest or "command line", "suggestions compare chunk texts: give a corpus")
    found = suggestions_for(snapshot, open_corpus(spec.corpus, fmt=spec.corpus_format))
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
