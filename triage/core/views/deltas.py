"""Per-query B − A of one measure, worst first: the list of the rank-drops screen (docs/app.md).

A *choice* is what the list is ordered on: a measure named with `--measures` (its per-query values,
`Evaluation.named`), one of the four measures at k (hit rate, recall, mrr, ndcg: `PerQuery`), or
the best gold's rank over the queries both arms hit (the report's rank drops: Δ is A's rank − B's,
so that a fall is negative there as it is for every measure).

The moved queries are listed, the largest fall first, then the rises from the smallest to the
largest; equal Δs by query id (the gold rank's by A's rank first, as the report orders its drops).
Unchanged queries (|Δ| ≤ TIE, as the wins / ties / losses count them) are counted, not listed.
Everything is a few numpy sorts over per-query arrays: no loop over queries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.evaluation import Evaluation
from triage.core.views.ranks import TIE

GOLD_RANK = "gold rank"  # the choice of the best gold's rank, both arms hit


def choices(ev: Evaluation) -> list[str]:
    """What the list can be ordered on, the default first: the named measures in the order asked
    for, then ndcg, recall, mrr and the hit rate at k, then the gold rank. Without a named measure
    the default is ndcg@k: it moves with every change of rank within k and weighs the grades, where
    the hit rate's Δ is only the flips (listed by `f`). Against exact truth the default is recall@k,
    the decision measure."""
    k = ev.k
    builtin = [f"ndcg@{k}", f"recall@{k}", f"mrr@{k}", f"hit_rate@{k}"]
    if ev.truth is not None:
        builtin.insert(0, builtin.pop(1))
        return [*builtin[:1], *(str(m) for m in ev.measures), *builtin[1:], GOLD_RANK]
    return [*(str(m) for m in ev.measures), *builtin, GOLD_RANK]


@dataclass(frozen=True)
class Choice:
    """One choice's values per query and arm (float64; NaN where the query is not compared: not
    scored, a measure undefined for it, or for the gold rank a query not hit by both arms)."""

    name: str
    a: np.ndarray
    b: np.ndarray
    rank: bool = False  # the values are gold ranks: lower is better, Δ = A − B

    @property
    def delta(self) -> np.ndarray:
        """Per query, the change for the better (B − A; for ranks A − B); NaN where not compared."""
        return self.a - self.b if self.rank else self.b - self.a


def choice(ev: Evaluation, name: str) -> Choice:
    """The values of the choice `name` (one of `choices(ev)`)."""
    off = ~ev.scored
    a, b = ev.a.judged, ev.b.judged
    if name == GOLD_RANK:
        off = off | ~(a.hit & b.hit)
        return Choice(name, _masked(a.gold_rank, off), _masked(b.gold_rank, off), rank=True)
    builtin = {
        f"ndcg@{ev.k}": "ndcg",
        f"recall@{ev.k}": "recall",
        f"mrr@{ev.k}": "mrr",
        f"hit_rate@{ev.k}": "hit",
    }
    if name in builtin:
        field = builtin[name]
        return Choice(name, _masked(getattr(a, field), off), _masked(getattr(b, field), off))
    named_a, named_b = ev.named(ev.a), ev.named(ev.b)
    if name not in named_a:
        raise KeyError(name)
    return Choice(name, _masked(named_a[name], off), _masked(named_b[name], off))


def _masked(values: np.ndarray, off: np.ndarray) -> np.ndarray:
    return np.where(off, np.nan, values.astype(np.float64))


def by_name(query_ids: pa.Array) -> np.ndarray:
    """Each query's position among the query ids sorted (int64): the tie-break of every order here."""
    order = pc.sort_indices(query_ids).to_numpy()
    out = np.empty(len(order), np.int64)
    out[order] = np.arange(len(order))
    return out


@dataclass(frozen=True)
class Deltas:
    """The list for one choice: `order` the moved queries' indices, worst first."""

    choice: Choice
    order: np.ndarray  # int64 query indices
    fell: int  # Δ < −TIE
    rose: int  # Δ > TIE
    same: int  # compared, |Δ| ≤ TIE: not listed
    not_compared: int  # scored queries without a Δ (NaN on either side)


def deltas(ev: Evaluation, name: str, names: np.ndarray | None = None) -> Deltas:
    """The moved queries of choice `name`, Δ ascending (the largest fall first), equal Δs by query
    id (the gold rank's by A's rank, then id). `names`: `by_name(ev.query_ids)`, if known."""
    c = choice(ev, name)
    d = c.delta
    compared = ~np.isnan(d)
    moved = np.flatnonzero(compared & (np.abs(np.where(compared, d, 0.0)) > TIE))
    step = np.round(d[moved] / TIE)  # equal within the float noise of one sum: one Δ
    ids = (by_name(ev.query_ids) if names is None else names)[moved]
    keys = (ids, c.a[moved], step) if c.rank else (ids, step)
    order = moved[np.lexsort(keys)]
    fell = int((d[moved] < 0).sum())
    scored = int(ev.scored.sum())
    return Deltas(
        c, order, fell, len(moved) - fell, int(compared.sum()) - len(moved), scored - int(compared.sum())
    )
