"""R@k (recall as IR tools define it): relevant ids within the first k, over R, every relevant id
of the query (triage's own recall@k is core/measures/families/recall.py)."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family, ratio
from triage.core.measures.ranked import Judgements, Positions


def _r(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    return ratio(at.found(k, rel), judged.n_relevant(rel))


R = Family(
    name="R",
    cut=Cut.REQUIRED,
    params=("rel", "judged_only"),
    definition="recall: relevant ids within the first k, divided by R (every relevant id of the query)",
    kernel=_r,
    trec_eval="recall_{k}",
    ranx="recall@{k}",
)
