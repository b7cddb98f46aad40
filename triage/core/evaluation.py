"""One evaluation: two arms judged at one k against one set of gold labels — computed, never mutated.

Several cut-offs may be asked for (`ks`, the decision k first): flips and the paired table use
the decision k alone; the others are read from the same per-query gold ranks (`at_k`).

Data flows one way: `Inputs` (contract-shaped Arrow tables) and a gold table → integer arrays
aligned with the query universe → per-query metrics → means, paired table, flips. Every per-query
array here has one entry per id of `query_ids`. A new gold set for some queries (an amendment) is a
new `Evaluation` from `rejudged`, sharing what did not change and copying what did.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.ids import codes
from triage.core.inputs.frozen import frozen_of
from triage.core.inputs.load import Inputs, Run
from triage.core.inputs.manifest import ArmSpec, check_ks
from triage.core.inputs.readers import Parsed
from triage.core.inputs.shapes import Format, Role, detect
from triage.core.measures import ranked
from triage.core.measures.families.recall import exact_recall_at, recall_at
from triage.core.measures.gold import (
    KEY,
    Gold,
    JudgedPairs,
    contains,
    encode_gold,
    encode_judged,
    frozen_only,
    gold_hits,
    judged_in_list,
    judged_in_top,
    query_hits,
    splice,
    with_judged,
    with_query,
)
from triage.core.measures.hits import GoldHits, GoldSets, hits_at
from triage.core.measures.intervals import wilson_one
from triage.core.measures.metrics import Means, PerQuery, judge_arm, judge_at, means
from triage.core.measures.names import DEFAULT_K, Measure
from triage.core.measures.paired import (
    Outcome,
    Paired,
    change_order,
    flip_order,
    noise_band,
    outcome_codes,
    paired,
)
from triage.core.measures.ranked import Order
from triage.core.truth.folder import TruthFolder, gold_at
from triage.core.truth.judged import ExactTruth, align


@dataclass(frozen=True)
class Arm:
    """One arm over the query universe. `row` is the run's row per query (-1: absent from the run);
    `depth` the stored list length; `n_eligible` -1 where unknown: the run's, or judged against exact
    truth the truth's exact counts (the run's own are then read with `aligned("n_eligible")`)."""

    run: Run
    row: np.ndarray
    depth: np.ndarray
    n_eligible: np.ndarray
    hits: GoldHits
    judged: PerQuery
    judged_top: np.ndarray  # int64: distinct judged ids (gold or not relevant) in the top k

    @property
    def shown(self) -> np.ndarray:
        """How many ids the top k holds: min(k, depth), per query."""
        return np.minimum(self.depth, self.judged.k)

    @property
    def unjudged_top(self) -> np.ndarray:
        """Ids in the top k nobody judged, per query (int64)."""
        return self.shown - self.judged_top

    @property
    def short(self) -> np.ndarray:
        """Per query, whether the arm returned fewer than k ids: `n_returned` < k where the run
        records it, else the stored depth < k; False where the arm lacks the query (bool)."""
        depth = pa.array(self.depth)
        n = self.aligned("n_returned")
        returned = depth if n is None else pc.coalesce(pc.cast(n, pa.int64()), depth)
        return (returned.to_numpy(zero_copy_only=False) < self.judged.k) & self.present

    @property
    def name(self) -> str:
        return self.run.name

    @property
    def present(self) -> np.ndarray:
        return self.row >= 0

    def value(self, column: str, q: int) -> Any:
        """A run column's value for query index `q` (None when absent)."""
        r = int(self.row[q])
        if r < 0 or column not in self.run.table.column_names:
            return None
        return self.run.table.column(column)[r].as_py()

    def values(self, column: str, qs: np.ndarray) -> list[object]:
        """A run column's values for query indices `qs` (None where absent)."""
        col = self.at(column, qs)
        return [None] * len(qs) if col is None else col.to_pylist()

    def at(self, column: str, qs: np.ndarray) -> pa.Array | None:
        """A run column's values for query indices `qs` (null where the run lacks the query), or
        None when the run has no such column."""
        table = self.run.table
        if column not in table.column_names:
            return None
        if table.num_rows == 0:
            return pa.nulls(len(qs), table.schema.field(column).type)
        rows = self.row[qs]
        present = rows >= 0
        col = table.column(column)
        if len(rows) and rows[0] >= 0 and (np.diff(rows) == 1).all():  # consecutive rows: no copy
            values = col.slice(int(rows[0]), len(rows))
        else:
            values = col.take(pa.array(np.maximum(rows, 0)))
        values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        if present.all():
            return values
        return pc.if_else(pa.array(present), values, pa.nulls(len(rows), values.type))

    def text_at(self, column: str, qs: np.ndarray) -> pa.Array:
        """`at` as text: null where the run lacks the query or the column."""
        values = self.at(column, qs)
        return pa.nulls(len(qs), pa.string()) if values is None else pc.cast(values, pa.string())

    def aligned(self, column: str) -> pa.Array | None:
        """A run column with one value per query of the universe (null where the run lacks the
        query), or None when the run has no such column."""
        return self.at(column, np.arange(len(self.row)))

    def retrieved(self, q: int) -> list[str]:
        r = int(self.row[q])
        return [] if r < 0 else self.run.table.column("retrieved")[r].as_py()


@dataclass(frozen=True)
class Evaluation:
    inputs: Inputs
    k: int
    query_ids: pa.Array
    gold: Gold
    a: Arm
    b: Arm
    not_relevant: JudgedPairs  # every pair judged not relevant (gold pairs are in `gold`)
    # Of those, the pairs the label file grades below 0: trec_eval's "pooled, unjudged", which the
    # measures by name read as trec_eval does (not judged by Bpref and judged_only).
    pooled: JudgedPairs | None = None
    ks: tuple[int, ...] = ()  # every cut-off asked for, `k` first (empty: `k` alone)
    measures: tuple[Measure, ...] = ()  # measures by name (core/measures/names.py), as asked for
    orders: tuple[Order, Order] = (Order.AS_GIVEN, Order.AS_GIVEN)  # the order each arm is read in for them
    k_default: bool = False  # no k anywhere: `k` is DEFAULT_K
    # Judged against exact truth (a truth folder as the labels; core/truth): the gold is the truth at
    # `k`, n_eligible the truth's exact counts, recall@k over min(k, n_eligible); None: other labels
    truth: ExactTruth | None = None

    @property
    def cutoffs(self) -> tuple[int, ...]:
        """Every cut-off asked for, the decision k first."""
        return self.ks or (self.k,)

    @property
    def n(self) -> int:
        return len(self.query_ids)

    @property
    def queries(self) -> pa.Table | None:
        return self.inputs.queries

    @cached_property
    def scored(self) -> np.ndarray:
        """Queries with at least one gold id."""
        return self.gold.sets.n_gold > 0

    @property
    def arms(self) -> tuple[Arm, Arm]:
        return self.a, self.b

    @property
    def amended(self) -> bool:
        """Whether the gold holds pairs the frozen file does not (amendments only ever add pairs)."""
        return len(self.gold.keys) != len(self.gold.frozen_keys)

    def means(self, arm: Arm) -> Means:
        return means(arm.judged, self.scored)

    def judged_at_k(self, arm: Arm) -> float:
        """Mean over the scored queries with a non-empty top k of the share of it that is judged
        (gold or not relevant): ir_measures' Judged@k, over what was retrieved. NaN if none."""
        mask = self.scored & (arm.shown > 0)
        if not mask.any():
            return float("nan")
        return float((arm.judged_top[mask] / arm.shown[mask]).mean())

    def unjudged_in_top_k(self, arm: Arm) -> int:
        """Unjudged ids in the top k, summed over the scored queries."""
        return int(arm.unjudged_top[self.scored].sum())

    def unjudged_same_depth(self) -> tuple[int, int, int] | None:
        """(ids, unjudged in A, unjudged in B) over the scored queries, each query's two top-k
        lists cut at the shorter one's length (`ids`: the ids each arm's count is over): the arms'
        unjudged counts compared at one depth. None when the two top-k lists of every scored query
        are equally long (`unjudged_in_top_k` then compares alike)."""
        s = self.scored
        depth = np.minimum(self.a.shown, self.b.shown)
        if (self.a.shown[s] == self.b.shown[s]).all():
            return None
        counts = []
        for arm in self.arms:
            row_query = np.zeros(arm.run.table.num_rows, np.int64)
            present = arm.row >= 0
            row_query[arm.row[present]] = np.flatnonzero(present)
            judged = hits_at(arm.hits, depth, self.n)
            judged += judged_in_top(arm.run.retrieved, row_query, self.not_relevant, depth, self.n)
            counts.append(int((depth - judged)[s].sum()))
        return int(depth[s].sum()), counts[0], counts[1]

    def hit_rate_upper(self, arm: Arm) -> float:
        """The hit rate if every unjudged id in a top k were relevant: an upper bound (the measured
        hit rate takes them as not relevant)."""
        if not self.scored.any():
            return float("nan")
        upper = arm.judged.hit | (arm.unjudged_top > 0)
        return float(upper[self.scored].mean())

    def regressions_with_unjudged(self) -> int:
        """Regressions (A hit, B miss) with an unjudged id in B's top k: each a possible false
        regression, should that id be relevant."""
        a, b = self.a, self.b
        return int((self.scored & a.judged.hit & ~b.judged.hit & (b.unjudged_top > 0)).sum())

    @cached_property
    def amended_queries(self) -> np.ndarray:
        """Indices of the queries whose gold the amendments extend, ascending."""
        gold = self.gold
        return np.unique(gold.keys[~_in_sorted(gold.keys, gold.frozen_keys)] // KEY)

    def frozen_hit_rate(self, arm: Arm) -> float:
        """`arm`'s hit rate on the frozen labels alone, as `frozen_view` gives it, computed over
        the queries amendments gave gold only (cheap enough for a check run on every decision).
        Frozen gold is a subset of the effective gold, so elsewhere the hits are the same."""
        if not self.amended:
            return self.means(arm).hit_rate
        frozen_keys = self.gold.frozen_keys
        touched = self.amended_queries
        scored = self.scored.copy()
        scored[touched] = np.searchsorted(frozen_keys, (touched + 1) * KEY) > np.searchsorted(
            frozen_keys, touched * KEY
        )
        h = arm.hits
        lo, hi = np.searchsorted(h.query, touched), np.searchsorted(h.query, touched, side="right")
        count = hi - lo
        owner = np.repeat(np.arange(len(touched)), count)
        rows = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
        frozen_hit = (h.rank[rows] <= self.k) & _in_sorted(h.query[rows] * KEY + h.code[rows], frozen_keys)
        hit = arm.judged.hit.copy()
        hit[touched] = np.bincount(owner[frozen_hit], minlength=len(touched)) > 0
        return float(hit[scored].mean()) if scored.any() else float("nan")

    def paired(self) -> Paired:
        return paired(self.a.judged.hit, self.b.judged.hit, self.scored)

    def noise_band(self, arm: Arm) -> float:
        m = self.means(arm)
        return noise_band(m.hit_rate, m.n)

    def wilson(self, arm: Arm) -> tuple[float, float]:
        """The Wilson 95% interval of the arm's hit rate over the scored queries (NaN if none)."""
        return wilson_one(int(arm.judged.hit[self.scored].sum()), int(self.scored.sum()))

    @cached_property
    def flips(self) -> np.ndarray:
        """Indices of the flipped queries in flip order (`flip_order`); judged against exact truth,
        the queries whose recall@k changed, the largest fall first (`change_order`)."""
        a, b = self.a, self.b
        if self.truth is not None:
            return change_order(a.judged.recall, b.judged.recall, self.scored, self.query_ids)
        return flip_order(
            a.judged.hit,
            b.judged.hit,
            self.scored,
            a.judged.gold_rank,
            b.judged.gold_rank,
            a.depth,
            b.depth,
            self.query_ids,
        )

    @cached_property
    def regressions_in_flips(self) -> int:
        """The flips that are regressions (listed first): hit→miss, or against exact truth the
        queries whose recall@k fell."""
        if self.truth is not None:
            return int((self.b.judged.recall[self.flips] < self.a.judged.recall[self.flips]).sum())
        return int((self.outcomes[self.flips] == Outcome.HIT_TO_MISS).sum())

    @cached_property
    def flip_positions(self) -> np.ndarray:
        """Per query index, its position in `flips` (int64; -1: not a flip)."""
        at = np.full(self.n, -1, np.int64)
        at[self.flips] = np.arange(len(self.flips))
        return at

    @cached_property
    def outcomes(self) -> np.ndarray:
        """Per query, an `Outcome` code (int8)."""
        return outcome_codes(self.a.judged.hit, self.b.judged.hit, self.scored)

    def ids_where(self, mask: np.ndarray) -> list[str]:
        return self.query_ids.filter(pa.array(mask)).to_pylist()

    def gold_of(self, q: int) -> list[tuple[str, int]]:
        """Query `q`'s gold ids with their grades, best grade first."""
        sets = self.gold.sets
        lo, hi = np.searchsorted(sets.query, [q, q + 1])
        chunks = self.gold.vocabulary.take(pa.array(sets.code[lo:hi])).to_pylist()
        return list(zip(chunks, sets.grade[lo:hi].tolist(), strict=True))

    @cached_property
    def _queries_row(self) -> np.ndarray:
        """Each query's row in the queries file (-1 where the file lacks it; empty: no file)."""
        if self.queries is None:
            return np.zeros(0, np.int64)
        return codes.encode(self.query_ids, self.queries.column("query_id")).astype(np.int64)

    def queries_aligned(self, name: str, qs: np.ndarray | None = None) -> pa.Array | None:
        """A queries-file column with one value per query of `qs` (default: the universe), null
        where the file lacks the query, or None when the file or the column is absent."""
        if self.queries is None or name not in self.queries.column_names:
            return None
        where = self._queries_row if qs is None else self._queries_row[qs]
        values = self.queries.column(name).take(pa.array(np.maximum(where, 0)))
        values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        return pc.if_else(pa.array(where >= 0), values, pa.nulls(len(where), values.type))

    def query_column(self, name: str, qs: np.ndarray | None = None) -> pa.Array:
        """A per-query column as text for the queries `qs` (default: all, aligned with
        `query_ids`): from the queries file, else from the runs (B first); null where unknown."""
        every = np.arange(self.n) if qs is None else qs
        sources = [self.queries_aligned(name, qs), self.b.at(name, every), self.a.at(name, every)]
        present = [pc.cast(v, pa.string()) for v in sources if v is not None]
        return pc.coalesce(*present) if present else pa.nulls(len(every), pa.string())

    def query_index(self, query_id: str) -> int:
        """Index of `query_id` in the universe, -1 if unknown."""
        return int(codes.positions_in([query_id], self.query_ids)[0])

    def rejudged(self, q: int, pairs: list[tuple[str, int]], judged: list[str] | None = None) -> Evaluation:
        """A new evaluation in which query `q`'s gold is `pairs` (chunk id, grade ≥ 1) and its
        judged chunks `judged` (gold or not; default: the gold): that query alone is judged again in
        both arms; every other array is shared or copied, never changed."""
        gold = with_query(self.gold, q, pairs)
        golds = {c for c, _ in pairs}
        zero = with_judged(self.not_relevant, q, [c for c in (judged or []) if c not in golds])
        lo, hi = np.searchsorted(gold.sets.query, [q, q + 1])
        sets = gold.sets
        one_set = GoldSets(
            np.zeros(hi - lo, np.int64), sets.grade[lo:hi], sets.code[lo:hi], sets.n_gold[q : q + 1]
        )

        def arm(old: Arm) -> Arm:
            new = query_hits(old.retrieved(q), q, gold)
            one = judged_at(
                GoldHits(new.query * 0, new.rank, new.grade, new.code),
                self.k,
                one_set,
                old.n_eligible[q : q + 1],
                self.truth is not None,
            )
            j = old.judged
            judged = PerQuery(
                j.k,
                _with(j.gold_rank, q, one.gold_rank[0]),
                _with(j.hit, q, one.hit[0]),
                _with(j.recall, q, one.recall[0]),
                _with(j.mrr, q, one.mrr[0]),
                _with(j.ndcg, q, one.ndcg[0]),
            )
            in_top = int((new.rank <= self.k).sum())  # distinct gold in the top k
            top = _with(old.judged_top, q, in_top + judged_in_list(old.retrieved(q), q, zero, self.k))
            return replace(old, hits=splice(old.hits, q, new), judged=judged, judged_top=top)

        return replace(
            self, gold=gold, not_relevant=zero, a=arm(self.a), b=arm(self.b), pooled=self._pooled_in(zero)
        )

    def _pooled_in(self, zero: JudgedPairs) -> JudgedPairs | None:
        """The pooled pairs still judged not relevant in `zero` (one judged gold is pooled no more)."""
        if self.pooled is None or not len(self.pooled.keys):
            return self.pooled
        q = self.pooled.keys // KEY
        still = contains(zero, q, self.pooled.vocabulary.take(pa.array(self.pooled.keys % KEY)))
        return JudgedPairs(self.pooled.vocabulary, self.pooled.keys[still])

    def frozen_view(self) -> tuple[PerQuery, PerQuery, np.ndarray]:
        """Both arms judged on the frozen labels alone, and the queries those labels score."""
        if not self.amended:  # nothing amended: the frozen view is the effective one
            return self.a.judged, self.b.judged, self.scored
        (ja, sets), (jb, _) = (self._frozen_judged(arm) for arm in self.arms)
        return ja, jb, sets.n_gold > 0

    def _frozen_judged(self, arm: Arm) -> tuple[PerQuery, GoldSets]:
        hits, sets = frozen_only(arm.hits, self.gold)
        return judged_at(hits, self.k, sets, arm.n_eligible, self.truth is not None), sets

    def at_k(self, arm: Arm, ks: Sequence[int]) -> dict[int, Means | None]:
        """`arm`'s means at each of `ks`, read from its gold hits in one go (`judge_at`: no pass
        over the ranked lists); None at a k its stored depth cannot show (every list shorter),
        even at the decision k, whose means are the arm's own. Against exact truth each k is judged
        against the truth at that k (`_truth_at_k`)."""
        depth = self.depth(arm)
        if self.truth is not None:
            return self._truth_at_k(arm, ks, depth)
        other = [k for k in ks if k != self.k and k <= depth]
        judged = judge_at(arm.hits, other, self.gold.sets, arm.n_eligible)
        out: dict[int, Means | None] = {}
        for k in ks:
            if k > depth:
                out[k] = None
            else:
                out[k] = self.means(arm) if k == self.k else means(judged[k], self.scored)
        return out

    def _truth_at_k(self, arm: Arm, ks: Sequence[int], depth: int) -> dict[int, Means | None]:
        """`at_k` against exact truth: at each k but the decision k, the truth at that k found in
        the lists anew (one pass each); None at a k deeper than the stored lists or the truth."""
        assert self.truth is not None
        out: dict[int, Means | None] = {}
        row_query = np.zeros(arm.run.table.num_rows, np.int64)
        row_query[arm.row[arm.present]] = np.flatnonzero(arm.present)
        for k in ks:
            if k > depth or k > self.truth.k:
                out[k] = None
            elif k == self.k:
                out[k] = self.means(arm)
            else:
                table = gold_at(self.truth.folder, k)
                gold = encode_gold(table, table, self.query_ids)
                run = arm.run
                hits = gold_hits(run.retrieved, row_query, gold, run.fingerprints, bool(run.facts.duplicates))
                out[k] = means(judged_at(hits, k, gold.sets, arm.n_eligible, True), self.scored)
        return out

    @cached_property
    def judgements(self) -> ranked.Judgements:
        """Every judgement in force with its grade: the gold (amendments included) and the pairs
        judged not relevant (grade 0)."""
        gold, zero = self.gold, self.not_relevant
        chunks = [
            pc.cast(v.take(pa.array(keys % KEY)), pa.string())
            for v, keys in ((gold.vocabulary, gold.keys), (zero.vocabulary, zero.keys))
        ]
        query = np.concatenate([gold.keys // KEY, zero.keys // KEY])
        grade = np.concatenate([gold.grade, self._not_relevant_grade])
        return ranked.judgements(query, pa.concat_arrays(chunks), grade, self.n)

    @cached_property
    def _named(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        if not self.measures:
            return {}, {}
        judged = self.judgements
        out = []
        for arm, order in zip(self.arms, self.orders, strict=True):
            at = self._judged_positions(arm, order)
            out.append({str(m): m.per_query(at, judged) for m in self.measures})
        return out[0], out[1]

    def _judged_positions(self, arm: Arm, order: Order) -> ranked.Positions:
        """Where `arm` lists its judged ids, read from what judging it already found: its gold
        hits, and only if a measure reads them the ids judged not relevant (found the way the gold
        was, per query by fingerprint). No string is hashed when the lists are read as stored or
        already in score order; in another order each judged id's rank is counted in its own list
        (`ranked.ranks_in_order`). A reordered run holding an id twice (which copy comes first may
        change) is reordered whole and looked up anew."""
        run = arm.run
        row_query = np.zeros(run.table.num_rows, np.int64)
        present = arm.row >= 0
        row_query[arm.row[present]] = np.flatnonzero(present)
        repeats = bool(run.facts.duplicates)
        lists, scores = run.retrieved, run.column("scores")
        if repeats and not ranked.in_stored_order(lists, scores, order):
            lists, _ = ranked.reorder(lists, scores, order)
            return ranked.positions(lists, row_query, self.judgements, repeats)
        hits = arm.hits
        q, rank, grade = hits.query, hits.rank, hits.grade
        if any(m.reads_non_relevant for m in self.measures) and len(self.not_relevant.keys):
            zero = gold_hits(run.retrieved, row_query, self._not_relevant_gold, run.fingerprints, repeats)
            code = self._not_relevant_in_gold[zero.code]
            # a pair both gold and judged not relevant keeps its gold grade
            keep = ~((code >= 0) & _in_sorted(zero.query * KEY + code, self.gold.keys))
            q = np.concatenate([q, zero.query[keep]])
            rank = np.concatenate([rank, zero.rank[keep]])
            grade = np.concatenate([grade, zero.grade[keep]])
        offsets = lists.offsets.to_numpy().astype(np.int64)
        moved = ranked.ranks_in_order(lists, scores, order, offsets[arm.row[q]] - offsets[0] + rank - 1)
        return ranked.judged_positions(q, rank if moved is None else moved, grade, arm.depth)

    @cached_property
    def _not_relevant_grade(self) -> np.ndarray:
        """Each pair judged not relevant's grade: 0, or −1 where the label file grades it below 0."""
        zero, grade = self.not_relevant, np.zeros(len(self.not_relevant.keys), np.int64)
        if self.pooled is not None and len(self.pooled.keys) and len(zero.keys):
            chunks = zero.vocabulary.take(pa.array(zero.keys % KEY))
            grade[contains(self.pooled, zero.keys // KEY, chunks)] = -1
        return grade

    @cached_property
    def _not_relevant_gold(self) -> Gold:
        """The pairs judged not relevant in the shape of `Gold` (grade 0 or −1), for `gold_hits`."""
        keys = self.not_relevant.keys
        q, code, grade = keys // KEY, keys % KEY, self._not_relevant_grade
        sets = GoldSets(q, grade, code, np.bincount(q, minlength=self.n).astype(np.int64))
        return Gold(self.not_relevant.vocabulary, keys, grade, sets, keys)

    @cached_property
    def _not_relevant_in_gold(self) -> np.ndarray:
        """Each id judged not relevant's code in the gold vocabulary (-1: not a gold id)."""
        return codes.encode(self.not_relevant.vocabulary, self.gold.vocabulary).astype(np.int64)

    def named(self, arm: Arm) -> dict[str, np.ndarray]:
        """Each measure asked for by name, per query (float64, keyed by its canonical name): 0
        where the query has no relevant id or the arm did not answer it (trec_eval -c)."""
        return self._named[0 if arm is self.a else 1]

    def named_means(self, arm: Arm) -> dict[str, float]:
        """Each named measure's mean over the scored queries (NaN when none is scored)."""
        scored = self.scored
        return {
            name: float(values[scored].mean()) if scored.any() else float("nan")
            for name, values in self.named(arm).items()
        }

    def depth(self, arm: Arm) -> int:
        """The arm's stored depth: its longest ranked list (0 when it answered nothing)."""
        return int(arm.depth.max(initial=0))

    def recall_at_depth(self, arm: Arm) -> float:
        """recall@D at the stored depth D (`depth`): the share of the gold a reranker reading
        every stored id could reach, min(D, |gold|[, n_eligible]) as the denominator like
        recall@k. NaN when no query is scored or nothing was retrieved."""
        d = self.depth(arm)
        if d == 0:
            return float("nan")
        recall = recall_at(arm.hits, d, self.gold.sets, arm.n_eligible)
        ok = self.scored & ~np.isnan(recall)
        return float(recall[ok].mean()) if ok.any() else float("nan")


def _in_sorted(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Whether each of `values` is one of the sorted `keys` (bool per value)."""
    if not len(keys):
        return np.zeros(len(values), bool)
    at = np.minimum(np.searchsorted(keys, values), len(keys) - 1)
    return keys[at] == values


def _with(values: np.ndarray, q: int, value: object) -> np.ndarray:
    out = values.copy()
    out[q] = value
    return out


Cutoffs = int | Sequence[int] | None  # one k, several (the first decides), or None: the inputs'


def choose_ks(inputs: Inputs, k: Cutoffs) -> tuple[int, ...]:
    """The cut-offs, the decision k first: --k (one or several), else the manifest's, else the
    arms' k (the smaller when they differ); with no k anywhere, DEFAULT_K (a `k.default` check
    says so)."""
    spec = inputs.spec
    asked = () if k is None else check_ks(list(k) if isinstance(k, Sequence) else k, "--k")
    chosen = asked or spec.ks or ((spec.k,) if spec.k else ())
    if chosen:
        return chosen
    known = [r.k for r in (inputs.a, inputs.b) if r.k is not None]
    return (min(known),) if known else (DEFAULT_K,)


def judged_at(hits: GoldHits, k: int, sets: GoldSets, n_eligible: np.ndarray, exact: bool) -> PerQuery:
    """`judge_arm`; with `exact` (judged against exact truth) its recall over min(k, n_eligible),
    the truth's exact count, whatever the truth holds (`exact_recall_at`)."""
    judged = judge_arm(hits, k, sets, n_eligible)
    return replace(judged, recall=exact_recall_at(hits, k, n_eligible)) if exact else judged


def build_arm(
    run: Run,
    query_ids: pa.Array,
    gold: Gold,
    not_relevant: JudgedPairs,
    k: int,
    row_query: np.ndarray | None = None,
    exact: np.ndarray | None = None,
) -> Arm:
    """`row_query`: each run row's query index, when already known; `exact`: the truth's exact
    n_eligible per query (judged against exact truth), in place of the run's."""
    n = len(query_ids)
    if row_query is None:
        row_query = codes.encode(run.table.column("query_id"), query_ids).astype(np.int64)
    row = np.full(n, -1, np.int64)
    row[row_query] = np.arange(len(row_query))
    depth = np.zeros(n, np.int64)
    depth[row_query] = pc.list_value_length(run.retrieved).to_numpy(zero_copy_only=False)
    n_eligible = np.full(n, -1, np.int64)
    col = run.column("n_eligible")
    if exact is not None:
        n_eligible = exact
    elif col is not None:
        n_eligible[row_query] = col.fill_null(-1).to_numpy()
    hits = gold_hits(run.retrieved, row_query, gold, run.fingerprints, bool(run.facts.duplicates))
    # Judged ids in the top k: its gold (already found) and those judged not relevant (usually few:
    # no pass over the lists at all when there are none).
    top = hits_at(hits, k, n) + judged_in_top(run.retrieved, row_query, not_relevant, k, n)
    judged = judged_at(hits, k, gold.sets, n_eligible, exact is not None)
    return Arm(run, row, depth, n_eligible, hits, judged, top)


def universe(inputs: Inputs) -> tuple[pa.Array, list[np.ndarray], np.ndarray]:
    """Every query id any input names, in first-seen order: queries file, labels, run A, run B;
    each run row's position in it and each label row's (int64), from the same single hashing
    pass. The labels' query ids are hashed once per stretch of equal neighbours (a label file lists
    a query's judgements together). A column equal to one before it (run A listing the labels'
    queries in their order, run B in run A's, a run in the queries file's) is not hashed again:
    its positions are that column's."""
    queries = inputs.queries
    judged, lengths = _repeats_collapsed(inputs.frozen.judged_ids)
    parts = [
        queries.column("query_id") if queries is not None else None,
        judged,
        inputs.a.table.column("query_id"),
        inputs.b.table.column("query_id"),
    ]
    hashed: list[pa.ChunkedArray] = []
    source: list[int] = []  # per part: the hashed column that gives its positions (-1: no part)
    for part in parts:
        if part is None:
            source.append(-1)
            continue
        c = part if isinstance(part, pa.ChunkedArray) else pa.chunked_array([part], pa.string())
        same = next((j for j, h in enumerate(hashed) if len(h) == len(c) and h.equals(c)), None)
        if same is None:
            same = len(hashed)
            hashed.append(c)
        source.append(same)
    every, code = codes.coded_distinct(pa.chunked_array([x for h in hashed for x in h.chunks], pa.string()))
    ends = np.cumsum([len(h) for h in hashed], dtype=np.int64)
    starts = ends - np.array([len(h) for h in hashed], np.int64)
    of = [code[starts[j] : ends[j]] if j >= 0 else np.zeros(0, np.int64) for j in source]
    return every, of[2:], of[1] if lengths is None else np.repeat(of[1], lengths)


def _repeats_collapsed(ids: pa.Array) -> tuple[pa.Array, np.ndarray | None]:
    """`ids` with each stretch of equal neighbours kept once, and each stretch's length (None: no two
    neighbours are equal, `ids` itself). One comparison of neighbours, no hashing. The ids hold no
    null: the data contract refuses an empty query id (`contract.conform`)."""
    if len(ids) < 2:
        return ids, None
    repeat = pc.equal(ids.slice(1), ids.slice(0, len(ids) - 1)).to_numpy(zero_copy_only=False)
    if not repeat.any():
        return ids, None
    first = np.flatnonzero(np.r_[True, ~repeat])
    return ids.take(pa.array(first)), np.diff(np.r_[first, len(ids)])


def evaluate(
    inputs: Inputs,
    gold: pa.Table,
    k: Cutoffs = None,
    judged: pa.Table | None = None,
    truth: TruthFolder | None = None,
) -> Evaluation:
    """Judge both arms at one k (docs/measures.md "The numbers") against `gold`: (query_id, chunk_id,
    relevance ≥ 1)
    rows, one per pair, holding at least the frozen file's gold pairs. `judged`: every judged pair
    (any grade; default: the frozen file's judgements). `k` as `choose_ks`: the first decides.
    `truth`: the truth folder the labels are (their gold the truth at k: `judged_on_truth`), whose
    exact n_eligible the recall reads."""
    spec = inputs.spec
    ks = choose_ks(inputs, k)
    k_default = _no_k(inputs, k)
    judged_k = ks[0]
    with ThreadPoolExecutor(max_workers=1) as pool:  # two hashing passes at once, on two cores
        chunks = pool.submit(codes.coded_distinct, gold.column("chunk_id"))
        query_ids, (rows_a, rows_b), label_rows = universe(inputs)
        coded = chunks.result()
    frozen = inputs.frozen
    # The frozen gold's rows are label-file rows (no amendment in force): their queries are known.
    known = label_rows[frozen.gold_rows] if gold is frozen.table and frozen.gold_rows is not None else None
    encoded = encode_gold(gold, frozen.table, query_ids, known, coded)
    every = judged if judged is not None else inputs.frozen.judgements
    zero = every.filter(pc.less_equal(every.column("relevance"), 0))  # judged, not relevant
    not_relevant = encode_judged(zero, query_ids)
    below = zero.filter(pc.less(zero.column("relevance"), 0))
    pooled = encode_judged(below, query_ids) if below.num_rows else None
    # The arms one after the other: in two threads they took no less time, and each thread's freed
    # memory stayed resident apart (docs/benchmarks.md "Memory at a million queries").
    exact = None if truth is None else align(truth, query_ids)
    counts = None if exact is None else exact.n_eligible
    arm_a = build_arm(inputs.a, query_ids, encoded, not_relevant, judged_k, rows_a, counts)
    arm_b = build_arm(inputs.b, query_ids, encoded, not_relevant, judged_k, rows_b, counts)
    return Evaluation(
        inputs=inputs,
        k=judged_k,
        query_ids=query_ids,
        gold=encoded,
        a=arm_a,
        b=arm_b,
        not_relevant=not_relevant,
        pooled=pooled,
        ks=ks,
        measures=spec.measures,
        orders=(run_order(spec.order, spec.a, inputs.a), run_order(spec.order, spec.b, inputs.b)),
        k_default=k_default,
        truth=exact,
    )


def judged_on_truth(inputs: Inputs, truth: TruthFolder, k: Cutoffs = None) -> Inputs:
    """`inputs` whose frozen labels are `truth`'s true neighbours at the decision k (`gold_at`),
    under the labels file's own hash (amendments and runs name it). A decision k deeper than the
    truth is refused: the truth at K judges any k ≤ K."""
    decide = choose_ks(inputs, k)[0]
    if decide > truth.k:
        raise InputError(
            truth.json_path, f"the truth is computed at k = {truth.k}: it cannot judge k = {decide}"
        )
    frozen = inputs.frozen
    at_k = frozen_of(Parsed(frozen.path, gold_at(truth, decide), frozen.meta), frozen.sha256)
    return replace(inputs, frozen=at_k)


def _no_k(inputs: Inputs, k: Cutoffs) -> bool:
    """Whether no k is given anywhere (--k, the manifest, the runs' metadata): k is DEFAULT_K."""
    spec = inputs.spec
    return not (k is not None or spec.ks or spec.k or any(r.k is not None for r in (inputs.a, inputs.b)))


def run_order(order: str | None, arm: ArmSpec, run: Run) -> Order:
    """The order the measures read `run` in: `order` when named; else trec_eval's (score
    descending, ties by id descending) for a TREC run file, the stored order otherwise."""
    if order is not None:
        return Order(order)
    form = arm.format
    if form is None and Path(run.path).is_file():
        try:
            form = detect(Path(run.path), Role.RUN)
        except InputError:
            form = None
    return Order.TREC_EVAL if form == Format.TREC else Order.AS_GIVEN
