"""`triage labels log | verify | export | suggest`: the label store from the command line (the
judging verbs are `judge_cmd`).

Output is plain text (or JSON); data is passed through `visible`, so no escape sequence from a
note or an id reaches the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from triage.cli.exits import Exit
from triage.core.text.sanitize import counted, visible
from triage.workspace import store
from triage.workspace.snapshot import Snapshot


def labels_log(snapshot: Snapshot) -> int:
    state = snapshot.labels
    verdicts = state.verdicts
    in_force = f"  ·  {counted(verdicts.count, 'verdict')} in force" if verdicts.count else ""
    print(visible(f"labels: {state.describe()}{in_force}  ·  folder {state.log.folder}"))
    for entry in store.log_entries(snapshot):
        r = entry.record
        note = f"  note: {r.note}" if r.note else ""
        if r.cause is not None:
            print(
                visible(
                    f"{r.at}  {r.reviewer:<12} {entry.mark:<16} {r.query_id}  cause {r.cause}{note}  "
                    f"[{r.file} #{r.seq}]",
                    newlines=False,
                )
            )
            continue
        resolves = ""
        if entry.resolves:
            named = [
                f"{done.reviewer} {grade_text(done.relevance)} ({i})" if done is not None else i
                for i, done in entry.resolves
            ]
            resolves = f"  resolves {', '.join(named)}"
        print(
            visible(
                f"{r.at}  {r.reviewer:<12} {entry.mark:<16} {r.query_id}  {r.chunk_id}  "
                f"{grade_text(r.relevance)}{evidence_text(r.evidence)}{resolves}{note}  [{r.file} #{r.seq}]",
                newlines=False,
            )
        )
    for query_id in verdicts.disagreements():
        who = ", ".join(f"{v.reviewer} {v.cause}" for v in verdicts.for_query(query_id))
        print(visible(f"verdicts disagree on {query_id}: {who}", newlines=False))
    for p in state.log.problems:
        print(visible(f"problem: {p}", newlines=False))
    return Exit.OK


def labels_verify(snapshot: Snapshot) -> int:
    """Every file, record hash, chain and base (`workspace.store.verify`); exit 1 naming each
    problem. A tear a later write repaired is reported, and is not a failure: nothing
    acknowledged was lost."""
    verified = store.verify(snapshot)
    for f in verified.findings:
        print(visible(f"{f.level:<4} {f.text}", newlines=False))
    if not verified.files:
        print(visible(f"ok   no amendment files in {verified.folder}"))
    return Exit.FOUND if verified.failed else Exit.OK


def labels_export(snapshot: Snapshot, out: Path) -> int:
    """Frozen + amendments as a new label file: Parquet, or TREC qrels for .qrels/.txt/.trec."""
    done = store.export(snapshot, out)
    print(
        visible(
            f"wrote {out}: {done.gold} gold rows, {done.not_relevant} judged not relevant, "
            f"{snapshot.labels.describe()}"
        )
    )
    return Exit.OK


def labels_suggest(snapshot: Snapshot, fmt: str) -> int:
    from triage.workspace.suggestions import THRESHOLD, suggest

    found = suggest(snapshot)
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
        return Exit.OK
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
    return Exit.OK


def grade_text(relevance: int) -> str:
    """ "not relevant" for grade 0, else "grade N"."""
    return "not relevant" if relevance == 0 else f"grade {relevance}"


def evidence_text(evidence: Mapping[str, object] | None) -> str:
    ev = evidence or {}
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
