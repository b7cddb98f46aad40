"""Judged@k: the share of the first k retrieved that has a judgement of any grade."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, ratio
from triage.core.measures.ranked import Judgements, Positions


def _judged(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    assert k is not None  # Cut.REQUIRED
    top = at.rank <= k
    return ratio(np.bincount(at.query[top & at.labelled], minlength=at.n), np.minimum(at.depth, k))


JUDGED = Family(
    name="Judged",
    cut=Cut.REQUIRED,
    params=(),
    definition="the share of the first k retrieved that has a judgement of any grade: judged ids "
    "within k / min(k, ids retrieved), 0 for an empty list (as ir_measures)",
    kernel=_judged,
    reads_non_relevant=True,
)
