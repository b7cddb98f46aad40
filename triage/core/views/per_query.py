"""The per-query table: one row per query, every query any input names, in first-seen order. The
Python API's `queries()` returns it; `triage report --format json --per-query` writes it as the
report's `queries` (model.QueryTable)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.evaluation import Arm, Evaluation
from triage.core.inputs.corpus import Corpus
from triage.core.measures.paired import Outcome
from triage.core.views.hints import flip_hint_table


def query_table(ev: Evaluation, hints: bool = False, corpus: Corpus | None = None) -> pa.Table:
    """Columns: query_id, outcome (as the JSON report spells it: "hit->miss", …, "unlabelled"),
    text and tenant (null where unknown); per arm x in a, b: gold_rank_x (1-based, over the stored
    depth; null: no gold stored), depth_x, hit_x, recall_x, mrr_x, ndcg_x (at k; null for
    unlabelled queries, recall also where n_eligible = 0) and plan_x; with measures by name,
    `<name>_a` and `<name>_b` for each (as `nDCG@10_a`; null for unlabelled queries). With `hints`,
    a `hints` column: each flip's cause hints (HintKind values, most specific first; text hints only
    with a corpus, for the first TEXT_FLIPS flips, as in the report), null for queries that did not
    flip (the text hints read `corpus`). Schema metadata: k and the arms' names."""
    unscored = ~ev.scored
    columns: dict[str, pa.Array] = {
        "query_id": ev.query_ids,
        "outcome": _outcomes(ev.outcomes),
        "text": ev.query_column("text"),
        "tenant": ev.query_column("tenant"),
    }
    for key, arm in (("a", ev.a), ("b", ev.b)):
        columns.update({f"{name}_{key}": col for name, col in _arm_columns(arm, unscored).items()})
    for key, arm in (("a", ev.a), ("b", ev.b)):  # measures by name: null for unlabelled queries
        columns.update({f"{name}_{key}": pa.array(v, mask=unscored) for name, v in ev.named(arm).items()})
    if hints:
        columns["hints"] = _hints(ev, corpus)
    meta = {"k": str(ev.k), "arm_a": ev.a.name, "arm_b": ev.b.name}
    return pa.table(columns).replace_schema_metadata(meta)


def _hints(ev: Evaluation, corpus: Corpus | None) -> pa.Array:
    """The report's flip hints (`flip_hint_table`: text read for the first TEXT_FLIPS flips), per
    query: null where the query did not flip."""
    kinds = flip_hint_table(ev, ev.flips, corpus).kinds()
    at = ev.flip_positions
    return kinds.take(pa.array(at, mask=at < 0))


def _outcomes(codes: np.ndarray) -> pa.Array:
    """Outcome codes as the JSON report spells them."""
    low = min(Outcome)
    spelled = pa.array([Outcome(c).json for c in range(low, max(Outcome) + 1)], pa.string())
    return spelled.take(pa.array(codes.astype(np.int64) - low))


def _arm_columns(arm: Arm, unscored: np.ndarray) -> dict[str, Any]:
    j = arm.judged
    rank = pa.array(j.gold_rank, mask=j.gold_rank <= 0)
    plan = arm.aligned("plan")
    return {
        "gold_rank": rank,
        "depth": pa.array(arm.depth),
        "hit": pa.array(j.hit, mask=unscored),
        "recall": pa.array(j.recall, mask=unscored | np.isnan(j.recall)),
        "mrr": pa.array(j.mrr, mask=unscored),
        "ndcg": pa.array(j.ndcg, mask=unscored | np.isnan(j.ndcg)),
        "plan": pc.cast(plan, pa.string()) if plan is not None else pa.nulls(len(arm.row), pa.string()),
    }
