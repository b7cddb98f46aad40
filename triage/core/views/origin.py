"""Query origin: every headline number per origin (`real`, `generated`, …) beside the blend.

A question generated from a chunk reuses the chunk's words, so it is found more easily than a
real user's question: recall on a generated set runs above recall on real queries. The `origin`
column of the queries file (or of a run) says where each query came from; queries without a value
form the origin "(none)". Per origin and arm: the means over the origin's scored queries (the
same `means` as the blend) and the paired table over them, whose discordant cells are the flips.

When both `real` and `generated` are present, the figure to quote is the real one (`Quote`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from triage.core.evaluation import Evaluation
from triage.core.measures.metrics import Means, means
from triage.core.measures.paired import Paired, paired
from triage.core.views.slices import NONE

ORIGIN = "origin"
REAL, GENERATED = "real", "generated"


@dataclass(frozen=True)
class OriginPart:
    """The scored queries of one origin: `mask` over the query universe (bool)."""

    origin: str
    mask: np.ndarray
    a: Means
    b: Means
    paired: Paired

    @property
    def n(self) -> int:
        return self.paired.n


@dataclass(frozen=True)
class Quote:
    """Real beside generated: which figure to quote, and how far apart the two are."""

    real: OriginPart
    generated: OriginPart

    def gap(self, side: str) -> float:
        """Generated − real hit rate of arm `side` ("a" or "b"); NaN when either is undefined."""
        g, r = getattr(self.generated, side).hit_rate, getattr(self.real, side).hit_rate
        return float(g - r)


def origin_of(ev: Evaluation) -> np.ndarray | None:
    """One origin per query of the universe (object array, NONE where unknown), or None when no
    input has an origin column."""
    column = ev.query_column(ORIGIN)
    if column.null_count == ev.n:
        return None
    return np.asarray(pc.fill_null(column, NONE).to_numpy(zero_copy_only=False), dtype=object)


def origins(ev: Evaluation) -> list[OriginPart]:
    """One part per origin holding scored queries, largest first (ties by name); empty without
    an origin column."""
    values = origin_of(ev)
    if values is None:
        return []
    scored = ev.scored
    names, code = np.unique(values, return_inverse=True)
    out = []
    for i, name in enumerate(names.tolist()):
        mask = scored & (code == i)
        if not mask.any():
            continue
        out.append(
            OriginPart(
                str(name),
                mask,
                means(ev.a.judged, mask),
                means(ev.b.judged, mask),
                paired(ev.a.judged.hit, ev.b.judged.hit, mask),
            )
        )
    out.sort(key=lambda p: (-p.n, p.origin))
    return out


def quote(parts: list[OriginPart]) -> Quote | None:
    """Real beside generated, when both hold scored queries; else None."""
    by = {p.origin: p for p in parts}
    if REAL in by and GENERATED in by:
        return Quote(by[REAL], by[GENERATED])
    return None
