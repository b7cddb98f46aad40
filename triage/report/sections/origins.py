"""The origins section: the headline numbers per query origin (real, generated, …) beside the
blend, which figure to quote, and the queries' lexical overlap with their gold
(core/views/origin.py, core/checks/overlap.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from triage.report.arms import ByArm, num
from triage.report.blocks import Block, Heading, Para, Table, all_but, numeric
from triage.report.cells import delta, rate, signed
from triage.report.sections.metrics import ArmMeans, ArmSection, arm_means
from triage.report.sections.paired import PairedSection, paired_section

if TYPE_CHECKING:
    from triage.core.checks.overlap import Quartiles
    from triage.core.views.origin import Quote
    from triage.workspace.results import OriginFigures, OverlapFigures, OverlapGroupFigures


@dataclass(frozen=True)
class OriginRow:
    """The headline numbers over the scored queries of one origin (core/views/origin.py)."""

    origin: str
    arms: ByArm[ArmMeans]
    paired: PairedSection  # its discordant cells are the origin's flips


@dataclass(frozen=True)
class OriginQuote:
    """Real and generated queries both present: quote the real figure (`quote`)."""

    quote: str  # the origin whose figure to quote: "real"
    n_real: int
    n_generated: int
    real: ByArm[float | None]  # hit rate per arm on the real queries
    generated: ByArm[float | None]
    gap: ByArm[float | None]  # generated − real hit rate, per arm


@dataclass(frozen=True)
class Spread:
    """A distribution over some queries: n, quartiles and median (linear interpolation)."""

    n: int
    q1: float | None
    median: float | None
    q3: float | None


@dataclass(frozen=True)
class OverlapGroup:
    """Lexical overlap of a group of queries with their gold (core/checks/overlap.py)."""

    group: str  # "all", "origin:<name>", "hits", "misses"
    body: Spread
    header: Spread
    header_above_body: int  # queries whose heading-path overlap exceeds their body overlap


@dataclass(frozen=True)
class OverlapSection:
    available: bool
    reason: str  # why not, when not available
    threshold: float  # `queries.generated_like` fires at a median body overlap at or above this
    groups: tuple[OverlapGroup, ...]  # "all", then one per origin
    by_arm: ByArm[tuple[OverlapGroup, ...]]  # the arm's hits, then its misses


class OriginsSource(Protocol):
    """What the origins' cells read of the report."""

    @property
    def arms(self) -> ByArm[ArmSection]: ...
    @property
    def paired(self) -> PairedSection: ...
    @property
    def origins(self) -> tuple[OriginRow, ...]: ...
    @property
    def origin_quote(self) -> OriginQuote | None: ...
    @property
    def overlap(self) -> OverlapSection | None: ...


def _origin_row(f: OriginFigures) -> OriginRow:
    return OriginRow(
        f.part.origin, ByArm(arm_means(f.paired.a), arm_means(f.paired.b)), paired_section(f.paired)
    )


def origins_of(
    parts: tuple[OriginFigures, ...], q: Quote | None
) -> tuple[tuple[OriginRow, ...], OriginQuote | None]:
    rows = tuple(_origin_row(p) for p in parts)
    if q is None:
        return rows, None
    return rows, OriginQuote(
        q.real.origin,
        q.real.n,
        q.generated.n,
        ByArm(num(q.real.a.hit_rate), num(q.real.b.hit_rate)),
        ByArm(num(q.generated.a.hit_rate), num(q.generated.b.hit_rate)),
        ByArm(num(q.gap("a")), num(q.gap("b"))),
    )


def _spread(s: Quartiles) -> Spread:
    return Spread(s.n, num(s.q1), num(s.median), num(s.q3))


def _overlap_group(g: OverlapGroupFigures) -> OverlapGroup:
    return OverlapGroup(g.name, _spread(g.body), _spread(g.header), g.header_above_body)


def overlap_section(o: OverlapFigures, threshold: float) -> OverlapSection:
    """The overlap's distributions (all, per origin, per arm's hits and misses); `threshold`: where
    `queries.generated_like` fires."""
    if o.reason:
        return OverlapSection(False, o.reason, threshold, (), ByArm((), ()))
    a, b = o.by_arm
    return OverlapSection(
        True,
        "",
        threshold,
        tuple(map(_overlap_group, o.groups)),
        ByArm(tuple(map(_overlap_group, a)), tuple(map(_overlap_group, b))),
    )


ORIGIN_HEAD = [
    "origin",
    "n",
    "hit A",
    "hit B",
    "B−A",
    "recall A",
    "recall B",
    "mrr A",
    "mrr B",
    "ndcg A",
    "ndcg B",
    "both hit",
    "both miss",
    "h→m",
    "m→h",
]


BLEND = "all (blend)"


def _origin_cells(
    name: str, a: ArmMeans | ArmSection, b: ArmMeans | ArmSection, p: PairedSection
) -> list[str]:
    return [
        name,
        str(p.n),
        rate(a.hit_rate),
        rate(b.hit_rate),
        delta(a.hit_rate, b.hit_rate),
        rate(a.recall),
        rate(b.recall),
        rate(a.mrr),
        rate(b.mrr),
        rate(a.ndcg),
        rate(b.ndcg),
        str(p.both_hit),
        str(p.both_miss),
        str(p.a_hit_b_miss),
        str(p.a_miss_b_hit),
    ]


def origin_rows(r: OriginsSource) -> list[list[str]]:
    """The blend first, then one row per origin (empty without an origin column)."""
    if not r.origins:
        return []
    rows = [_origin_cells(BLEND, r.arms.a, r.arms.b, r.paired)]
    return rows + [_origin_cells(o.origin, o.arms.a, o.arms.b, o.paired) for o in r.origins]


def quote_line(q: OriginQuote) -> str:
    """Which figure to quote when real and generated queries are both present, and the gap."""
    return (
        f"Quote the real figure: hit rate A {rate(q.real.a)} / B {rate(q.real.b)} on {q.n_real} real "
        f"queries. The {q.n_generated} generated queries score A {rate(q.generated.a)} / B "
        f"{rate(q.generated.b)} (generated − real: {signed(q.gap.a)} / {signed(q.gap.b)}); generated "
        "questions reuse their chunk's words and inflate recall."
    )


OVERLAP_HEAD = [
    "queries",
    "n",
    "body q1",
    "body median",
    "body q3",
    "path q1",
    "path median",
    "path q3",
    "path > body",
]


OVERLAP_NOTE = (
    "Overlap: the share of a query's content words found in its closest gold chunk's body, and in "
    "its heading path (path). path > body: queries whose heading path shares more than the body."
)


def _spread_cells(s: Spread) -> list[str]:
    return [rate(s.q1), rate(s.median), rate(s.q3)]


def overlap_rows(o: OverlapSection) -> list[list[str]]:
    """Each group (all, per origin), then each arm's hits and misses."""
    named = [(g.group, g) for g in o.groups]
    named += [(f"{side.upper()} {g.group}", g) for side, groups in o.by_arm.items() for g in groups]
    return [
        [name, str(g.body.n), *_spread_cells(g.body), *_spread_cells(g.header), str(g.header_above_body)]
        for name, g in named
    ]


def overlap_unavailable(o: OverlapSection) -> str:
    return f"Lexical overlap unavailable: {o.reason}."


def origin_blocks(r: OriginsSource) -> list[Block]:
    """Per query origin beside the blend, which figure to quote, and the lexical overlap."""
    out: list[Block] = []
    rows = origin_rows(r)
    if rows:
        head = ORIGIN_HEAD
        out += [Heading("By query origin"), Table(head, rows, numeric(head), all_but(head, 0))]
        if r.origin_quote is not None:
            out.append(Para(quote_line(r.origin_quote), strong=True))
    o = r.overlap
    if o is not None and not o.available:
        out.append(Para(overlap_unavailable(o)))
    elif o is not None:
        out += [Heading("Lexical overlap with the gold")]
        head = OVERLAP_HEAD
        out += [Table(head, overlap_rows(o), numeric(head), all_but(head, 0))]
        out.append(Para(OVERLAP_NOTE, note=True))
    return out
