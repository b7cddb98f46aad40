"""The flips section: every query whose outcome flipped between A and B, hit→miss first, with
each arm's gold rank, plan, unjudged count and the flip's likely causes. Its rows are held as
columns (`rows.Flips`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np
import pyarrow as pa

from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import one_line
from triage.report.blocks import Block, Heading, Para, Table
from triage.report.cells import FLIP_CAP, NONE, outcome, rank, text
from triage.report.columns import (
    PLAN_A,
    PLAN_B,
    POSITION,
    QUERY,
    TENANT,
    TEXT,
    Column,
    cells_of,
    gold,
    shown,
    titles,
)
from triage.report.rows import FlipRow, Flips

if TYPE_CHECKING:
    from triage.core.evaluation import Arm, Evaluation
    from triage.core.views.hints import FlipHints
    from triage.report.sections.slices import SliceRow


class FlipsSource(Protocol):
    """What the flips' cells read of the report."""

    @property
    def k(self) -> int: ...
    @property
    def flips(self) -> Flips: ...
    @property
    def slices(self) -> Mapping[str, tuple[SliceRow, ...]]: ...


def flips_of(ev: Evaluation, hints: FlipHints | None) -> Flips:
    if hints is None:
        return Flips.none()
    order = ev.flips
    a, b = ev.a, ev.b
    at = pa.array(order)

    def rank(arm: Arm) -> pa.Array:  # null: the gold is absent from the stored depth
        r = arm.judged.gold_rank[order]
        return pa.array(r, pa.int64(), mask=r == 0)

    columns = {
        "query_id": ev.query_ids.take(at),
        "direction": pa.array(
            np.where(a.judged.hit[order], Outcome.HIT_TO_MISS, Outcome.MISS_TO_HIT), pa.int8()
        ),
        "gold_rank_a": rank(a),
        "gold_rank_b": rank(b),
        "depth_a": pa.array(a.depth[order], pa.int64()),
        "depth_b": pa.array(b.depth[order], pa.int64()),
        "plan_a": a.text_at("plan", order),
        "plan_b": b.text_at("plan", order),
        "tenant": ev.query_column("tenant", order),  # queries file, else runs
        "unjudged_in_top_k_a": pa.array(a.unjudged_top[order], pa.int64()),
        "unjudged_in_top_k_b": pa.array(b.unjudged_top[order], pa.int64()),
        "text": ev.query_column("text", order),
    }
    return Flips(columns, hints)


def capped_flips(flips: Flips) -> tuple[list[FlipRow], int]:
    """The first FLIP_CAP flips of each direction (order kept) and how many were left out."""
    return flips.first_of_each(FLIP_CAP)


FLIP_TEXT = 40  # characters of a query's text shown in a flips table


def hint_codes(f: FlipRow) -> str:
    """The flip's hints as short codes, most specific first, and the arm they speak of (the one
    that missed): "short plan (B)"."""
    if not f.hints:
        return ""
    return " ".join(h.kind.code for h in f.hints) + f" ({f.hints[0].arm.upper()})"


class FlipLine(NamedTuple):
    """A flips-table row: its 1-based position, the flip, the cut-off k."""

    i: int
    row: FlipRow
    k: int


FLIPS: tuple[Column[FlipLine], ...] = (
    Column("#", POSITION, lambda f: str(f.i), right=True),
    Column("query", QUERY, lambda f: f.row.query_id),
    Column("text", TEXT, lambda f: one_line(text(f.row.text), FLIP_TEXT)),
    Column(
        "direction",
        "The flip: hit→miss (a regression) or miss→hit (a win).",
        lambda f: outcome(f.row.direction),
    ),
    Column("tenant", TENANT, lambda f: f.row.tenant),
    Column("gold A", gold("A"), lambda f: rank(f.row.gold_rank_a, f.k), right=True),
    Column("gold B", gold("B"), lambda f: rank(f.row.gold_rank_b, f.k), right=True),
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
        lambda f: hint_codes(f.row) or NONE,
    ),
)


def flip_columns(r: FlipsSource) -> list[Column[FlipLine]]:
    """The flips table's columns: the tenant and plan columns only when the evaluation has
    tenants / plans, the text only when some flip has one (an empty column is not drawn)."""
    hidden = {"text"} if text_unfilled(r.flips) else set()
    if "tenant" not in r.slices:
        hidden.add("tenant")
    if "plan" not in r.slices:
        hidden |= {"plan A", "plan B"}
    return shown(FLIPS, hidden)


TEXT_UNFILLED = (
    "Query text: none given; a queries file with `text` (--queries) or a `query` column in the runs shows it."
)


def text_unfilled(flips: Flips) -> bool:
    """Whether flips are listed and none of those shown has a text."""
    shown, _ = capped_flips(flips)
    return bool(shown) and not any(f.text for f in shown)


def flip_blocks(r: FlipsSource) -> list[Block]:
    shown, hidden = capped_flips(r.flips)
    out: list[Block] = [Heading("Flips (hit→miss first)")]
    if not shown:
        return [*out, Para("No flips.")]
    columns = flip_columns(r)
    head = titles(columns)
    rows = [cells_of(columns, FlipLine(i, f, r.k)) for i, f in enumerate(shown, 1)]
    names = {"gold A": "gold rank A", "gold B": "gold rank B", "unjudged A/B": f"unjudged in top {r.k} A/B"}
    numeric = frozenset(i for i, h in enumerate(head) if h in ("#", "gold A", "gold B"))
    classes = ["h2m" if f.direction is Outcome.HIT_TO_MISS else "m2h" for f in shown]
    own = frozenset(i for i, h in enumerate(head) if h not in ("query", "text", "tenant", "plan A", "plan B"))
    out.append(Table([names.get(h, h) for h in head], rows, numeric, own, classes))
    if hidden:
        out.append(Para(f"… {hidden} more flips (`--format json` lists them all).", own=True))
    if text_unfilled(r.flips):
        out.append(Para(TEXT_UNFILLED, note=True, own=True))
    return out
