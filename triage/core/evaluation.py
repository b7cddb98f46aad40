"""One evaluation: two arms, one k, one label set — loaded, encoded once, judged, checked.

Data flows one way: files → `Run`/`FrozenLabels` tables → integer arrays aligned with the query
universe → per-query metrics → means, paired table, flips. Every per-query array here has one
entry per id of `query_ids`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core import ids
from triage.core.checks import Check, run_checks
from triage.core.errors import InputError
from triage.core.gold import Gold, encode_gold, frozen_only, gold_hits, query_hits, splice, with_query
from triage.core.inputs import Run, load_corpus_ids, load_queries, load_run
from triage.core.manifest import Spec
from triage.core.metrics import GoldHits, GoldSets, Means, PerQuery, judge, means
from triage.core.paired import Paired, flip_order, noise_band, outcome_codes, paired
from triage.labels.amendments import default_folder, read_log
from triage.labels.frozen import load_frozen
from triage.labels.state import LabelState


@dataclass(frozen=True)
class Arm:
    """One arm over the query universe. `row` is the run's row per query (-1: absent from the run);
    `depth` the stored list length; `n_eligible` -1 where unknown."""

    run: Run
    row: np.ndarray
    depth: np.ndarray
    n_eligible: np.ndarray
    hits: GoldHits
    judged: PerQuery

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
        col = self.aligned(column)
        return [None] * len(qs) if col is None else col.take(pa.array(qs)).to_pylist()

    def aligned(self, column: str) -> pa.Array | None:
        """A run column with one value per query of the universe (null where the run lacks the
        query), or None when the run has no such column."""
        if column not in self.run.table.column_names:
            return None
        values = self.run.table.column(column).take(pa.array(np.maximum(self.row, 0)))
        values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        return pc.if_else(pa.array(self.row >= 0), values, pa.nulls(len(self.row), values.type))

    def retrieved(self, q: int) -> list[str]:
        r = int(self.row[q])
        return [] if r < 0 else self.run.table.column("retrieved")[r].as_py()


@dataclass
class Evaluation:
    spec: Spec
    k: int
    query_ids: pa.Array
    labels: LabelState
    queries: pa.Table | None
    corpus_ids: pa.Array | None
    gold: Gold
    a: Arm
    b: Arm
    checks: list[Check] = field(default_factory=list)
    _in_corpus: dict[str, bool] = field(default_factory=dict, repr=False)  # chunk id -> in the corpus

    @property
    def n(self) -> int:
        return len(self.query_ids)

    @property
    def scored(self) -> np.ndarray:
        """Queries with at least one gold id."""
        return self.gold.sets.n_gold > 0

    @property
    def arms(self) -> tuple[Arm, Arm]:
        return self.a, self.b

    def means(self, arm: Arm) -> Means:
        return means(arm.judged, self.scored)

    def paired(self) -> Paired:
        return paired(self.a.judged.hit, self.b.judged.hit, self.scored)

    def noise_band(self, arm: Arm) -> float:
        m = self.means(arm)
        return noise_band(m.hit_rate, m.n)

    def flips(self) -> np.ndarray:
        a, b = self.a, self.b
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

    def ids_where(self, mask: np.ndarray) -> list[str]:
        return self.query_ids.filter(pa.array(mask)).to_pylist()

    def gold_of(self, q: int) -> list[tuple[str, int]]:
        """Query `q`'s gold ids with their grades, best grade first."""
        sets = self.gold.sets
        lo, hi = np.searchsorted(sets.query, [q, q + 1])
        chunks = self.gold.vocabulary.take(pa.array(sets.code[lo:hi])).to_pylist()
        return list(zip(chunks, sets.grade[lo:hi].tolist(), strict=True))

    def queries_aligned(self, name: str) -> pa.Array | None:
        """A queries-file column with one value per query of the universe (null where the file
        lacks the query), or None when the file or the column is absent."""
        if self.queries is None or name not in self.queries.column_names:
            return None
        where = ids.encode(self.query_ids, self.queries.column("query_id"))
        values = self.queries.column(name).take(pa.array(np.maximum(where, 0)))
        values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
        return pc.if_else(pa.array(where >= 0), values, pa.nulls(self.n, values.type))

    def query_column(self, name: str) -> pa.Array:
        """A per-query column as text, aligned with `query_ids`: from the queries file, else from
        the runs (B first); null where unknown."""
        sources = [self.queries_aligned(name), self.b.aligned(name), self.a.aligned(name)]
        present = [pc.cast(v, pa.string()) for v in sources if v is not None]
        return pc.coalesce(*present) if present else pa.nulls(self.n, pa.string())

    def query_index(self, query_id: str) -> int:
        """Index of `query_id` in the universe, -1 if unknown."""
        return int(ids.positions([query_id], self.query_ids)[0])

    def absent_chunks(self, chunk_ids: list[str]) -> list[str]:
        """Those of `chunk_ids` absent from the corpus (remembered: amendments ask again and again)."""
        from triage.core.checks import absent_from

        known = self._in_corpus
        new = [c for c in chunk_ids if c not in known]
        if new and self.corpus_ids is not None:
            gone = set(absent_from(pa.array(new, pa.string()), self.corpus_ids).to_pylist())
            known.update({c: c not in gone for c in new})
        return [c for c in chunk_ids if not known.get(c, True)]

    def regold(self, q: int) -> None:
        """Re-read query `q`'s gold from the label state (after an amendment) and re-judge that
        query alone in both arms: its hits, gold rank, hit, recall, mrr and ndcg."""
        self.gold = with_query(self.gold, q, self.labels.pairs_for(self.query_ids[q].as_py()))
        lo, hi = np.searchsorted(self.gold.sets.query, [q, q + 1])
        sets = self.gold.sets
        one_set = GoldSets(
            np.zeros(hi - lo, np.int64), sets.grade[lo:hi], sets.code[lo:hi], sets.n_gold[q : q + 1]
        )
        for side in ("a", "b"):
            arm = getattr(self, side)
            new = query_hits(arm.retrieved(q), q, self.gold)
            one = judge(
                GoldHits(new.query * 0, new.rank, new.grade, new.code),
                self.k,
                one_set,
                arm.n_eligible[q : q + 1],
            )
            for name in ("gold_rank", "hit", "recall", "mrr", "ndcg"):
                getattr(arm.judged, name)[q] = getattr(one, name)[0]
            setattr(self, side, replace(arm, hits=splice(arm.hits, q, new)))

    def refresh_label_checks(self) -> None:
        """Recompute the amendment checks (after an amendment); the others cannot change."""
        from triage.core.checks import check_amendments, worst_first

        kept = [c for c in self.checks if not c.code.startswith("labels.amendments")]
        self.checks = worst_first(kept + check_amendments(self))

    def frozen_view(self) -> tuple[PerQuery, PerQuery, np.ndarray]:
        """Both arms judged on the frozen labels alone, and the queries those labels score."""
        if not self.labels.added_pairs():  # nothing amended: the frozen view is the effective one
            return self.a.judged, self.b.judged, self.scored
        (ja, sets), (jb, _) = (self._frozen_judged(arm) for arm in self.arms)
        return ja, jb, sets.n_gold > 0

    def _frozen_judged(self, arm: Arm) -> tuple[PerQuery, GoldSets]:
        hits, sets = frozen_only(arm.hits, self.gold)
        return judge(hits, self.k, sets, arm.n_eligible), sets

    def outcomes(self) -> np.ndarray:
        """Per query: BOTH_HIT, BOTH_MISS, HIT_TO_MISS, MISS_TO_HIT, or UNSCORED (int8)."""
        return outcome_codes(self.a.judged.hit, self.b.judged.hit, self.scored)

    def hit_rate_at(self, arm: Arm, k: int) -> float | None:
        """Hit rate of `arm` at another cut-off; None when its stored depth cannot show it."""
        if int(arm.depth.max(initial=0)) < k:
            return None
        hit = judge(arm.hits, k, self.gold.sets).hit
        return float(hit[self.scored].mean()) if self.scored.any() else float("nan")


def choose_k(spec: Spec, a: Run, b: Run, k: int | None) -> int:
    """--k, else the manifest's k, else the arms' k (the smaller when they differ)."""
    chosen = k or spec.k
    if chosen:
        return chosen
    known = [r.k for r in (a, b) if r.k is not None]
    if not known:
        raise InputError(
            spec.manifest or a.path,
            "no k: set k in the manifest, pass --k, or record k in the runs' metadata",
        )
    return min(known)


def build_arm(run: Run, query_ids: pa.Array, gold: Gold, k: int) -> Arm:
    n = len(query_ids)
    row_query = ids.encode(run.table.column("query_id"), query_ids).astype(np.int64)
    row = np.full(n, -1, np.int64)
    row[row_query] = np.arange(len(row_query))
    depth = np.zeros(n, np.int64)
    depth[row_query] = pc.list_value_length(run.retrieved).to_numpy(zero_copy_only=False)
    n_eligible = np.full(n, -1, np.int64)
    col = run.column("n_eligible")
    if col is not None:
        n_eligible[row_query] = col.fill_null(-1).to_numpy()
    hits = gold_hits(run.retrieved, row_query, gold)
    return Arm(run, row, depth, n_eligible, hits, judge(hits, k, gold.sets, n_eligible))


LABEL_STATES = ("amended", "frozen")


def load(
    spec: Spec,
    k: int | None = None,
    label_state: str = "amended",
    apply_stale: bool = False,
    defer_corpus_check: bool = False,
) -> Evaluation:
    """Read every file of `spec` and judge both arms at one k (DESIGN §4, §5).

    label_state "amended": the frozen labels plus the amendments in force; "frozen": the frozen
    labels alone (the amendments are still read and counted). `apply_stale` applies amendment
    files written against another frozen file. `defer_corpus_check` leaves the (slowest) check of
    every retrieved id against the corpus pending: see `checks.finish_corpus_check`."""
    # The two arms are independent until they meet the labels: one thread each (2 cores).
    with ThreadPoolExecutor(max_workers=2) as pool:
        future_a, future_b = pool.submit(load_run, spec.a), pool.submit(load_run, spec.b)
        frozen = load_frozen(spec.labels)
        log = read_log(spec.amendments or default_folder(spec.labels), frozen.sha256, apply_stale)
        labels = LabelState(frozen, log, amended=label_state == "amended")
        queries = load_queries(spec.queries) if spec.queries else None
        corpus_ids = load_corpus_ids(spec.corpus) if spec.corpus else None
        run_a, run_b = future_a.result(), future_b.result()
    judged_k = choose_k(spec, run_a, run_b, k)
    query_ids = ids.universe(
        queries.column("query_id") if queries is not None else None,
        frozen.judged_ids,
        run_a.table.column("query_id"),
        run_b.table.column("query_id"),
    )
    gold = encode_gold(labels.effective_table(), frozen.table, query_ids)
    with ThreadPoolExecutor(max_workers=2) as pool:
        arm_a, arm_b = pool.map(lambda run: build_arm(run, query_ids, gold, judged_k), (run_a, run_b))
    ev = Evaluation(
        spec=spec,
        k=judged_k,
        query_ids=query_ids,
        labels=labels,
        queries=queries,
        corpus_ids=corpus_ids,
        gold=gold,
        a=arm_a,
        b=arm_b,
    )
    ev.checks = run_checks(ev, corpus=not defer_corpus_check)
    return ev


def load_path(path: Path | None, k: int | None = None, label_state: str = "amended") -> Evaluation:
    from triage.core.manifest import from_manifest
    from triage.resources import sample_manifest

    return load(from_manifest(path or sample_manifest()), k, label_state)
