"""The report's model filled from computed results: `report_of` maps what the workspace computed
from a snapshot (workspace/results.py `Results`, the gate's verdicts included) into every section
of `model.Report`, and computes nothing (undefined numbers become None). `build` is the one call
for a snapshot: the workspace's results, mapped."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa

from triage import __version__
from triage.core.checks.overlap import GENERATED_LIKE
from triage.core.measures.paired import Outcome
from triage.core.views.slices import DEFAULT_FLOOR, RECALL
from triage.report.costs import answers_section, cost_section
from triage.report.model import (
    ArmMeans,
    ArmSection,
    ArmSliceRow,
    AtK,
    ByArm,
    Changed,
    FloorRow,
    FrozenView,
    GateSection,
    HoldoutSection,
    KCells,
    LabelsSection,
    MeasureComparison,
    MeasureGateRow,
    OriginQuote,
    OriginRow,
    OverlapGroup,
    OverlapSection,
    PairedSection,
    Partition,
    QueryTable,
    RankHistogram,
    RanksSection,
    Report,
    SliceComparison,
    SliceRow,
    Spread,
    TenantOrder,
    TenantRow,
    TenantsSection,
    TruthSection,
    WinTieLossRow,
)
from triage.report.rows import Drops, Flips
from triage.workspace.results import compute

if TYPE_CHECKING:
    from triage.core.checks.overlap import Quartiles
    from triage.core.evaluation import Arm, Evaluation
    from triage.core.gate.apply import Floor, MeasureVerdict
    from triage.core.inputs.corpus import Corpus
    from triage.core.measures.metrics import Means
    from triage.core.measures.significance import SliceComparisons
    from triage.core.views.hints import FlipHints
    from triage.core.views.origin import Quote
    from triage.core.views.ranks import Ranks, WinTieLoss
    from triage.core.views.slices import ArmSlice, Slice, Tenant, Tenants
    from triage.labels.state import LabelState
    from triage.workspace.results import (
        ArmFigures,
        FrozenFigures,
        GateVerdicts,
        HoldoutFigures,
        OriginFigures,
        OverlapFigures,
        OverlapGroupFigures,
        PairedFigures,
        Results,
    )
    from triage.workspace.snapshot import Snapshot


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _at_k(m: Means | None) -> AtK:
    if m is None:
        return AtK(None, None, None, None, within_depth=False)
    return AtK(_num(m.hit_rate), _num(m.recall), _num(m.mrr), _num(m.ndcg), within_depth=True)


def _arm(arm: Arm, f: ArmFigures) -> ArmSection:
    m = f.means
    low, high = f.wilson
    return ArmSection(
        name=arm.name,
        path=arm.run.path,
        k=arm.run.k,
        n=m.n,
        hit_rate=_num(m.hit_rate),
        recall=_num(m.recall),
        mrr=_num(m.mrr),
        ndcg=_num(m.ndcg),
        noise_band=_num(f.noise_band),
        wilson_low=_num(low),
        wilson_high=_num(high),
        judged_at_k=_num(f.judged_at_k),
        unjudged_in_top_k=f.unjudged_in_top_k,
        hit_rate_upper=_num(f.hit_rate_upper),
        n_recall_unscored=m.n - m.n_recall,
        n_missing_scored=f.missing_scored,
        meta=dict(arm.run.meta),
        at_k={k: _at_k(m) for k, m in f.at_k.items()},
        depth=f.depth,
        recall_at_depth=_num(f.recall_at_depth),
        measures={name: _num(v) for name, v in f.named_means.items()},
    )


def arm_means(m: Means) -> ArmMeans:
    return ArmMeans(m.n, _num(m.hit_rate), _num(m.recall), _num(m.mrr), _num(m.ndcg))


def paired_section(f: PairedFigures) -> PairedSection:
    p = f.paired
    return PairedSection(
        p.n,
        p.both_hit,
        p.both_miss,
        p.a_hit_b_miss,
        p.a_miss_b_hit,
        _num(f.mcnemar_p),
        f.reconciles,
        f.regressions_with_unjudged,
    )


def _flips(ev: Evaluation, hints: FlipHints | None) -> Flips:
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


def _win_tie_loss(w: WinTieLoss) -> WinTieLossRow:
    return WinTieLossRow(w.wins, w.ties, w.losses)


def _ranks(ev: Evaluation, x: Ranks) -> RanksSection:
    """Wins, ties and losses on mrr@k and ndcg@k, the both-hit queries whose gold fell, and the
    histogram of gold-rank changes (core/views/ranks.py)."""
    order, c = x.drops, x.changes
    at = pa.array(order)
    rank_a, rank_b = ev.a.judged.gold_rank[order], ev.b.judged.gold_rank[order]
    drops = Drops(
        {
            "query_id": ev.query_ids.take(at),
            "rank_a": pa.array(rank_a, pa.int64()),
            "rank_b": pa.array(rank_b, pa.int64()),
            "drop": pa.array(rank_b - rank_a, pa.int64()),
            "tenant": ev.query_column("tenant", order),
            "text": ev.query_column("text", order),
        }
    )
    return RanksSection(
        n=x.n,
        mrr=_win_tie_loss(x.mrr),
        ndcg=_win_tie_loss(x.ndcg),
        drops=drops,
        histogram=RankHistogram(
            n=c.n,
            changes=dict(zip(c.change.tolist(), c.count.tolist(), strict=True)),
            fell=c.fell,
            same=c.same,
            rose=c.rose,
            only_a=c.only_a,
            only_b=c.only_b,
            neither=c.neither,
        ),
    )


def _frozen(ev: Evaluation, f: FrozenFigures) -> FrozenView:
    """The same numbers on the frozen labels alone (docs/labels.md "Label amendments")."""
    changed, now = f.changed, ev.outcomes
    ids = ev.query_ids.take(pa.array(changed)).to_pylist()
    return FrozenView(
        ByArm(arm_means(f.paired.a), arm_means(f.paired.b)),
        paired_section(f.paired),
        tuple(
            Changed(qid, Outcome(int(f.before[q])), Outcome(int(now[q])))
            for q, qid in zip(changed.tolist(), ids, strict=True)
        ),
    )


def _k_cells(arms: ByArm[ArmSection]) -> KCells | None:
    """Each arm's hit rate at each of its cut-offs, when there are several."""
    if len(arms.a.at_k) < 2:
        return None
    return KCells(*({k: x.hit_rate for k, x in arm.at_k.items()} for arm in (arms.a, arms.b)))


def _arm_slice(a: ArmSlice) -> ArmSliceRow:
    return ArmSliceRow(
        _num(a.hit_rate),
        _num(a.recall),
        a.short_lists,
        _num(a.noise_band),
        _num(a.wilson_low),
        _num(a.wilson_high),
        a.n_eligible_zero,
    )


def slice_compare(c: SliceComparisons, i: int) -> SliceComparison:
    """Slice `i` of one key's comparisons (docs/slices.md "Slices and tenants: which moved beyond noise")."""
    why = c.reasons[i]
    return SliceComparison(
        int(c.n[i]), _num(c.delta[i]), _num(c.p[i]), _num(c.q[i]), c.test, None if why is None else why.value
    )


def slice_row(s: Slice, compared: dict[str, SliceComparison] | None = None) -> SliceRow:
    return SliceRow(
        s.value, s.n, _arm_slice(s.a), _arm_slice(s.b), s.hit_to_miss, s.miss_to_hit, compared or {}
    )


def _slices(r: Results, n_scored: int) -> tuple[dict[str, tuple[SliceRow, ...]], dict[str, Partition]]:
    out, partition = {}, {}
    for key, rows in r.slices.items():
        c = r.slice_tests[key]
        out[key] = tuple(slice_row(s, {r.decision: slice_compare(c, i)}) for i, s in enumerate(rows))
        total = sum(s.n for s in rows)
        partition[key] = Partition(total, n_scored, total == n_scored)
    return out, partition


def tenant_row(x: Tenant, compared: dict[str, SliceComparison] | None = None) -> TenantRow:
    s = x.slice
    return TenantRow(
        tenant=x.name,
        n=s.n,
        hit_rate_a=_num(s.a.hit_rate),
        hit_rate_b=_num(s.b.hit_rate),
        delta=_num(x.delta),
        hit_to_miss=s.hit_to_miss,
        miss_to_hit=s.miss_to_hit,
        plan=x.plan,
        plan_share=x.plan_share,
        median_selectivity=_num(x.median_selectivity),
        few=x.few,
        noise_band_b=_num(s.b.noise_band),
        wilson_low_b=_num(s.b.wilson_low),
        wilson_high_b=_num(s.b.wilson_high),
        compare=compared or {},
    )


def _tenants(t: Tenants | None, c: SliceComparisons | None, name: str) -> TenantsSection | None:
    if t is None or c is None:
        return None
    rows = tuple(tenant_row(x, {name: slice_compare(c, i)}) for i, x in enumerate(t.rows))
    if t.measure == RECALL:  # against exact truth: each tenant's recall, what they are ranked on
        rows = tuple(
            replace(row, recall=ByArm(_num(x.slice.a.recall), _num(x.slice.b.recall)))
            for row, x in zip(rows, t.rows, strict=True)
        )
    return TenantsSection(
        floor=t.floor,
        below_floor=ByArm(t.below_floor["a"], t.below_floor["b"]),
        p5=ByArm(_num(t.p5["a"]), _num(t.p5["b"])),
        worst=rows[: len(t.worst)],
        rows=rows,
        measure=name if t.measure == RECALL else None,
    )


def _truth(r: Results) -> TruthSection | None:
    t = r.ev.truth
    if t is None:
        return None
    f = t.folder
    no_eligible = int((t.listed & (t.n_eligible == 0)).sum())
    return TruthSection(f.path, f.k, f.metric, f.tolerance, r.decision, no_eligible)


def _moved(labels: LabelState, arms: ByArm[ArmSection], frozen: FrozenView) -> ByArm[float | None] | None:
    """Each arm's hit rate, amended − frozen; None when no gold addition is in force."""
    if not labels.added:
        return None
    a, b = (
        None if now.hit_rate is None or then.hit_rate is None else now.hit_rate - then.hit_rate
        for now, then in ((arms.a, frozen.arms.a), (arms.b, frozen.arms.b))
    )
    return ByArm(a, b)


def _labels(labels: LabelState, arms: ByArm[ArmSection], frozen: FrozenView) -> LabelsSection:
    return LabelsSection(
        path=labels.frozen.path,
        frozen_sha256=labels.frozen.sha256,
        amendments=len(labels.records),
        in_force=len(labels.in_force),
        by_arm=labels.by_arm(),
        head=labels.head,
        applied=labels.amended,
        state=labels.describe(),
        gold_added=len(labels.added),
        not_relevant=len(labels.not_relevant),
        conflicts=len(labels.conflicts),
        reviewers=labels.reviewers(),
        moved=_moved(labels, arms, frozen),
    )


def measure_gate_row(v: MeasureVerdict) -> MeasureGateRow:
    return MeasureGateRow(
        v.name,
        v.limit.floor,
        v.limit.max_drop,
        v.n,
        _num(v.mean_a),
        _num(v.mean_b),
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
        _num(f.hit_rate),
        f.n,
        _num(f.noise_band),
        _num(f.wilson_low),
        _num(f.wilson_high),
        f.holds,
        f.distance_se if math.isfinite(f.distance_se) else None,
        f.noisy,
    )


def gate_section(g: GateVerdicts) -> GateSection:
    """The gate's verdicts, broken floors first (and broken measures first); a gate that evaluated
    nothing fails (core/gate/apply.py `nothing_evaluated`)."""
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
    )


def _holdout(f: HoldoutFigures | None) -> HoldoutSection | None:
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
        noise_band=ByArm(_num(f.noise_band[0]), _num(f.noise_band[1])),
    )


def _origin_row(f: OriginFigures) -> OriginRow:
    return OriginRow(
        f.part.origin, ByArm(arm_means(f.paired.a), arm_means(f.paired.b)), paired_section(f.paired)
    )


def _origins(
    parts: tuple[OriginFigures, ...], q: Quote | None
) -> tuple[tuple[OriginRow, ...], OriginQuote | None]:
    rows = tuple(_origin_row(p) for p in parts)
    if q is None:
        return rows, None
    return rows, OriginQuote(
        q.real.origin,
        q.real.n,
        q.generated.n,
        ByArm(_num(q.real.a.hit_rate), _num(q.real.b.hit_rate)),
        ByArm(_num(q.generated.a.hit_rate), _num(q.generated.b.hit_rate)),
        ByArm(_num(q.gap("a")), _num(q.gap("b"))),
    )


def _spread(s: Quartiles) -> Spread:
    return Spread(s.n, _num(s.q1), _num(s.median), _num(s.q3))


def _overlap_group(g: OverlapGroupFigures) -> OverlapGroup:
    return OverlapGroup(g.name, _spread(g.body), _spread(g.header), g.header_above_body)


def _overlap(o: OverlapFigures, threshold: float) -> OverlapSection:
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


def report_of(r: Results, tenant_order: TenantOrder = TenantOrder.HIT_RATE) -> Report:
    """The report of computed results `r`; tenants listed in `tenant_order`."""
    ev, labels = r.ev, r.labels
    scored = ev.scored
    n_scored = int(scored.sum())
    slice_rows, partition = _slices(r, n_scored)
    arms = ByArm(_arm(ev.a, r.arms[0]), _arm(ev.b, r.arms[1]))
    frozen = _frozen(ev, r.frozen)
    by_origin, origin_quote = _origins(r.origins, r.quote)
    report = Report(
        triage=__version__,
        k=ev.k,
        n_queries=ev.n,
        n_scored=n_scored,
        n_unlabelled=int((~scored).sum()),
        unlabelled=tuple(ev.ids_where(~scored)),
        missing=ByArm(tuple(ev.ids_where(~ev.a.present)), tuple(ev.ids_where(~ev.b.present))),
        labels=_labels(labels, arms, frozen),
        arms=arms,
        paired=paired_section(r.paired),
        frozen=frozen,
        k_cells=_k_cells(arms),
        slices=slice_rows,
        partition=partition,
        tenants=_tenants(r.tenants, r.tenant_tests, r.decision),
        flips=_flips(ev, r.hints),
        ranks=_ranks(ev, r.ranks),
        checks=r.checks,
        gate=None if r.gate is None else gate_section(r.gate),
        ks=ev.cutoffs,
        holdout=_holdout(r.holdout),
        origins=by_origin,
        origin_quote=origin_quote,
        overlap=None if r.overlap is None else _overlap(r.overlap, GENERATED_LIKE),
        cost=cost_section(r.cost),
        answers=answers_section(r.answers),
        notices=r.notices,
        compare={name: MeasureComparison.of(c) for name, c in r.compare.items()},
        queries=None if r.queries is None else QueryTable(r.queries),
        unjudged_same_depth=r.unjudged_same_depth,
        truth=_truth(r),
    )
    return report if tenant_order is TenantOrder.HIT_RATE else report.with_tenant_order(tenant_order)


def build(
    snapshot: Snapshot,
    floor: float = DEFAULT_FLOOR,
    corpus: Corpus | None | Literal["open"] = "open",
    cost_corpus: Corpus | None | Literal["same"] = "same",
    flips: bool = True,
    overlap_corpus: Corpus | None | Literal["same", "skip"] = "same",
    per_query: bool = False,
    gate: Path | None = None,
) -> Report:
    """The report of `snapshot`: the workspace's results (workspace/results.py `compute`, which
    says what each argument asks for), mapped."""
    return report_of(compute(snapshot, floor, corpus, cost_corpus, flips, overlap_corpus, per_query, gate))
