"""Metric definitions (DESIGN §4) on hand-checked data and against a brute-force reading."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from triage.core.manifest import from_manifest
from triage.core.paired import mcnemar_exact
from triage.report.model import build
from triage.workspace.snapshot import open_snapshot

from conftest import RUN_SCHEMA, manifest, write_parquet


def test_tiny_evaluation_by_hand(tiny: Path) -> None:
    d = build(open_snapshot(from_manifest(tiny))).to_json()
    assert d["k"] == 2
    assert (d["n_queries"], d["n_scored"], d["n_unlabelled"]) == (4, 3, 1)
    assert d["unlabelled"] == ["q4"]  # its only label row has relevance 0
    p = d["paired"]
    assert (p["both_hit"], p["both_miss"], p["a_hit_b_miss"], p["a_miss_b_hit"]) == (1, 0, 1, 1)
    assert p["mcnemar_p"] == 1.0
    a, b = d["arms"]["a"], d["arms"]["b"]
    assert a["hit_rate"] == pytest.approx(2 / 3) and b["hit_rate"] == pytest.approx(2 / 3)
    assert a["mrr"] == pytest.approx(0.5) and b["mrr"] == pytest.approx(0.5)
    assert a["ndcg"] == pytest.approx((1 + 1 / math.log2(3)) / 3)
    assert b["ndcg"] == pytest.approx((1 / math.log2(3) + 1) / 3)
    flips = [(f["query_id"], f["direction"], f["gold_rank_a"], f["gold_rank_b"]) for f in d["flips"]]
    assert flips == [("q2", "hit->miss", 2, 3), ("q3", "miss->hit", None, 1)]
    assert d["flips"][0]["plan_a"] == "ann" and d["flips"][0]["plan_b"] == "postfilter"


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),
        (1, 1, 1.0),
        (0, 5, 2 / 32),
        (6, 40, None),
        (3, 12, None),
    ],
)
def test_mcnemar_exact_matches_the_binomial_sum(b: int, c: int, p: float | None) -> None:
    n, m = b + c, min(b, c)
    expected = p if p is not None else min(1.0, 2 * sum(math.comb(n, i) for i in range(m + 1)) / 2**n)
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_large_counts_use_logs_consistently() -> None:
    # Just above and below the switch to log-space agree with exact arithmetic.
    exact = min(1.0, 2 * sum(math.comb(4001, i) for i in range(1950 + 1)) / 2**4001)
    assert mcnemar_exact(1950, 2051) == pytest.approx(exact, rel=1e-9)


# --- brute force: the definitions read literally, one query at a time -------------------------


def brute(ranked: list[str], gold: dict[str, int], k: int, n_eligible: int | None) -> dict[str, float]:
    top = ranked[:k]
    inter = {c for c in top if c in gold}
    if n_eligible is not None and n_eligible < len(inter):
        n_eligible = None  # contradicts the gold found: not used (and an error check says so)
    first = next((i + 1 for i, c in enumerate(top) if c in gold), None)
    denom = min(k, len(gold)) if n_eligible is None else min(k, len(gold), n_eligible)
    dcg = sum(gold[c] / math.log2(i + 2) for i, c in enumerate(top) if c in gold)
    ideal = sorted(gold.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return {
        "hit": float(bool(inter)),
        "recall": len(inter) / denom if denom else math.nan,
        "mrr": 1 / first if first else 0.0,
        "ndcg": dcg / idcg,
    }


ids = st.sampled_from([f"c{i}" for i in range(12)])
query = st.tuples(
    st.lists(ids, max_size=12, unique=True),
    st.dictionaries(ids, st.integers(1, 3), min_size=1, max_size=5),
    st.one_of(st.none(), st.integers(0, 6)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries=st.lists(query, min_size=1, max_size=8), k=st.integers(1, 6))
def test_metrics_equal_the_literal_definitions(tmp_path_factory, queries, k) -> None:
    folder = tmp_path_factory.mktemp("brute")
    rows, labels = [], []
    for i, (ranked, gold, elig) in enumerate(queries):
        rows.append(
            {
                "query_id": f"q{i}",
                "retrieved": ranked,
                "scores": [float(len(ranked) - j) for j in range(len(ranked))],
                "plan": "ann",
                "n_eligible": elig,
            }
        )
        labels += [{"query_id": f"q{i}", "chunk_id": c, "relevance": g} for c, g in gold.items()]
    for arm in ("a", "b"):
        write_parquet(folder / f"{arm}.parquet", rows, {"k": str(k)})
    write_parquet(folder / "labels.parquet", labels)
    ev = open_snapshot(from_manifest(manifest(folder, "a.parquet", "b.parquet", "labels.parquet", k=None))).ev
    pq = ev.a.judged
    for i, (ranked, gold, elig) in enumerate(queries):
        want = brute(ranked, gold, k, elig)
        assert pq.hit[i] == bool(want["hit"])
        assert pq.mrr[i] == pytest.approx(want["mrr"], abs=1e-12)
        assert pq.ndcg[i] == pytest.approx(want["ndcg"], abs=1e-12)
        if math.isnan(want["recall"]):
            assert math.isnan(pq.recall[i])
        else:
            assert pq.recall[i] == pytest.approx(want["recall"], abs=1e-12)
        best = next((j + 1 for j, c in enumerate(ranked) if c in gold), 0)
        assert pq.gold_rank[i] == best


def test_an_id_listed_twice_counts_once(tmp_path: Path) -> None:
    rows = [{"query_id": "q1", "retrieved": ["g1", "g1", "x"], "scores": [3.0, 2.0, 1.0], "plan": "ann"}]
    write_parquet(tmp_path / "a.parquet", rows, {"k": "3"}, RUN_SCHEMA)
    write_parquet(tmp_path / "b.parquet", rows, {"k": "3"}, RUN_SCHEMA)
    write_parquet(
        tmp_path / "labels.parquet",
        [{"query_id": "q1", "chunk_id": "g1"}, {"query_id": "q1", "chunk_id": "g2"}],
    )
    snapshot = open_snapshot(
        from_manifest(manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=None))
    )
    ev = snapshot.ev
    assert ev.a.judged.recall[0] == pytest.approx(0.5)  # one distinct gold of two, not two of two
    assert ev.a.judged.ndcg[0] == pytest.approx(1.0 / (1.0 + 1.0 / math.log2(3)))
    dup = [c for c in snapshot.checks if c.code == "run.duplicates" and c.level == "error"]
    assert len(dup) == 2 and "'g1' at ranks 1,2" in dup[0].message and "a.parquet" in dup[0].message
