"""Each table's columns, declared once: a column's title, its cell, the sentence saying what it
holds, and how it is laid out.

The text, Markdown and HTML reports take their headers and cells from these, the app's tables
theirs (the tenants and slices screens these very ones; the app's own lists declare theirs beside
them, with this type), the app's `?` and docs/keys.md the sentences. A column added here is in every
one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, NamedTuple, TypeVar

from triage.core.text.sanitize import one_line
from triage.report import cells
from triage.report.model import Report, SliceRow, TenantRow, TenantsSection
from triage.report.rows import FlipRow

R = TypeVar("R")


def _blank(row: object) -> str:
    return ""


@dataclass(frozen=True)
class Column(Generic[R]):
    """One column of a table over rows of type `R`."""

    title: str
    means: str  # one sentence: what a cell holds (the app's `?`, docs/keys.md)
    cell: Callable[[R], object] = _blank  # the row's cell; None or "" is an empty cell
    width: int = 0  # the app's cells; 0: a share of what the fixed-width columns leave
    right: bool = False  # a figure: aligned right (the app, the text report)
    wide: bool = False  # wide-only: the app's narrow layout leaves it out
    narrow: int = 0  # the app's width when narrow (0: `width`)
    share: int = 1  # a width-0 column's share of the width left, against the other such columns

    def at(self, narrow: bool) -> Column[R]:
        """The column as laid out at the app's narrow width (`narrow`) or not."""
        return replace(self, width=self.narrow, narrow=0) if narrow and self.narrow else self


def titles(columns: Iterable[Column[Any]]) -> list[str]:
    return [c.title for c in columns]


def cells_of(columns: Iterable[Column[R]], value: R) -> list[str]:
    """A row's cells under `columns`, as text ("" for none)."""
    return [cells.text(c.cell(value)) for c in columns]


def shown(columns: Sequence[Column[R]], hidden: Iterable[str] = (), narrow: bool = False) -> list[Column[R]]:
    """The columns drawn: all but the `hidden` titles and, `narrow`, the wide-only ones, each laid
    out for the width."""
    out = set(hidden)
    return [c.at(narrow) for c in columns if c.title not in out and not (narrow and c.wide)]


# -- tenants and slices --------------------------------------------------------------------------


class TenantLine(NamedTuple):
    """A tenants-table row: its 1-based position, the tenant, the section listing it, and the cells
    of a full bar (the app's bars)."""

    i: int
    row: TenantRow
    tenants: TenantsSection
    bar: int = cells.BAR


def tenant_lines(tenants: TenantsSection, upto: int | None = None) -> list[TenantLine]:
    """The first `upto` tenants (None: all) as rows of a tenants table."""
    return [TenantLine(i, x, tenants) for i, x in enumerate(tenants.rows[:upto], 1)]


def _marks(t: TenantLine) -> str:
    return cells.tenant_marks(t.row, t.tenants.floor)


def _bar(rate: float | None, t: TenantLine) -> str:
    return f"{cells.bar(rate, t.tenants.floor, t.bar)} {cells.rate(rate)}"


def _elig0(s: SliceRow) -> str:
    zero = s.a.n_eligible_zero + s.b.n_eligible_zero
    return str(zero) if zero else ""


POSITION = "The row's position in this list."
TENANT = "The customer (tenant) the query was asked for."
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
MARKS = "The row's marks: < floor and few."

TENANTS: tuple[Column[TenantLine], ...] = (
    Column("#", POSITION, lambda t: str(t.i), 3, right=True),
    Column("tenant", TENANT, lambda t: t.row.tenant, 20, narrow=19),
    Column("n", N, lambda t: str(t.row.n), 5, right=True),
    Column(
        "n %",
        "The tenant's share of the scored queries (its n over every tenant's): how much it weighs in "
        "the blended rates.",
        lambda t: cells.share(t.row.n, t.tenants.scored),
        4,  # "100%"
        right=True,
        wide=True,
    ),
    Column("hit A", HIT_A, lambda t: cells.rate(t.row.hit_rate_a), 5, right=True),
    Column("hit B", HIT_B, lambda t: cells.rate(t.row.hit_rate_b), 5, right=True),
    Column("B−A", B_MINUS_A, lambda t: cells.delta(t.row.hit_rate_a, t.row.hit_rate_b), 6, True, wide=True),
    Column("B 95%", B_95, lambda t: cells.interval(t.row.wilson_low_b, t.row.wilson_high_b), 14, True, True),
    Column("h→m", H2M, lambda t: str(t.row.hit_to_miss), 3, right=True),
    Column("m→h", M2H, lambda t: str(t.row.miss_to_hit), 3, right=True),
    Column(
        "plan",
        "The plan B used most for the tenant's queries, with its share.",
        lambda t: cells.plan(t.row.plan, t.row.plan_share),
        11,
        wide=True,
    ),
    Column(
        "sel.",
        "The median selectivity: the share of the corpus the query's filter let through.",
        lambda t: cells.selectivity(t.row.median_selectivity),
        7,
        right=True,
        wide=True,
    ),
    Column("Δ q", DELTA_Q, lambda t: cells.moved(t.row.compare), 13, right=True),
    Column("", MARKS, _marks),
)


def _recall(t: TenantLine, side: str) -> float | None:
    return None if t.row.recall is None else getattr(t.row.recall, side)


# Against exact truth the tenants are ranked on recall at k: it stands where the hit rate does.
RECALL_A = "Arm A's recall at k in this row: against exact truth, over min(k, n_eligible)."
RECALL_B = "Arm B's recall at k in this row: against exact truth, over min(k, n_eligible)."
_BY_RECALL: dict[str, Column[TenantLine]] = {
    "hit A": Column("rec A", RECALL_A, lambda t: cells.rate(_recall(t, "a")), 5, right=True),
    "hit B": Column("rec B", RECALL_B, lambda t: cells.rate(_recall(t, "b")), 5, right=True),
    "B−A": Column(
        "B−A",
        "B's recall minus A's for that row.",
        lambda t: cells.delta(_recall(t, "a"), _recall(t, "b")),
        6,
        True,
        wide=True,
    ),
}


def tenant_columns(tenants: TenantsSection | None, bars: bool = False) -> tuple[Column[TenantLine], ...]:
    """The tenants table's columns (`bars`: the app's bars): TENANTS, or against exact truth (the
    section's `measure`) with each arm's recall where its hit rate stands, and no interval."""
    columns = TENANT_BARS if bars else TENANTS
    if tenants is None or tenants.measure is None:
        return columns
    if bars:
        return tuple(_BARS_BY_RECALL.get(c.title, c) for c in columns)
    # B 95% is the interval of B's hit rate: beside recall it would read as recall's
    return tuple(_BY_RECALL.get(c.title, c) for c in columns if c.title != "B 95%")


# The app's bars (`b`): each arm's hit rate drawn, ┃ at the floor, then the rate.
NARROW_BAR = 10  # cells of a full bar on the app's narrow layout (cells.BAR otherwise)
BAR_A = "Arm A's hit rate, as a bar."
BAR_B = "Arm B's hit rate, as a bar."

TENANT_BARS: tuple[Column[TenantLine], ...] = (
    Column("#", POSITION, lambda t: str(t.i), 4, right=True),
    Column("tenant", TENANT, lambda t: t.row.tenant, 24, narrow=19),
    Column("n", N, lambda t: str(t.row.n), 5, right=True),
    Column("A", BAR_A, lambda t: _bar(t.row.hit_rate_a, t), cells.BAR + 7, narrow=NARROW_BAR + 6),
    Column("B", BAR_B, lambda t: _bar(t.row.hit_rate_b, t), cells.BAR + 7, narrow=NARROW_BAR + 6),
    Column("", MARKS, _marks),
)
_BARS_BY_RECALL: dict[str, Column[TenantLine]] = {
    "A": Column(
        "A",
        "Arm A's recall, as a bar.",
        lambda t: _bar(_recall(t, "a"), t),
        cells.BAR + 7,
        narrow=NARROW_BAR + 6,
    ),
    "B": Column(
        "B",
        "Arm B's recall, as a bar.",
        lambda t: _bar(_recall(t, "b"), t),
        cells.BAR + 7,
        narrow=NARROW_BAR + 6,
    ),
}

SLICES: tuple[Column[SliceRow], ...] = (
    Column(
        "value",
        "The slice: one value of the slice key (a plan, a selectivity band, a tenant, …).",
        lambda s: s.value,
        18,
    ),
    Column("n", N, lambda s: str(s.n), 5, right=True),
    Column("hit A", HIT_A, lambda s: cells.rate(s.a.hit_rate), 5, right=True),
    Column("hit B", HIT_B, lambda s: cells.rate(s.b.hit_rate), 5, right=True),
    Column("B 95%", B_95, lambda s: cells.interval(s.b.wilson_low, s.b.wilson_high), 14, True, wide=True),
    Column("B−A", B_MINUS_A, lambda s: cells.delta(s.a.hit_rate, s.b.hit_rate), 6, right=True),
    Column("rec A", "Arm A's recall at k in this slice.", lambda s: cells.rate(s.a.recall), 5, True, True),
    Column("rec B", "Arm B's recall at k in this slice.", lambda s: cells.rate(s.b.recall), 5, True, True),
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
    Column("Δ q", DELTA_Q, lambda s: cells.moved(s.compare), 13, right=True),
)


# -- flips ---------------------------------------------------------------------------------------


class FlipLine(NamedTuple):
    """A flips-table row: its 1-based position, the flip, the cut-off k."""

    i: int
    row: FlipRow
    k: int


QUERY = "The query's id, as the query file spells it."
TEXT = "The start of the query's (or chunk's) text."
PLAN_A = "The query plan arm A's run recorded (e.g. ann, postfilter, scan)."
PLAN_B = "The query plan arm B's run recorded."


def gold(arm: str) -> str:
    return (
        f"Where arm {arm} ranked the query's best gold chunk: a rank, (>k) when beyond k, absent when "
        "not stored."
    )


FLIPS: tuple[Column[FlipLine], ...] = (
    Column("#", POSITION, lambda f: str(f.i), right=True),
    Column("query", QUERY, lambda f: f.row.query_id),
    Column("text", TEXT, lambda f: one_line(cells.text(f.row.text), cells.FLIP_TEXT)),
    Column(
        "direction",
        "The flip: hit→miss (a regression) or miss→hit (a win).",
        lambda f: cells.outcome(f.row.direction),
    ),
    Column("tenant", TENANT, lambda f: f.row.tenant),
    Column("gold A", gold("A"), lambda f: cells.rank(f.row.gold_rank_a, f.k), right=True),
    Column("gold B", gold("B"), lambda f: cells.rank(f.row.gold_rank_b, f.k), right=True),
    Column("plan A", PLAN_A, lambda f: f.row.plan_a),
    Column("plan B", PLAN_B, lambda f: f.row.plan_b),
    Column(
        "unjudged A/B",
        "Results in each arm's top k the labels say nothing about, A/B: each might be relevant.",
        lambda f: f"{f.row.unjudged_in_top_k_a}/{f.row.unjudged_in_top_k_b}",
        right=True,
    ),
    Column(
        "hints",
        "The flip's likely causes as short codes, most specific first, then the arm that missed.",
        lambda f: cells.hint_codes(f.row) or cells.NONE,
    ),
)


def flip_columns(r: Report) -> list[Column[FlipLine]]:
    """The flips table's columns: the tenant and plan columns only when the evaluation has
    tenants / plans, the text only when some flip has one (an empty column is not drawn)."""
    hidden = {"text"} if "text" in cells.unfilled(r) else set()
    if "tenant" not in r.slices:
        hidden.add("tenant")
    if "plan" not in r.slices:
        hidden |= {"plan A", "plan B"}
    return shown(FLIPS, hidden)
