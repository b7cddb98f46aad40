"""The tenants section: every tenant's numbers, worst first, against the hit-rate floor; its types,
built from core/views/slices.py's tenants, its columns (the reports' and the app's) and cells.

A tenants column is declared here once (`TENANTS`): its title, its cell, its sentence. The text,
Markdown and HTML reports, the app's tenants screen, its `?` and docs/keys.md read it from there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple, Protocol

from triage.core.views.slices import RATE_DIGITS, RECALL
from triage.report.arms import ByArm, num
from triage.report.blocks import Block, Heading, Para, Table
from triage.report.cells import BAR, NONE, SLICE_CAP, bar, delta, floor, interval, rate, share
from triage.report.columns import POSITION, TENANT, Column, cells_of, titles
from triage.report.sections.slices import (
    B_95,
    B_MINUS_A,
    DELTA_Q,
    H2M,
    HIT_A,
    HIT_B,
    M2H,
    N,
    SliceComparison,
    SlicesSource,
    legend_blocks,
    moved,
    slice_compare,
)

if TYPE_CHECKING:
    from triage.core.measures.significance import SliceComparisons
    from triage.core.views.slices import Tenant, Tenants


@dataclass(frozen=True, slots=True)
class TenantRow:
    tenant: str
    n: int
    hit_rate_a: float | None
    hit_rate_b: float | None
    delta: float | None  # B − A
    hit_to_miss: int
    miss_to_hit: int
    plan: str | None  # B's most used plan for the tenant's queries
    plan_share: float  # that plan's share of the tenant's scored queries
    median_selectivity: float | None
    few: bool
    noise_band_b: float | None
    wilson_low_b: float | None  # Wilson 95% interval of B's hit rate
    wilson_high_b: float | None
    judged_at_k_b: float | None  # B's judged@k over the tenant's queries: how much of its top k is labelled
    compare: Mapping[str, SliceComparison] = field(default_factory=dict)  # as SliceRow's
    # Against exact truth: each arm's recall at k over min(k, n_eligible), what tenants are ranked on
    recall: ByArm[float | None] | None = field(default=None, metadata={"omit_empty": True})

    @property
    def ranked_b(self) -> float | None:
        """B's figure the tenants are ranked and floored on: its recall against exact truth, else its
        hit rate; to RATE_DIGITS decimals (a mean of recalls is a sum of floats)."""
        rate = self.hit_rate_b if self.recall is None else self.recall.b
        return None if rate is None else round(rate, RATE_DIGITS)

    def below(self, floor: float) -> bool:
        return self.ranked_b is not None and self.ranked_b < floor


class TenantOrder(Enum):
    """How the tenants are listed, worst first (JSON `tenants.order`)."""

    # B's hit rate (against exact truth: recall) ascending, then more queries first, then the name
    HIT_RATE = "hit_rate_b"
    LOWER_BOUND = "wilson_low_b"  # the low end of B's 95% interval, then its high end, then the name

    @property
    def label(self) -> str:
        return _ORDER_LABELS[self]


_ORDER_LABELS = {
    TenantOrder.HIT_RATE: "worst first by B",
    TenantOrder.LOWER_BOUND: "worst first by the low end of B's 95% interval",
}


def _lower_bound_key(r: TenantRow) -> tuple[bool, float, float, str]:
    low, high = r.wilson_low_b, r.wilson_high_b
    return (low is None, low or 0.0, high or 0.0, r.tenant)


@dataclass(frozen=True)
class TenantsSection:
    floor: float
    below_floor: ByArm[int]
    p5: ByArm[float | None]
    worst: tuple[TenantRow, ...]  # the first three rows
    rows: tuple[TenantRow, ...]  # every tenant, worst first in `order`
    order: TenantOrder = TenantOrder.HIT_RATE
    # What `order`'s rate, the floor and the 5th percentile read: "recall@10" against exact truth
    # (each row's `recall`); None: the hit rate
    measure: str | None = field(default=None, metadata={"omit_empty": True})

    def below(self) -> list[TenantRow]:
        """Tenants whose B hit rate (against exact truth: recall) is below the floor, worst first."""
        return [r for r in self.rows if r.below(self.floor)]

    @cached_property
    def scored(self) -> int:
        """The scored queries of every tenant together: what a tenant's share is of."""
        return sum(r.n for r in self.rows)

    def ordered(self, order: TenantOrder) -> TenantsSection:
        """The same tenants listed in `order` (a tenant with nothing judged last)."""
        if order is self.order:
            return self
        if order is TenantOrder.LOWER_BOUND:
            rows = tuple(sorted(self.rows, key=_lower_bound_key))
        else:
            rows = tuple(
                sorted(self.rows, key=lambda r: (r.ranked_b is None, r.ranked_b or 0.0, -r.n, r.tenant))
            )
        return replace(self, rows=rows, worst=rows[: len(self.worst)], order=order)


class TenantsSource(SlicesSource, Protocol):
    """What the tenants' blocks read of the report."""

    @property
    def tenants(self) -> TenantsSection | None: ...


def tenant_row(x: Tenant, compared: dict[str, SliceComparison] | None = None) -> TenantRow:
    s = x.slice
    return TenantRow(
        tenant=x.name,
        n=s.n,
        hit_rate_a=num(s.a.hit_rate),
        hit_rate_b=num(s.b.hit_rate),
        delta=num(x.delta),
        hit_to_miss=s.hit_to_miss,
        miss_to_hit=s.miss_to_hit,
        plan=x.plan,
        plan_share=x.plan_share,
        median_selectivity=num(x.median_selectivity),
        few=x.few,
        noise_band_b=num(s.b.noise_band),
        wilson_low_b=num(s.b.wilson_low),
        wilson_high_b=num(s.b.wilson_high),
        judged_at_k_b=num(x.judged_b),
        compare=compared or {},
    )


def tenants_section(t: Tenants | None, c: SliceComparisons | None, name: str) -> TenantsSection | None:
    if t is None or c is None:
        return None
    rows = tuple(tenant_row(x, {name: slice_compare(c, i)}) for i, x in enumerate(t.rows))
    if t.measure == RECALL:  # against exact truth: each tenant's recall, what they are ranked on
        rows = tuple(
            replace(row, recall=ByArm(num(x.slice.a.recall), num(x.slice.b.recall)))
            for row, x in zip(rows, t.rows, strict=True)
        )
    return TenantsSection(
        floor=t.floor,
        below_floor=ByArm(t.below_floor["a"], t.below_floor["b"]),
        p5=ByArm(num(t.p5["a"]), num(t.p5["b"])),
        worst=rows[: len(t.worst)],
        rows=rows,
        measure=name if t.measure == RECALL else None,
    )


def plan(name: str | None, share: float) -> str:
    """A tenant's dominant plan with its share: "scan (100%)"."""
    return f"{name} ({share:.0%})" if name else NONE


def selectivity(x: float | None) -> str:
    return NONE if x is None else f"{x:.2%}"


def tenant_marks(t: TenantRow, floor_at: float) -> str:
    return ", ".join(m for m, on in (("< floor", t.below(floor_at)), ("few", t.few)) if on)


def below_floor(t: TenantsSection) -> str:
    """ "2 below the floor 0.80 in A, 3 in B"; against exact truth "tenants below 0.80 recall: 2 in
    A, 3 in B"."""
    if t.measure is not None:
        return f"tenants below {floor(t.floor)} recall: {t.below_floor.a} in A, {t.below_floor.b} in B"
    return f"{t.below_floor.a} below the floor {floor(t.floor)} in A, {t.below_floor.b} in B"


def p5(t: TenantsSection) -> str:
    what = "hit rate" if t.measure is None else t.measure
    return f"5th-percentile tenant {what} A {rate(t.p5.a)}, B {rate(t.p5.b)}"


def tenant_summary(t: TenantsSection) -> str:
    of = f" ({t.measure})" if t.measure is not None else ""
    return (
        f"floor {floor(t.floor)}{of}: {t.below_floor.a} tenants below it in A, {t.below_floor.b} in B; "
        f"{p5(t)}; {len(t.rows)} tenants, {t.order.label}"
    )


def below_floor_line(t: TenantsSection, show: int = 3) -> str:
    """ "2 tenants below 0.80 in B: acme, globex": the overview's line, the first `show` named."""
    names = [r.tenant for r in t.below()]
    head = f"{len(names)} tenants below {floor(t.floor)} in B"
    if t.measure is not None:
        head = f"tenants below {floor(t.floor)} recall in B: {len(names)}"
    if not names:
        return head
    return f"{head}: {', '.join(names[:show])}{' …' if len(names) > show else ''}"


class TenantLine(NamedTuple):
    """A tenants-table row: its 1-based position, the tenant, the section listing it, and the cells
    of a full bar (the app's bars)."""

    i: int
    row: TenantRow
    tenants: TenantsSection
    bar: int = BAR


def tenant_lines(tenants: TenantsSection, upto: int | None = None) -> list[TenantLine]:
    """The first `upto` tenants (None: all) as rows of a tenants table."""
    return [TenantLine(i, x, tenants) for i, x in enumerate(tenants.rows[:upto], 1)]


def _marks(t: TenantLine) -> str:
    return tenant_marks(t.row, t.tenants.floor)


def _bar(x: float | None, t: TenantLine) -> str:
    return f"{bar(x, t.tenants.floor, t.bar)} {rate(x)}"


MARKS = "The row's marks: < floor and few."


TENANTS: tuple[Column[TenantLine], ...] = (
    Column("#", POSITION, lambda t: str(t.i), 3, right=True),
    Column("tenant", TENANT, lambda t: t.row.tenant, 20, narrow=19),
    Column("n", N, lambda t: str(t.row.n), 5, right=True),
    Column(
        "n %",
        "The tenant's share of the scored queries (its n over every tenant's): how much it weighs in "
        "the blended rates.",
        lambda t: share(t.row.n, t.tenants.scored),
        4,  # "100%"
        right=True,
        wide=True,
    ),
    Column("hit A", HIT_A, lambda t: rate(t.row.hit_rate_a), 5, right=True),
    Column("hit B", HIT_B, lambda t: rate(t.row.hit_rate_b), 5, right=True),
    Column("B−A", B_MINUS_A, lambda t: delta(t.row.hit_rate_a, t.row.hit_rate_b), 6, True, wide=True),
    Column("B 95%", B_95, lambda t: interval(t.row.wilson_low_b, t.row.wilson_high_b), 14, True, True),
    Column(
        "judged B",
        "The mean share of B's top k the labels judge (gold or not relevant) over the tenant's queries: "
        "where it is low, a miss may be a passage nobody labelled.",
        lambda t: rate(t.row.judged_at_k_b),
        8,
        right=True,
        wide=True,
    ),
    Column("h→m", H2M, lambda t: str(t.row.hit_to_miss), 3, right=True),
    Column("m→h", M2H, lambda t: str(t.row.miss_to_hit), 3, right=True),
    Column(
        "plan",
        "The plan B used most for the tenant's queries, with its share.",
        lambda t: plan(t.row.plan, t.row.plan_share),
        11,
        wide=True,
    ),
    Column(
        "sel.",
        "The median selectivity: the share of the corpus the query's filter let through.",
        lambda t: selectivity(t.row.median_selectivity),
        7,
        right=True,
        wide=True,
    ),
    Column("Δ q", DELTA_Q, lambda t: moved(t.row.compare), 13, right=True),
    Column("", MARKS, _marks),
)


# The app's bars (`b`): each arm's hit rate drawn, ┃ at the floor, then the rate.
NARROW_BAR = 10  # cells of a full bar on the app's narrow layout (BAR otherwise)


BAR_A = "Arm A's hit rate, as a bar."


BAR_B = "Arm B's hit rate, as a bar."


TENANT_BARS: tuple[Column[TenantLine], ...] = (
    Column("#", POSITION, lambda t: str(t.i), 4, right=True),
    Column("tenant", TENANT, lambda t: t.row.tenant, 24, narrow=19),
    Column("n", N, lambda t: str(t.row.n), 5, right=True),
    Column("A", BAR_A, lambda t: _bar(t.row.hit_rate_a, t), BAR + 7, narrow=NARROW_BAR + 6),
    Column("B", BAR_B, lambda t: _bar(t.row.hit_rate_b, t), BAR + 7, narrow=NARROW_BAR + 6),
    Column("", MARKS, _marks),
)


def _recall(t: TenantLine, side: str) -> float | None:
    return None if t.row.recall is None else getattr(t.row.recall, side)


# Against exact truth the tenants are ranked on recall at k: it stands where the hit rate does.
RECALL_A = "Arm A's recall at k in this row: against exact truth, over min(k, n_eligible)."
RECALL_B = "Arm B's recall at k in this row: against exact truth, over min(k, n_eligible)."
_BY_RECALL: dict[str, Column[TenantLine]] = {
    "hit A": Column("rec A", RECALL_A, lambda t: rate(_recall(t, "a")), 5, right=True),
    "hit B": Column("rec B", RECALL_B, lambda t: rate(_recall(t, "b")), 5, right=True),
    "B−A": Column(
        "B−A",
        "B's recall minus A's for that row.",
        lambda t: delta(_recall(t, "a"), _recall(t, "b")),
        6,
        True,
        wide=True,
    ),
    "A": Column(
        "A", "Arm A's recall, as a bar.", lambda t: _bar(_recall(t, "a"), t), BAR + 7, narrow=NARROW_BAR + 6
    ),
    "B": Column(
        "B", "Arm B's recall, as a bar.", lambda t: _bar(_recall(t, "b"), t), BAR + 7, narrow=NARROW_BAR + 6
    ),
}


RECALL_COLUMNS = (_BY_RECALL["hit A"], _BY_RECALL["hit B"])  # what `?` adds to the tenants' columns


def tenant_columns(tenants: TenantsSection | None, bars: bool = False) -> tuple[Column[TenantLine], ...]:
    """The tenants table's columns (`bars`: the app's bars): TENANTS, or against exact truth (the
    section's `measure`) with each arm's recall where its hit rate stands, and no interval (B 95% is
    the interval of B's hit rate: beside recall it would read as recall's)."""
    columns = TENANT_BARS if bars else TENANTS
    if tenants is None or tenants.measure is None:
        return columns
    return tuple(_BY_RECALL.get(c.title, c) for c in columns if c.title != "B 95%")


UNFILLED = "Tenants: no `tenant` column in the runs or the queries file, so no tenant is ranked."


def tenant_blocks(r: TenantsSource) -> list[Block]:
    t = r.tenants
    if t is None:
        return [Para(UNFILLED, own=True)]
    out: list[Block] = [Heading(f"Tenants, {t.order.label}"), Para(tenant_summary(t))]
    shown = tenant_columns(t)
    rows = [cells_of(shown, x) for x in tenant_lines(t, SLICE_CAP)]
    # the HTML aligns the counts and rates right; the interval, the selectivity and Δ q read as text
    numeric = [c.right and c.title not in ("B 95%", "sel.", "Δ q") for c in shown]
    out.append(Table(titles(shown), rows, frozenset(i for i, right in enumerate(numeric) if right)))
    if len(t.rows) > SLICE_CAP:
        more = len(t.rows) - SLICE_CAP
        out.append(Para(f"… {more} more tenants (`--format json` lists them all).", own=True))
    return out if r.slices else [*out, *legend_blocks(r)]
