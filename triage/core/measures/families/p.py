"""P@k (precision): relevant ids within the first k, over k."""

from __future__ import annotations

import numpy as np

from triage.core.measures.families.family import Cut, Family
from triage.core.measures.ranked import Judgements, Positions


def _p(at: Positions, judged: Judgements, k: int | None, rel: int) -> np.ndarray:
    assert k is not None  # Cut.REQUIRED
    return at.found(k, rel) / float(k)


P = Family(
    name="P",
    cut=Cut.REQUIRED,
    params=("rel", "judged_only"),
    definition="precision: relevant ids within the first k, divided by k (even when fewer were retrieved)",
    kernel=_p,
    trec_eval="P_{k}",
    ranx="precision@{k}",
)
