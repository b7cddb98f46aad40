"""AP (average precision), within k or over the whole list."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, ratio
from triage.core.measures.hits import positions_in_runs
from triage.core.measures.ranked import Judgements, Positions


def _ap(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    hits = at.within(k) & (at.grade >= rel)
    q, r = at.query[hits], at.rank[hits]
    precision = positions_in_runs(q) / r  # the i-th relevant id of its query, at rank r
    return ratio(np.bincount(q, weights=precision, minlength=at.n), judged.n_relevant(rel))


AP = Family(
    name="AP",
    cut=Cut.OPTIONAL,
    params=("rel", "judged_only"),
    definition="average precision: the sum, over the relevant ids retrieved within k (no k: the whole "
    "list), of the precision at each one's rank, divided by R (every relevant id of the "
    "query, retrieved or not)",
    kernel=_ap,
    trec_eval="map_cut_{k}",
    ranx="map@{k}",
    uncut_trec_eval="map",
    uncut_ranx="map",
)
