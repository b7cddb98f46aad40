"""The holdout section: the metrics on the held-out queries alone (core/checks/holdout.py),
beside the blend of every scored query."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from triage.report.arms import ByArm, num
from triage.report.blocks import Block, Heading, Para, Table, every_column, numeric
from triage.report.cells import delta, p_value, rate
from triage.report.sections.metrics import ArmMeans, arm_means
from triage.report.sections.paired import PairedSection, PairedSource, paired_section

if TYPE_CHECKING:
    from triage.workspace.results import HoldoutFigures


@dataclass(frozen=True)
class HoldoutSection:
    """The metrics on the held-out queries alone (core/checks/holdout.py), beside the blend (`arms`)."""

    rule: str  # "hash" | "tuned_docs"
    fraction: float | None  # the hash rule's held-out fraction
    tuned_docs: Path | None  # the tuned-docs file
    described: str  # the rule in words
    doc_ids: bool  # whether any chunk's document is known (else every count below is 0/unknown)
    n_held_out: int  # scored queries whose every gold chunk is from a held-out document
    n_tuned: int  # scored queries with a gold chunk from a tuned document
    n_unknown: int  # the rest: a gold chunk whose document is unknown
    docs: int  # distinct documents of the corpus
    held_out_docs: int
    arms: ByArm[ArmMeans]  # over the held-out queries
    paired: PairedSection  # A against B over the held-out queries
    noise_band: ByArm[float | None]  # √(p(1−p)/n) of each arm's held-out hit rate


class HoldoutSource(PairedSource, Protocol):
    """What the holdout's cells read of the report."""

    @property
    def n_scored(self) -> int: ...
    @property
    def holdout(self) -> HoldoutSection | None: ...


def holdout_section(f: HoldoutFigures | None) -> HoldoutSection | None:
    """The numbers on the held-out queries alone (core/checks/holdout.py); None without a split."""
    if f is None:
        return None
    qs = f.split
    spec = qs.split.holdout
    return HoldoutSection(
        rule=spec.rule.value,
        fraction=spec.fraction,
        tuned_docs=spec.tuned_docs,
        described=spec.describe(),
        doc_ids=bool(qs.split.known.any()),
        n_held_out=int(qs.held_out.sum()),
        n_tuned=int(qs.tuned.sum()),
        n_unknown=int(qs.unknown.sum()),
        docs=qs.split.n_docs,
        held_out_docs=qs.split.n_held_out_docs,
        arms=ByArm(arm_means(f.paired.a), arm_means(f.paired.b)),
        paired=paired_section(f.paired),
        noise_band=ByArm(num(f.noise_band[0]), num(f.noise_band[1])),
    )


HOLDOUT_HEAD = ["queries", "n", "A hit rate", "B hit rate", "B − A", "hit→miss", "miss→hit", "McNemar p"]


def holdout_rows(r: HoldoutSource) -> list[list[str]] | None:
    """The blend (every scored query) beside the held-out queries alone, under HOLDOUT_HEAD; None
    without a tuning split."""
    h = r.holdout
    if h is None:
        return None
    rows = []
    for name, a, b, p in (
        ("all scored (blend)", r.arms.a.hit_rate, r.arms.b.hit_rate, r.paired),
        ("held out", h.arms.a.hit_rate, h.arms.b.hit_rate, h.paired),
    ):
        rows.append(
            [name, str(p.n), rate(a), rate(b), delta(a, b), str(p.a_hit_b_miss), str(p.a_miss_b_hit)]
            + [p_value(p.mcnemar_p)]
        )
    return rows


def holdout_line(r: HoldoutSource) -> str | None:
    """What the held-out figure covers: "held out: 38 of 200 scored queries …"."""
    h = r.holdout
    if h is None:
        return None
    if not h.doc_ids:
        return f"held out: no figure ({h.described}; no document of any chunk is known)"
    return (
        f"held out: {h.n_held_out} of {r.n_scored} scored queries have every gold chunk in a held-out "
        f"document ({h.held_out_docs} of {h.docs} documents); {h.n_tuned} have gold from tuned "
        f"documents, {h.n_unknown} from unknown ones. {h.described}"
    )


def holdout_summary(r: HoldoutSource) -> str | None:
    """The overview's line: "held out (38 of 200 queries): hit rate 0.526 → 0.684 (+0.158); all
    0.620 → 0.790 (+0.170)"; None without a tuning split."""
    h = r.holdout
    if h is None:
        return None
    a, b = h.arms.a.hit_rate, h.arms.b.hit_rate
    blend_a, blend_b = r.arms.a.hit_rate, r.arms.b.hit_rate
    return (
        f"held out ({h.n_held_out} of {r.n_scored} queries): hit rate {rate(a)} → {rate(b)} "
        f"({delta(a, b)}); all {rate(blend_a)} → {rate(blend_b)} ({delta(blend_a, blend_b)})"
    )


def holdout_blocks(r: HoldoutSource) -> list[Block]:
    rows, line = holdout_rows(r), holdout_line(r)
    if rows is None or line is None:
        return []
    head = HOLDOUT_HEAD
    return [Heading("Held-out documents"), Table(head, rows, numeric(head), every_column(head)), Para(line)]
