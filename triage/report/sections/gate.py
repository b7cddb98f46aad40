"""The gate section: the floors and measure limits of a gate file (`--gate`), judged on B."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from triage.report.arms import num
from triage.report.blocks import Block, Para, Table, all_but
from triage.report.cells import NONE, floor, interval, p_value, rate, signed

if TYPE_CHECKING:
    from triage.core.gate.apply import Floor, MeasureVerdict
    from triage.workspace.results import GateVerdicts


@dataclass(frozen=True, slots=True)
class FloorRow:
    name: str
    floor: float
    hit_rate: float | None  # B's
    n: int
    noise_band: float | None
    wilson_low: float | None  # Wilson 95% interval of B's hit rate
    wilson_high: float | None
    holds: bool
    distance_se: float | None = None  # (hit_rate − floor) / noise_band; None: no rate or no band
    noisy: bool = False  # |hit_rate − floor| < gate.NOISE_SE standard errors: fires on noise


@dataclass(frozen=True, slots=True)
class MeasureGateRow:
    """One `[measures."NAME"]` table of the gate file, judged (core/gate/apply.py)."""

    name: str  # the measure's canonical name
    floor: float | None  # B's mean must be at least this (None: no floor)
    max_drop: float | None  # B − A must not fall below −max_drop, significantly (None: no limit)
    n: int  # scored queries compared
    mean_a: float | None
    mean_b: float | None
    delta: float | None  # mean(B − A)
    p: float | None  # paired t-test, two-sided
    p_holm: float | None  # p adjusted by Holm across the measures with a max_drop
    mde80: float | None  # the smallest |Δ| the paired t-test finds 4 times in 5 (α = 0.05)
    floor_holds: bool
    drop_holds: bool
    blind: bool  # max_drop < mde80: the gate cannot see the drop it promises to stop
    reason: str | None  # why there is no p (significance.NoTest)

    @property
    def holds(self) -> bool:
        return self.floor_holds and self.drop_holds


@dataclass(frozen=True)
class GateSection:
    path: Path
    holds: bool  # something was evaluated, and every floor holds (and every measure's floor and drop limit)
    floors: tuple[FloorRow, ...]  # broken first
    measures: tuple[MeasureGateRow, ...] = field(default=(), metadata={"omit_empty": True})  # broken first
    evaluated: bool = True  # false: the gate evaluated nothing (no query scored, …), so it fails
    nothing_evaluated: str | None = None  # why it evaluated nothing (core/gate/apply.py)
    # the rate the floors hold B's to: left out for the hit rate; judged against exact truth "recall@10"
    rate: str | None = field(default=None, metadata={"omit_empty": True})

    @property
    def broken(self) -> list[FloorRow]:
        return [f for f in self.floors if not f.holds]

    @property
    def broken_measures(self) -> list[MeasureGateRow]:
        return [m for m in self.measures if not m.holds]


def measure_gate_row(v: MeasureVerdict) -> MeasureGateRow:
    return MeasureGateRow(
        v.name,
        v.limit.floor,
        v.limit.max_drop,
        v.n,
        num(v.mean_a),
        num(v.mean_b),
        v.delta,
        v.p,
        v.p_holm,
        v.mde80,
        v.floor_holds,
        v.drop_holds,
        v.blind,
        v.reason,
    )


def _floor_row(f: Floor) -> FloorRow:
    return FloorRow(
        f.name,
        f.floor,
        num(f.hit_rate),
        f.n,
        num(f.noise_band),
        num(f.wilson_low),
        num(f.wilson_high),
        f.holds,
        f.distance_se if math.isfinite(f.distance_se) else None,
        f.noisy,
    )


def gate_section(g: GateVerdicts, rate: str | None = None) -> GateSection:
    """The gate's verdicts, broken floors first (and broken measures first); a gate that evaluated
    nothing fails (core/gate/apply.py `nothing_evaluated`). `rate`: what the floors read, when not
    the hit rate."""
    rows = sorted(g.floors, key=lambda f: f.holds)
    gated = sorted(g.measures, key=lambda v: v.holds)
    why = g.nothing_evaluated
    return GateSection(
        path=g.path,
        holds=why is None and all(f.holds for f in rows) and all(v.holds for v in gated),
        evaluated=why is None,
        nothing_evaluated=why,
        measures=tuple(measure_gate_row(v) for v in gated),
        floors=tuple(_floor_row(f) for f in rows),
        rate=rate,
    )


MEASURE_GATE_HEAD = ["measure", "A", "B", "floor", "B−A", "max drop", "p (Holm)", "MDE 80%"]


def measure_gate_cells(m: MeasureGateRow) -> list[str]:
    """One gated measure under MEASURE_GATE_HEAD."""
    return [
        m.name,
        rate(m.mean_a),
        rate(m.mean_b),
        NONE if m.floor is None else f"{m.floor:g}",
        signed(m.delta),
        NONE if m.max_drop is None else f"{m.max_drop:g}",
        p_value(m.p_holm),
        rate(m.mde80),
    ]


def measure_verdict(m: MeasureGateRow) -> str:
    """ "below the floor; significant drop; cannot see max_drop (MDE 0.031)" or "holds"."""
    out = [
        *(["below the floor"] if not m.floor_holds else []),
        *(["significant drop"] if not m.drop_holds else []),
    ]
    if m.blind and m.mde80 is not None:
        out.append(f"cannot see a drop of max_drop (MDE {m.mde80:.3f})")
    return "; ".join(out) or "holds"


def nothing_evaluated(g: GateSection) -> str | None:
    """ "no query was scored (…) — nothing evaluated, so the gate fails"; None when it evaluated something."""
    return None if g.evaluated else f"{g.nothing_evaluated} — nothing evaluated, so the gate fails"


def measure_gate_line(g: GateSection) -> str:
    return (
        f"{len(g.broken_measures)} of {len(g.measures)} measures broken by B "
        "(a drop beyond max_drop fails when its paired-t p, Holm-adjusted across the measures, is < 0.05)"
    )


def floor_cells(f: FloorRow) -> list[str]:
    """[floor, B hit rate, minimum, n, B's 95% interval, distance in standard errors]."""
    return [
        f.name,
        rate(f.hit_rate),
        floor(f.floor),
        str(f.n),
        interval(f.wilson_low, f.wilson_high),
        distance_se(f.distance_se),
    ]


def floor_head(g: GateSection) -> list[str]:
    """The floors table's columns; B's rate named as the floors read it."""
    return ["floor", f"B {g.rate or 'hit rate'}", "minimum", "n", "B 95%", "above it (SE)"]


def distance_se(d: float | None) -> str:
    """How far B's hit rate is above a floor, in standard errors: "+0.3 SE", "−1.2 SE"."""
    if d is None:
        return NONE
    if d in (float("inf"), float("-inf")):
        return "∞ SE" if d > 0 else "−∞ SE"
    return f"{d:+.1f} SE".replace("-", "−")


def gate_blocks(g: GateSection | None) -> list[Block]:
    """The gate's verdict, its broken floors (and those that hold on noise), and its measures."""
    out: list[Block] = []
    if not g:
        return out
    failed = g.broken
    empty = nothing_evaluated(g)
    if empty is not None:
        out.append(Para(f"{empty}.", lead="Gate"))
    if g.floors:
        out.append(Para(f"{len(failed)} of {len(g.floors)} floors broken by B.", own=True, lead="Gate"))
    shown = failed + [f for f in g.floors if f.holds and f.noisy]
    if shown:
        verdict = {True: "holds", False: "below"}
        rows = [[*floor_cells(f), verdict[f.holds] + (", fires on noise" if f.noisy else "")] for f in shown]
        head = [*floor_head(g), ""]
        out.append(Table(head, rows, frozenset({1, 2, 3, 5}), all_but(head, 0)))
    if g.measures:
        out.append(Para(f"{measure_gate_line(g)}.", lead="Gate"))
        head = [*MEASURE_GATE_HEAD, ""]
        rows = [[*measure_gate_cells(m), measure_verdict(m)] for m in g.measures]
        out.append(Table(head, rows, frozenset(range(1, len(head) - 1))))
    return out
