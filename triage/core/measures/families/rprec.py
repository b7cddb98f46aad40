"""Rprec: precision within the first R, R the query's number of relevant ids."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, ratio
from triage.core.measures.ranked import Judgements, Positions


def _rprec(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    big_r = judged.n_relevant(rel)
    top = at.rank <= big_r[at.query]
    return ratio(np.bincount(at.query[top & (at.grade >= rel)], minlength=at.n), big_r)


RPREC = Family(
    name="Rprec",
    cut=Cut.NONE,
    params=("rel", "judged_only"),
    definition="precision within the first R, R the query's number of relevant ids",
    kernel=_rprec,
    uncut_trec_eval="Rprec",
    uncut_ranx="r-precision",
)
