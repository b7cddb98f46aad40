"""`triage labels judge | import | conflicts | agreement`: judgements made elsewhere, and reviewers
who disagree, from the command line. Every judgement goes through a review session's writer, and
`judge` and `import` exit 2 when one could not be saved: a headless command never exits 0 with a
decision held only in memory (it would be lost when the process ends)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from triage.cli.exits import Exit
from triage.cli.labels_cmd import grade_text
from triage.core.text.sanitize import visible
from triage.workspace import judgements
from triage.workspace.snapshot import Snapshot

if TYPE_CHECKING:
    from collections.abc import Sequence

    from triage.labels.state import Conflict, Split


def _grades_text(conflict: Conflict) -> str:
    return ", ".join(f"{r}: {g}" for r, g in conflict.grades.items())


def labels_judge(
    snapshot: Snapshot,
    query_id: str,
    chunk_id: str,
    grade: int,
    note: str = "",
    reviewer: str | None = None,
    resolves: bool = False,
) -> int:
    """Append one judgement (`workspace.judgements.judge`); exit 2 (nothing written) for an id the
    evaluation does not know, and exit 2 when the disk refused it."""
    done = judgements.judge(snapshot, query_id, chunk_id, grade, note, reviewer, resolves)
    conflict = done.before
    notes: list[str] = []
    if resolves and conflict is None:
        notes.append("--resolves: reviewers do not disagree on this pair; there is nothing to resolve")
    elif not resolves and conflict is not None:
        notes.append(
            f"the pair is a conflict ({_grades_text(conflict)}): this judgement is one more reviewer's "
            "vote; --resolves settles it"
        )
    if done.frozen is not None:
        notes.append(
            f"the frozen file already judges this pair ({grade_text(done.frozen)}): frozen judgements "
            "stand, so this judgement is recorded but changes no number"
        )
    change = done.change
    pair = f"{query_id} / {chunk_id}"
    if not change.saved:
        print(
            visible(
                f"triage: error: {pair}, {grade_text(grade)} by {done.reviewer}: NOT SAVED to "
                f"{done.path}: {change.error}; nothing was written",
                newlines=False,
            ),
            file=sys.stderr,
        )
        return Exit.NOT_SAVED
    print(
        visible(
            f"judged {pair}: {grade_text(grade)} by {done.reviewer}"
            + (f", resolving {_grades_text(conflict)}" if resolves and conflict else ""),
            newlines=False,
        )
    )
    print(visible(f"  written to {done.path} #{done.seq}", newlines=False))
    if done.after is not None:
        notes.append(
            f"reviewers now disagree on the pair ({_grades_text(done.after)}): it stays unjudged, favouring "
            "neither arm, until a judgement resolves it (triage labels judge … --resolves)"
        )
    print(visible(f"  {change.message}", newlines=False))
    for n in notes:
        print(visible(f"  note: {n}", newlines=False))
    return Exit.OK


def labels_import(snapshot: Snapshot, source: Path, note: str = "", reviewer: str | None = None) -> int:
    """Append one judgement per line of a qrels or JSON Lines file
    (`workspace.judgements.import_judgements`): one id the evaluation does not know refuses the
    file (exit 2, nothing written). Exit 2 also when the disk refuses a write, saying how many were
    written before it."""
    done = judgements.import_judgements(snapshot, source, note, reviewer)
    if done.failed is not None:
        f = done.failed
        print(
            visible(
                f"triage: error: {source} {f.where}: NOT SAVED to {done.path}: {f.error}; "
                f"{f.written} of {done.rows} judgements were written before it, the rest were not",
                newlines=False,
            ),
            file=sys.stderr,
        )
        return Exit.NOT_SAVED
    print(
        visible(
            f"imported {done.rows} judgements from {source} ({done.gold} gold, {done.rows - done.gold} "
            f"not relevant) by {done.reviewer}",
            newlines=False,
        )
    )
    print(visible(f"  written to {done.path} #1-#{done.last_seq}", newlines=False))
    print(f"  {len(done.changed)} queries changed outcome")
    for moved in done.changed:
        print(visible(f"    {moved.message}", newlines=False))
    if done.frozen:
        print(
            f"  note: {done.frozen} lines judge pairs the frozen file already judges: frozen judgements "
            "stand, so they are recorded but change no number"
        )
    if done.new_conflicts > 0:
        print(
            f"  note: {done.new_conflicts} pairs are now judged differently by different reviewers: each "
            "stays unjudged until resolved (triage labels conflicts)"
        )
    return Exit.OK


# -- reviewers who disagree ---------------------------------------------------------------------


def labels_conflicts(snapshot: Snapshot) -> int:
    """Every conflict (relevant against not relevant) with each reviewer's grade, time and
    file#seq, exit 1 when any; then the grade differences (all relevant, grades differ), which are
    gold at the lowest grade and no conflict: listed, never exit 1."""
    found, differences = snapshot.labels.conflicts, snapshot.labels.grade_differences
    if not found:
        print("no conflicts: no pair is judged relevant by one reviewer and not relevant by another")
    else:
        print(
            f"{_count(len(found), 'conflict')}: (query, chunk) pairs one reviewer judged relevant and "
            "another not, each kept unjudged (favouring neither arm) until a judgement resolves it"
        )
        _list(found)
    if differences:
        print(
            f"{_count(len(differences), 'grade difference')}: pairs every reviewer judged relevant, at "
            "different grades; gold in force at the lowest grade given (not a conflict)"
        )
        _list(differences)
    if found or differences:
        print("resolve one: triage labels judge [PATH] --query Q --chunk C --grade G --resolves")
    return Exit.FOUND if found else Exit.OK


def _list(splits: Sequence[Split]) -> None:
    for c in splits:
        print(visible(f"{c.query_id}  {c.chunk_id}", newlines=False))
        for r in c.judgements:
            print(
                visible(
                    f"    {r.reviewer:<12} {grade_text(r.relevance):<13} {r.at}  {r.file}#{r.seq}",
                    newlines=False,
                )
            )


def labels_agreement(snapshot: Snapshot) -> int:
    """Per pair of reviewers: the pairs both judged, Cohen's kappa on relevant (≥ 1) vs not (0), and
    linear-weighted kappa on the grades."""
    found = judgements.agreement(snapshot)
    print(
        "agreement on relevant (grade ≥ 1) vs not relevant (0), each reviewer's latest judgement in "
        "force on a pair (resolved or not)"
    )
    if not found:
        print("fewer than two reviewers have judgements in force: nothing to compare")
        return Exit.OK
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
        w = a.weighted
        if w.value is None:
            print(visible(f"  on grades, weighted kappa: undefined ({w.reason})", newlines=False))
        else:
            print(
                f"  on grades ({_count(a.grade_differences, 'pair')} both relevant at different grades): "
                f"linear-weighted kappa {float(w.value):.3f}"
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
    return Exit.OK


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
