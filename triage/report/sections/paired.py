"""The paired section: the 2×2 table of each query's outcome in A and in B at k, McNemar's exact
test on its discordant cells, and the regressions that hold an unjudged passage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from triage.report.arms import num
from triage.report.blocks import Block, Heading, Para, Table
from triage.report.cells import p_value, rate
from triage.report.sections.metrics import MetricsSource, sparse_labels

if TYPE_CHECKING:
    from triage.workspace.results import PairedFigures


@dataclass(frozen=True)
class PairedSection:
    n: int
    both_hit: int
    both_miss: int
    a_hit_b_miss: int
    a_miss_b_hit: int
    mcnemar_p: float | None
    reconciles: bool  # the cells reproduce both hit rates
    regressions_with_unjudged: int  # a_hit_b_miss with an unjudged id in B's top k


class PairedSource(MetricsSource, Protocol):
    """What the paired cells read of the report."""

    @property
    def paired(self) -> PairedSection: ...


def paired_section(f: PairedFigures) -> PairedSection:
    p = f.paired
    return PairedSection(
        p.n,
        p.both_hit,
        p.both_miss,
        p.a_hit_b_miss,
        p.a_miss_b_hit,
        num(f.mcnemar_p),
        f.reconciles,
        f.regressions_with_unjudged,
    )


def paired_rows(p: PairedSection) -> list[list[str]]:
    """The 2×2 table: rows A hit / A miss, columns B hit / B miss."""
    return [
        ["A hit", str(p.both_hit), str(p.a_hit_b_miss)],
        ["A miss", str(p.a_miss_b_hit), str(p.both_miss)],
    ]


def mcnemar(p: PairedSection) -> str:
    return f"McNemar exact p = {p_value(p.mcnemar_p)}"


def flip_counts(p: PairedSection) -> str:
    return f"{p.a_hit_b_miss} hit→miss, {p.a_miss_b_hit} miss→hit"


def unjudged_regressions(r: PairedSource) -> str:
    """ "regressions with an unjudged passage in B's top 5: 6 of 6" (each a possible false one)."""
    p = r.paired
    some = f"{p.regressions_with_unjudged} of {p.a_hit_b_miss}"
    return f"regressions with an unjudged passage in B's top {r.k}: {some}"


def unjudged_why(r: PairedSource) -> str:
    """Beneath that count, why it runs high when the labels are sparse ("" otherwise)."""
    if not (r.paired.regressions_with_unjudged and sparse_labels(r)):
        return ""
    a, b = rate(r.arms.a.judged_at_k), rate(r.arms.b.judged_at_k)
    return f"sparse labels, judged@{r.k} A {a}, B {b}: such a regression may be unlabelled"


def regressions_and_wins(p: PairedSection) -> str:
    """The overview's count of the flips: "6 regressions, 40 wins."."""
    return f"{p.a_hit_b_miss} regressions, {p.a_miss_b_hit} wins."


def paired_blocks(r: PairedSource) -> list[Block]:
    p = r.paired
    out: list[Block] = [Heading("Paired outcomes")]
    out.append(Table(["", "B hit", "B miss"], paired_rows(p), frozenset({1, 2}), frozenset({0, 1, 2})))
    out.append(Para(f"n = {p.n}; {mcnemar(p)}; flips: {flip_counts(p)}.", own=True))
    out.append(Para(f"{unjudged_regressions(r)} (each a possible false regression).", own=True))
    if why := unjudged_why(r):
        out.append(Para(why[:1].upper() + why[1:] + ".", note=True, own=True))
    return out
