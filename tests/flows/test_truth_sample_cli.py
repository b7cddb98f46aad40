"""`triage sample LOG --corpus C --out Q` through files: the allocation matches its quotas (counted
here apart, with DuckDB's counts and a unit-at-a-time fill), the same inputs and seed give the same
bytes, tenants are taken in turn, what the log cannot fill is said, and a bad input names its file,
row and problem (exit 2)."""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from fractions import Fraction
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import triage
from triage.cli.main import main
from triage.core.errors import InputError
from triage.core.truth import predicate

BANDS = ("≥10%", "1–10%", "0.1–1%", "<0.1%", "0 eligible")
LOW_FIRST = ("<0.1%", "0.1–1%", "1–10%", "≥10%", "0 eligible")
DIM = 4


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse: a flag refused
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def write_corpus(path: Path, rows: int = 10_000, shards: int = 1) -> pa.Table:
    """Tenants of planned sizes: big 50%, mid 5%, small 0.5%, tiny 0.05% (5 rows), and forty of
    about 1.1% each; doc_type sow (about 70%) or memo; year 2000-2024."""
    rng = np.random.default_rng(11)
    planned = {"big": rows // 2, "mid": rows // 20, "small": rows // 200, "tiny": 5}
    tenant = [t for t, n in planned.items() for _ in range(n)]
    rest = rows - len(tenant)
    tenant += [f"t{i % 40:02d}" for i in range(rest)]
    tenant = list(np.array(tenant)[rng.permutation(rows)])
    table = pa.table(
        {
            "chunk_id": [f"c{i}" for i in range(rows)],
            "embedding": pa.FixedSizeListArray.from_arrays(
                pa.array(rng.standard_normal(rows * DIM).astype(np.float32)), DIM
            ),
            "tenant": tenant,
            "doc_type": rng.choice(["sow", "memo"], rows, p=[0.7, 0.3]),
            "year": rng.integers(2000, 2025, rows),
        }
    )
    if shards == 1:
        pq.write_table(table, path)
    else:
        path.mkdir()
        step = -(-rows // shards)
        for s in range(shards):
            pq.write_table(table.slice(s * step, step), path / f"part-{s}.parquet")
    return table


def log_rows() -> list[dict]:
    """A log: popular tenants asked often, the forty small ones once or twice; every band of the
    `tenant` shape, some of `doc_type & tenant`, an empty one, and unfiltered queries."""
    rng = np.random.default_rng(5)
    rows: list[dict] = []

    def add(filter_: str | None, tenant: str | None, n: int) -> None:
        for _ in range(n):
            i = len(rows)
            rows.append(
                {
                    "query_id": f"q{i}",
                    "text": f"question {i}",
                    "embedding": [round(float(x), 4) for x in rng.standard_normal(DIM)],
                    "filter": filter_,
                    "tenant": tenant,
                    "time": f"2026-11-{1 + i % 28:02d}T09:00:00Z",
                }
            )

    add(None, "big", 30)
    add(None, "mid", 6)
    add("tenant = 'big'", "big", 400)  # ≥10%
    add("tenant = 'mid'", "mid", 120)  # 1–10%
    for i in range(40):
        add(f"tenant = 't{i:02d}'", f"t{i:02d}", 1 + i % 2)  # 1–10%
    add("tenant = 'small'", "small", 3)  # 0.1–1%
    add("tenant = 'tiny'", "tiny", 2)  # <0.1%
    add("tenant = 'nobody'", "nobody", 1)  # 0 eligible
    add("tenant = 'big' AND doc_type = 'sow'", "big", 50)  # ≥10%
    add("doc_type = 'memo' AND tenant = 'mid'", "mid", 8)  # 1–10%
    add("tenant='small' and doc_type='memo'", "small", 4)  # 0.1–1% (about 0.15%)
    add("tenant = 'tiny' AND doc_type = 'memo'", "tiny", 3)  # <0.1% or 0
    add("year >= 2024 AND doc_type = 'sow'", None, 5)  # 1–10%
    return rows


def write_log(path: Path, rows: list[dict]) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)


@pytest.fixture
def case(tmp_path: Path) -> Path:
    write_corpus(tmp_path / "corpus.parquet")
    write_log(tmp_path / "log.jsonl", log_rows())
    (tmp_path / "out").mkdir()
    return tmp_path


# -- the independent count ---------------------------------------------------------------------------


def band_of(n: int, rows: int) -> str:
    if n == 0:
        return "0 eligible"
    s = Fraction(n, rows)
    return (
        "≥10%"
        if s >= Fraction(1, 10)
        else "1–10%"
        if s >= Fraction(1, 100)
        else ("0.1–1%" if s >= Fraction(1, 1000) else "<0.1%")
    )


@functools.cache
def _duck(corpus: Path) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection holding the corpus's metadata as the table `c`."""
    con = duckdb.connect()
    glob = corpus / "*.parquet" if corpus.is_dir() else corpus
    con.execute(f"CREATE TABLE c AS SELECT * EXCLUDE (embedding) FROM read_parquet('{glob}')")
    return con


@functools.cache
def eligible(corpus: Path, filter_: str | None) -> int:
    """DuckDB's count of the corpus rows the filter admits."""
    where = f" WHERE {filter_}" if filter_ else ""
    return _duck(corpus).execute(f"SELECT count(*) FROM c{where}").fetchone()[0]


def shape_of(filter_: str | None) -> str:
    if not filter_:
        return "unfiltered"
    return " & ".join(sorted({c.lower() for c in predicate.parse_filter(filter_).columns}))


def fill(quota: int, available: dict[str, int]) -> dict[str, int]:
    """A quota handed out a query at a time over the bands lowest first, 0 eligible at most its
    share (the equal split: quota // 5, one more while the remainder lasts, lowest first)."""
    share = {b: quota // 5 + (i < quota % 5) for i, b in enumerate(LOW_FIRST)}
    cap = dict(available) | {"0 eligible": min(available.get("0 eligible", 0), share["0 eligible"])}
    out = dict.fromkeys(LOW_FIRST, 0)
    while quota and any(out[b] < cap.get(b, 0) for b in LOW_FIRST):
        for b in LOW_FIRST:
            if quota and out[b] < cap.get(b, 0):
                out[b] += 1
                quota -= 1
    return out


def expected_allocation(corpus: Path, rows: list[dict], per_shape: int, control: int) -> dict:
    """(shape, band) → (requested, available, filled), from DuckDB's counts and `fill`."""
    total = eligible(corpus, None)
    counts = {f: eligible(corpus, f) for f in {r["filter"] for r in rows}}
    seen = set()
    available: Counter[tuple[str, str]] = Counter()
    for r in rows:
        same = (r["text"], r["filter"], r["tenant"])
        if same in seen:
            continue
        seen.add(same)
        shape = shape_of(r["filter"])
        band = "unfiltered" if shape == "unfiltered" else band_of(counts[r["filter"]], total)
        available[(shape, band)] += 1
    out = {}
    have = available[("unfiltered", "unfiltered")]
    out[("unfiltered", "unfiltered")] = (control, have, min(control, have))
    for shape in sorted({s for s, _ in available} - {"unfiltered"}):
        got = fill(per_shape, {b: available[(shape, b)] for b in BANDS})
        share = {b: per_shape // 5 + (i < per_shape % 5) for i, b in enumerate(LOW_FIRST)}
        for b in BANDS:
            out[(shape, b)] = (share[b], available[(shape, b)], got[b])
    return out


# -- the allocation ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_allocation_is_the_stated_quotas_exactly(case: Path, capsys: pytest.CaptureFixture) -> None:
    out = case / "out" / "q.parquet"
    rc, text, err = cli(
        capsys, "sample", case / "log.jsonl", "--corpus", case / "corpus.parquet", "--out", out,
        "--per-shape", 12, "--control", 20,
    )  # fmt: skip
    assert rc == 0, err
    report = json.loads((case / "out" / "q.allocation.json").read_text("utf-8"))
    expected = expected_allocation(case / "corpus.parquet", log_rows(), 12, 20)
    got = {(s["shape"], s["band"]): (s["requested"], s["available"], s["filled"]) for s in report["strata"]}
    assert got == expected
    # the file holds what the allocation says: counted from Q itself, each row's band recounted
    q = pq.read_table(out).to_pylist()
    assert Counter((r["shape"], r["band"]) for r in q) == Counter(
        {k: v[2] for k, v in expected.items() if v[2]}
    )
    for r in q:
        n = eligible(case / "corpus.parquet", r["filter"])
        assert r["n_eligible"] == n and r["selectivity"] == n / 10_000
        assert r["band"] == ("unfiltered" if r["filter"] is None else band_of(n, 10_000))
        assert r["shape"] == shape_of(r["filter"])
    assert report["queries"] == {"requested": 20 + 12 * 3, "filled": len(q)}  # three filtered shapes
    assert len({r["query_id"] for r in q}) == len(q)
    # the lowest bands are over-represented: the log's share of <0.1% is 5 of 700 queries
    low = sum(1 for r in q if r["band"] in ("<0.1%", "0.1–1%"))
    assert low / len(q) > 10 * (9 / 700)
    # printed: one row a shape, filled/requested in each band's column
    assert "tenant" in text and "12/12" in text and f"wrote {out}" in text


def test_q_is_the_logs_rows_with_their_strata(case: Path, capsys: pytest.CaptureFixture) -> None:
    out = case / "out" / "q.parquet"
    assert (
        cli(capsys, "sample", case / "log.jsonl", "--corpus", case / "corpus.parquet", "--out", out)[0] == 0
    )
    q = pq.read_table(out)
    log_columns = ["query_id", "text", "embedding", "filter", "tenant", "time"]
    assert q.column_names == [*log_columns, "shape", "band", "n_eligible", "selectivity"]
    assert (
        q.schema.field("n_eligible").type == pa.int64() and q.schema.field("selectivity").type == pa.float64()
    )
    by_id = {r["query_id"]: r for r in log_rows()}
    for row in q.to_pylist():
        given = by_id[row["query_id"]]
        assert {k: row[k] for k in given} == given  # every value as the log holds it
    meta = json.loads(pq.read_metadata(out).metadata[b"triage_sample"])
    assert meta["seed"] == 0 and meta["per_shape"] == 100 and meta["control"] == 100


def test_the_same_inputs_and_seed_give_the_same_bytes(case: Path, capsys: pytest.CaptureFixture) -> None:
    runs = []
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        (case / name).mkdir()
        argv = ["sample", case / "log.jsonl", "--corpus", case / "corpus.parquet", "--per-shape", 10]
        assert cli(capsys, *argv, "--out", case / name / "q.parquet", "--seed", seed)[0] == 0
        runs.append(
            ((case / name / "q.parquet").read_bytes(), (case / name / "q.allocation.json").read_bytes())
        )
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[2][0]
    # another seed draws other queries into the same allocation
    counts = [{(s["shape"], s["band"]): s["filled"] for s in json.loads(r[1])["strata"]} for r in runs]
    assert counts[0] == counts[2]


def test_parquet_and_json_lines_logs_give_the_same_queries(case: Path, capsys: pytest.CaptureFixture) -> None:
    write_log(case / "log.parquet", log_rows())
    tables = []
    for log in ("log.jsonl", "log.parquet"):
        out = case / "out" / f"{log}.q.parquet"
        assert cli(capsys, "sample", case / log, "--corpus", case / "corpus.parquet", "--out", out)[0] == 0
        tables.append(pq.read_table(out).select(["query_id", "shape", "band", "n_eligible"]))
    assert tables[0].equals(tables[1])


def test_a_sharded_corpus_counts_as_the_whole(case: Path, capsys: pytest.CaptureFixture) -> None:
    write_corpus(case / "shards", shards=3)
    outs = []
    for corpus in ("corpus.parquet", "shards"):
        out = case / "out" / f"{corpus}.parquet"
        assert cli(capsys, "sample", case / "log.jsonl", "--corpus", case / corpus, "--out", out)[0] == 0
        outs.append(pq.read_table(out).select(["query_id", "n_eligible", "selectivity", "band"]))
    assert outs[0].equals(outs[1])
    report = json.loads((case / "out" / "shards.allocation.json").read_text("utf-8"))
    assert [s["name"] for s in report["corpus"]["shards"]] == [
        "part-0.parquet",
        "part-1.parquet",
        "part-2.parquet",
    ]
    assert report["corpus"]["rows"] == 10_000


@pytest.mark.slow
def test_each_filter_is_evaluated_once_and_no_embedding_is_read(
    case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from triage.core.truth import counts

    write_corpus(case / "shards", shards=2)
    masks: Counter[str] = Counter()
    real_mask = predicate.Predicate.mask

    def counted_mask(self: predicate.Predicate, table: pa.Table, *a: object) -> np.ndarray:
        masks[self.key] += 1
        return real_mask(self, table, *a)

    read: list[tuple[str, list[str] | None]] = []
    real_read = counts.read_parquet  # the corpus's reader (the log's is sampling's)

    def recorded(path: Path, columns: list[str] | None = None):  # type: ignore[no-untyped-def]
        read.append((Path(path).name, columns))
        return real_read(path, columns)

    monkeypatch.setattr(predicate.Predicate, "mask", counted_mask)
    monkeypatch.setattr(counts, "read_parquet", recorded)
    triage.sample(case / "log.jsonl", case / "shards", case / "out" / "q.parquet", per_shape=5)
    filters = {predicate.parse_filter(r["filter"]).key for r in log_rows() if r["filter"]}
    assert masks == dict.fromkeys(filters, 1)  # the log repeats them, the shards split them: once each
    assert [name for name, _ in read] == ["part-0.parquet", "part-1.parquet"]
    assert all(cols == ["doc_type", "tenant", "year"] for _, cols in read)


def test_counting_over_distinct_values_is_counting_rows(tmp_path: Path) -> None:
    """Nulls, NaN, -0.0 and shards whose types differ (not merged: counted apart) count as DuckDB
    counts them row by row."""
    (tmp_path / "corpus").mkdir()
    rng = np.random.default_rng(3)
    for s, year_type in enumerate((pa.int64(), pa.int32(), pa.int64())):
        n = 400
        score = rng.choice([0.0, -0.0, 0.5, 1.5, np.nan], n).tolist()
        for i in rng.choice(n, 20, replace=False):
            score[i] = None
        tenant = rng.choice(["a", "b", "c"], n).astype(object)
        tenant[rng.choice(n, 30, replace=False)] = None
        table = pa.table(
            {
                "chunk_id": [f"c{s}-{i}" for i in range(n)],
                "embedding": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(n * DIM, np.float32)), DIM),
                "tenant": pa.array(tenant.tolist(), pa.string()),
                "year": pa.array(rng.integers(2000, 2010, n), year_type),
                "score": pa.array(score, pa.float64()),
                "flag": pa.array(rng.choice([True, False, None], n).tolist(), pa.bool_()),
            }
        )
        pq.write_table(table, tmp_path / "corpus" / f"s{s}.parquet")
    filters = [
        "tenant = 'a'", "tenant <> 'a'", "tenant IS NULL", "NOT tenant IN ('a', 'b')",
        "score = 0", "score > 0.25", "score <= 0.5 OR tenant = 'c'", "score IS NULL", "NOT score < 1",
        "year BETWEEN 2003 AND 2005", "year >= 2008 AND tenant IN ('b', 'c')", "flag", "NOT flag",
        "flag IS NOT TRUE", "tenant LIKE 'a%' OR year = 2001", "year = 2001 AND score = 1.5",
    ]  # fmt: skip
    rows = [{"text": f, "filter": f, "tenant": "x"} for f in filters]
    write_log(tmp_path / "log.jsonl", rows)
    triage.sample(tmp_path / "log.jsonl", tmp_path / "corpus", tmp_path / "q.parquet", per_shape=1000)
    got = {r["filter"]: r["n_eligible"] for r in pq.read_table(tmp_path / "q.parquet").to_pylist()}
    con = duckdb.connect()
    glob = tmp_path / "corpus" / "*.parquet"
    want = {
        f: con.execute(f"SELECT count(*) FROM read_parquet('{glob}') WHERE {f}").fetchone()[0]
        for f in filters
    }
    assert got == want


# -- tenants -----------------------------------------------------------------------------------------


def test_tenants_are_taken_in_turn_not_by_popularity(case: Path, capsys: pytest.CaptureFixture) -> None:
    # tenant, 1–10%: mid (120 of the log's 180 queries) and forty tenants with one or two each
    forty = {f"t{i:02d}" for i in range(40)}
    have = Counter(
        r["tenant"] for r in log_rows() if r["filter"] == f"tenant = '{r['tenant']}'" and r["tenant"] in forty
    )
    have["mid"] = 120
    for per_shape, filled in ((60, 27), (200, 97)):  # 27: (60 - 3 - 2 - 1) / 2, as the rule spreads it
        out = case / "out" / f"{per_shape}.parquet"
        argv = ("sample", case / "log.jsonl", "--corpus", case / "corpus.parquet", "--out", out)
        assert cli(capsys, *argv, "--per-shape", per_shape)[0] == 0
        q = pq.read_table(out).to_pylist()
        taken = Counter(r["tenant"] for r in q if r["shape"] == "tenant" and r["band"] == "1–10%")
        assert sum(taken.values()) == filled
        top = max(taken.values())
        assert all(taken[t] >= top - 1 for t in have if have[t] > taken[t])
        if per_shape == 60:  # 27 queries of 41 tenants: 27 tenants, one each, mid's share of the log aside
            assert len(taken) == 27 and top == 1
    # 97: every query of the forty (60), then mid's turns alone
    assert taken == have | {"mid": 97 - 60}


def test_fewer_queries_than_tenants_draws_distinct_tenants(case: Path, capsys: pytest.CaptureFixture) -> None:
    out = case / "out" / "q.parquet"
    assert cli(capsys, "sample", case / "log.jsonl", "--corpus", case / "corpus.parquet", "--out", out,
               "--per-shape", 40)[0] == 0  # fmt: skip
    q = pq.read_table(out).to_pylist()
    taken = [r["tenant"] for r in q if r["shape"] == "tenant" and r["band"] == "1–10%"]
    assert len(taken) == len(set(taken)) > 1


# -- what cannot be filled ---------------------------------------------------------------------------


def test_strata_the_log_cannot_fill_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_corpus(tmp_path / "corpus.parquet")
    rows = [r for r in log_rows() if r["filter"] is not None and "doc_type" not in r["filter"]]
    write_log(tmp_path / "log.jsonl", rows)
    out = tmp_path / "q.parquet"
    rc, text, _ = cli(capsys, "sample", tmp_path / "log.jsonl", "--corpus", tmp_path / "corpus.parquet",
                      "--out", out, "--per-shape", 20, "--control", 5)  # fmt: skip
    assert rc == 0
    report = json.loads((tmp_path / "q.allocation.json").read_text("utf-8"))
    short = {
        (s["shape"], s["band"]): (s["requested"], s["available"], s["filled"]) for s in report["unfilled"]
    }
    # tenant: 0.1–1% has 3 queries, <0.1% 2 and 0 eligible 1 (of 4 each); no unfiltered query at all
    assert short == {
        ("unfiltered", "unfiltered"): (5, 0, 0),
        ("tenant", "0.1–1%"): (4, 3, 3),
        ("tenant", "<0.1%"): (4, 2, 2),
        ("tenant", "0 eligible"): (4, 1, 1),
    }
    shapes = {s["shape"]: (s["requested"], s["filled"]) for s in report["shapes"]}
    assert shapes == {"unfiltered": (5, 0), "tenant": (20, 20)}  # ≥10% and 1–10% took the 6 short
    assert "not filled" in text
    assert "unfiltered (control): 0 of 5 (none in the log)" in text
    assert "tenant, <0.1%: 2 of 4 (2 in the log)" in text


def test_a_query_the_log_repeats_is_one_candidate(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_corpus(tmp_path / "corpus.parquet")
    base = {"text": "how many", "filter": "tenant = 'big'", "tenant": "big", "embedding": [1.0, 0, 0, 0]}
    rows = [base | {"query_id": f"q{i}"} for i in range(50)]
    rows[7] = rows[7] | {"query_id": "q7", "text": "another"}
    write_log(tmp_path / "log.jsonl", [{k: v for k, v in r.items() if k != "query_id"} for r in rows])
    out = tmp_path / "q.parquet"
    assert (
        cli(capsys, "sample", tmp_path / "log.jsonl", "--corpus", tmp_path / "corpus.parquet", "--out", out)[
            0
        ]
        == 0
    )
    q = pq.read_table(out)
    # two distinct queries; their ids are their lines in the log
    assert sorted(q.column("query_id").to_pylist()) == ["line-1", "line-8"]
    report = json.loads((tmp_path / "q.allocation.json").read_text("utf-8"))
    assert (report["log"]["rows"], report["log"]["distinct"], report["log"]["repeats"]) == (50, 2, 48)


def test_a_log_without_text_is_known_by_its_vectors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_corpus(tmp_path / "corpus.parquet")
    rows = [{"embedding": [float(i % 3), 1.0, 0.0, 0.0], "filter": None} for i in range(9)]
    write_log(tmp_path / "log.parquet", rows)
    out = tmp_path / "q.parquet"
    assert (
        cli(
            capsys, "sample", tmp_path / "log.parquet", "--corpus", tmp_path / "corpus.parquet", "--out", out
        )[0]
        == 0
    )
    q = pq.read_table(out)
    assert q.column_names == ["query_id", "embedding", "filter", "shape", "band", "n_eligible", "selectivity"]
    assert sorted(q.column("query_id").to_pylist()) == ["row-1", "row-2", "row-3"]
    # a log of vectors alone
    pq.write_table(pa.table({"embedding": [r["embedding"] for r in rows]}), tmp_path / "vectors.parquet")
    assert triage.sample(tmp_path / "vectors.parquet", tmp_path / "corpus.parquet", tmp_path / "v.parquet")
    assert sorted(pq.read_table(tmp_path / "v.parquet").column("query_id").to_pylist()) == [
        "row-1",
        "row-2",
        "row-3",
    ]


def test_a_log_column_named_like_an_added_one_is_kept_under_another_name(
    case: Path, capsys: pytest.CaptureFixture
) -> None:
    rows = [r | {"n_eligible": 123, "band": "router"} for r in log_rows()]
    write_log(case / "log.parquet", rows)
    out = case / "out" / "q.parquet"
    assert (
        cli(capsys, "sample", case / "log.parquet", "--corpus", case / "corpus.parquet", "--out", out)[0] == 0
    )
    q = pq.read_table(out)
    assert set(q.column("log_n_eligible").to_pylist()) == {123} and set(q.column("log_band").to_pylist()) == {
        "router"
    }
    report = json.loads((case / "out" / "q.allocation.json").read_text("utf-8"))
    assert report["log"]["renamed"] == {"n_eligible": "log_n_eligible", "band": "log_band"}


def test_the_api_returns_the_allocation_it_wrote(case: Path) -> None:
    out = case / "out" / "q.parquet"
    got = triage.sample(case / "log.jsonl", case / "corpus.parquet", out, per_shape=5, control=0, seed=3)
    assert got == json.loads((case / "out" / "q.allocation.json").read_text("utf-8"))
    control = got["strata"][0]
    assert (control["shape"], control["requested"], control["filled"], control["available"]) == (
        "unfiltered",
        0,
        0,
        36,
    )
    with pytest.raises(TypeError, match="per_shape"):
        triage.sample(case / "log.jsonl", case / "corpus.parquet", out, per_shape=True)
    with pytest.raises(ValueError, match="control"):
        triage.sample(case / "log.jsonl", case / "corpus.parquet", out, control=-1)


def test_q_feeds_triage_truth(case: Path) -> None:
    """Q is a queries file `triage truth` reads as it is (once the truth's reader is in the package)."""
    queries = pytest.importorskip("triage.core.truth.queries")
    out = case / "out" / "q.parquet"
    triage.sample(case / "log.jsonl", case / "corpus.parquet", out, per_shape=5)
    read = queries.read_queries(out, cosine=True)
    assert read.ids == pq.read_table(out).column("query_id").to_pylist()


# -- bad inputs --------------------------------------------------------------------------------------


def refused(capsys: pytest.CaptureFixture, *argv: object) -> str:
    rc, out, err = cli(capsys, "sample", *argv)
    assert rc == 2 and "Traceback" not in err, err
    return err


def with_row(case: Path, at: int, **changed: object) -> Path:
    rows = log_rows()
    rows[at] = rows[at] | changed
    write_log(case / "bad.jsonl", rows)
    return case / "bad.jsonl"


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        ({"filter": "tenantt = 'big'"}, "unknown column 'tenantt'"),
        ({"filter": "lower(tenant) = 'big'"}, "lower"),
        ({"filter": "year = 'soon'"}, "year"),
        ({"filter": "tenant = "}, "not a SQL condition"),
    ],
)
def test_a_filter_that_does_not_fit_names_its_line(
    case: Path, capsys: pytest.CaptureFixture, changed: dict, said: str
) -> None:
    log = with_row(case, 40, **changed)
    err = refused(capsys, log, "--corpus", case / "corpus.parquet", "--out", case / "out" / "q.parquet")
    assert f"{log}: line 41: " in err and said in err
    assert not os.listdir(case / "out")


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        ({"query_id": None}, "has no query_id"),
        ({"query_id": "q3"}, "line 4: gives query_id 'q3' to another query than line 1"),
        ({"embedding": None}, "has no vector"),
        ({"embedding": [1.0, float("nan"), 0.0, 0.0]}, "NaN"),
        ({"embedding": [1.0, 2.0]}, "line 2: has a vector of 4 values, line 1 one of 2"),
    ],
)
def test_a_bad_row_is_named(case: Path, capsys: pytest.CaptureFixture, changed: dict, said: str) -> None:
    # line 31 is the first `tenant = 'big'` query: control 0 and all of one band asked, it is taken
    log = with_row(case, 0, **changed)
    err = refused(capsys, log, "--corpus", case / "corpus.parquet", "--out", case / "out" / "q.parquet",
                  "--control", 300)  # fmt: skip
    assert f"{log}: line " in err and said in err, err


def test_a_textless_logs_every_vector_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_corpus(tmp_path / "corpus.parquet")
    rows = [{"embedding": [1.0, 0.0, 0.0, float(i)], "filter": None} for i in range(30)]
    rows[17]["embedding"] = [1.0, 0.0, 0.0]
    write_log(tmp_path / "log.jsonl", rows)
    err = refused(capsys, tmp_path / "log.jsonl", "--corpus", tmp_path / "corpus.parquet", "--out",
                  tmp_path / "q.parquet", "--control", 1)  # fmt: skip
    assert "line 18: has a vector of 3 values, line 1 one of 4" in err


def test_bad_files_and_flags_are_named(case: Path, capsys: pytest.CaptureFixture) -> None:
    log, corpus, out = case / "log.jsonl", case / "corpus.parquet", case / "out" / "q.parquet"
    (case / "notext.jsonl").write_text('{"filter": null, "tenant": "a"}\n', "utf-8")
    assert "neither a `text` nor an `embedding`" in refused(
        capsys, case / "notext.jsonl", "--corpus", corpus, "--out", out
    )
    (case / "empty.jsonl").write_text("", "utf-8")
    assert "empty" in refused(capsys, case / "empty.jsonl", "--corpus", corpus, "--out", out)
    (case / "intfilter.jsonl").write_text('{"text": "a", "filter": 3}\n', "utf-8")
    assert "column 'filter'" in refused(capsys, case / "intfilter.jsonl", "--corpus", corpus, "--out", out)
    assert "no column 'customer'" in refused(
        capsys, log, "--corpus", corpus, "--out", out, "--tenant-column", "customer"
    )
    assert "does not exist" in refused(capsys, case / "nolog.jsonl", "--corpus", corpus, "--out", out)
    (case / "floats.jsonl").write_text('{"text": "a", "tenant": 1.5}\n', "utf-8")
    err = refused(capsys, case / "floats.jsonl", "--corpus", corpus, "--out", out)
    assert "column 'tenant': holds double; a tenant is text or a whole number" in err
    # the corpus
    (case / "nothing").mkdir()
    assert "no Parquet files" in refused(capsys, log, "--corpus", case / "nothing", "--out", out)
    pq.write_table(pa.table({"chunk_id": ["c1"], "tenant": ["big"]}), case / "novec.parquet")
    assert "missing required column 'embedding'" in refused(
        capsys, log, "--corpus", case / "novec.parquet", "--out", out
    )
    (case / "text.parquet").write_text("chunk_id,tenant\n", "utf-8")
    assert "not a Parquet file" in refused(capsys, log, "--corpus", case / "text.parquet", "--out", out)
    # the flags
    assert "--per-shape" in refused(capsys, log, "--corpus", corpus, "--out", out, "--per-shape", 0)
    assert "--seed" in refused(capsys, log, "--corpus", corpus, "--out", out, "--seed", "-1")
    assert not os.listdir(case / "out")


def test_q_is_never_written_onto_an_input_or_into_the_corpus(
    case: Path, capsys: pytest.CaptureFixture
) -> None:
    log, corpus = case / "log.jsonl", case / "corpus.parquet"
    write_corpus(case / "shards", shards=2)
    before = {p: p.read_bytes() for p in (corpus, *sorted((case / "shards").iterdir()))}
    assert "name it .parquet" in refused(capsys, log, "--corpus", corpus, "--out", case / "out" / "q.jsonl")
    assert "an input" in refused(capsys, log, "--corpus", corpus, "--out", corpus, "--force")
    assert "inside" in refused(
        capsys, log, "--corpus", case / "shards", "--out", case / "shards" / "q.parquet"
    )
    (case / "afile").write_text("not a folder", "utf-8")
    assert "is not a folder" in refused(
        capsys, log, "--corpus", corpus, "--out", case / "afile" / "q.parquet"
    )
    # a folder not there yet is made, as `triage truth --out` makes its own (the README's first step)
    made = case / "nowhere" / "deeper" / "q.parquet"
    rc, _, err = cli(capsys, "sample", log, "--corpus", corpus, "--out", made)
    assert rc == 0 and made.is_file(), err
    os.symlink(corpus, case / "out" / "link.parquet")
    assert "symbolic link" in refused(
        capsys, log, "--corpus", corpus, "--out", case / "out" / "link.parquet", "--force"
    )
    # an existing Q, or its allocation's name, only with --force
    (case / "out" / "q.allocation.json").write_text("{}", "utf-8")
    assert "exists" in refused(capsys, log, "--corpus", corpus, "--out", case / "out" / "q.parquet")
    assert (
        cli(capsys, "sample", log, "--corpus", corpus, "--out", case / "out" / "q.parquet", "--force")[0] == 0
    )
    assert {p: p.read_bytes() for p in before} == before


def test_an_input_error_from_the_api_names_the_file(case: Path) -> None:
    with pytest.raises(InputError, match="unknown column"):
        triage.sample(
            with_row(case, 3, filter="nope = 1"), case / "corpus.parquet", case / "out" / "q.parquet"
        )
