"""The labels section: the label state the numbers use (the frozen file and the amendments in
force), and the same numbers on the frozen labels alone beside them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import counted
from triage.report.arms import ByArm
from triage.report.blocks import Block, Heading, Table
from triage.report.cells import FLIP_CAP, outcome, p_value, rate, signed
from triage.report.sections.metrics import ArmMeans, ArmSection, arm_means
from triage.report.sections.paired import PairedSection, PairedSource, paired_section

if TYPE_CHECKING:
    from triage.core.evaluation import Evaluation
    from triage.labels.state import LabelState
    from triage.workspace.results import FrozenFigures


@dataclass(frozen=True)
class LabelsSection:
    path: Path
    frozen_sha256: str
    amendments: int  # records merged from the amendment log
    in_force: int  # adds in force
    by_arm: Mapping[str, int]  # adds in force by the arm whose results they came from: a, b, none
    head: str | None
    applied: bool  # the numbers use the amendments (label state "amended")
    state: str  # "frozen <sha12> + N amendments (head <sha12>)"
    gold_added: int  # (query, chunk) pairs the judgements in force make gold
    not_relevant: int  # pairs the judgements in force judge not relevant
    conflicts: int  # pairs whose reviewers disagree (kept unjudged until resolved)
    reviewers: Mapping[str, int]  # reviewer → judgements in force
    moved: ByArm[float | None] | None  # each arm's hit rate, amended − frozen; None: no gold added


@dataclass(frozen=True, slots=True)
class Changed:
    query_id: str
    frozen: Outcome
    amended: Outcome


@dataclass(frozen=True)
class FrozenView:
    """The numbers on the frozen labels alone, and the queries whose outcome amendments changed."""

    arms: ByArm[ArmMeans]
    paired: PairedSection
    changed: tuple[Changed, ...]


class LabelsSource(PairedSource, Protocol):
    """What the labels' cells read of the report."""

    @property
    def labels(self) -> LabelsSection: ...
    @property
    def frozen(self) -> FrozenView: ...


def frozen_view(ev: Evaluation, f: FrozenFigures) -> FrozenView:
    """The same numbers on the frozen labels alone (docs/labels.md "Label amendments")."""
    changed, now = f.changed, ev.outcomes
    ids = ev.query_ids.take(pa.array(changed)).to_pylist()
    return FrozenView(
        ByArm(arm_means(f.paired.a), arm_means(f.paired.b)),
        paired_section(f.paired),
        tuple(
            Changed(qid, Outcome(int(f.before[q])), Outcome(int(now[q])))
            for q, qid in zip(changed.tolist(), ids, strict=True)
        ),
    )


def _moved(labels: LabelState, arms: ByArm[ArmSection], frozen: FrozenView) -> ByArm[float | None] | None:
    """Each arm's hit rate, amended − frozen; None when no gold addition is in force."""
    if not labels.added:
        return None
    a, b = (
        None if now.hit_rate is None or then.hit_rate is None else now.hit_rate - then.hit_rate
        for now, then in ((arms.a, frozen.arms.a), (arms.b, frozen.arms.b))
    )
    return ByArm(a, b)


def labels_section(labels: LabelState, arms: ByArm[ArmSection], frozen: FrozenView) -> LabelsSection:
    return LabelsSection(
        path=labels.frozen.path,
        frozen_sha256=labels.frozen.sha256,
        amendments=len(labels.records),
        in_force=len(labels.in_force),
        by_arm=labels.by_arm(),
        head=labels.head,
        applied=labels.amended,
        state=labels.describe(),
        gold_added=len(labels.added),
        not_relevant=len(labels.not_relevant),
        conflicts=len(labels.conflicts),
        reviewers=labels.reviewers(),
        moved=_moved(labels, arms, frozen),
    )


def labels_line(r: LabelsSource) -> str:
    """The label state as the report's header shows it: the state (the frozen file's fingerprint and
    the amendment records beside it: judgements and undos, verdicts apart) and, when there are any, how many
    judgements are in force, the number the labels check counts."""
    if not r.labels.amendments:
        return r.labels.state
    return f"{r.labels.state}; {counted(r.labels.in_force, 'judgement')} in force"


def label_state_rows(r: LabelsSource) -> list[tuple[str, str, str]] | None:
    """(what, on frozen labels, on amended labels) rows, or None when no amendment is in force."""
    if not r.labels.applied or not r.labels.in_force:
        return None
    fa, fb, fp = r.frozen.arms.a, r.frozen.arms.b, r.frozen.paired
    a, b, p = r.arms.a, r.arms.b, r.paired
    rows = [
        ("hit_rate A", rate(fa.hit_rate), rate(a.hit_rate)),
        ("hit_rate B", rate(fb.hit_rate), rate(b.hit_rate)),
        ("both hit", str(fp.both_hit), str(p.both_hit)),
        ("both miss", str(fp.both_miss), str(p.both_miss)),
        ("miss→hit", str(fp.a_miss_b_hit), str(p.a_miss_b_hit)),
        ("hit→miss", str(fp.a_hit_b_miss), str(p.a_hit_b_miss)),
        ("McNemar p", p_value(fp.mcnemar_p), p_value(p.mcnemar_p)),
    ]
    by = r.labels.by_arm
    rows.append(("amendments from A / B / no evidence", "", f"{by['a']} / {by['b']} / {by['none']}"))
    moved = r.labels.moved
    if moved is not None:
        rows.append(("hit rate moved A / B", "", f"{signed(moved.a)} / {signed(moved.b)}"))
    for c in r.frozen.changed[:FLIP_CAP]:
        rows.append((f"  {c.query_id}", outcome(c.frozen), outcome(c.amended)))
    return rows


def label_blocks(r: LabelsSource) -> list[Block]:
    """Frozen labels beside amended ones, when amendments are in force."""
    states = label_state_rows(r)
    if not states:
        return []
    rows = [list(row) for row in states]
    return [
        Heading(f"Frozen labels beside amended ({r.labels.state})", own=False),
        Table(["", "frozen", "amended"], rows, frozenset({1, 2}), frozenset({1, 2})),
    ]
