"""The fast paths of measures by name against the plain ones they replace, on data made to hit
every branch: tied and NaN scores, ids listed twice, grade 0, queries the run lacks.

- `ranked.ranks_in_order` (each judged id's rank counted in its own list) against the rank the
  full `ranked.reorder` gives it, batched small and with the sort fallback;
- `Evaluation.named` (read from the arm's gold hits and the not-relevant ids found per query)
  against `ranked.reorder` + `ranked.positions` over the whole lists, value for value.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_measures_oracle import measure_names

from triage.core.measures import names, ranked
from triage.core.measures.ranked import Order
from triage.workspace.snapshot import open_snapshot
from triage.workspace.spec import evaluation_spec, with_measures

from conftest import write_parquet


def reference_ranks(lists: pa.ListArray, scores: pa.ListArray) -> np.ndarray:
    """The 1-based rank of every flat position after the full reorder."""
    perm = ranked.permutation(lists, scores, Order.TREC_EVAL)
    n = len(lists.flatten())
    if perm is None:
        perm = np.arange(n)
    return ranked.reordered_ranks(perm, lists, np.arange(n))


@st.composite
def scored_lists(draw: st.DrawFn) -> tuple[pa.ListArray, pa.ListArray]:
    ids = st.sampled_from(["a", "b", "ab", "b\u00e9", "a\x00", "", "zz", "d10", "d9"])
    score = st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, float("nan"), float("inf")])
    rows = draw(st.lists(st.lists(st.tuples(ids, score), max_size=9), min_size=1, max_size=6))
    return (
        pa.array([[i for i, _ in r] for r in rows], pa.list_(pa.string())),
        pa.array([[s for _, s in r] for r in rows], pa.list_(pa.float64())),
    )


@pytest.mark.slow  # 150 Hypothesis cases: 0.4-2.8 s on a busy machine
@settings(max_examples=150, deadline=None)
@given(scored_lists(), st.sampled_from([1, 3, 1 << 20]))
def test_ranks_counted_in_each_list_equal_the_full_reorders(data: tuple, pairs: int) -> None:
    lists, scores = data
    expected = reference_ranks(lists, scores)
    at = np.arange(len(expected))
    old = ranked.PAIRS
    ranked.PAIRS = pairs  # small: many batches, and the sort fallback past 4x the ids
    try:
        got = ranked.ranks_in_order(lists, scores, Order.TREC_EVAL, at)
    finally:
        ranked.PAIRS = old
    if got is None:  # already in order: the stored ranks
        got = at - np.repeat(lists.offsets.to_numpy()[:-1], np.diff(lists.offsets.to_numpy())) + 1
    assert got.tolist() == expected.tolist()
    assert ranked.ranks_in_order(lists, scores, Order.AS_GIVEN, at) is None


def test_scores_already_falling_are_not_reordered() -> None:
    lists = pa.array([["b", "a"], [], ["c"]], pa.list_(pa.string()))
    assert ranked.permutation(lists, pa.array([[2.0, 1.0], [], [0.0]]), Order.TREC_EVAL) is None
    tied = ranked.permutation(lists, pa.array([[1.0, 1.0], [], [0.0]]), Order.TREC_EVAL)
    assert tied is not None and tied.tolist() == [0, 1, 2]  # b before a: id descending


def write(folder: Path, seed: int, order: str, duplicates: bool) -> Path:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(60)]
    labels, runs = [], {"a": [], "b": []}
    for i in range(40):
        q = f"q{i:02d}"
        judged = rng.sample(docs, rng.randint(1, 10))
        grades = [rng.choice([0, 0, 1, 1, 2, 3]) for _ in judged]
        if i % 7 == 3:
            grades = [0 for _ in judged]  # judged, nothing relevant
        pairs = zip(judged, grades, strict=True)
        labels += [{"query_id": q, "chunk_id": d, "relevance": g} for d, g in pairs]
        for arm in runs:
            if rng.random() < 0.1:
                continue  # the arm lacks the query
            pool = list(dict.fromkeys(judged + rng.sample(docs, 30)))
            ids = rng.sample(pool, min(len(pool), rng.choice([0, 1, 5, 12, 25])))
            if duplicates and ids and rng.random() < 0.4:
                ids.insert(rng.randrange(len(ids) + 1), rng.choice(ids))
            scores = [float(rng.choice([1, 2, 2, 3, 5])) for _ in ids]  # many ties
            runs[arm].append({"query_id": q, "retrieved": ids, "scores": scores})
    for arm, rows in runs.items():
        write_parquet(folder / f"{arm}.parquet", rows, {"k": "10"})
    write_parquet(folder / "labels.parquet", labels)
    lines = [f'order = "{order}"', "[labels]", 'path = "labels.parquet"']
    for arm in runs:
        lines += [f"[arms.{arm}]", f'name = "{arm}"', f'path = "{arm}.parquet"']
    (folder / "triage.toml").write_text("\n".join(lines) + "\n", "utf-8")
    return folder / "triage.toml"


@pytest.mark.parametrize("order", ["trec_eval", "as_given"])
@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_evaluations_measures_equal_those_over_the_whole_lists(
    tmp_path: Path, order: str, duplicates: bool, seed: int
) -> None:
    toml = write(tmp_path, seed, order, duplicates)
    spec = with_measures(evaluation_spec(toml), measure_names(), None, "measures")
    ev = open_snapshot(spec, corpus_check=False).ev
    assert any(arm.run.facts.duplicates for arm in ev.arms) == duplicates
    judged = ev.judgements
    for arm, arm_order in zip(ev.arms, ev.orders, strict=True):
        assert arm_order is Order(order)
        run = arm.run
        lists, _ = ranked.reorder(run.retrieved, run.column("scores"), arm_order)
        row_query = np.zeros(run.table.num_rows, np.int64)
        row_query[arm.row[arm.present]] = np.flatnonzero(arm.present)
        at = ranked.positions(lists, row_query, judged)
        got = ev.named(arm)
        for m in (names.parse(t) for t in measure_names()):
            assert got[str(m)].tolist() == m.per_query(at, judged).tolist(), str(m)
