"""The cost section: what the change cost, each figure with where it came from (a metadata key, a
column, the corpus), and each slice's own latency percentiles (core/views/cost.py)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from triage.core.checks.model import Check
from triage.report.arms import ByArm
from triage.report.blocks import Block, Heading, Para, Table, all_but, numeric
from triage.report.cells import NONE, SLICE_CAP
from triage.report.sections.checks import check_table

if TYPE_CHECKING:
    from triage.core.views.cost import ArmCost, Cost, Figure


@dataclass(frozen=True, slots=True)
class Sourced:
    """A figure and where it came from: a metadata key, a column, the corpus (None: unknown)."""

    value: float | None
    source: str


@dataclass(frozen=True)
class ArmCostSection:
    """One arm's cost (core/views/cost.py)."""

    n_chunks: Sourced
    latency_p50_ms: Sourced
    latency_p95_ms: Sourced
    latency_n: int  # answered queries with a latency_ms
    header_mode: str | None  # run metadata `header_mode`
    heading_tokens: Sourced  # mean tokens of the top-k chunks' heading paths, prepended or not
    header_tokens: Sourced  # the same as the arm prepends it (0 for header_mode none)
    header_tax: Sourced  # k × header_tokens: tokens added to each answered query
    top_k_chunks: int  # ids of the top k (over the answered queries) found in the corpus
    index_bytes: Sourced | None  # None: not in the run's metadata
    ingest_seconds: Sourced | None
    embed_input_tokens_mean: Sourced | None


@dataclass(frozen=True, slots=True)
class SliceLatencyRow:
    """One slice's own latency percentiles (ms) over its scored queries with a latency."""

    key: str
    value: str
    n: int
    n_a: int
    n_b: int
    p50_a: float | None
    p95_a: float | None
    p50_b: float | None
    p95_b: float | None


@dataclass(frozen=True)
class CostSection:
    arms: ByArm[ArmCostSection]
    corpus_header_tokens: Sourced  # mean header tokens over every corpus chunk (the closure check)
    slices: tuple[SliceLatencyRow, ...]  # every slice key, in the slices' order


class CostSource(Protocol):
    """What the cost's blocks read of the report."""

    @property
    def k(self) -> int: ...
    @property
    def cost(self) -> CostSection | None: ...
    @property
    def checks(self) -> tuple[Check, ...]: ...


def measured(x: float | None) -> float | None:
    """A figure for JSON: None when unknown; a whole count stays an integer."""
    if x is None or math.isnan(x):
        return None
    return x if isinstance(x, int) else float(x)


def _sourced(f: Figure) -> Sourced:
    return Sourced(measured(f.value), f.source)


def _arm_cost(c: ArmCost) -> ArmCostSection:
    def meta(key: str) -> Sourced | None:
        f = c.meta.get(key)
        return None if f is None else _sourced(f)

    return ArmCostSection(
        n_chunks=_sourced(c.n_chunks),
        latency_p50_ms=_sourced(c.latency_p50),
        latency_p95_ms=_sourced(c.latency_p95),
        latency_n=c.latency_n,
        header_mode=c.header_mode,
        heading_tokens=_sourced(c.heading_tokens),
        header_tokens=_sourced(c.header_tokens),
        header_tax=_sourced(c.header_tax),
        top_k_chunks=c.top_k_chunks,
        index_bytes=meta("index_bytes"),
        ingest_seconds=meta("ingest_seconds"),
        embed_input_tokens_mean=meta("embed_input_tokens_mean"),
    )


def cost_section(c: Cost) -> CostSection:
    return CostSection(
        arms=ByArm(_arm_cost(c.a), _arm_cost(c.b)),
        corpus_header_tokens=_sourced(c.corpus_header_tokens),
        slices=tuple(
            SliceLatencyRow(
                s.key,
                s.value,
                s.n,
                s.n_a,
                s.n_b,
                measured(s.p50_a),
                measured(s.p95_a),
                measured(s.p50_b),
                measured(s.p95_b),
            )
            for s in c.slices
        ),
    )


COST_HEAD = ["figure", "A", "B", "B − A", "source A", "source B"]


LATENCY_HEAD = ["slice", "n", "p50 A", "p50 B", "p95 A", "p95 B"]


COST_NOTE = (
    "header tax: k × the mean tokens (≈ words × 4/3) of the heading paths the arm prepends to "
    "its top-k chunks, added to every answered query; latency by slice (the report's) takes each "
    "slice's own percentiles"
)


def figure(x: float | None, digits: int = 1) -> str:
    """A measured amount: "16.7", "2,273,600" with `digits` 0 ("–" when unknown)."""
    return NONE if x is None else f"{x:,.{digits}f}"


def _diff(a: float | None, b: float | None, digits: int = 1) -> str:
    return NONE if a is None or b is None else f"{b - a:+,.{digits}f}"


def cost_rows(c: CostSection, k: int) -> list[list[str]]:
    """[figure, A, B, B − A, source A, source B]: chunks, latency, header tokens and tax, then
    the metadata figures either arm records."""
    a, b = c.arms.a, c.arms.b
    rows: list[tuple[str, Sourced, Sourced, int]] = [
        ("chunks", a.n_chunks, b.n_chunks, 0),
        ("latency p50 ms", a.latency_p50_ms, b.latency_p50_ms, 1),
        ("latency p95 ms", a.latency_p95_ms, b.latency_p95_ms, 1),
        (f"heading-path tokens, top {k} mean", a.heading_tokens, b.heading_tokens, 1),
        ("header tokens prepended, mean", a.header_tokens, b.header_tokens, 1),
        (f"header tax / query (k = {k})", a.header_tax, b.header_tax, 1),
    ]
    unknown = Sourced(None, "not recorded")
    for name, key, digits in (
        ("index bytes", "index_bytes", 0),
        ("ingest seconds", "ingest_seconds", 1),
        ("embedding input tokens, mean", "embed_input_tokens_mean", 1),
    ):
        fa, fb = getattr(a, key), getattr(b, key)
        if fa is not None or fb is not None:
            rows.append((name, fa or unknown, fb or unknown, digits))
    return [
        [name, figure(x.value, d), figure(y.value, d), _diff(x.value, y.value, d), x.source, y.source]
        for name, x, y, d in rows
    ]


def cost_recorded(c: CostSection) -> bool:
    """Whether either arm records any figure of the cost (else the table is all dashes)."""
    return any(
        f is not None and f.value is not None
        for arm in (c.arms.a, c.arms.b)
        for f in (
            arm.n_chunks,
            arm.latency_p50_ms,
            arm.heading_tokens,
            arm.header_tokens,
            arm.index_bytes,
            arm.ingest_seconds,
            arm.embed_input_tokens_mean,
        )
    )


def cost_line(c: CostSection, k: int) -> str:
    """The overview's one line: "latency p50 16.1 → 15.0 ms, p95 33.1 → 34.9 ms; header tax …"."""
    a, b = c.arms.a, c.arms.b
    return (
        f"latency p50 {figure(a.latency_p50_ms.value)} → {figure(b.latency_p50_ms.value)} ms, "
        f"p95 {figure(a.latency_p95_ms.value)} → {figure(b.latency_p95_ms.value)} ms; header tax "
        f"{figure(a.header_tax.value)} → {figure(b.header_tax.value)} tokens per query (k = {k}); "
        f"chunks {figure(a.n_chunks.value, 0)} / {figure(b.n_chunks.value, 0)}"
    )


def latency_rows(c: CostSection) -> list[tuple[str, list[str]]]:
    """(key, [value, n, p50 A, p50 B, p95 A, p95 B]) per slice, the first SLICE_CAP of each key."""
    out: list[tuple[str, list[str]]] = []
    seen: dict[str, int] = {}
    for s in c.slices:
        seen[s.key] = seen.get(s.key, 0) + 1
        if seen[s.key] <= SLICE_CAP:
            out.append(
                (
                    s.key,
                    [s.value, str(s.n), figure(s.p50_a), figure(s.p50_b), figure(s.p95_a), figure(s.p95_b)],
                )
            )
    return out


def cost_checks(checks: Iterable[Check]) -> list[Check]:
    """The checks of the cost row (codes `cost.*`)."""
    return [c for c in checks if c.code.startswith("cost.")]


UNFILLED = (
    "What the change cost: nothing recorded; the runs' metadata (n_chunks, index_bytes, "
    "ingest_seconds, embed_input_tokens_mean, header_mode), a `latency_ms` column or a corpus "
    "(--corpus) fills it."
)


def cost_blocks(r: CostSource) -> list[Block]:
    """What the change cost, each figure with its source, its checks, and latency by slice."""
    c = r.cost
    if c is None or not cost_recorded(c):
        return [Para(UNFILLED, own=True)]
    out: list[Block] = [Heading("What the change cost")]
    out.append(Table(COST_HEAD, cost_rows(c, r.k), frozenset({1, 2, 3}), frozenset({0, 1, 2, 3})))
    out.append(Para(COST_NOTE, note=True))
    found = cost_checks(r.checks)
    if found:
        out.append(Heading("The cost's checks", 3))
        out.append(check_table([[check.level, check.code, check.message] for check in found]))
    latency = latency_rows(c)
    if latency:
        out.append(Heading("Latency by slice (ms; each slice's own percentiles)", 3))
        head = ["key", *LATENCY_HEAD]
        out.append(Table(head, [[key, *row] for key, row in latency], numeric(head, 2), all_but(head, 1)))
    return out
