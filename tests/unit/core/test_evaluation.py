"""The evaluation (core/evaluation.py): re-judging one query's gold equals a fresh evaluation of the
amended gold, and the query universe gives every run and label row its query."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from triage.core.evaluation import Evaluation, evaluate
from triage.core.inputs.load import load_inputs
from triage.core.inputs.manifest import from_manifest

# == Evaluation.rejudged =========================================================================


@pytest.fixture(scope="module")
def sample_ev(sample: Path) -> Evaluation:
    inputs = load_inputs(from_manifest(sample))
    return evaluate(inputs, inputs.frozen.table)


PER_QUERY = ("gold_rank", "hit", "recall", "mrr", "ndcg")


def snapshot(ev: Evaluation) -> dict[str, object]:
    """Copies of every per-query array and the gold, to tell later whether anything changed."""
    out: dict[str, object] = {"golds": [ev.gold_of(q) for q in range(ev.n)]}
    for side, arm in (("a", ev.a), ("b", ev.b)):
        for name in PER_QUERY:
            out[f"{side}.{name}"] = getattr(arm.judged, name).copy()
        out[f"{side}.hits"] = hits_of(ev, side)
    out["keys"], out["vocabulary"] = ev.gold.keys.copy(), ev.gold.vocabulary.to_pylist()
    out["grade"], out["frozen_keys"] = ev.gold.grade.copy(), ev.gold.frozen_keys.copy()
    for name in ("query", "grade", "code", "n_gold"):
        out[f"sets.{name}"] = getattr(ev.gold.sets, name).copy()
    return out


def hits_of(ev: Evaluation, side: str) -> set[tuple[int, int, int, str]]:
    h = getattr(ev, side).hits
    names = ev.gold.vocabulary.take(pa.array(h.code)).to_pylist()
    return set(zip(h.query.tolist(), h.rank.tolist(), h.grade.tolist(), names, strict=True))


def gold_table(ev: Evaluation, amended: dict[int, list[tuple[str, int]]]) -> pa.Table:
    """The frozen gold with each amended query's gold replaced by its pairs."""
    rows = []
    for q in range(ev.n):
        qid = ev.query_ids[q].as_py()
        pairs = amended[q] if q in amended else frozen_gold(ev, q)
        rows += [{"query_id": qid, "chunk_id": c, "relevance": g} for c, g in pairs]
    return pa.Table.from_pylist(
        rows, pa.schema([("query_id", pa.string()), ("chunk_id", pa.string()), ("relevance", pa.int64())])
    )


def frozen_gold(ev: Evaluation, q: int) -> list[tuple[str, int]]:
    """Query q's pairs as the frozen file has them."""
    t = ev.inputs.frozen.table
    part = t.filter(pc.equal(t.column("query_id"), ev.query_ids[q].as_py()))
    return list(zip(part.column("chunk_id").to_pylist(), part.column("relevance").to_pylist(), strict=True))


def assert_same_judgement(got: Evaluation, want: Evaluation) -> None:
    assert got.query_ids.equals(want.query_ids) and got.k == want.k
    for side in ("a", "b"):
        for name in PER_QUERY:
            g, w = getattr(getattr(got, side).judged, name), getattr(getattr(want, side).judged, name)
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, equal_nan=True, err_msg=f"{side}.{name}")
        assert hits_of(got, side) == hits_of(want, side), side
    np.testing.assert_array_equal(got.scored, want.scored)
    np.testing.assert_array_equal(got.outcomes, want.outcomes)
    np.testing.assert_array_equal(got.flips, want.flips)
    assert got.paired() == want.paired()
    for q in range(got.n):
        assert sorted(got.gold_of(q)) == sorted(want.gold_of(q)), q
    assert got.amended == want.amended


def random_amendment(ev: Evaluation, rng: random.Random, q: int) -> list[tuple[str, int]]:
    """q's gold plus a few ids — retrieved by A or B (so the numbers move), or never seen — with
    grades 1–3; sometimes a frozen gold regraded."""
    pairs = dict(ev.gold_of(q))
    retrieved = ev.a.retrieved(q) + ev.b.retrieved(q)
    for _ in range(rng.randrange(1, 4)):
        pick = rng.random()
        chunk = rng.choice(retrieved) if pick < 0.6 and retrieved else f"new/{rng.randrange(10**6)}"
        pairs[chunk] = rng.randint(1, 3)
    if pairs and rng.random() < 0.3:
        pairs[rng.choice(list(pairs))] = rng.randint(1, 3)
    return list(pairs.items())


@pytest.mark.slow
def test_rejudged_equals_a_fresh_evaluation_of_the_amended_gold(sample_ev: Evaluation) -> None:
    rng = random.Random(20261130)
    before = snapshot(sample_ev)
    ev, amended = sample_ev, {}
    for _ in range(12):  # a chain of amendments, some to the same query twice
        q = rng.choice([*ev.flips.tolist()[:10], rng.randrange(ev.n)])
        pairs = random_amendment(ev, rng, q)
        previous = snapshot(ev)
        new = ev.rejudged(q, pairs)
        amended[q] = pairs
        fresh = evaluate(sample_ev.inputs, gold_table(sample_ev, amended), sample_ev.k)
        assert_same_judgement(new, fresh)
        assert_unchanged(ev, previous)  # the evaluation it came from is untouched
        ev = new
    assert_unchanged(sample_ev, before)
    assert ev.amended and not sample_ev.amended


def test_rejudging_a_query_to_its_own_gold_changes_nothing(sample_ev: Evaluation) -> None:
    q = sample_ev.flips[0]
    same = sample_ev.rejudged(int(q), sample_ev.gold_of(int(q)))
    assert_same_judgement(same, sample_ev)


def assert_unchanged(ev: Evaluation, before: dict[str, object]) -> None:
    after = snapshot(ev)
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(after[key], value, err_msg=key)
        else:
            assert after[key] == value, key


# == the query universe ==========================================================================


@pytest.mark.parametrize("order_b", ["same", "reversed", "fewer"])
@pytest.mark.parametrize("layout", ["grouped", "interleaved", "as_a"])
def test_the_universe_gives_every_row_its_query(
    tmp_path: Path, order_b: str, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run B listing the queries in A's order reuses A's positions; any other order is hashed. The
    # labels' query ids are hashed once per stretch of equal neighbours ("as_a": A lists the labels'
    # queries in their order, and reuses their positions). Either way every run row and every
    # label row points at its own query id, first-seen order.
    from triage.core.evaluation import universe

    from conftest import manifest, write_parquet

    qs = [f"q{i}" for i in range(50)]
    b = {"same": qs, "reversed": qs[::-1], "fewer": qs[:40] + ["extra"]}[order_b]
    write_parquet(tmp_path / "a.parquet", [{"query_id": q, "retrieved": ["c"]} for q in qs], {"name": "a"})
    write_parquet(tmp_path / "b.parquet", [{"query_id": q, "retrieved": ["c"]} for q in b], {"name": "b"})
    judged = {"grouped": ["late", *qs[::3]], "interleaved": ["late", *qs[::3]], "as_a": qs}[layout]
    by_query = [(q, c) for q in judged for c in "xy"]
    pairs = [(q, c) for c in "xy" for q in judged] if layout == "interleaved" else by_query
    labels = [{"query_id": q, "chunk_id": c, "relevance": 1} for q, c in pairs]
    write_parquet(tmp_path / "labels.parquet", labels)
    inputs = load_inputs(from_manifest(manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet")))
    from triage.core.ids import codes

    hashed: list[int] = []
    real = codes.coded_distinct
    monkeypatch.setattr(codes, "coded_distinct", lambda values: (hashed.append(len(values)), real(values))[1])
    every, (rows_a, rows_b), label_rows = universe(inputs)
    labels_hashed = {"grouped": len(judged), "interleaved": 2 * len(judged), "as_a": len(judged)}[layout]
    a_hashed = 0 if layout == "as_a" else len(qs)
    assert hashed == [labels_hashed + a_hashed + (0 if b == qs else len(b))]
    assert every.to_pylist() == list(dict.fromkeys([r["query_id"] for r in labels] + qs + b))
    assert every.take(pa.array(rows_a)).to_pylist() == qs
    assert every.take(pa.array(rows_b)).to_pylist() == b
    assert every.take(pa.array(label_rows)).to_pylist() == [r["query_id"] for r in labels]
