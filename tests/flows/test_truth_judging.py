"""Runs judged against exact truth, through the command line and the workspace: the on-call's case
(tests/truth_folders.py `make_case`) with its planted failures, each named by the screen or check
meant to catch it, and the tenants' figures against an independent computation (plain sets, numpy).

Planted, and what names it:
- a tenant (`sliver`) whose queries a postfilter plan answers at 0.08% selectivity: the `truth.postfilter`
  check (beside its short lists) and the plan slice `postfilter`;
- a tenant of 300 documents (`minnow`) answered by exact scan at recall 1.0 beside neighbours (`pike`,
  `perch`) at 0.3 in the same band: the tenants screen's plan and selectivity columns and the slices
  by plan and by band;
- a truth post-filtered from an unfiltered truth: `truth.postfiltered` (of a truth folder, and of the
  same truth as a plain labels file with the runs' n_eligible);
- a truth built on another corpus version: `truth.corpus` (and `truth.queries`, `truth.metric`);
- padding ids: `truth.ids` (and `labels.padding` for a plain labels file);
- runs whose n_eligible is the router's estimate: `truth.n_eligible`.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from truth_folders import Case, K, Query, make_case, scores_for, write_run, write_truth

from triage.cli.main import main
from triage.core.inputs.manifest import from_args
from triage.workspace.detail import build_detail
from triage.workspace.snapshot import open_snapshot

FLOOR = 0.8


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    return make_case(tmp_path_factory.mktemp("case"))


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    rc = main(["report", *args, "--format", "json"])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if out.out else {}), out.err


def judged(capsys: pytest.CaptureFixture[str], c: Case, truth: Path | None = None, *more: str) -> dict:
    rc, got, err = report(capsys, str(c.run_a), str(c.run_b), "--labels", str(truth or c.truth), *more)
    assert rc == 0, err
    return got


def checks(got: dict, code: str) -> list[dict]:
    return [c for c in got["checks"] if c["code"] == code]


# -- the independent computation ------------------------------------------------------------------


def independent_recall(truth: Path, run: Path, k: int = K) -> dict[str, float]:
    """Per query with something eligible: |run's top k ∩ truth| / min(k, n_eligible), from the files
    with plain sets (the truth at its own K: every listed id)."""
    n_elig = {r["query_id"]: r["n_eligible"] for r in pq.read_table(truth / "queries.parquet").to_pylist()}
    ids: dict[str, set[str]] = defaultdict(set)
    for r in pq.read_table(truth / "labels.parquet").to_pylist():
        ids[r["query_id"]].add(r["chunk_id"])
    top = {r["query_id"]: set(r["retrieved"][:k]) for r in pq.read_table(run).to_pylist()}
    out = {}
    for q, n in n_elig.items():
        m = min(k, n)
        if m:
            out[q] = min(len(top.get(q, set()) & ids[q]), m) / m
    return out


def independent_tenants(c: Case) -> dict[str, dict[str, float]]:
    """Each tenant's mean recall per arm, its n, from `independent_recall`."""
    tenant = {
        r["query_id"]: r["tenant"] or "(none)" for r in pq.read_table(c.truth / "queries.parquet").to_pylist()
    }
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"a": [], "b": []})
    for side, run in (("a", c.run_a), ("b", c.run_b)):
        for q, value in independent_recall(c.truth, run).items():
            out[tenant[q]][side].append(value)
    return {
        t: {"a": float(np.mean(v["a"])), "b": float(np.mean(v["b"])), "n": len(v["b"])}
        for t, v in out.items()
    }


def test_below_the_floor_the_worst_three_and_the_5th_percentile_equal_an_independent_computation(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    got = judged(capsys, case)
    t = got["tenants"]
    mine = independent_tenants(case)
    assert t["measure"] == f"recall@{K}" and t["order"] == "hit_rate_b"
    for side in ("a", "b"):
        rates = np.array([m[side] for m in mine.values()])
        # below: to 12 decimals (a tenant at the floor whose mean's float sum lands a hair under is not)
        assert t["below_floor"][side] == int((np.round(rates, 12) < FLOOR).sum())
        assert t["p5"][side] == pytest.approx(float(np.percentile(rates, 5)), abs=1e-12)
    # worst first by B's recall (equal to 12 decimals: a float sum's rounding), more queries first, name
    ranked = sorted(mine, key=lambda name: (round(mine[name]["b"], 12), -mine[name]["n"], name))
    assert [r["tenant"] for r in t["worst"]] == ranked[:3]
    assert [r["tenant"] for r in t["rows"]] == ranked
    for row in t["rows"]:
        assert row["recall"]["a"] == pytest.approx(mine[row["tenant"]]["a"], abs=1e-12)
        assert row["recall"]["b"] == pytest.approx(mine[row["tenant"]]["b"], abs=1e-12)
        assert row["n"] == mine[row["tenant"]]["n"]
    # the decision measure, the headline and the per-query recall are the same numbers
    assert got["truth"]["decision"] == f"recall@{K}"
    every = independent_recall(case.truth, case.run_b)
    assert got["arms"]["b"]["recall"] == pytest.approx(float(np.mean(list(every.values()))), abs=1e-12)
    assert set(next(iter(got["slices"]["tenant"]))["compare"]) == {f"recall@{K}"}


def test_the_text_report_says_the_tenants_below_the_floor_on_recall(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    rc = main(["report", str(case.run_a), str(case.run_b), "--labels", str(case.truth)])
    out = capsys.readouterr().out
    assert rc == 0
    mine = independent_tenants(case)
    below_b = sum(1 for m in mine.values() if round(m["b"], 12) < FLOOR)
    assert f"floor 0.80 (recall@{K}): " in out and f"in A, {below_b} in B" in out
    assert "rec A" in out and "rec B" in out and "hit A" not in out.split("Tenants, worst first")[1][:400]


def test_the_postfilter_tenant_at_0_1_percent_is_named_beside_its_short_lists(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    got = judged(capsys, case)
    (plans,) = [c for c in checks(got, "truth.postfilter") if c["facts"]["arm"] == "b"]
    assert plans["level"] == "warning" and plans["facts"]["count"] == 6 and plans["facts"]["short_lists"] == 6
    assert plans["facts"]["expected_results"] == pytest.approx(K * 240 / case.corpus_rows)
    assert "sliver-q0" in plans["message"] and "short lists" in plans["message"]
    assert not [c for c in checks(got, "truth.postfilter") if c["facts"]["arm"] == "a"]  # A: ann
    (postfilter,) = [s for s in got["slices"]["plan"] if s["value"] == "postfilter"]
    assert postfilter["b"]["recall"] == 0.0 and postfilter["b"]["short_lists"] == 6
    (band,) = [s for s in got["slices"]["selectivity"] if s["value"] == "<0.1%"]
    assert band["n"] == 6  # the sliver's 240 of 300,000 eligible: the lowest band


def test_a_300_document_tenant_by_exact_scan_stands_beside_neighbours_at_0_3_in_its_band(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    got = judged(capsys, case)
    rows = {r["tenant"]: r for r in got["tenants"]["rows"]}
    minnow, pike = rows["minnow"], rows["pike"]
    assert (minnow["plan"], minnow["plan_share"], minnow["recall"]["b"]) == ("scan", 1.0, 1.0)
    assert minnow["median_selectivity"] == pytest.approx(300 / case.corpus_rows)
    assert (pike["plan"], pike["recall"]["b"]) == ("ann", pytest.approx(0.3))
    band = {s["value"]: s for s in got["slices"]["selectivity"]}["0.1–1%"]
    # the band holds minnow (scan, 1.0), pike and perch (ann, 0.3): its mean hides both
    assert band["n"] == 18 and band["b"]["recall"] == pytest.approx((1.0 + 0.3 + 0.3) / 3)
    plans = {s["value"]: s for s in got["slices"]["plan"]}
    assert plans["scan"]["b"]["recall"] == 1.0 and plans["scan"]["n"] == 6
    assert [r["tenant"] for r in got["tenants"]["worst"]][:1] == ["sliver"]
    assert got["tenants"]["rows"][-1]["recall"]["b"] == 1.0


def test_the_flips_are_the_queries_whose_recall_fell_the_largest_fall_first(case: Case) -> None:
    ev = open_snapshot(from_args(case.run_a, case.run_b, case.truth), corpus_check=False).ev
    a, b = independent_recall(case.truth, case.run_a), independent_recall(case.truth, case.run_b)
    falls = sorted((b[q] - a[q], q) for q in a if b[q] - a[q] < -1e-12)
    rises = sorted((-(b[q] - a[q]), q) for q in a if b[q] - a[q] > 1e-12)
    listed = ev.query_ids.take(pa.array(ev.flips)).to_pylist()
    assert listed == [q for _, q in falls] + [q for _, q in rises]
    assert ev.regressions_in_flips == len(falls)
    assert listed[0].startswith("sliver")  # recall 1.0 → 0.0: the largest fall


def test_a_querys_detail_names_the_true_neighbours_each_arm_missed(case: Case) -> None:
    snapshot = open_snapshot(from_args(case.run_a, case.run_b, case.truth), corpus_check=False)
    q = snapshot.ev.query_index("pike-q1")
    d = build_detail(snapshot, q, None)
    truth = [x for x in case.queries if x.query_id == "pike-q1"][0]
    assert (d.b.plan, d.b.n_returned, d.b.recall, d.exact_eligible) == ("ann", K, pytest.approx(0.3), 1500)
    missed = [(m.chunk_id, m.truth_rank, m.truth_score) for m in d.b.missed]
    assert missed == [(c, i + 4, s) for i, (c, s) in enumerate(truth.neighbours[3:])]  # found the first 3
    assert [m.chunk_id for m in d.a.missed] == [c for c, _ in truth.neighbours[6:]]
    assert d.b.n_eligible == 4500  # the run's own estimate, beside the exact count


def test_the_runs_n_eligible_estimate_is_a_warning_naming_the_queries(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    got = judged(capsys, case)
    (warned,) = [c for c in checks(got, "truth.n_eligible") if c["level"] == "warning"]
    assert warned["facts"] == {"arm": "b", "count": 3}
    for q in case.misestimated:
        assert f"{q} (run 4500, exact 1500)" in warned["message"]
    assert [c["level"] for c in checks(got, "truth.n_eligible") if c["level"] == "ok"] == ["ok"]  # A's


def test_the_truths_provenance_agrees_and_nothing_else_errs(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    got = judged(capsys, case)
    for code in ("truth.corpus", "truth.queries", "truth.metric", "truth.postfiltered", "truth.judged"):
        assert [c["level"] for c in checks(got, code)] == ["ok"], code
    assert not [c for c in got["checks"] if c["level"] == "error"]
    rc, _, _ = report(capsys, str(case.run_a), str(case.run_b), "--labels", str(case.truth), "--strict")
    assert rc == 0


# -- the truths that fake recall -----------------------------------------------------------------


def _variant(case: Case, name: str, change) -> Path:  # noqa: ANN001
    """The case's truth rewritten: `change(queries)` gives the queries of the new folder."""
    queries = [Query(q.query_id, q.n_eligible, list(q.neighbours), q.tenant, q.filter) for q in case.queries]
    return change(case.root / name, queries)


def _postfiltered(folder: Path, queries: list[Query]) -> Path:
    """An unfiltered top 10 filtered afterwards: a filtered query keeps only the share of it its
    filter admits, so fewer than min(k, n_eligible) ids (the smallest tenants keep none)."""
    rng = np.random.default_rng(3)
    for q in queries:
        if q.filter is not None:
            keep = round(K * q.n_eligible / 300_000)
            q.neighbours = [
                q.neighbours[i] for i in sorted(rng.choice(len(q.neighbours), keep, replace=False))
            ]
    return write_truth(folder, queries, K)


def test_a_post_filtered_truth_is_an_error_with_the_count_and_the_worst_queries(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    folder = _variant(case, "postfiltered", _postfiltered)
    got = judged(capsys, case, folder)
    (err,) = checks(got, "truth.postfiltered")
    filtered = [q for q in case.queries if q.filter is not None]
    assert err["level"] == "error" and err["facts"]["count"] == len(filtered)
    worst = err["facts"]["queries"]
    assert [w["held"] for w in worst] == [0] * 5  # the tenants' filters admit < 5%: none kept
    assert worst[0] == {"query": "sliver-q0", "held": 0, "expected": K}  # equally worst: in order
    rc, _, _ = report(capsys, str(case.run_a), str(case.run_b), "--labels", str(folder), "--strict")
    assert rc == 1


def test_a_post_filtered_truth_as_a_plain_labels_file_is_seen_from_the_runs_n_eligible(
    capsys: pytest.CaptureFixture[str], case: Case, tmp_path: Path
) -> None:
    folder = _variant(case, "postfiltered-plain", _postfiltered)
    labels = pq.read_table(folder / "labels.parquet").select(["query_id", "chunk_id", "relevance"])
    pq.write_table(labels, tmp_path / "labels.parquet")
    queries = pq.read_table(folder / "queries.parquet").select(["query_id", "tenant", "filter"])
    pq.write_table(queries, tmp_path / "queries.parquet")
    rc, got, err = report(
        capsys,
        str(case.run_a),
        str(case.run_b),
        "--labels",
        str(tmp_path / "labels.parquet"),
        "--queries",
        str(tmp_path / "queries.parquet"),
    )
    assert rc == 0, err
    (found,) = checks(got, "truth.postfiltered")
    # a filtered query left with no id (n_eligible > 0, answered by the runs) is one of them: the
    # empty truth that drops the hardest queries
    filtered = [q for q in case.queries if q.filter is not None]
    assert found["level"] == "error" and found["facts"]["count"] == len(filtered)
    assert "truth" not in got


def test_a_labellers_gold_is_no_top_k_list_and_is_not_called_post_filtered(
    capsys: pytest.CaptureFixture[str], case: Case, tmp_path: Path
) -> None:
    """One or two gold ids per query (a labeller's), n_eligible on the runs: not a truth, no error."""
    rows = [
        {"query_id": q.query_id, "chunk_id": c, "relevance": 1}
        for q in case.queries
        for c, _ in q.neighbours[:2]
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "gold.parquet")
    rc, got, err = report(
        capsys, str(case.run_a), str(case.run_b), "--labels", str(tmp_path / "gold.parquet")
    )
    assert rc == 0, err
    assert checks(got, "truth.postfiltered") == []


def test_a_truth_on_another_corpus_version_is_an_error(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    folder = _variant(case, "v2", lambda f, qs: write_truth(f, qs, K, snapshot="corpus-v2", digest="beef"))
    got = judged(capsys, case, folder)
    errors = [c for c in checks(got, "truth.corpus") if c["level"] == "error"]
    assert {c["facts"]["arm"] for c in errors} == {"a", "b"}
    assert (
        "records corpus_snapshot 'corpus-v1', the truth corpus.snapshot 'corpus-v2'" in errors[0]["message"]
    )
    rc, _, _ = report(capsys, str(case.run_a), str(case.run_b), "--labels", str(folder), "--strict")
    assert rc == 1


def test_other_query_vectors_or_another_metric_are_errors(
    capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    folder = _variant(
        case, "ip", lambda f, qs: write_truth(f, qs, K, metric="ip", vectors_digest="v9", queries_digest="q9")
    )
    got = judged(capsys, case, folder)
    assert [c["level"] for c in checks(got, "truth.metric")] == ["error", "error"]
    assert [c["level"] for c in checks(got, "truth.queries")] == ["error", "error"]
    assert "the truth metric 'ip'" in checks(got, "truth.metric")[0]["message"]


def test_a_corpus_given_of_another_size_than_the_truths_is_an_error(
    capsys: pytest.CaptureFixture[str], case: Case, tmp_path: Path
) -> None:
    ids = sorted({c for q in case.queries for c, _ in q.neighbours})
    pq.write_table(pa.table({"chunk_id": ids, "text": ["x"] * len(ids)}), tmp_path / "corpus.parquet")
    got = judged(capsys, case, None, "--corpus", str(tmp_path / "corpus.parquet"))
    (sized,) = [c for c in checks(got, "truth.corpus") if c["level"] == "error"]
    assert sized["facts"] == {"truth_rows": case.corpus_rows, "corpus_rows": len(ids)}
    assert not [c for c in checks(got, "truth.ids") if c["level"] == "error"]  # every truth id is in it


def _padded(folder: Path, queries: list[Query]) -> Path:
    """The minnow's lists padded to k with -1, as a search library fills its empty slots."""
    for q in queries:
        if q.tenant == "pike":
            q.n_eligible = 8  # 8 eligible: 2 slots a library pads
            q.neighbours = q.neighbours[:8] + [("-1", -1.0), ("-1 ", -1.0)]
    return write_truth(folder, queries, K)


def test_padding_read_as_ids_is_an_error(
    capsys: pytest.CaptureFixture[str], case: Case, tmp_path: Path
) -> None:
    folder = _variant(case, "padded", _padded)
    got = judged(capsys, case, folder)
    (pad,) = [c for c in checks(got, "truth.ids") if c["level"] == "error"]
    assert pad["facts"]["padding"] == 12 and pad["facts"]["queries"] == [f"pike-q{i}" for i in range(5)]
    dropped = case.queries[0].neighbours[0][0]
    ids = sorted({c for q in case.queries for c, _ in q.neighbours if c != dropped})
    pq.write_table(pa.table({"chunk_id": ids}), tmp_path / "corpus.parquet")
    got = judged(capsys, case, None, "--corpus", str(tmp_path / "corpus.parquet"))
    absent = [c for c in checks(got, "truth.ids") if c["level"] == "error"]
    gone = {c for q in case.queries for c, _ in q.neighbours} - set(ids)
    assert [c["facts"]["absent"] for c in absent] == [len(gone)] == [1] and dropped in absent[0]["message"]


def test_padding_in_a_plain_labels_file_is_an_error(
    capsys: pytest.CaptureFixture[str], case: Case, tmp_path: Path
) -> None:
    rows = [
        {"query_id": q.query_id, "chunk_id": c, "relevance": 1} for q in case.queries for c, _ in q.neighbours
    ]
    rows += [
        {"query_id": "pike-q0", "chunk_id": "-1", "relevance": 1},
        {"query_id": "pike-q1", "chunk_id": "", "relevance": 1},
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "labels.parquet")
    rc, got, err = report(
        capsys, str(case.run_a), str(case.run_b), "--labels", str(tmp_path / "labels.parquet")
    )
    assert rc == 0, err
    (pad,) = checks(got, "labels.padding")
    assert pad["level"] == "error" and pad["facts"]["padding"] == 2 and "pike-q0, pike-q1" in pad["message"]


# -- the truth's own rules ------------------------------------------------------------------------


def _small(tmp_path: Path, k: int | list[int] = 20, tolerance: float = 1e-6) -> tuple[Path, Path, Path]:
    """Three queries: q1 with ties at ranks 9–11 (rank 10 the 10th), q2 of 4 eligible, q3 of none."""
    rng = np.random.default_rng(0)
    s = scores_for(20, rng)
    s[9] = s[8] - 1e-7  # rank 10 ties rank 9 …
    s[10] = s[8] - 2e-7  # … and rank 11 too (within 1e-6 of rank 10's score)
    q1 = Query("q1", 1000, [(f"d{i}", s[i]) for i in range(20)], "acme", "tenant = 'acme'")
    q2 = Query("q2", 4, [(f"e{i}", s[i]) for i in range(4)], "acme", "tenant = 'acme' AND kind = 'x'")
    q3 = Query("q3", 0, [], "acme", "tenant = 'acme' AND kind = 'none'")
    truth = write_truth(tmp_path / "truth", [q1, q2, q3], k, tolerance=tolerance)
    meta = {"k": "10", "corpus_snapshot": "corpus-v1"}
    a = write_run(
        tmp_path / "a.parquet",
        [
            {"query_id": "q1", "retrieved": [f"d{i}" for i in range(10)], "n_eligible": 1000},
            {"query_id": "q2", "retrieved": ["e0", "e1", "e2", "e3", "x", "y"], "n_eligible": 4},
            {"query_id": "q3", "retrieved": [], "n_eligible": 0},
        ],
        meta,
    )
    b = write_run(
        tmp_path / "b.parquet",
        [  # d10 (rank 11, tied with the 10th) in place of d9
            {"query_id": "q1", "retrieved": [*(f"d{i}" for i in range(9)), "d10", "d11"], "n_eligible": 1000},
            {"query_id": "q2", "retrieved": ["e0", "x"], "n_eligible": 4},
            {"query_id": "q3", "retrieved": ["z"], "n_eligible": 0},
        ],
        meta,
    )
    return truth, a, b


def test_truth_at_k_judges_a_smaller_k_crediting_ties_read_from_its_scores(tmp_path: Path) -> None:
    truth, a, b = _small(tmp_path)
    ev = open_snapshot(from_args(a, b, truth, k=10), corpus_check=False).ev
    q1, q2 = ev.query_index("q1"), ev.query_index("q2")
    assert ev.b.judged.recall[q1] == 1.0  # d10 ties the 10th: credited
    assert (ev.a.judged.recall[q2], ev.b.judged.recall[q2]) == (1.0, 0.25)  # over min(10, 4)
    assert sorted(c for c, _ in ev.gold_of(q1)) == sorted(f"d{i}" for i in range(11))
    at = ev.at_k(ev.b, [10, 5, 30])
    assert at[5].recall == pytest.approx((1.0 + 0.25) / 2)  # q1: 5 of 5, q2: 1 of 4
    assert at[30] is None  # deeper than the truth and the lists
    ev5 = open_snapshot(from_args(a, b, truth, k=[5, 10]), corpus_check=False).ev
    assert ev5.means(ev5.b).recall == pytest.approx((1.0 + 0.25) / 2)
    assert ev5.at_k(ev5.b, [10])[10].recall == pytest.approx((1.0 + 0.25) / 2)


def test_a_decision_k_deeper_than_the_truth_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    truth, a, b = _small(tmp_path, k=10)
    rc, _, err = report(capsys, str(a), str(b), "--labels", str(truth), "--k", "20")
    assert rc == 2 and "truth.json: the truth is computed at k = 10: it cannot judge k = 20" in err
    assert "Traceback" not in err


def test_a_query_with_nothing_eligible_is_counted_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    truth, a, b = _small(tmp_path)
    got = judged(capsys, Case(tmp_path, truth, a, b, [], {}, {}, []))
    assert got["n_queries"] == 3 and got["n_scored"] == 2 and "q3" in got["unlabelled"]
    (apart,) = checks(got, "truth.no_eligible")
    assert apart["facts"] == {"count": 1} and "q3" in apart["message"]
    assert checks(got, "labels.unlabelled") == []  # not a query without labels: one without neighbours
    assert got["truth"]["no_eligible"] == 1
    assert math.isclose(got["arms"]["b"]["recall"], (1.0 + 0.25) / 2)


def test_a_broken_truth_folder_exits_2_naming_the_file_and_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    truth, a, b = _small(tmp_path)
    t = pq.read_table(truth / "labels.parquet")
    rank = t.column("rank").to_pylist()
    rank[4] = 7
    pq.write_table(t.set_column(3, "rank", pa.array(rank, pa.int32())), truth / "labels.parquet")
    rc, out, err = report(capsys, str(a), str(b), "--labels", str(truth))
    assert rc == 2 and out == {} and "labels.parquet: row 5: rank 7, expected 5" in err
    shutil.rmtree(truth)
    truth, _, _ = _small(tmp_path)
    (truth / "truth.json").write_text('{"format": "triage-truth", "version": 1, "metric": "hamming"}')
    rc, _, err = report(capsys, str(a), str(b), "--labels", str(truth))
    assert rc == 2 and "truth.json: metric is 'hamming'" in err


def test_a_queries_file_named_apart_keeps_the_truths_exact_counts(tmp_path: Path) -> None:
    truth, a, b = _small(tmp_path)
    mine = tmp_path / "queries.jsonl"
    mine.write_text(
        "".join(
            json.dumps({"query_id": q, "text": f"query {q}", "tenant": "acme"}) + "\n"
            for q in ("q1", "q2", "q3")
        )
    )
    ev = open_snapshot(from_args(a, b, truth, queries=mine), corpus_check=False).ev
    assert ev.queries is not None and "text" in ev.queries.column_names
    assert ev.truth is not None and ev.truth.n_eligible.tolist() == [1000, 4, 0]
    assert ev.b.judged.recall[ev.query_index("q2")] == 0.25


# -- the gate ---------------------------------------------------------------------------------------


def test_the_gates_floors_read_recall_against_exact_truth(
    capsys: pytest.CaptureFixture[str], case: Case, tmp_path: Path
) -> None:
    gate = tmp_path / "FLOORS.toml"
    gate.write_text('[floors]\noverall = 0.5\n"tenant:*" = 0.8\n')
    rc, got, err = report(
        capsys, str(case.run_a), str(case.run_b), "--labels", str(case.truth), "--gate", str(gate)
    )
    assert rc == 1, err
    mine = independent_tenants(case)
    broken = {f["name"] for f in got["gate"]["floors"] if not f["holds"]}
    assert broken == {f"tenant:{t}" for t, m in mine.items() if round(m["b"], 12) < 0.8}
    (overall,) = [f for f in got["gate"]["floors"] if f["name"] == "overall"]
    assert overall["hit_rate"] == pytest.approx(got["arms"]["b"]["recall"]) and overall["holds"]


def test_a_gate_judged_on_a_faked_truth_fails(
    capsys: pytest.CaptureFixture[str], case: Case, tmp_path: Path
) -> None:
    gate = tmp_path / "FLOORS.toml"
    gate.write_text("[floors]\noverall = 0.1\n")
    folder = _variant(case, "v2-gate", lambda f, qs: write_truth(f, qs, K, snapshot="corpus-v2"))
    rc, got, _ = report(
        capsys, str(case.run_a), str(case.run_b), "--labels", str(folder), "--gate", str(gate)
    )
    assert rc == 1 and not got["gate"]["holds"]
    assert "the truth fails its checks (truth.corpus)" in got["gate"]["nothing_evaluated"]
    rc, got, _ = report(
        capsys, str(case.run_a), str(case.run_b), "--labels", str(case.truth), "--gate", str(gate)
    )
    assert rc == 0 and got["gate"]["holds"]


# -- end to end: `triage truth`, then the runs judged against what it wrote ----------------------------


def test_runs_are_judged_against_the_folder_triage_truth_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A corpus of 600 vectors of three tenants (one of 6 documents), queries filtered by tenant and
    one matching nothing; `triage truth --k 10` writes the folder, two runs are judged against it:
    recall against a float64 brute force written here, the empty query counted apart, the tiny
    tenant's recall over its 6 eligible documents."""
    rng = np.random.default_rng(5)
    n, d = 600, 8
    x = rng.standard_normal((n, d)).astype(np.float32)
    tenant = np.array(["acme"] * 300 + ["globex"] * 294 + ["tiny"] * 6)
    ids = [f"doc-{i:03d}" for i in range(n)]
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), d)
    pq.write_table(
        pa.table({"chunk_id": ids, "embedding": vectors, "tenant": tenant}), tmp_path / "corpus.parquet"
    )
    filters = {"q0": None, "q1": "tenant = 'acme'", "q2": "tenant = 'tiny'", "q3": "tenant = 'nobody'"}
    q = rng.standard_normal((4, d)).astype(np.float32)
    with open(tmp_path / "queries.jsonl", "w") as f:
        for i, (qid, where) in enumerate(filters.items()):
            row = {
                "query_id": qid,
                "embedding": q[i].tolist(),
                "filter": where,
                "tenant": (where or "x")[10:-1],
            }
            f.write(json.dumps(row) + "\n")
    rc = main(
        [
            "truth",
            "--corpus",
            str(tmp_path / "corpus.parquet"),
            "--queries",
            str(tmp_path / "queries.jsonl"),
            "--k",
            "10",
            "--out",
            str(tmp_path / "truth"),
        ]
    )
    capsys.readouterr()
    assert rc == 0
    # the brute force: cosine in float64 over each query's eligible rows
    unit = x.astype(np.float64) / np.linalg.norm(x.astype(np.float64), axis=1, keepdims=True)
    admits = {"q0": np.ones(n, bool), "q1": tenant == "acme", "q2": tenant == "tiny", "q3": np.zeros(n, bool)}
    exact = {}
    for i, qid in enumerate(filters):
        rows = np.flatnonzero(admits[qid])
        s = unit[rows] @ (q[i].astype(np.float64) / np.linalg.norm(q[i].astype(np.float64)))
        exact[qid] = [ids[r] for r in rows[np.argsort(-s, kind="stable")][:10]]
    # A returns each truth whole; B the first half of each, then documents of another tenant
    other = [c for c, t in zip(ids, tenant, strict=True) if t == "globex"]
    meta = {"k": "10", "metric": "cosine"}
    write_run(tmp_path / "a.parquet", [{"query_id": k, "retrieved": v} for k, v in exact.items()], meta)
    halves = [{"query_id": k, "retrieved": v[: len(v) // 2] + other[:5]} for k, v in exact.items()]
    write_run(tmp_path / "b.parquet", halves, meta)
    rc, got, err = report(
        capsys,
        str(tmp_path / "a.parquet"),
        str(tmp_path / "b.parquet"),
        "--labels",
        str(tmp_path / "truth"),
        "--strict",
    )
    assert rc == 0, err
    assert got["truth"]["metric"] == "cosine" and got["truth"]["no_eligible"] == 1 and got["n_scored"] == 3
    assert got["arms"]["a"]["recall"] == 1.0
    # B: its half of each truth (q2: 3 of min(10, 6)), and whatever of the other tenant's it names
    # that is a true neighbour (q0 is unfiltered)
    b = [
        len(set(h["retrieved"]) & set(exact[h["query_id"]])) / min(10, len(exact[h["query_id"]]))
        for h in halves[:3]
    ]
    assert b[1:] == [0.5, 0.5]
    assert got["arms"]["b"]["recall"] == pytest.approx(sum(b) / 3, abs=1e-12)
    assert [c["level"] for c in checks(got, "truth.metric")] == ["ok"]
    bands = {s["value"]: s["n"] for s in got["slices"]["selectivity"]}
    assert bands == {"unfiltered": 1, "≥10%": 1, "1–10%": 1}  # tiny: 6 of 600 eligible, 1%
