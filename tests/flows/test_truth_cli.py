"""`triage truth` through files: a sharded Parquet corpus and Parquet or JSON Lines queries in, the
truth folder out, equal to a float64 brute force written here; every bad input is exit 2 naming the
file, the row and the problem; an interrupted run leaves no DIR."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import triage
from triage.cli.exits import Exit
from triage.cli.main import main
from triage.core.truth import output

D = 8


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["truth", *argv])
        except SystemExit as e:  # argparse
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


def vectors(table_rows: np.ndarray) -> pa.Array:
    return pa.FixedSizeListArray.from_arrays(
        pa.array(table_rows.ravel().astype(np.float32)), table_rows.shape[1]
    )


@pytest.fixture
def data(tmp_path: Path) -> dict:
    rng = np.random.default_rng(11)
    n = 900
    x = rng.standard_normal((n, D)).astype(np.float32)
    x[100:105] = x[1]  # an exact tie
    ids = [f"doc-{i:04d}" for i in range(n)]
    tenant = rng.choice(np.array(["acme", "globex", "tiny"]), n, p=[0.6, 0.39, 0.01])
    year = rng.integers(2019, 2025, n)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for s, (a, b) in enumerate([(0, 250), (250, 600), (600, n)]):
        t = pa.table(
            {"chunk_id": ids[a:b], "embedding": vectors(x[a:b]), "tenant": tenant[a:b], "year": year[a:b]}
        )
        pq.write_table(t, corpus / f"part-{s}.parquet", row_group_size=100)
    q = rng.standard_normal((7, D)).astype(np.float32)
    q[0] = x[1]
    filters = [
        None,
        "tenant = 'acme'",
        "tenant = 'tiny' AND year >= 2020",
        "tenant = 'nobody'",
        "",
        None,
        "year BETWEEN 2020 AND 2021",
    ]
    queries = tmp_path / "queries.jsonl"
    with open(queries, "w") as f:
        for i in range(7):
            f.write(
                json.dumps(
                    {"query_id": f"q{i}", "embedding": q[i].tolist(), "filter": filters[i], "tenant": "t"}
                )
                + "\n"
            )
    masks = [
        np.ones(n, bool),
        tenant == "acme",
        (tenant == "tiny") & (year >= 2020),
        np.zeros(n, bool),
        np.ones(n, bool),
        np.ones(n, bool),
        (year >= 2020) & (year <= 2021),
    ]
    return {"x": x, "ids": ids, "q": q, "masks": masks, "corpus": corpus, "queries": queries, "tmp": tmp_path}


def brute(data: dict, metric: str, k: int) -> list[tuple[str, str, int, bool]]:
    """(query_id, chunk_id, rank, tied) of the truth, computed one query at a time in float64."""
    rows = []
    for qi, q in enumerate(data["q"].astype(np.float64)):
        at = np.flatnonzero(data["masks"][qi])
        r = data["x"][at].astype(np.float64)
        if metric == "l2":
            gain = -np.sqrt(((q - r) ** 2).sum(axis=1))
        else:
            gain = (q * r).sum(axis=1)
            if metric == "cosine":
                gain = gain / np.sqrt((q * q).sum()) / np.sqrt((r * r).sum(axis=1))
        order = sorted(range(len(at)), key=lambda j: (-gain[j], data["ids"][at[j]]))
        n = min(k, len(at))
        keep = order[:n]
        if n == k:
            gk = gain[order[k - 1]]
            keep += [j for j in order[k:] if gain[j] >= gk - 1e-6 * max(1, abs(gk))]
        rows += [(f"q{qi}", data["ids"][at[j]], rank, rank > n) for rank, j in enumerate(keep, 1)]
    return rows


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_the_truth_folder_is_the_brute_force_truth(data: dict, metric: str) -> None:
    out = data["tmp"] / "truth"
    code, stdout, err = run(
        "--corpus", str(data["corpus"]), "--queries", str(data["queries"]), "--k", "3", "--k", "10",
        "--out", str(out), "--metric", metric,
    )  # fmt: skip
    assert code == Exit.OK, err
    assert "truth of 7 queries at k = 3, 10" in stdout and "3 shards" in stdout
    truth = output.read_truth(out)
    labels = truth.labels
    assert labels.schema == output.LABELS
    got = list(
        zip(*(labels.column(c).to_pylist() for c in ("query_id", "chunk_id", "rank", "tied")), strict=True)
    )
    assert got == brute(data, metric, 10)
    assert set(labels.column("relevance").to_pylist()) == {1}
    scores = labels.filter(pa.compute.equal(labels.column("query_id"), "q1")).column("score").to_pylist()
    assert scores == sorted(scores, reverse=metric != "l2")
    queries = truth.queries
    assert queries.column("query_id").to_pylist() == [f"q{i}" for i in range(7)]
    n_eligible = [int(m.sum()) for m in data["masks"]]
    assert queries.column("n_eligible").to_pylist() == n_eligible
    assert queries.column("selectivity").to_pylist() == [n / 900 for n in n_eligible]
    assert queries.column("filter").to_pylist()[3:6] == ["tenant = 'nobody'", None, None]
    assert "embedding" not in queries.column_names and queries.column("tenant").to_pylist() == ["t"] * 7
    p = truth.provenance
    assert p["k"] == [3, 10] and p["metric"] == metric and p["corpus"]["rows"] == 900
    assert [s["name"] for s in p["corpus"]["shards"]] == [f"part-{i}.parquet" for i in range(3)]
    assert sorted(p) == sorted(
        [
            "format",
            "version",
            "triage",
            "created_at",
            "metric",
            "order",
            "k",
            "tolerance",
            "engine",
            "kernel",
            "corpus",
            "queries",
        ]
    )


def test_a_query_admitting_no_row_is_listed_with_no_ids(data: dict) -> None:
    out = data["tmp"] / "t"
    triage.truth(corpus=data["corpus"], queries=data["queries"], k=5, out=out)
    truth = output.read_truth(out)
    assert "q3" not in truth.labels.column("query_id").to_pylist()
    assert truth.queries.column("n_eligible").to_pylist()[3] == 0


def test_a_corpus_path_that_is_not_utf8_is_named_with_its_bytes_shown(data: dict) -> None:
    """truth.json names a folder and a shard whose names hold a byte that is not UTF-8 as `\\xff`, and
    the truth is the one its copy under plain names gives."""
    odd = data["tmp"] / "corp\udcff"  # the byte 0xff in a name, as Python reads it
    odd.mkdir()
    for part in sorted(data["corpus"].iterdir()):
        (odd / (part.stem + "\udcfe.parquet")).write_bytes(part.read_bytes())
    run = triage.truth(corpus=odd, queries=data["queries"], k=5, out=data["tmp"] / "odd")
    corpus = json.loads((data["tmp"] / "odd" / "truth.json").read_text("utf-8"))["corpus"]
    assert corpus["path"].endswith("corp\\xff") and run.provenance["corpus"] == corpus
    assert [s["name"] for s in corpus["shards"]] == [f"part-{i}\\xfe.parquet" for i in range(3)]
    triage.truth(corpus=data["corpus"], queries=data["queries"], k=5, out=data["tmp"] / "plain")
    for f in ("labels.parquet", "queries.parquet"):
        assert (data["tmp"] / "odd" / f).read_bytes() == (data["tmp"] / "plain" / f).read_bytes()


def test_the_same_inputs_give_the_same_bytes(data: dict) -> None:
    for name in ("a", "b"):
        triage.truth(corpus=data["corpus"], queries=data["queries"], k=4, out=data["tmp"] / name)
    for f in ("labels.parquet", "queries.parquet"):
        assert (data["tmp"] / "a" / f).read_bytes() == (data["tmp"] / "b" / f).read_bytes()


def test_an_interrupted_run_leaves_no_folder(data: dict) -> None:
    out = data["tmp"] / "truth"

    def stop(progress: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        triage.truth(corpus=data["corpus"], queries=data["queries"], k=5, out=out, progress=stop)
    assert not out.exists()
    assert [p.name for p in data["tmp"].iterdir() if p.name.startswith(".")] == []


def test_an_interruption_while_writing_leaves_no_folder(data: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    out = data["tmp"] / "truth"

    def stop(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(output, "_swap", stop)
    with pytest.raises(KeyboardInterrupt):
        triage.truth(corpus=data["corpus"], queries=data["queries"], k=5, out=out)
    assert not out.exists()
    assert [p.name for p in data["tmp"].iterdir() if p.name.startswith(".")] == []


def test_ctrl_c_is_exit_130_and_force_replaces_an_earlier_truth(data: dict, monkeypatch) -> None:
    out = data["tmp"] / "truth"
    base = ["--corpus", str(data["corpus"]), "--queries", str(data["queries"]), "--out", str(out)]
    assert run(*base, "--k", "2")[0] == Exit.OK
    code, _, err = run(*base, "--k", "3")
    assert code == Exit.INPUT and "exists; not replaced (--force" in err
    assert run(*base, "--k", "3", "--force")[0] == Exit.OK
    assert output.read_truth(out).provenance["k"] == [3]
    from triage.core.truth import shards

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(shards, "scan_shard", interrupted)  # every engine's per-shard step
    code, _, err = run(*base, "--k", "4", "--force")
    assert code == Exit.INTERRUPTED and "interrupted" in err
    assert output.read_truth(out).provenance["k"] == [3]  # the earlier truth, untouched


def write_shard(path: Path, **columns: object) -> None:
    pq.write_table(pa.table(columns), path)


BAD = {
    "no embedding column": (
        lambda c: write_shard(
            c / "part-9.parquet", chunk_id=["x"], vec=[[1.0] * D], tenant=["acme"], year=[2020]
        ),
        "part-9.parquet: missing required column 'embedding'",
    ),
    "ragged": (
        lambda c: write_shard(
            c / "part-9.parquet",
            chunk_id=["x", "y"],
            embedding=[[1.0] * D, [1.0] * (D + 1)],
            tenant=["a", "a"],
            year=[1, 1],
        ),
        "part-9.parquet: row 2: 'embedding' holds 9 numbers; the queries' embeddings hold 8",
    ),
    "nan": (
        lambda c: write_shard(
            c / "part-9.parquet",
            chunk_id=["x", "y"],
            embedding=[[1.0] * D, [float("nan")] * D],
            tenant=["a", "a"],
            year=[1, 1],
        ),
        "part-9.parquet: row 2: 'embedding' holds NaN",
    ),
    "null embedding": (
        lambda c: write_shard(
            c / "part-9.parquet",
            chunk_id=["x", "y"],
            embedding=[[1.0] * D, None],
            tenant=["a", "a"],
            year=[1, 1],
        ),
        "part-9.parquet: row 2: 'embedding' is empty (null)",
    ),
    "dimension": (
        lambda c: write_shard(
            c / "part-9.parquet",
            chunk_id=["x"],
            embedding=pa.FixedSizeListArray.from_arrays(pa.array([1.0] * 4, pa.float32()), 4),
            tenant=["a"],
            year=[1],
        ),
        "part-9.parquet: 'embedding' has 4 dimensions; the queries' embeddings have 8",
    ),
    "duplicate in a shard": (
        lambda c: write_shard(
            c / "part-9.parquet",
            chunk_id=["x", "x"],
            embedding=[[1.0] * D] * 2,
            tenant=["a", "a"],
            year=[1, 1],
        ),
        "part-9.parquet: row 2: duplicate chunk_id 'x' (row 1 and row 2)",
    ),
    "duplicate across shards": (
        lambda c: write_shard(
            c / "part-9.parquet",
            chunk_id=["y", "doc-0007"],
            embedding=[[1.0] * D] * 2,
            tenant=["a", "a"],
            year=[1, 1],
        ),
        "part-9.parquet: row 2: duplicate chunk_id 'doc-0007': also in",
    ),
    "zero vector under cosine": (
        lambda c: write_shard(
            c / "part-9.parquet", chunk_id=["x"], embedding=[[0.0] * D], tenant=["a"], year=[1]
        ),
        "part-9.parquet: row 1: 'embedding' is all zeros",
    ),
    "null id": (
        lambda c: write_shard(
            c / "part-9.parquet",
            chunk_id=["x", None],
            embedding=[[1.0] * D] * 2,
            tenant=["a", "a"],
            year=[1, 1],
        ),
        "part-9.parquet: row 2: 'chunk_id' is empty (null)",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_corpus_is_exit_2_naming_the_file_and_row(data: dict, case: str) -> None:
    make, said = BAD[case]
    make(data["corpus"])
    out = data["tmp"] / "truth"
    code, stdout, err = run(
        "--corpus", str(data["corpus"]), "--queries", str(data["queries"]), "--k", "3", "--out", str(out)
    )
    assert code == Exit.INPUT and said in err and "Traceback" not in err, err
    assert not out.exists() and stdout == ""


def queries_file(data: dict, rows: list[dict]) -> Path:
    path = data["tmp"] / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD = {"query_id": "a", "embedding": [1.0] * D}
BAD_QUERIES = {
    "unknown column": (
        [GOOD, {**GOOD, "query_id": "b", "filter": "region = 'eu'"}],
        "bad.jsonl: line 2: filter \"region = 'eu'\" names the column 'region'",
    ),
    "bad filter": (
        [GOOD, {**GOOD, "query_id": "b", "filter": "lower(tenant) = 'a'"}],
        "bad.jsonl: line 2: filter",
    ),
    "duplicate id": ([GOOD, GOOD], "duplicate query_id 'a'"),
    "dimension": (
        [GOOD, {**GOOD, "query_id": "b", "embedding": [1.0] * 3}],
        "bad.jsonl: line 2: 'embedding' holds 3 numbers",
    ),
    "no embedding": ([{"query_id": "a"}], "missing required column 'embedding'"),
    "zero": ([{**GOOD, "embedding": [0.0] * D}], "line 1: 'embedding' is all zeros"),
    "null": ([GOOD, {"query_id": "b", "embedding": None}], "line 2: 'embedding' is empty (null)"),
}


@pytest.mark.parametrize("case", list(BAD_QUERIES))
def test_bad_queries_are_exit_2_naming_the_file_and_line(data: dict, case: str) -> None:
    rows, said = BAD_QUERIES[case]
    out = data["tmp"] / "truth"
    code, _, err = run(
        "--corpus",
        str(data["corpus"]),
        "--queries",
        str(queries_file(data, rows)),
        "--k",
        "3",
        "--out",
        str(out),
    )
    assert code == Exit.INPUT and said in err and "Traceback" not in err, err
    assert not out.exists()


def test_the_query_dimension_against_a_fixed_size_corpus(data: dict) -> None:
    q = queries_file(data, [{"query_id": "a", "embedding": [1.0] * 5}])
    code, _, err = run(
        "--corpus", str(data["corpus"]), "--queries", str(q), "--k", "3", "--out", str(data["tmp"] / "o")
    )
    assert (
        code == Exit.INPUT
        and "part-0.parquet: 'embedding' has 8 dimensions; the queries' embeddings have 5" in err
    )


def test_the_folder_is_never_written_inside_an_input(data: dict) -> None:
    inside = data["corpus"] / "truth"
    code, _, err = run(
        "--corpus", str(data["corpus"]), "--queries", str(data["queries"]), "--k", "3", "--out", str(inside)
    )
    assert code == Exit.INPUT and "an input folder; never written" in err
    assert sorted(p.name for p in data["corpus"].iterdir()) == [f"part-{i}.parquet" for i in range(3)]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--k", "0"], "--k: 0 is not positive"),
        (["--k", "3", "--metric", "dot"], "--metric: invalid choice"),
        (["--k", "3", "--tolerance", "1"], "--tolerance: 1 is not a number from 0"),
    ],
)
def test_a_wrong_command_line_is_exit_2(data: dict, flags: list[str], said: str) -> None:
    code, _, err = run(
        "--corpus",
        str(data["corpus"]),
        "--queries",
        str(data["queries"]),
        "--out",
        str(data["tmp"] / "o"),
        *flags,
    )
    assert code == Exit.INPUT and said in err


def test_parquet_queries_and_a_single_file_corpus(data: dict) -> None:
    qpath = data["tmp"] / "q.parquet"
    pq.write_table(pa.table({"query_id": [1, 2], "embedding": vectors(data["q"][:2])}), qpath)
    one = data["corpus"] / "part-0.parquet"
    out = data["tmp"] / "t"
    code, _, err = run(
        "--corpus", str(one), "--queries", str(qpath), "--k", "2", "--out", str(out), "--metric", "ip"
    )
    assert code == Exit.OK, err
    labels = output.read_truth(out).labels
    assert labels.column("query_id").to_pylist()[:1] == ["1"] and labels.num_rows >= 4


def test_the_api_refuses_what_the_command_line_refuses(data: dict) -> None:
    given = {"corpus": data["corpus"], "queries": data["queries"], "out": data["tmp"] / "o"}
    for bad, said in (
        ({"k": 0}, "positive whole numbers"),
        ({"k": [3, True]}, "positive whole numbers"),
        ({"k": 3, "metric": "dot"}, "'dot' is not one of cosine, ip, l2"),
        ({"k": 3, "tolerance": float("nan")}, "is not a number from 0"),
        ({"k": 3, "address": "ray://x"}, "goes with the ray engine"),
    ):
        with pytest.raises(triage.InputError, match=said):
            triage.truth(**given, **bad)
    with pytest.raises(TypeError, match="corpus must be a path"):
        triage.truth(corpus=3, queries=data["queries"], k=3, out=data["tmp"] / "o")
    run = triage.truth(**given, k=np.int64(2))
    assert run.provenance["k"] == [2] and run.out == data["tmp"] / "o"
