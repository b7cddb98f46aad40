"""The slices section: the scored queries partitioned by each slice key (plan, selectivity band,
tenant, query type, …), each arm's numbers per slice and B against A on the decision measure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from triage.core.views.slices import KEYS as SLICE_KEYS
from triage.report.arms import num
from triage.report.blocks import Block, Heading, Para, Table
from triage.report.cells import NONE, SLICE_CAP, delta, interval, rate
from triage.report.columns import Column, cells_of, titles

if TYPE_CHECKING:
    from triage.core.measures.significance import SliceComparisons
    from triage.core.views.slices import ArmSlice, Slice
    from triage.workspace.results import Results


@dataclass(frozen=True, slots=True)
class ArmSliceRow:
    hit_rate: float | None
    recall: float | None
    short_lists: int
    noise_band: float | None
    wilson_low: float | None  # Wilson 95% interval of the hit rate
    wilson_high: float | None
    n_eligible_zero: int


@dataclass(frozen=True, slots=True)
class SliceComparison:
    """B against A on one measure in one slice (core/views/slices.py `slice_comparisons`). A figure
    not computed is None (null), with `reason` saying why there is no p."""

    n: int  # the slice's queries both arms are compared on
    delta: float | None  # mean(B − A) over them
    p: float | None  # two-sided: the paired t-test, or exact McNemar for a binary measure (`test`)
    q_bh: float | None  # p adjusted by Benjamini–Hochberg across the slices of the same key
    test: str  # "t" | "mcnemar"
    reason: str | None  # why there is no p (significance.NoTest); None when tested

    @property
    def moved(self) -> bool:
        """Beyond noise: q < 0.05."""
        return self.q_bh is not None and self.q_bh < Q_MOVED


Q_MOVED = 0.05  # a slice whose BH q is below this moved beyond noise


@dataclass(frozen=True, slots=True)
class SliceRow:
    value: str
    n: int
    a: ArmSliceRow
    b: ArmSliceRow
    hit_to_miss: int
    miss_to_hit: int
    # The decision measure (docs/slices.md "Slices and tenants: which moved beyond noise") → B against A.
    compare: Mapping[str, SliceComparison] = field(default_factory=dict)

    @property
    def b_below_a(self) -> bool:
        a, b = self.a.hit_rate, self.b.hit_rate
        return a is not None and b is not None and b < a


@dataclass(frozen=True)
class Partition:
    sum: int  # the slices' n added up
    scored: int
    ok: bool  # sum == scored


class SlicesSource(Protocol):
    """What the slices' cells read of the report."""

    @property
    def slices(self) -> Mapping[str, tuple[SliceRow, ...]]: ...
    @property
    def partition(self) -> Mapping[str, Partition]: ...


def _arm_slice(a: ArmSlice) -> ArmSliceRow:
    return ArmSliceRow(
        num(a.hit_rate),
        num(a.recall),
        a.short_lists,
        num(a.noise_band),
        num(a.wilson_low),
        num(a.wilson_high),
        a.n_eligible_zero,
    )


def slice_compare(c: SliceComparisons, i: int) -> SliceComparison:
    """Slice `i` of one key's comparisons (docs/slices.md "Slices and tenants: which moved beyond noise")."""
    why = c.reasons[i]
    return SliceComparison(
        int(c.n[i]), num(c.delta[i]), num(c.p[i]), num(c.q[i]), c.test, None if why is None else why.value
    )


def slice_row(s: Slice, compared: dict[str, SliceComparison] | None = None) -> SliceRow:
    return SliceRow(
        s.value, s.n, _arm_slice(s.a), _arm_slice(s.b), s.hit_to_miss, s.miss_to_hit, compared or {}
    )


def slices_of(r: Results, n_scored: int) -> tuple[dict[str, tuple[SliceRow, ...]], dict[str, Partition]]:
    out, partition = {}, {}
    for key, rows in r.slices.items():
        c = r.slice_tests[key]
        out[key] = tuple(slice_row(s, {r.decision: slice_compare(c, i)}) for i, s in enumerate(rows))
        total = sum(s.n for s in rows)
        partition[key] = Partition(total, n_scored, total == n_scored)
    return out, partition


def _elig0(s: SliceRow) -> str:
    zero = s.a.n_eligible_zero + s.b.n_eligible_zero
    return str(zero) if zero else ""


N = "Scored queries in this tenant or slice."


HIT_A = "Arm A's hit rate at k in this row."


HIT_B = "Arm B's hit rate at k in this row."


B_MINUS_A = "B's hit rate minus A's for that row."


B_95 = "The Wilson 95% interval of B's hit rate: with few queries it is wide."


H2M = "Flips hit→miss (regressions) in this row."


M2H = "Flips miss→hit (wins) in this row."


DELTA_Q = (
    "B − A on the decision measure (the first measure named, else the hit rate at k) over the row's "
    "queries, and its q: the p (paired t, or McNemar for a 0/1 measure) adjusted by Benjamini–Hochberg "
    "across the rows of the list; * marks q < 0.05, a move beyond noise."
)


SLICES: tuple[Column[SliceRow], ...] = (
    Column(
        "value",
        "The slice: one value of the slice key (a plan, a selectivity band, a tenant, …).",
        lambda s: s.value,
        18,
    ),
    Column("n", N, lambda s: str(s.n), 5, right=True),
    Column("hit A", HIT_A, lambda s: rate(s.a.hit_rate), 5, right=True),
    Column("hit B", HIT_B, lambda s: rate(s.b.hit_rate), 5, right=True),
    Column("B 95%", B_95, lambda s: interval(s.b.wilson_low, s.b.wilson_high), 14, True, wide=True),
    Column("B−A", B_MINUS_A, lambda s: delta(s.a.hit_rate, s.b.hit_rate), 6, right=True),
    Column("rec A", "Arm A's recall at k in this slice.", lambda s: rate(s.a.recall), 5, True, True),
    Column("rec B", "Arm B's recall at k in this slice.", lambda s: rate(s.b.recall), 5, True, True),
    Column("h→m", H2M, lambda s: str(s.hit_to_miss), 4, right=True, narrow=3),
    Column("m→h", M2H, lambda s: str(s.miss_to_hit), 4, right=True, narrow=3),
    Column(
        "short",
        "Queries whose arm returned fewer than k results, A/B.",
        lambda s: f"{s.a.short_lists}/{s.b.short_lists}",
        5,
        right=True,
    ),
    Column(
        "elig=0",
        "Queries whose filter matched nothing (n_eligible = 0): counted in n, not in the rates.",
        _elig0,
        6,
        right=True,
    ),
    Column("Δ q", DELTA_Q, lambda s: moved(s.compare), 13, right=True),
)


LEGEND = (
    "B 95%: Wilson 95% interval of B's hit rate; h→m, m→h: flips each way; short: lists shorter "
    "than k, A/B; elig=0: filter matched nothing (in n, not in the rates); sel.: median "
    "selectivity; rec: recall; Δ q: B − A on the decision measure and its Benjamini–Hochberg q "
    "across the key's slices (* q < 0.05: moved beyond noise)"
)


def moved(compare: Mapping[str, SliceComparison]) -> str:
    """The decision measure's Δ and BH q in one slice: "+0.21 q 0.22", "+0.15 q <.01*" (* when
    q < 0.05), "+0.00 q –" when untested, "–" when not compared."""
    c = next(iter(compare.values()), None)
    if c is None or c.delta is None:
        return NONE
    q = NONE if c.q_bh is None else "<.01" if c.q_bh < 0.01 else f"{c.q_bh:.2f}"
    return f"{c.delta:+.2f} q {q}" + ("*" if c.moved else "")


def decision_line(r: SlicesSource) -> str:
    """Which measure the Δ q column compares on, and by which test ("" when no slice is compared)."""
    for rows in r.slices.values():
        for name, c in (rows[0].compare if rows else {}).items():
            test = "exact McNemar" if c.test == "mcnemar" else "paired t-test"
            return f"Δ q compares B with A on {name} ({test} per slice, q: Benjamini–Hochberg per key)"
    return ""


def unfilled_slices() -> str:
    """The line the slices show when no slice key is in the inputs."""
    keys = ", ".join(f"`{k}`" for k in SLICE_KEYS).replace("`selectivity`", "`n_eligible` (selectivity)")
    return f"Slices: none of {keys} in the runs or the queries file to break the numbers down by."


def slice_blocks(r: SlicesSource) -> list[Block]:
    if not r.slices:
        return [Para(unfilled_slices(), own=True)]
    out: list[Block] = []
    for key, rows in r.slices.items():
        part = r.partition[key]
        out.append(Heading(f"By {key}"))
        ok = "." if part.ok else ": these slices do not partition the scored queries."
        out.append(Para(f"n sums to {part.sum} of {part.scored} scored{ok}", own=True))
        out.append(Table(titles(SLICES), [cells_of(SLICES, s) for s in rows[:SLICE_CAP]]))
    return [*out, *legend_blocks(r)] if out else out


def legend_blocks(r: SlicesSource) -> list[Block]:
    """What the slice and tenant columns mean, and which slices moved beyond noise."""
    line = decision_line(r)
    return [Para(LEGEND, note=True), *([Para(line)] if line else [])]
