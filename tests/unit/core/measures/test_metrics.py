"""Metric definitions (docs/measures.md "The numbers") on hand-checked data and against a brute-force
reading."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from triage.cli.main import main
from triage.core.inputs.manifest import from_manifest
from triage.core.measures.paired import mcnemar_exact
from triage.workspace.snapshot import open_snapshot

from conftest import RUN_SCHEMA, manifest, write_parquet


def test_tiny_evaluation_by_hand(tiny: Path, capsys) -> None:
    assert main(["report", str(tiny), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["k"] == 2
    assert (d["n_queries"], d["n_scored"], d["n_unlabelled"]) == (4, 3, 1)
    assert d["unlabelled"] == ["q4"]  # its only label row has relevance 0
    p = d["paired"]
    assert (p["both_hit"], p["both_miss"], p["a_hit_b_miss"], p["a_miss_b_hit"]) == (1, 0, 1, 1)
    assert p["mcnemar_p"] == 1.0
    a, b = d["arms"]["a"], d["arms"]["b"]
    # A: q1 gold at 1, q2 gold at 2, q3 none in the top 2. B: q1 at 2, q2 at 3 (> k), q3 at 1.
    assert a["hit_rate"] == pytest.approx(2 / 3) and b["hit_rate"] == pytest.approx(2 / 3)
    assert a["mrr"] == pytest.approx((1 + 1 / 2 + 0) / 3) and b["mrr"] == pytest.approx((1 / 2 + 0 + 1) / 3)
    # q2's gold has grade 2: its DCG at rank 2 is 2/log2(3), its ideal 2/log2(2) = 2; ratio 1/log2(3).
    assert a["ndcg"] == pytest.approx((1 + 1 / math.log2(3) + 0) / 3)
    assert b["ndcg"] == pytest.approx((1 / math.log2(3) + 0 + 1) / 3)
    flips = [(f["query_id"], f["direction"], f["gold_rank_a"], f["gold_rank_b"]) for f in d["flips"]]
    assert flips == [("q2", "hit->miss", 2, 3), ("q3", "miss->hit", None, 1)]
    assert d["flips"][0]["plan_a"] == "ann" and d["flips"][0]["plan_b"] == "postfilter"


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),  # no discordant pair: nothing to test
        (1, 1, 1.0),  # 2·(C(2,0) + C(2,1))/2^2 = 2·3/4 = 1.5, capped at 1
        (0, 5, 1 / 16),  # 2·C(5,0)/2^5 = 2/32
        (5, 0, 1 / 16),  # symmetric in b and c
        (3, 12, 9 / 256),  # 2·(1 + 15 + 105 + 455)/2^15 = 1152/32768
        # the sample's discordant cells: C(46, 0..6) = 1, 46, 1035, 15180, 163185, 1370754,
        # 9366819, summing to 10917020; p = 2·10917020/2^46 = 2729255/2^43 ≈ 3.1028e-7
        (6, 40, 2729255 / 2**43),
        (40, 6, 2729255 / 2**43),
    ],
)
def test_mcnemar_exact_against_hand_computed_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_exact_equals_counting_every_sign_pattern() -> None:
    # An independent reading of the exact test: under H0 each of the n discordant pairs goes
    # either way with probability 1/2. Enumerate all 2^n patterns; p is the share of patterns at
    # least as lopsided as the one observed, on either side: min(X, n − X) ≤ min(b, c).
    for n in range(0, 13):
        lopsided = [min(bin(x).count("1"), n - bin(x).count("1")) for x in range(2**n)]
        for b in range(n + 1):
            m = min(b, n - b)
            expected = sum(1 for v in lopsided if v <= m) / 2**n
            assert mcnemar_exact(b, n - b) == pytest.approx(expected, rel=1e-12, abs=0), (b, n - b)


def _binomial_tail(n: int, m: int) -> int:
    """Σ_{i≤m} C(n, i) by the multiplicative recurrence C(n, i+1) = C(n, i)·(n − i)/(i + 1)."""
    term, total = 1, 1
    for i in range(m):
        term = term * (n - i) // (i + 1)
        total += term
    return total


@pytest.mark.slow
@pytest.mark.parametrize(("b", "c"), [(1950, 2050), (1950, 2051), (2400, 2700)])
def test_mcnemar_large_counts_on_both_sides_of_the_switch_to_logs(b: int, c: int) -> None:
    # n = 4000 takes the exact integer path, n = 4001 and 5100 the log-space one. The expectation
    # is the tail by recurrence (exact integers), and — as a sanity check — the normal
    # approximation with continuity correction, z = (|b − c| − 1)/√n, within 2%.
    n = b + c
    exact = min(1.0, 2 * _binomial_tail(n, min(b, c)) / 2**n)
    assert mcnemar_exact(b, c) == pytest.approx(exact, rel=1e-9)
    z = (abs(b - c) - 1) / math.sqrt(n)
    assert mcnemar_exact(b, c) == pytest.approx(math.erfc(z / math.sqrt(2)), rel=2e-2)


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


@pytest.mark.slow
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
