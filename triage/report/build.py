"""The report built from a snapshot: every section of `model.Report`, computed from the core's
arrays (metrics, paired table, flips, slices, tenants) and the label state."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa

from triage import __version__
from triage.core.checks.holdout import held_out_means, query_split
from triage.core.checks.model import Check, worst_first
from triage.core.errors import InputError
from triage.core.evaluation import Arm, Evaluation
from triage.core.gate.apply import Floor, MeasureVerdict
from triage.core.inputs.corpus import Corpus, open_corpus
from triage.core.measures.metrics import Means, means
from triage.core.measures.paired import Outcome, Paired, noise_band, outcome_codes, paired
from triage.core.measures.significance import SliceComparisons, compare_all
from triage.core.views.hints import flip_hint_table
from triage.core.views.per_query import query_table
from triage.core.views.ranks import WinTieLoss, ranks
from triage.core.views.slices import (
    DEFAULT_FLOOR,
    ArmSlice,
    Decision,
    Slice,
    Tenant,
    all_slices,
    decision,
    slice_comparisons,
    tenants,
)
from triage.labels.state import LabelState
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
    OverlapSection,
    PairedSection,
    Partition,
    QueryTable,
    RankHistogram,
    RanksSection,
    Report,
    SliceComparison,
    SliceRow,
    TenantRow,
    TenantsSection,
    WinTieLossRow,
)
from triage.report.origins import origin_sections, overlap_section
from triage.report.rows import Drops, Flips
from triage.workspace.snapshot import Snapshot


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def cutoffs(ev: Evaluation) -> list[int]:
    """The cut-offs each arm is shown at: every k asked for and each arm's own k, ascending."""
    return sorted(set(ev.cutoffs) | {arm.run.k for arm in ev.arms if arm.run.k is not None})


def _at_k(m: Means | None) -> AtK:
    if m is None:
        return AtK(None, None, None, None, within_depth=False)
    return AtK(_num(m.hit_rate), _num(m.recall), _num(m.mrr), _num(m.ndcg), within_depth=True)


def _arm(ev: Evaluation, arm: Arm) -> ArmSection:
    m = ev.means(arm)
    low, high = ev.wilson(arm)
    return ArmSection(
        name=arm.name,
        path=arm.run.path,
        k=arm.run.k,
        n=m.n,
        hit_rate=_num(m.hit_rate),
        recall=_num(m.recall),
        mrr=_num(m.mrr),
        ndcg=_num(m.ndcg),
        noise_band=_num(ev.noise_band(arm)),
        wilson_low=_num(low),
        wilson_high=_num(high),
        judged_at_k=_num(ev.judged_at_k(arm)),
        unjudged_in_top_k=ev.unjudged_in_top_k(arm),
        hit_rate_upper=_num(ev.hit_rate_upper(arm)),
        n_recall_unscored=m.n - m.n_recall,
        n_missing_scored=int((ev.scored & ~arm.present).sum()),
        meta=dict(arm.run.meta),
        at_k={k: _at_k(m) for k, m in ev.at_k(arm, cutoffs(ev)).items()},
        depth=ev.depth(arm),
        recall_at_depth=_num(ev.recall_at_depth(arm)),
        measures={name: _num(v) for name, v in ev.named_means(arm).items()},
    )


def _arm_means(m: Means) -> ArmMeans:
    return ArmMeans(m.n, _num(m.hit_rate), _num(m.recall), _num(m.mrr), _num(m.ndcg))


def _paired(p: Paired, a: Means, b: Means, regressions_with_unjudged: int) -> PairedSection:
    return PairedSection(
        p.n,
        p.both_hit,
        p.both_miss,
        p.a_hit_b_miss,
        p.a_miss_b_hit,
        _num(p.mcnemar_p),
        p.reconciles(a.hit_rate, b.hit_rate),
        regressions_with_unjudged,
    )


def _flips(ev: Evaluation, corpus: Corpus | None) -> Flips:
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
    return Flips(columns, flip_hint_table(ev, order, corpus))


def _win_tie_loss(w: WinTieLoss) -> WinTieLossRow:
    return WinTieLossRow(w.wins, w.ties, w.losses)


def _ranks(ev: Evaluation) -> RanksSection:
    """Wins, ties and losses on mrr@k and ndcg@k, the both-hit queries whose gold fell, and the
    histogram of gold-rank changes (core/views/ranks.py)."""
    x = ranks(ev)
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


def _frozen_regressions_with_unjudged(ev: Evaluation, labels: LabelState, regressions: np.ndarray) -> int:
    """Of the frozen view's regressions, those with an id in B's top k the frozen labels leave
    unjudged: the ones unjudged now, and those whose top k holds a pair judged since."""
    unjudged = regressions & (ev.b.unjudged_top > 0)
    rest = set(ev.ids_where(regressions & ~unjudged))
    judged_since: dict[str, set[str]] = {}
    for qid, chunk in labels.decided:
        if qid in rest:
            judged_since.setdefault(qid, set()).add(chunk)
    b, k = ev.b, ev.k
    found = sum(
        1 for qid, chunks in judged_since.items() if chunks & set(b.retrieved(ev.query_index(qid))[:k])
    )
    return int(unjudged.sum()) + found


def _frozen(ev: Evaluation, labels: LabelState) -> FrozenView:
    """The same numbers on the frozen labels alone (docs/labels.md "Label amendments")."""
    ja, jb, scored = ev.frozen_view()
    ma, mb = means(ja, scored), means(jb, scored)
    before, now = outcome_codes(ja.hit, jb.hit, scored), ev.outcomes
    changed = np.flatnonzero(before != now)
    ids = ev.query_ids.take(pa.array(changed)).to_pylist()
    regressions = scored & ja.hit & ~jb.hit
    return FrozenView(
        ByArm(_arm_means(ma), _arm_means(mb)),
        _paired(
            paired(ja.hit, jb.hit, scored), ma, mb, _frozen_regressions_with_unjudged(ev, labels, regressions)
        ),
        tuple(
            Changed(qid, Outcome(int(before[q])), Outcome(int(now[q])))
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


def _slices(
    ev: Evaluation, measure: Decision | None = None
) -> tuple[dict[str, tuple[SliceRow, ...]], dict[str, Partition]]:
    out, partition = {}, {}
    n_scored = int(ev.scored.sum())
    m = decision(ev) if measure is None else measure
    for key, rows in all_slices(ev).items():
        c = slice_comparisons(ev, rows, m)
        out[key] = tuple(slice_row(s, {m.name: slice_compare(c, i)}) for i, s in enumerate(rows))
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


def _tenants(ev: Evaluation, floor: float, measure: Decision | None = None) -> TenantsSection | None:
    t = tenants(ev, floor)
    if t is None:
        return None
    m = decision(ev) if measure is None else measure
    c = slice_comparisons(ev, [x.slice for x in t.rows], m)  # BH across the tenants, as the slices
    rows = tuple(tenant_row(x, {m.name: slice_compare(c, i)}) for i, x in enumerate(t.rows))
    return TenantsSection(
        floor=floor,
        below_floor=ByArm(t.below_floor["a"], t.below_floor["b"]),
        p5=ByArm(_num(t.p5["a"]), _num(t.p5["b"])),
        worst=rows[: len(t.worst)],
        rows=rows,
    )


def _moved(labels: LabelState, arms: ByArm[ArmSection], frozen: FrozenView) -> ByArm[float | None] | None:
    """Each arm's hit rate, amended − frozen; None when no gold addition is in force."""
    if not labels.added:
        return None
    a, b = (
        None if now.hit_rate is None or then.hit_rate is None else now.hit_rate - then.hit_rate
        for now, then in ((arms.a, frozen.arms.a), (arms.b, frozen.arms.b))
    )
    return ByArm(a, b)


def _labels(snapshot: Snapshot, arms: ByArm[ArmSection], frozen: FrozenView) -> LabelsSection:
    labels = snapshot.labels
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


def report_corpus(snapshot: Snapshot) -> Corpus | None:
    """The corpus the spec names, opened for the flips' text hints (None: none named, or it cannot
    be opened: the hints that need no text are still given)."""
    if snapshot.inputs.chunks is not None:  # given as a table
        return snapshot.inputs.chunks
    path = snapshot.spec.corpus
    if path is None:
        return None
    try:  # the evaluation's corpus ids index the look-ups too (when they are the cache's)
        return open_corpus(path, fmt=snapshot.spec.corpus_format, known=snapshot.inputs.corpus)
    except (InputError, OSError):
        return None


def build(
    snapshot: Snapshot,
    floor: float = DEFAULT_FLOOR,
    corpus: Corpus | None | Literal["open"] = "open",
    cost_corpus: Corpus | None | Literal["same"] = "same",
    flips: bool = True,
    overlap_corpus: Corpus | None | Literal["same", "skip"] = "same",
    per_query: bool = False,
) -> Report:
    """The report of `snapshot`. `corpus`: the chunks the flips' text hints read; "open" opens the
    one the spec names; None gives only the hints that need no text. `cost_corpus`: the chunks
    the cost section reads heading paths from ("same": `corpus`'s). `flips`: False leaves the
    flip rows out (the app's screens list flips from the session, not from the report).
    `overlap_corpus`: the chunks the lexical overlap and its checks read ("same": `corpus`'s, when
    one is asked for; "skip": not measured, no check: the app's corpus is still loading).
    `per_query`: with the per-query table (`queries`, core/views/per_query.py)."""
    ev = snapshot.ev
    chunks = report_corpus(snapshot) if corpus == "open" else corpus
    cost, cost_checks = cost_section(ev, chunks if cost_corpus == "same" else cost_corpus)
    scored = ev.scored
    measure = decision(ev)
    slice_rows, partition = _slices(ev, measure)
    arms = ByArm(_arm(ev, ev.a), _arm(ev, ev.b))
    frozen = _frozen(ev, snapshot.labels)
    by_origin, origin_quote = origin_sections(ev)
    overlap: OverlapSection | None = None
    overlap_checks: list[Check] = []
    if overlap_corpus == "same" and corpus is None:  # not asked for
        overlap_corpus = "skip"
    if overlap_corpus != "skip":
        overlap, overlap_checks = overlap_section(ev, chunks if overlap_corpus == "same" else overlap_corpus)
    flip_rows = _flips(ev, chunks) if flips else Flips.none()
    # Read last: the corpus check may still be under way beside this work (`open_snapshot`).
    checks = worst_first([*snapshot.checks, *overlap_checks, *cost_checks])
    return Report(
        triage=__version__,
        k=ev.k,
        n_queries=ev.n,
        n_scored=int(scored.sum()),
        n_unlabelled=int((~scored).sum()),
        unlabelled=tuple(ev.ids_where(~scored)),
        missing=ByArm(tuple(ev.ids_where(~ev.a.present)), tuple(ev.ids_where(~ev.b.present))),
        labels=_labels(snapshot, arms, frozen),
        arms=arms,
        paired=_paired(ev.paired(), ev.means(ev.a), ev.means(ev.b), ev.regressions_with_unjudged()),
        frozen=frozen,
        k_cells=_k_cells(arms),
        slices=slice_rows,
        partition=partition,
        tenants=_tenants(ev, floor, measure),
        flips=flip_rows,
        ranks=_ranks(ev),
        checks=tuple(checks),
        ks=ev.cutoffs,
        holdout=_holdout(ev),
        origins=by_origin,
        origin_quote=origin_quote,
        overlap=overlap,
        cost=cost,
        answers=answers_section(ev),
        notices=(
            *snapshot.inputs.notices,
            *(c.notice for c in (chunks, cost_corpus) if isinstance(c, Corpus) and c.notice),
        ),
        compare=compare_measures(snapshot),
        queries=QueryTable(query_table(ev)) if per_query else None,
        unjudged_same_depth=ev.unjudged_same_depth(),
    )


def compare_measures(snapshot: Snapshot) -> dict[str, MeasureComparison]:
    """Each named measure, B against A, over the scored queries paired by query id, with the spec's
    tests, correction, rounds and seed (docs/measures.md "Paired tests per measure"); {} when none is named
    (scipy is imported only then)."""
    ev, spec = snapshot.ev, snapshot.spec
    if not ev.measures:
        return {}
    scored = ev.scored
    ids = np.asarray(ev.query_ids.filter(pa.array(scored)).to_numpy(zero_copy_only=False))
    a = {name: v[scored] for name, v in ev.named(ev.a).items()}
    b = {name: v[scored] for name, v in ev.named(ev.b).items()}
    compared = compare_all(a, b, spec.tests, spec.correction, spec.rounds, spec.seed, query_ids=ids)
    return {name: MeasureComparison.of(c) for name, c in compared.items()}


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


def gate_section(
    floors: list[Floor],
    path: Path,
    measures: list[MeasureVerdict] | None = None,
    nothing_evaluated: str | None = None,
) -> GateSection:
    """The gate's verdicts, broken floors first (and broken measures first); `nothing_evaluated`:
    why it evaluated nothing (it then fails, core/gate/apply.py `nothing_evaluated`)."""
    rows = sorted(floors, key=lambda f: f.holds)
    gated = sorted(measures or [], key=lambda v: v.holds)
    return GateSection(
        path=path,
        holds=nothing_evaluated is None and all(f.holds for f in rows) and all(v.holds for v in gated),
        evaluated=nothing_evaluated is None,
        nothing_evaluated=nothing_evaluated,
        measures=tuple(measure_gate_row(v) for v in gated),
        floors=tuple(
            FloorRow(
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
            for f in rows
        ),
    )


def _holdout(ev: Evaluation) -> HoldoutSection | None:
    """The numbers on the held-out queries alone (core/checks/holdout.py); None without a split."""
    qs = query_split(ev)
    if qs is None:
        return None
    ma, mb, p = held_out_means(ev, qs)
    a, b = ev.a, ev.b
    unjudged_regressions = a.judged.hit & ~b.judged.hit & (b.unjudged_top > 0)
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
        arms=ByArm(_arm_means(ma), _arm_means(mb)),
        paired=_paired(p, ma, mb, int((unjudged_regressions & qs.held_out).sum())),
        noise_band=ByArm(_num(noise_band(ma.hit_rate, ma.n)), _num(noise_band(mb.hit_rate, mb.n))),
    )
