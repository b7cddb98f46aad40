"""Slices: the scored queries partitioned by one key, so a collapsed tenant cannot hide in a mean.

Keys (whichever columns exist): `plan` (arm B's plan, else A's), `selectivity` band, `tenant`,
`query_type`, `source_type`, `filter` shape (the attributes a filter names, values ignored),
`language` and `origin` (where the query came from: real, generated, …). Per slice and arm: n,
hit rate, recall, flips each way, short lists (n_returned < k), the noise band √(p(1−p)/n) and
the Wilson 95% interval of the hit rate (core/measures/intervals.py); and B against A on the
decision measure per slice (`compare_slices`): Δ, p and the Benjamini–Hochberg q across the key's
slices (docs/slices.md "Slices and tenants: which moved beyond noise").
Queries whose filter matched nothing (n_eligible = 0) are counted apart: they stay in n (so
slices partition the scored queries) but not in the rates, since no retrieval could have found
their gold.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.defaults import DEFAULT_FLOOR
from triage.core.evaluation import Arm, Evaluation
from triage.core.measures.intervals import wilson
from triage.core.measures.paired import Outcome, noise_band
from triage.core.measures.significance import SliceComparisons, compare_slices
from triage.core.truth.named import filter_columns
from triage.core.truth.sampling import BANDS as SAMPLED_BANDS
from triage.core.truth.sampling import UNFILTERED, predicate_shape

KEYS = ("plan", "selectivity", "tenant", "query_type", "source_type", "filter", "language", "origin")
# selectivity: fraction of the corpus eligible, in the sampled set's bands (0 eligible is below 0.1%)
BANDS = (UNFILTERED, *SAMPLED_BANDS[:4])
NONE = "(none)"  # the slice of queries without a value for the key
FEW = 10  # a tenant with fewer scored queries than this is marked as few


@dataclass(frozen=True)
class ArmSlice:
    hit_rate: float  # NaN when no query of the slice can be judged
    recall: float
    short_lists: int  # scored queries whose list is shorter than k
    noise_band: float
    n_eligible_zero: int  # scored queries whose filter matched nothing (not in the rates)
    wilson_low: float  # Wilson 95% interval of the hit rate (NaN with the rate)
    wilson_high: float


@dataclass(frozen=True)
class Slice:
    key: str
    value: str
    n: int  # scored queries in the slice
    a: ArmSlice
    b: ArmSlice
    hit_to_miss: int
    miss_to_hit: int
    queries: np.ndarray  # the slice's query indices


def filter_shape(text: str | None) -> str:
    """The attributes a filter predicate names, sorted, values ignored: "source_type & tenant" (the
    columns of its SQL WHERE clause, core/truth/named.py)."""
    if not text or not text.strip():
        return UNFILTERED
    return predicate_shape(filter_columns(text))  # the sampled set's shape


def selectivity_band(selectivity: np.ndarray) -> np.ndarray:
    """Selectivity fractions to band labels; NaN means unfiltered."""
    out = np.full(len(selectivity), UNFILTERED, dtype=object)
    s = selectivity
    known = ~np.isnan(s)
    out[known & (s >= 0.10)] = BANDS[1]
    out[known & (s >= 0.01) & (s < 0.10)] = BANDS[2]
    out[known & (s >= 0.001) & (s < 0.01)] = BANDS[3]
    out[known & (s < 0.001)] = BANDS[4]
    return out


def selectivity_of(ev: Evaluation) -> np.ndarray:
    """Fraction of the corpus each query's filter left eligible: the `selectivity` column, else
    n_eligible / corpus size (B's, else A's); NaN for unfiltered or unknown. Against exact truth,
    the truth's exact selectivity for every query it lists (NaN: unfiltered)."""
    if ev.truth is not None:
        exact = ev.truth
        if exact.listed.all():
            return exact.selectivity.copy()
        rest = _selectivity_given(ev)
        return np.where(exact.listed, exact.selectivity, rest)
    return _selectivity_given(ev)


def _selectivity_given(ev: Evaluation) -> np.ndarray:
    text = ev.query_column("selectivity")
    s = pc.cast(text, pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
    corpus = ev.inputs.corpus
    if corpus is not None and len(corpus):
        for arm in (ev.b, ev.a):
            have = np.isnan(s) & (arm.n_eligible >= 0)
            s[have] = arm.n_eligible[have] / len(corpus)
    return s


def key_values(ev: Evaluation, key: str) -> pa.Array | None:
    """One label per query for `key` (a string array), or None when no input has that column."""
    if key == "plan":
        plans = [p for p in (ev.b.aligned("plan"), ev.a.aligned("plan")) if p is not None]
        return pc.coalesce(*plans).cast(pa.string()) if plans else None
    if key == "selectivity":
        s = selectivity_of(ev)
        filtered = ev.truth is not None and bool(ev.truth.filtered.any())
        if np.isnan(s).all() and ev.query_column("filter").null_count == ev.n and not filtered:
            return None
        return pa.array(selectivity_band(s), pa.string())
    column = ev.query_column(key)
    if column.null_count == ev.n:
        return None
    if key == "filter":
        uniques = pc.unique(column)
        shapes = pa.array([filter_shape(v) for v in uniques.to_pylist()], pa.string())
        return shapes.take(pc.index_in(column, value_set=uniques))
    return column


def _arm_slices(arm: Arm, k: int, scored: np.ndarray, code: np.ndarray, m: int) -> list[ArmSlice]:
    """Per slice code 0..m-1 of the scored queries: rates over those with n_eligible ≠ 0."""
    zero = arm.n_eligible == 0
    judged = scored & ~zero
    n = np.bincount(code[judged], minlength=m)
    hits = np.bincount(code[judged], weights=arm.judged.hit[judged], minlength=m)
    recall_ok = judged & ~np.isnan(arm.judged.recall)
    recall = np.bincount(code[recall_ok], weights=arm.judged.recall[recall_ok], minlength=m)
    n_recall = np.bincount(code[recall_ok], minlength=m)
    short = np.bincount(code[scored & (arm.depth < k)], minlength=m)
    zeros = np.bincount(code[scored & zero], minlength=m)
    low, high = wilson(hits, n)
    out = []
    for i in range(m):
        rate = float(hits[i] / n[i]) if n[i] else math.nan
        out.append(
            ArmSlice(
                rate,
                float(recall[i] / n_recall[i]) if n_recall[i] else math.nan,
                int(short[i]),
                noise_band(rate, int(n[i])) if n[i] else math.nan,
                int(zeros[i]),
                float(low[i]),
                float(high[i]),
            )
        )
    return out


def slices(ev: Evaluation, key: str) -> list[Slice]:
    """The slices of `key` over the scored queries, largest first (empty if the key is absent)."""
    values = key_values(ev, key)
    if values is None:
        return []
    scored = ev.scored
    encoded = pc.dictionary_encode(values.fill_null(NONE))
    names, code = encoded.dictionary.to_pylist(), encoded.indices.to_numpy().astype(np.int64)
    m = len(names)
    a = _arm_slices(ev.a, ev.k, scored, code, m)
    b = _arm_slices(ev.b, ev.k, scored, code, m)
    outcomes = ev.outcomes
    n = np.bincount(code[scored], minlength=m)
    down = np.bincount(code[scored & (outcomes == Outcome.HIT_TO_MISS)], minlength=m)
    up = np.bincount(code[scored & (outcomes == Outcome.MISS_TO_HIT)], minlength=m)
    order = np.flatnonzero(scored)
    members = np.split(order[np.argsort(code[order], kind="stable")], np.cumsum(n)[:-1])
    out = [
        Slice(key, str(names[i]), int(n[i]), a[i], b[i], int(down[i]), int(up[i]), members[i])
        for i in range(m)
        if n[i]
    ]
    return sorted(out, key=slice_order(key))


def slice_order(key: str) -> Callable[[Any], tuple[int, str]]:
    """How a key's slices are listed: selectivity bands narrowest first, any other key's values
    largest first (then by name). Reads `.value` and `.n` of each row."""
    if key == "selectivity":
        return lambda s: (BANDS.index(s.value) if s.value in BANDS else len(BANDS), "")
    return lambda s: (-s.n, s.value)


def all_slices(ev: Evaluation) -> dict[str, list[Slice]]:
    return {key: got for key in KEYS if (got := slices(ev, key))}


@dataclass(frozen=True)
class Decision:
    """The measure slices and tenants are compared on: against exact truth recall at k, else the
    first measure named, else the hit rate at k. Per query (aligned by query index), NaN where the
    query is not compared."""

    name: str  # "nDCG@10" (a named measure's canonical name) or "hit_rate@10"
    a: np.ndarray
    b: np.ndarray
    binary: bool | None  # True: McNemar; None: binary when every value is 0 or 1


def decision(ev: Evaluation) -> Decision:
    """The decision measure over the scored queries: against exact truth, recall at k over
    min(k, n_eligible) (`Evaluation.truth`); else the first named measure's per-query values;
    without one, the hit rate at k, each arm's NaN where its filter matched nothing (n_eligible = 0,
    out of the rates as in the slices), so the pairs are the queries both arms can be judged on."""
    off = ~ev.scored
    if ev.truth is not None:
        a, b = (np.where(off, np.nan, arm.judged.recall) for arm in ev.arms)
        return Decision(f"recall@{ev.k}", a, b, False)
    if ev.measures:
        name = str(ev.measures[0])
        a, b = (np.where(off, np.nan, ev.named(arm)[name]) for arm in ev.arms)
        return Decision(name, a, b, None)
    a, b = (
        np.where(off | (arm.n_eligible == 0), np.nan, arm.judged.hit.astype(np.float64)) for arm in ev.arms
    )
    return Decision(f"hit_rate@{ev.k}", a, b, True)


def slice_comparisons(ev: Evaluation, rows: list[Slice], measure: Decision | None = None) -> SliceComparisons:
    """B against A on the decision measure in each of one key's slices (`rows`, in their order):
    Δ, p (paired t, or McNemar for a binary measure) and q, Benjamini–Hochberg across these slices."""
    m = decision(ev) if measure is None else measure
    code = np.full(ev.n, -1, np.int64)
    for i, s in enumerate(rows):
        code[s.queries] = i
    return compare_slices(m.a, m.b, code, [s.value for s in rows], m.binary)


@dataclass(frozen=True)
class Tenant:
    slice: Slice
    plan: str | None  # B's most used plan for the tenant's queries
    plan_share: float  # that plan's share of the tenant's scored queries
    median_selectivity: float  # NaN when none of its queries is filtered
    # B's judged@k over the tenant's queries (`Evaluation.judged_at_k`): the mean share of a top k
    # judged, gold or not relevant; NaN when no top k of B's holds an id
    judged_b: float

    @property
    def name(self) -> str:
        return self.slice.value

    @property
    def few(self) -> bool:
        return self.slice.n < FEW

    @property
    def delta(self) -> float:
        return self.slice.b.hit_rate - self.slice.a.hit_rate


HIT_RATE, RECALL = "hit_rate", "recall"  # what tenants are ranked on: ArmSlice's field
# Rates are compared to this many decimals: two tenants whose recall differs only by the rounding
# of a float sum tie (then more queries first), and a tenant at the floor is not below it
RATE_DIGITS = 12


@dataclass(frozen=True)
class Tenants:
    """Tenants worst first by B's `measure` (the hit rate; against exact truth, recall at k), with
    the counts an on-call reviewer asks for, read from that measure."""

    floor: float
    rows: list[Tenant]
    below_floor: dict[str, int]  # arm -> tenants whose measure is below the floor
    p5: dict[str, float]  # arm -> 5th percentile of the per-tenant measure (linear)
    measure: str = HIT_RATE

    @property
    def worst(self) -> list[Tenant]:
        return self.rows[:3]


def tenants(ev: Evaluation, floor: float = DEFAULT_FLOOR) -> Tenants | None:
    """The tenant slices worst first by B's hit rate, or against exact truth by B's recall at k;
    the tenants below `floor` in each arm and the 5th-percentile tenant on the same measure."""
    rows = slices(ev, "tenant")
    if not rows:
        return None
    # B's dominant plan per tenant: a (tenant, plan) count table, vectorised.
    plans = key_values(ev, "plan")
    if plans is not None:
        encoded = pc.dictionary_encode(plans.fill_null(NONE))
        plan_names = encoded.dictionary.to_pylist()
        plan_code = encoded.indices.to_numpy().astype(np.int64)
        has_plan = plans.is_valid().to_numpy(zero_copy_only=False)
    sel = selectivity_of(ev)
    b = ev.b
    listed = b.shown > 0
    judged = np.divide(b.judged_top, b.shown, out=np.zeros(ev.n), where=listed)  # per query
    out = []
    for s in rows:
        top, share = None, 0.0
        if plans is not None:
            mine = s.queries[has_plan[s.queries]]
            if len(mine):
                counts = np.bincount(plan_code[mine], minlength=len(plan_names))
                best = int(np.argmax(counts))
                top, share = plan_names[best], float(counts[best] / s.n)
        values = sel[s.queries]
        values = values[~np.isnan(values)]
        mine = s.queries[listed[s.queries]]
        judged_b = float(judged[mine].mean()) if len(mine) else math.nan
        out.append(Tenant(s, top, share, float(np.median(values)) if len(values) else math.nan, judged_b))
    measure = RECALL if ev.truth is not None else HIT_RATE

    def b_rate(t: Tenant) -> float:  # to RATE_DIGITS: a mean of recalls is a sum of floats
        return round(float(getattr(t.slice.b, measure)), RATE_DIGITS)

    out.sort(key=lambda t: (math.isnan(b_rate(t)), b_rate(t), -t.slice.n, t.name))
    rates = {side: np.array([getattr(getattr(t.slice, side), measure) for t in out]) for side in ("a", "b")}
    return Tenants(
        floor=floor,
        rows=out,
        below_floor={
            side: int((np.round(r[~np.isnan(r)], RATE_DIGITS) < floor).sum()) for side, r in rates.items()
        },
        p5={
            side: float(np.percentile(r[~np.isnan(r)], 5)) if (~np.isnan(r)).any() else math.nan
            for side, r in rates.items()
        },
        measure=measure,
    )
