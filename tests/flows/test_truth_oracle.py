"""`triage truth` against an exact computation made apart from it (tests/truth_oracle.py: DuckDB's WHERE
for the eligible rows, float64 scores per query over them), on files written as users write them:
generated corpora (tests/truth_data.py: skewed tenants, tiny and empty eligible sets, planted exact
ties, near-duplicates, several shards) and real BGE-M3 embeddings (tests/fixtures/truth_real).

The first part holds the oracle and its comparison to account: hand-computed answers, and a truth DIR
spoilt in each way the issue names (padding, a dropped tie, a dropped empty query, …) is refused.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import triage
from triage.cli.main import main

import truth_data as td
import truth_oracle as oracle


@pytest.fixture(autouse=True)
def own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's truth cache is its own (never the user's)."""
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path_factory.mktemp("cache")))


def run_truth(corpus: Path, queries: Path, out: Path, ks=(10,), metric="cosine", tolerance=None, via="cli"):
    """`triage truth` as a user runs it: the command (in process), or `triage.truth(...)`."""
    if via == "api":
        extra = {} if tolerance is None else {"tolerance": tolerance}
        triage.truth(corpus, queries, k=list(ks), out=out, metric=metric, **extra)
        return out
    argv = [
        "truth",
        "--corpus",
        str(corpus),
        "--queries",
        str(queries),
        "--out",
        str(out),
        "--metric",
        metric,
    ]
    for k in ks:
        argv += ["--k", str(k)]
    if tolerance is not None:
        argv += ["--tolerance", repr(tolerance)]
    assert main(argv) == 0
    return out


def engine_matches_oracle(corpus, queries, out, ks=(10,), metric="cosine", tolerance=None, via="cli"):
    run_truth(corpus, queries, out, ks, metric, tolerance, via)
    exact = oracle.exact_truth(corpus, queries, max(ks), metric, 1e-6 if tolerance is None else tolerance)
    oracle.assert_truth(out, exact, ks)
    return exact


# -- the oracle and its comparison, on their own ---------------------------------------------------


TINY = [  # (chunk_id, vector, tenant, region): r1 = r4 and r2 = r6 exactly
    ("r0", [1.0, 0.0, 0.0], "acme", "emea"),
    ("r1", [0.6, 0.8, 0.0], "acme", None),
    ("r2", [0.0, 1.0, 0.0], "acme", "amer"),
    ("r3", [0.0, 0.0, 2.0], "globex", None),
    ("r4", [0.6, 0.8, 0.0], "globex", "emea"),
    ("r5", [-1.0, 0.5, 0.25], "globex", "apac"),
    ("r6", [0.0, 1.0, 0.0], "acme", None),
]


def _tiny_corpus(folder: Path) -> Path:
    """Two shards of TINY."""
    folder.mkdir(parents=True)
    for i, part in enumerate((TINY[:4], TINY[4:])):
        ids, vecs, tenants, regions = zip(*part, strict=True)
        emb = pa.FixedSizeListArray.from_arrays(pa.array(np.array(vecs, np.float32).ravel()), 3)
        table = pa.table({"chunk_id": ids, "embedding": emb, "tenant": tenants, "region": regions})
        pq.write_table(table, folder / f"part-{i}.parquet")
    return folder


def _by_hand(metric: str, q: list[float], v: list[float]) -> float:
    dot = math.fsum(a * b for a, b in zip(q, v, strict=True))
    if metric == "ip":
        return dot
    if metric == "l2":
        return math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(q, v, strict=True)))
    return dot / math.sqrt(math.fsum(a * a for a in q) * math.fsum(b * b for b in v))


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_the_oracle_answers_as_computed_by_hand(tmp_path: Path, metric: str) -> None:
    corpus = _tiny_corpus(tmp_path / "corpus")
    asked = {  # query_id: (vector, filter, the eligible rows: a NULL region is not TRUE either way)
        "all": ([0.5, 1.0, 0.0], None, ["r0", "r1", "r2", "r3", "r4", "r5", "r6"]),
        "nullable": ([0.5, 1.0, 0.0], "NOT (region = 'emea')", ["r2", "r5"]),
        "none": ([1.0, 1.0, 1.0], "tenant = 'ghost'", []),
        "one": ([1.0, 1.0, 1.0], "region IS NULL AND tenant = 'globex'", ["r3"]),
    }
    rows = [
        {"query_id": q, "embedding": np.array(v, np.float32), "filter": f, "tenant": None, "band": "-"}
        for q, (v, f, _) in asked.items()
    ]
    got = oracle.exact_truth(corpus, td.write_queries(tmp_path / "q.jsonl", rows), k=1, metric=metric)
    vecs = {c: [float(np.float32(x)) for x in v] for c, v, _, _ in TINY}
    for t in got.queries:
        q, _, eligible = asked[t.query.query_id]
        assert t.n_eligible == len(eligible)
        want = sorted(
            ((_by_hand(metric, q, vecs[c]), c) for c in eligible),
            key=lambda p: (p[0] if metric == "l2" else -p[0], p[1]),
        )
        assert [c for c, _, _ in t.labels()] == [c for s, c in want if s == want[0][0]], "the best, and ties"
        for (c, s, extra), (w, _) in zip(t.labels(), want, strict=False):
            assert s == pytest.approx(w, rel=1e-14, abs=1e-15) and extra == (c != want[0][1])
    # r1 and r4 are one vector: the best for this query under every metric, so k = 1 lists r1 (the
    # smaller chunk_id) and r4 as its tied extra
    assert [(c, extra) for c, _, extra in got.queries[0].labels()] == [("r1", False), ("r4", True)]


def test_a_truth_written_from_the_oracle_passes_and_each_spoiling_is_caught(tmp_path: Path) -> None:
    layout = td.Layout(rows=600, dim=8, shards=3, seed=4, rows_per_batch=200)
    corpus = td.write_corpus(tmp_path / "corpus", layout)
    queries = td.make_queries(corpus, tmp_path / "q.parquet", 40, k=5, seed=4)
    exact = oracle.exact_truth(corpus.folder, queries.path, 5)
    good = oracle.write_truth_dir(exact, tmp_path / "good")
    assert oracle.check_truth(good, exact) == []
    assert any(t.extras for t in exact.queries) and any(t.n_eligible == 0 for t in exact.queries)
    for name, (spoil, said) in SPOILS.items():
        bad = tmp_path / name
        shutil.copytree(good, bad)
        spoil(bad, exact)
        problems = oracle.check_truth(bad, exact)
        assert any(said in p for p in problems), f"{name}: {problems[:3]}"
    # what rounding cannot decide is left open: two near-duplicates (different vectors, exact scores
    # closer than SLACK) may come in either order
    rounded = tmp_path / "rounded"
    shutil.copytree(good, rounded)
    _write_labels(rounded, _swap_near(_labels(rounded), exact))
    assert oracle.check_truth(rounded, exact) == []


def _labels(folder: Path) -> list[dict]:
    return pq.read_table(folder / "labels.parquet").to_pylist()


def _write_labels(folder: Path, rows: list[dict]) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=oracle.LABELS_SCHEMA), folder / "labels.parquet")


def _edit_labels(fn):
    def spoil(folder: Path, exact: oracle.Oracle) -> None:
        _write_labels(folder, fn(_labels(folder), exact))

    return spoil


def _first(exact: oracle.Oracle, pred) -> oracle.QueryTruth:
    return next(t for t in exact.queries if pred(t))


def _drop_extra(rows, exact):
    qid = _first(exact, lambda t: t.extras).query.query_id
    i = max(i for i, r in enumerate(rows) if r["query_id"] == qid)
    return rows[:i] + rows[i + 1 :]


def _pad(rows, exact):
    t = _first(exact, lambda t: 0 < t.n_eligible < 5)
    i = max(i for i, r in enumerate(rows) if r["query_id"] == t.query.query_id)
    pad = {**rows[i], "chunk_id": "-1", "rank": rows[i]["rank"] + 1, "score": -1.0, "tied": False}
    return rows[: i + 1] + [pad] + rows[i + 1 :]


def _swap_tie(rows, exact):
    for i in range(len(rows) - 1):
        a, b = rows[i], rows[i + 1]
        if a["query_id"] == b["query_id"] and a["score"] == b["score"] and a["tied"] == b["tied"]:
            a["chunk_id"], b["chunk_id"] = b["chunk_id"], a["chunk_id"]
            return rows
    raise AssertionError("no exact tie to swap")


def _split_copies(rows, exact):
    """Two rows of one vector given scores one ulp apart, the larger chunk_id first."""
    for t in exact.queries:
        labels = t.labels()
        for i in range(len(labels) - 1):
            if t.same[i] == t.same[i + 1]:
                at = next(j for j, r in enumerate(rows) if r["query_id"] == t.query.query_id) + i
                a, b = rows[at], rows[at + 1]
                a["chunk_id"], b["chunk_id"] = b["chunk_id"], a["chunk_id"]
                a["score"] = float(np.nextafter(a["score"], np.inf if exact.metric != "l2" else -np.inf))
                return rows
    raise AssertionError("no two rows of one vector")


def _swap_near(rows, exact):
    """Two rows of different vectors whose exact scores are closer than SLACK, swapped (id and score)."""
    for t in exact.queries:
        at = next((j for j, r in enumerate(rows) if r["query_id"] == t.query.query_id), None)
        s = list(t.scores[: t.m + t.extras])
        for i in range(len(s) - 1):
            alone = s.count(s[i]) == 1 and s.count(s[i + 1]) == 1
            close = 0 < abs(s[i] - s[i + 1]) < oracle.SLACK / 4 and t.same[i] != t.same[i + 1]
            if alone and close and (i + 1 < t.m or i >= t.m):
                a, b = rows[at + i], rows[at + i + 1]
                for key in ("chunk_id", "score"):
                    a[key], b[key] = b[key], a[key]
                return rows
    raise AssertionError("no near-duplicates side by side")


def _nudge_score(rows, exact):
    rows[0]["score"] += 1e-8 * max(1.0, abs(rows[0]["score"]))
    return rows


def _replace_top(rows, exact):
    t = _first(exact, lambda t: t.extras == 0 and t.n_eligible > t.m + 1 and t.m)
    i = next(i for i, r in enumerate(rows) if r["query_id"] == t.query.query_id and r["rank"] == t.m)
    rows[i]["chunk_id"] = str(t.ids[t.m])
    rows[i]["score"] = float(t.scores[t.m])
    return rows


def _flag(rows, exact):
    i = next(i for i, r in enumerate(rows) if not r["tied"])
    rows[i]["tied"] = True
    return rows


def _reorder(rows, exact):
    return rows[len(rows) // 2 :] + rows[: len(rows) // 2]


def _ranks(rows, exact):
    rows[1]["rank"] = rows[0]["rank"]
    return rows


def _queries(fn):
    def spoil(folder: Path, exact: oracle.Oracle) -> None:
        rows = pq.read_table(folder / "queries.parquet").to_pylist()
        pq.write_table(pa.Table.from_pylist(fn(rows, exact)), folder / "queries.parquet")

    return spoil


def _drop_empty(rows, exact):
    return [r for r in rows if r["n_eligible"] != 0]


def _off_by_one(rows, exact):
    r = next(r for r in rows if r["filter"] is not None and r["n_eligible"] > 0)
    r["n_eligible"] += 1
    return rows


def _meta(folder: Path, exact: oracle.Oracle) -> None:
    meta = json.loads((folder / "truth.json").read_text())
    meta["metric"] = "ip"
    (folder / "truth.json").write_text(json.dumps(meta))


SPOILS = {  # name: (spoil, what the comparison says)
    "a tied extra dropped": (_edit_labels(_drop_extra), "not listed as tied"),
    "padding (-1) after a short list": (_edit_labels(_pad), "'-1' is not an eligible row"),
    "an exact tie out of chunk_id order": (_edit_labels(_swap_tie), "not in chunk_id order"),
    "one vector split into two scores": (_edit_labels(_split_copies), "are one vector"),
    "a score 1e-8 off": (_edit_labels(_nudge_score), "exactly"),
    "the k-th replaced by the (k+1)-th": (_edit_labels(_replace_top), "belongs in the top"),
    "a top-k row flagged tied": (_edit_labels(_flag), "tied flags"),
    "rows out of the queries' order": (_edit_labels(_reorder), "not in the queries' order"),
    "a rank repeated": (_edit_labels(_ranks), "ranks"),
    "the empty queries dropped": (_queries(_drop_empty), "queries.parquet lists"),
    "n_eligible off by one": (_queries(_off_by_one), "n_eligible"),
    "another metric stated": (_meta, "truth.json's metric"),
}


def test_the_generated_queries_cover_the_designs_bands(tmp_path: Path) -> None:
    corpus = td.write_corpus(
        tmp_path / "c", td.Layout(rows=30_000, dim=4, shards=2, seed=2, rows_per_batch=7000)
    )
    qs = td.make_queries(corpus, tmp_path / "q.parquet", 400, k=10, seed=2)
    assert set(qs.bands) == set(td.MIX), qs.bands
    assert 0.55 <= qs.bands["unfiltered"] / 400 <= 0.65
    counts = td.counts(corpus, ["tenant = 'tiny'", "tenant = 'solo'", "tenant = 'acme'", "region IS NULL"])
    assert counts["tenant = 'tiny'"] == 3 and counts["tenant = 'solo'"] == 1
    assert 0.27 < counts["tenant = 'acme'"] / 30_000 < 0.33 and 0.2 < counts["region IS NULL"] / 30_000 < 0.3
    assert {"tie", "near", "far"} <= set(corpus.planted)


# -- the engine against the oracle -----------------------------------------------------------------


def test_truth_equals_the_exact_truth_on_a_small_sharded_corpus(tmp_path: Path) -> None:
    corpus = td.write_corpus(
        tmp_path / "corpus", td.Layout(rows=1500, dim=8, shards=3, seed=1, rows_per_batch=500)
    )
    queries = td.make_queries(corpus, tmp_path / "q.parquet", 40, k=5, seed=1)
    exact = engine_matches_oracle(corpus.folder, queries.path, tmp_path / "out", ks=(5,), via="api")
    assert any(t.extras for t in exact.queries) and any(t.n_eligible == 0 for t in exact.queries)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
@pytest.mark.parametrize("ks", [(1,), (10,), (3, 25)])
def test_truth_equals_the_exact_truth_per_metric_and_k(tmp_path: Path, metric: str, ks) -> None:
    corpus = td.write_corpus(
        tmp_path / "corpus", td.Layout(rows=6000, dim=24, shards=4, seed=7, rows_per_batch=900)
    )
    queries = td.make_queries(corpus, tmp_path / "q.parquet", 150, k=max(ks), seed=7)
    exact = engine_matches_oracle(corpus.folder, queries.path, tmp_path / "out", ks, metric)
    if max(ks) > 1:
        assert any(0 < t.n_eligible < max(ks) for t in exact.queries)


@pytest.mark.slow
@pytest.mark.parametrize(
    "embedding, fmt", [("list32", ".jsonl"), ("list64", ".parquet"), ("fixed", ".jsonl")]
)
def test_truth_reads_each_embedding_layout_and_query_format(tmp_path: Path, embedding: str, fmt: str) -> None:
    layout = td.Layout(rows=3000, dim=12, shards=2, seed=3, embedding=embedding, row_group_size=700)
    corpus = td.write_corpus(tmp_path / "corpus", layout)
    queries = td.make_queries(corpus, tmp_path / f"q{fmt}", 80, k=10, seed=3)
    engine_matches_oracle(corpus.folder, queries.path, tmp_path / "out", (10,), "l2")


@pytest.mark.slow
def test_truth_of_one_parquet_file_and_many_small_shards(tmp_path: Path) -> None:
    one = td.write_corpus(tmp_path / "one", td.Layout(rows=2000, dim=6, shards=1, seed=9))
    queries = td.make_queries(one, tmp_path / "q.parquet", 60, k=7, seed=9)
    engine_matches_oracle(one.shards[0], queries.path, tmp_path / "out1", (7,))
    many = td.write_corpus(
        tmp_path / "many", td.Layout(rows=2000, dim=6, shards=13, seed=9, row_group_size=50)
    )
    engine_matches_oracle(many.folder, queries.path, tmp_path / "out13", (7,))


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_truth_under_massive_exact_ties(tmp_path: Path, metric: str) -> None:
    """3 distinct vectors, 900 copies each, across shards: the top k is the k smallest chunk_ids of the
    best group and every other copy of it is a tied extra (more ties than any margin fetches)."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((3, 16)).astype(np.float32)
    vectors = base[np.repeat([0, 1, 2], 900)]
    order = rng.permutation(len(vectors))
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, part in enumerate(np.array_split(order, 4)):
        emb = pa.FixedSizeListArray.from_arrays(pa.array(vectors[part].ravel()), 16)
        ids = [td.chunk_id(int(r)) for r in part]
        tenant = ["acme" if r % 3 else "globex" for r in part]
        pq.write_table(
            pa.table({"chunk_id": ids, "embedding": emb, "tenant": tenant}), folder / f"s{i}.parquet"
        )
    rows = [
        {
            "query_id": f"q{j}",
            "embedding": base[j % 3] + np.float32(0.01),
            "filter": f,
            "tenant": None,
            "band": "x",
        }
        for j, f in enumerate([None, "tenant = 'globex'", None, "tenant = 'acme'", "tenant <> 'acme'"])
    ]
    queries = td.write_queries(tmp_path / "q.parquet", rows)
    exact = engine_matches_oracle(folder, queries, tmp_path / "out", (5,), metric)
    assert all(t.extras >= 200 for t in exact.queries)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
@pytest.mark.parametrize("offset, scale", [(1000.0, 0.01), (0.0, 1e-3), (0.0, 1e3)])
def test_truth_far_from_the_origin_and_at_odd_scales(
    tmp_path: Path, metric: str, offset: float, scale: float
):
    """Vectors 1000 from the origin and 0.01 apart (float32's |q|^2 + |x|^2 - 2 q.x cancels to noise),
    tiny and huge ones: the ranks and scores are still the exact ones."""
    rng = np.random.default_rng(1)
    x = (offset + scale * rng.standard_normal((3000, 24))).astype(np.float32)
    x[100:110] = x[5]  # ten copies of row 5
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(x)), 3)):
        emb = pa.FixedSizeListArray.from_arrays(pa.array(x[part].ravel()), 24)
        ids = [td.chunk_id(int(r)) for r in part]
        tenant = ["acme" if r % 4 else "globex" for r in part]
        pq.write_table(
            pa.table({"chunk_id": ids, "embedding": emb, "tenant": tenant}), folder / f"s{i}.parquet"
        )
    q = (offset + scale * rng.standard_normal((20, 24))).astype(np.float32)
    q[0] = x[5]
    rows = [
        {
            "query_id": f"q{j}",
            "embedding": q[j],
            "filter": [None, "tenant = 'globex'"][j % 2],
            "tenant": None,
            "band": "-",
        }
        for j in range(len(q))
    ]
    engine_matches_oracle(
        folder, td.write_queries(tmp_path / "q.parquet", rows), tmp_path / "out", (10,), metric
    )


@pytest.mark.slow
@pytest.mark.parametrize("tolerance", [0.0, 1e-3])
def test_truth_at_a_stated_tolerance(tmp_path: Path, tolerance: float) -> None:
    corpus = td.write_corpus(
        tmp_path / "corpus", td.Layout(rows=3000, dim=10, shards=3, seed=12, rows_per_batch=800)
    )
    queries = td.make_queries(corpus, tmp_path / "q.parquet", 80, k=10, seed=12)
    engine_matches_oracle(corpus.folder, queries.path, tmp_path / "out", (10,), "ip", tolerance)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
@pytest.mark.parametrize("ks", [(1,), (5, 50)])
def test_truth_equals_the_exact_truth_on_real_embeddings(tmp_path: Path, metric: str, ks) -> None:
    """400 BGE-M3 sentence vectors in 3 shards, 86 queries (paragraphs, and sentences of the corpus:
    real exact ties, a query's own vector at the top)."""
    corpus, queries = td.write_real(tmp_path / "real", shards=3, seed=1, k=max(ks))
    exact = engine_matches_oracle(corpus, queries, tmp_path / "out", ks, metric)
    assert [t for t in exact.queries if t.n_eligible > 1 and t.same[0] == t.same[1]], (
        "repeated sentences tie at the top"
    )
    if ks == (1,):
        assert any(t.extras for t in exact.queries)


@pytest.mark.slow
def test_truth_on_real_embeddings_in_two_shards(tmp_path: Path) -> None:
    corpus, queries = td.write_real(tmp_path / "real", shards=2, seed=2, k=10)
    engine_matches_oracle(corpus, queries, tmp_path / "out", (10,), "cosine", via="api")
