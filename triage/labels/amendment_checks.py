"""Checks of the label store (docs/checks.md "The checks"): the amendments in force, by which arm's results
they were taken from, files written against other frozen labels, damaged lines, and ids no input knows."""

from __future__ import annotations

import math
from operator import attrgetter
from pathlib import Path

import pyarrow as pa

from triage.core.checks.model import ERROR, OK, SHOW, WARNING, Check, some
from triage.core.evaluation import Evaluation
from triage.core.ids import codes
from triage.labels.records import ProblemKind
from triage.labels.state import LabelState

_QUERY, _CHUNK = attrgetter("query_id"), attrgetter("chunk_id")


def _moved(ev: Evaluation) -> dict[str, float | None]:
    """Each arm's hit rate, amended − frozen (None: nothing to judge)."""
    out: dict[str, float | None] = {}
    for side, arm in (("a", ev.a), ("b", ev.b)):
        change = ev.means(arm).hit_rate - ev.frozen_hit_rate(arm)
        out[side] = None if math.isnan(change) else change
    return out


def _moved_text(moved: dict[str, float | None]) -> str:
    """ "hit rate frozen → amended: A +0.000, B +0.005"."""
    a, b = ("–" if x is None else f"{x:+.3f}" for x in (moved["a"], moved["b"]))
    return f"hit rate frozen → amended: A {a}, B {b}"


def check_amendments(state: LabelState, ev: Evaluation) -> list[Check]:
    log = state.log
    out = []
    adds = state.in_force
    gold = state.added
    if not state.records:
        out.append(Check(OK, "labels.amendments", "no amendments: frozen labels only"))
    elif not state.amended:
        out.append(
            Check(
                OK,
                "labels.amendments",
                f"{len(state.records)} amendments read, not applied (label state: frozen)",
            )
        )
    else:
        arms = state.by_arm()
        split = f"from A's results {arms['a']}, from B's {arms['b']}, without evidence {arms['none']}"
        moved = _moved(ev) if gold else None
        balance = "" if moved is None else f"; {_moved_text(moved)}"
        facts: dict[str, object] = {
            "in_force": len(adds),
            "gold_added": len(gold),
            "by_arm": arms,
            "moved": moved,
        }
        one_sided = [side for side in ("a", "b") if gold and arms[side] == len(gold)]
        if one_sided:
            name = ev.a.name if one_sided[0] == "a" else ev.b.name
            out.append(
                Check(
                    WARNING,
                    "labels.amendments",
                    (
                        f"all {len(gold)} gold additions in force were"
                        if len(gold) > 1
                        else "the one gold addition in force was"
                    )
                    + f" taken from the results of {name} "
                    f"({split}): they can only favour it{balance}; compare the frozen numbers",
                    {**facts, "one_sided": one_sided[0]},
                )
            )
        else:
            out.append(
                Check(
                    OK,
                    "labels.amendments",
                    f"{len(adds)} judgements in force, {len(gold)} of them gold ({split}){balance}",
                    facts,
                )
            )
    conflicts = state.conflicts
    if conflicts:
        first = [
            f"{c.query_id}/{c.chunk_id} ({', '.join(f'{r}: {g}' for r, g in c.grades.items())})"
            for c in conflicts[:SHOW]  # the ones named
        ]
        out.append(
            Check(
                WARNING,
                "labels.conflicts",
                f"{len(conflicts)} (query, chunk) pairs judged differently by different reviewers, kept "
                f"unjudged until resolved (triage labels conflicts): {some(first, len(conflicts))}",
                {"count": len(conflicts)},
            )
        )
    folder = log.folder
    if folder != Path() and (folder.exists() or folder.is_symlink()) and not folder.is_dir():
        out.append(
            Check(
                WARNING,
                "labels.amendments_folder",
                f"the amendments folder {folder} is not a folder: decisions made now cannot be saved "
                "there (they are kept in memory, and quitting asks where to write them)",
            )
        )
    if log.stale:
        out.append(
            Check(
                ERROR,
                "labels.amendments_base",
                f"{len(log.stale)} amendment files were written against other frozen labels: "
                f"{some(list(log.stale))}" + ("" if log.applied_stale else "; not applied"),
                {"files": len(log.stale), "applied": log.applied_stale},
            )
        )
    broken = [p for p in log.damage if p.kind is ProblemKind.CHAIN]
    if broken:
        out.append(
            Check(
                ERROR,
                "labels.amendments_chain",
                f"the amendment chain is broken ({len(broken)} break{'s' if len(broken) != 1 else ''}), "
                "the records on both sides not applied (re-affirm them with a new judgement): "
                f"{'; '.join(str(p) for p in broken[:SHOW])}",
                {"count": len(broken), "files": sorted({p.file for p in broken})},
            )
        )
    damaged = [p for p in log.damage if p.kind is not ProblemKind.CHAIN]
    if damaged:
        out.append(
            Check(
                WARNING,
                "labels.amendments_damaged",
                f"{len(damaged)} amendment lines skipped: {'; '.join(str(p) for p in damaged[:SHOW])}",
                {"count": len(damaged)},
            )
        )
    named = pa.array(sorted(set(map(_QUERY, adds))), pa.string())
    unknown = named.filter(pa.array(codes.positions_in(named.to_pylist(), ev.query_ids) < 0)).to_pylist()
    if unknown:
        out.append(
            Check(
                WARNING,
                "labels.amendments_unknown",
                f"amendments name {len(unknown)} queries no input knows: {some(unknown)}",
                {"count": len(unknown)},
            )
        )
    corpus = ev.inputs.corpus
    if corpus is not None and adds:
        missing = corpus.absent(sorted(set(map(_CHUNK, adds))))
        if missing:
            out.append(
                Check(
                    WARNING,
                    "labels.amendments_corpus",
                    f"amendments name {len(missing)} chunks absent from the corpus: {some(missing)}",
                    {"count": len(missing)},
                )
            )
    return out
