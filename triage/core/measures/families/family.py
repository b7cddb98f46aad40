"""How a measure is declared (core/measures/families/): a `Family`, named as ir_measures names it
and read over every judgement in force, or a `Metric`, one of triage's four figures at k read over
the gold in each arm's stored order. Each declares its name, its parameters, the names other tools
give it, the sentence docs/measures.md prints, and its kernel: numpy over all queries at once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import numpy as np

from triage.core.measures.hits import GoldHits, GoldSets
from triage.core.measures.ranked import Judgements, Positions

# A family's kernel: the measure on every query of `Positions` (float64, one per query index; 0
# where the query has no relevant id or no list), at the cut-off k (None: the whole list) and the
# relevance level rel (relevant: grade ≥ rel).
Kernel = Callable[[Positions, Judgements, int | None, int], np.ndarray]

# A metric's kernel: its per-query values at k for one arm, from where it retrieved gold, the gold
# sets and n_eligible (int64 per query, -1 where unknown; None: unfiltered).
GoldKernel = Callable[[GoldHits, int, GoldSets, np.ndarray | None], np.ndarray]


class Cut(Enum):
    """Whether a family takes a cut-off @k."""

    NONE = "none"
    OPTIONAL = "optional"
    REQUIRED = "required"


@dataclass(frozen=True, kw_only=True)
class Family:
    """One measure family, as ir_measures declares it. `params`: the parameters it takes besides
    the cut-off (`rel`, `judged_only`); `trec_eval` / `ranx`: the names those tools give it, `{k}`
    standing for the cut-off (empty: the tool has no such measure); `uncut_*`: the name without a
    cut-off. `reach`: the least and the greatest value it takes on a query, so its mean's too (every
    family here is a share, a rate or a ratio to the ideal: [0, 1]; an unbounded one would say
    math.inf). `reads_non_relevant`: its kernel reads where ids judged not relevant sit (the
    others read the relevant ids alone)."""

    name: str
    cut: Cut
    params: tuple[str, ...]
    definition: str
    kernel: Kernel
    trec_eval: str = ""
    ranx: str = ""
    uncut_trec_eval: str = ""
    uncut_ranx: str = ""
    reach: tuple[float, float] = (0.0, 1.0)
    reads_non_relevant: bool = False


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One of triage's four figures at a cut-off k (docs/measures.md "The numbers"): `name` is its
    key in the report (`hit_rate`, JSON `arms.a.hit_rate`). `trec_eval`, `ir_measures`, `ranx`: how
    those tools name the same number at k = 5, as docs/measures.md prints it (with any caveat)."""

    name: str
    definition: str
    kernel: GoldKernel
    trec_eval: str
    ir_measures: str
    ranx: str


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (float64)."""
    out = np.zeros(len(den), np.float64)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out
