"""Everything `triage report` says, as one JSON-ready dict. Text and Markdown render this dict,
so the three formats cannot disagree."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa

from triage import __version__
from triage.core.evaluation import Arm, Evaluation
from triage.core.gate import Floor
from triage.core.metrics import Means, means
from triage.core.paired import Outcome, Paired, outcome_codes, paired
from triage.core.slices import DEFAULT_FLOOR, ArmSlice, Slice, Tenant, all_slices, tenants
from triage.workspace.snapshot import Snapshot


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _arm(ev: Evaluation, arm: Arm) -> dict[str, object]:
    m = ev.means(arm)
    scored_absent = ev.scored & ~arm.present
    return {
        "name": arm.name,
        "path": str(arm.run.path),
        "k": arm.run.k,
        "n": m.n,
        "hit_rate": _num(m.hit_rate),
        "recall": _num(m.recall),
        "mrr": _num(m.mrr),
        "ndcg": _num(m.ndcg),
        "noise_band": _num(ev.noise_band(arm)),
        "n_recall_unscored": m.n - m.n_recall,
        "n_missing_scored": int(scored_absent.sum()),
        "meta": dict(arm.run.meta),
    }


def _flips(ev: Evaluation) -> list[dict[str, object]]:
    order = ev.flips
    a, b = ev.a, ev.b
    tenant = ev.query_column("tenant").take(pa.array(order)).to_pylist()  # queries file, else runs
    columns = zip(
        ev.query_ids.take(order).to_pylist(),
        a.judged.hit[order].tolist(),
        a.judged.gold_rank[order].tolist(),
        b.judged.gold_rank[order].tolist(),
        a.depth[order].tolist(),
        b.depth[order].tolist(),
        a.values("plan", order),
        b.values("plan", order),
        tenant,
        strict=True,
    )
    return [
        {
            "query_id": qid,
            "direction": (Outcome.HIT_TO_MISS if hit_a else Outcome.MISS_TO_HIT).json,
            "gold_rank_a": rank_a or None,
            "gold_rank_b": rank_b or None,
            "depth_a": depth_a,
            "depth_b": depth_b,
            "plan_a": plan_a,
            "plan_b": plan_b,
            "tenant": tenant_q,
        }
        for qid, hit_a, rank_a, rank_b, depth_a, depth_b, plan_a, plan_b, tenant_q in columns
    ]


def _paired(p: Paired) -> dict[str, object]:
    return {
        "n": p.n,
        "both_hit": p.both_hit,
        "both_miss": p.both_miss,
        "a_hit_b_miss": p.a_hit_b_miss,
        "a_miss_b_hit": p.a_miss_b_hit,
        "mcnemar_p": p.mcnemar_p,
    }


def _frozen(ev: Evaluation) -> dict[str, object]:
    """The same numbers on the frozen labels alone (DESIGN §5: amendments are shown beside), and
    the queries whose outcome the amendments changed."""
    ja, jb, scored = ev.frozen_view()
    p = paired(ja.hit, jb.hit, scored)
    before, now = outcome_codes(ja.hit, jb.hit, scored), ev.outcomes
    changed = np.flatnonzero(before != now)

    def arm(m: Means) -> dict[str, object]:
        return {
            "n": m.n,
            "hit_rate": _num(m.hit_rate),
            "recall": _num(m.recall),
            "mrr": _num(m.mrr),
            "ndcg": _num(m.ndcg),
        }

    return {
        "arms": {"a": arm(means(ja, scored)), "b": arm(means(jb, scored))},
        "paired": _paired(p),
        "changed": [
            {"query_id": qid, "frozen": Outcome(int(before[q])).json, "amended": Outcome(int(now[q])).json}
            for q, qid in zip(changed.tolist(), ev.query_ids.take(pa.array(changed)).to_pylist(), strict=True)
        ],
    }


def _k_cells(ev: Evaluation) -> dict[str, dict[str, float | None]] | None:
    ks = sorted({arm.run.k for arm in ev.arms if arm.run.k is not None} | {ev.k})
    if len(ks) < 2:
        return None
    return {
        side: {str(k): _num(ev.hit_rate_at(arm, k)) for k in ks} for side, arm in (("a", ev.a), ("b", ev.b))
    }


def _arm_slice(a: ArmSlice) -> dict[str, object]:
    return {
        "hit_rate": _num(a.hit_rate),
        "recall": _num(a.recall),
        "short_lists": a.short_lists,
        "noise_band": _num(a.noise_band),
        "n_eligible_zero": a.n_eligible_zero,
    }


def slice_row(s: Slice) -> dict[str, object]:
    """One slice as the report (and the slices screen) shows it."""
    return {
        "value": s.value,
        "n": s.n,
        "a": _arm_slice(s.a),
        "b": _arm_slice(s.b),
        "hit_to_miss": s.hit_to_miss,
        "miss_to_hit": s.miss_to_hit,
    }


def _slices(ev: Evaluation) -> tuple[dict[str, list[dict[str, object]]], dict[str, dict[str, object]]]:
    out, partition = {}, {}
    n_scored = int(ev.scored.sum())
    for key, rows in all_slices(ev).items():
        out[key] = [slice_row(s) for s in rows]
        total = sum(s.n for s in rows)
        partition[key] = {"sum": total, "scored": n_scored, "ok": total == n_scored}
    return out, partition


def _tenants(ev: Evaluation, floor: float) -> dict[str, object] | None:
    t = tenants(ev, floor)
    if t is None:
        return None

    def row(x: Tenant) -> dict[str, object]:
        s = x.slice
        return {
            "tenant": x.name,
            "n": s.n,
            "hit_rate_a": _num(s.a.hit_rate),
            "hit_rate_b": _num(s.b.hit_rate),
            "delta": _num(x.delta),
            "hit_to_miss": s.hit_to_miss,
            "miss_to_hit": s.miss_to_hit,
            "plan": x.plan,
            "plan_share": x.plan_share,
            "median_selectivity": _num(x.median_selectivity),
            "few": x.few,
            "noise_band_b": _num(s.b.noise_band),
        }

    return {
        "floor": floor,
        "below_floor": t.below_floor,
        "p5": {k: _num(v) for k, v in t.p5.items()},
        "worst": [row(x) for x in t.worst],
        "rows": [row(x) for x in t.rows],
    }


def build(snapshot: Snapshot, floor: float = DEFAULT_FLOOR) -> dict[str, object]:
    ev, labels = snapshot.ev, snapshot.labels
    p = ev.paired()
    ma, mb = ev.means(ev.a), ev.means(ev.b)
    scored = ev.scored
    slice_rows, partition = _slices(ev)
    return {
        "triage": __version__,
        "k": ev.k,
        "n_queries": ev.n,
        "n_scored": int(scored.sum()),
        "n_unlabelled": int((~scored).sum()),
        "unlabelled": ev.ids_where(~scored),
        "missing": {"a": ev.ids_where(~ev.a.present), "b": ev.ids_where(~ev.b.present)},
        "labels": {
            "path": str(labels.frozen.path),
            "frozen_sha256": labels.frozen.sha256,
            "amendments": len(labels.records),
            "in_force": len(labels.in_force),
            "by_arm": labels.by_arm(),
            "head": labels.head,
            "applied": labels.amended,
            "state": labels.describe(),
        },
        "arms": {"a": _arm(ev, ev.a), "b": _arm(ev, ev.b)},
        "paired": {**_paired(p), "reconciles": p.reconciles(ma.hit_rate, mb.hit_rate)},
        "frozen": _frozen(ev),
        "k_cells": _k_cells(ev),
        "slices": slice_rows,
        "partition": partition,
        "tenants": _tenants(ev, floor),
        "flips": _flips(ev),
        "checks": [{"level": str(c.level), "code": c.code, "message": c.message} for c in snapshot.checks],
    }


def gate_section(floors: list[Floor], path: Path) -> dict[str, object]:
    """The gate's verdicts, broken floors first."""
    rows = sorted(floors, key=lambda f: f.holds)
    return {
        "path": str(path),
        "holds": all(f.holds for f in rows),
        "floors": [
            {
                "name": f.name,
                "floor": f.floor,
                "hit_rate": _num(f.hit_rate),
                "n": f.n,
                "noise_band": _num(f.noise_band),
                "holds": f.holds,
            }
            for f in rows
        ],
    }
