"""The files and frames other tools write (docs/data.md "Input shapes"): the bundled sample written as
ranx JSON in any indentation, TREC runs of 5 or 6 fields, long runs and labels in PyTerrier's,
ranx's and ir_measures' layouts (files, and pandas or polars DataFrames through the API), and a
BEIR folder read by split, each gives exactly the numbers of its Parquet form."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import triage
from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.errors import InputError
from triage.core.inputs.contract import LAYOUTS
from triage.core.inputs.shapes import Format, Role, detect, read_input

from conftest import ROOT

SAMPLE = bundled("sample_runs")
ARMS = (("a", "plain"), ("b", "headers"))
NAMES = ("plain", "headers")


def numbers(report: dict) -> dict:
    """What an evaluation found: each arm's metrics, the paired cells, the flips, the counts."""
    arms = {
        side: {k: v for k, v in arm.items() if k not in ("path", "meta", "name")}
        for side, arm in report["arms"].items()
    }
    keys = ("n_queries", "n_scored", "n_unlabelled", "missing", "paired", "k_cells", "flips", "ranks")
    return {"arms": arms, **{k: report[k] for k in keys}}


def sample_run(name: str) -> pa.Table:
    """A sample run cut to what every shape holds: query_id, retrieved, scores."""
    t = pq.read_table(SAMPLE / f"runs/{name}.parquet", columns=["query_id", "retrieved", "scores"])
    return t.replace_schema_metadata(None)  # no shape but Parquet holds metadata: k is given


def sample_labels() -> pa.Table:
    return pq.read_table(SAMPLE / "labels.parquet").replace_schema_metadata(None)


def long_run(name: str) -> pa.Table:
    """One row per (query, id), rank 1 first: query_id, chunk_id, score, rank."""
    t = sample_run(name)
    lengths = pc.list_value_length(t.column("retrieved")).to_numpy()
    return pa.table(
        {
            "query_id": t.column("query_id").take(np.repeat(np.arange(t.num_rows), lengths)),
            "chunk_id": pc.list_flatten(t.column("retrieved")),
            "score": pc.list_flatten(t.column("scores")),
            "rank": pa.array(np.concatenate([np.arange(1, n + 1) for n in lengths]), pa.int64()),
        }
    )


def opened(a: object, b: object, labels: object, **more: object) -> dict:
    return triage.open(a=a, b=b, labels=labels, k=5, names=NAMES, **more).report().to_json()


@pytest.fixture(scope="module")
def parquet_form(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("parquet")
    paths = []
    for _, name in ARMS:
        pq.write_table(sample_run(name), folder / f"{name}.parquet")
        paths.append(folder / f"{name}.parquet")
    pq.write_table(sample_labels(), folder / "labels.parquet")
    return numbers(opened(*paths, folder / "labels.parquet"))


def test_the_parquet_form_finds_the_planted_regressions(parquet_form: dict) -> None:
    assert parquet_form["paired"]["a_hit_b_miss"] == 6 and parquet_form["n_scored"] == 200
    assert len(parquet_form["flips"]) > 6


# -- ranx JSON in any indentation ---------------------------------------------------------------------


def ranx_json(table: pa.Table, value: str, path: Path, indent: int | str | None) -> Path:
    out: dict[str, dict[str, float]] = {}
    for r in table.to_pylist():
        out.setdefault(r["query_id"], {})[r["chunk_id"]] = r[value]
    with path.open("w", encoding="utf-8") as f:
        json.dump(out, f, indent=indent)
    return path


@pytest.mark.parametrize("indent", [None, 2, 4, "\t"], ids=["flat", "indent2", "indent4", "tabs"])
def test_ranx_json_in_any_indentation(tmp_path: Path, parquet_form: dict, indent: int | str | None) -> None:
    runs = [ranx_json(long_run(name), "score", tmp_path / f"{name}.json", indent) for _, name in ARMS]
    qrels = ranx_json(sample_labels(), "relevance", tmp_path / "qrels.json", indent)
    assert detect(runs[0], Role.RUN) is Format.RANX and detect(qrels, Role.LABELS) is Format.RANX
    assert numbers(opened(*runs, qrels)) == parquet_form


# -- TREC runs with and without the tag ----------------------------------------------------------------


@pytest.mark.parametrize("fields", [5, 6])
def test_trec_runs_of_five_or_six_fields(tmp_path: Path, parquet_form: dict, fields: int) -> None:
    runs = []
    for _, name in ARMS:
        t = long_run(name).to_pylist()
        tag = f" {name}" if fields == 6 else ""
        lines = (f"{r['query_id']} Q0 {r['chunk_id']} {r['rank']} {r['score']!r}{tag}\n" for r in t)
        runs.append(tmp_path / f"{name}.run")
        runs[-1].write_text("".join(lines), "utf-8")
    assert detect(runs[0], Role.RUN) is Format.TREC
    qrels = tmp_path / "labels.qrels"
    qrels.write_text(
        "".join(f"{r['query_id']} 0 {r['chunk_id']} {r['relevance']}\n" for r in sample_labels().to_pylist())
    )
    assert numbers(opened(*runs, qrels)) == parquet_form


def test_a_five_field_run_with_a_tagged_line_names_the_line(tmp_path: Path) -> None:
    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d1 1 2.0\nq1 Q0 d2 2 1.0 tag\n")
    with pytest.raises(InputError, match=r"line 2: expected 5 fields \(qid Q0 docid rank score\), found 6"):
        read_input(run, Role.RUN)


# -- other tools' layouts, as files and as DataFrames --------------------------------------------------

# layout: (run columns for query_id, chunk_id, score, rank (None: none written); label columns for
# query_id, chunk_id, relevance)
TOOLS = {
    "pyterrier": (("qid", "docno", "score", "rank"), ("qid", "docno", "label")),
    "ranx": (("q_id", "doc_id", "score", None), ("q_id", "doc_id", "score")),
    "ir_measures": (("query_id", "doc_id", "score", None), ("query_id", "doc_id", "relevance")),
}


def in_layout(tool: str) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The sample's runs and labels under `tool`'s column names; rows shuffled (a layout is read by
    its names, not its order). PyTerrier's frames also hold its internal `docid` and the query."""
    (q, d, s, r), (lq, ld, lg) = TOOLS[tool]
    runs = []
    for seed, (_, name) in enumerate(ARMS):
        t = long_run(name)
        cols = {q: t.column("query_id"), d: t.column("chunk_id"), s: t.column("score")}
        if r is not None:
            cols[r] = t.column("rank")
        if tool == "pyterrier":
            cols["docid"] = pa.array(np.arange(t.num_rows))  # its index's number: not the id
            cols["query"] = pc.binary_join_element_wise("text of ", t.column("query_id"), "")
        runs.append(pa.table(cols).take(np.random.default_rng(seed).permutation(t.num_rows)))
    labels = sample_labels().rename_columns([lq, ld, lg])
    return runs[0], runs[1], labels


def write(table: pa.Table, path: Path) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()), "utf-8")
    else:
        delimiter = "\t" if path.suffix == ".tsv" else ","
        pcsv.write_csv(table, path, pcsv.WriteOptions(delimiter=delimiter, quoting_style="none"))
    return path


@pytest.mark.parametrize("container", ["parquet", "csv", "tsv", "jsonl"])
@pytest.mark.parametrize("tool", list(TOOLS))
def test_layouts_as_files(tmp_path: Path, parquet_form: dict, tool: str, container: str) -> None:
    a, b, labels = in_layout(tool)
    files = [
        write(t, tmp_path / f"{n}.{container}") for t, n in ((a, "plain"), (b, "headers"), (labels, "qrels"))
    ]
    assert numbers(opened(*files)) == parquet_form


@pytest.mark.parametrize("library", ["pandas", "polars"])
@pytest.mark.parametrize("tool", list(TOOLS))
def test_layouts_as_dataframes(parquet_form: dict, tool: str, library: str) -> None:
    lib = pytest.importorskip(library, reason=f"{library} is not installed (pip install {library})")
    frames = [t.to_pandas() if library == "pandas" else lib.from_arrow(t) for t in in_layout(tool)]
    assert numbers(opened(*frames)) == parquet_form


def test_the_layouts_are_one_table_the_docs_list() -> None:
    page = (ROOT / "docs" / "data.md").read_text("utf-8")
    section = page.split("## Input shapes", 1)[1].split("\n## ", 1)[0]
    for layout in LAYOUTS.values():
        for theirs in layout:
            assert f"`{theirs}`" in section, theirs


# -- a BEIR folder given whole -------------------------------------------------------------------------

OTHER = 40  # dev queries beside the sample's 200 test queries


def beir_folder(folder: Path) -> Path:
    """The sample as a BEIR dataset: queries.jsonl (the 200 test queries and OTHER dev ones),
    corpus.jsonl, qrels/test.tsv (the sample's labels) and qrels/dev.tsv (the dev queries')."""
    (folder / "qrels").mkdir(parents=True)
    queries = pq.read_table(SAMPLE / "queries.parquet").to_pylist()
    records = [{"_id": r["query_id"], "text": r["text"], "metadata": {}} for r in queries]
    records += [{"_id": f"dev{i}", "text": f"a dev question {i}", "metadata": {}} for i in range(OTHER)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    chunks = pq.read_table(SAMPLE / "chunks.parquet").to_pylist()
    docs = [{"_id": c["chunk_id"], "title": c["header"], "text": c["text"], "metadata": {}} for c in chunks]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in docs), "utf-8")
    head = "query-id\tcorpus-id\tscore\n"
    test = "".join(
        f"{r['query_id']}\t{r['chunk_id']}\t{r['relevance']}\n" for r in sample_labels().to_pylist()
    )
    (folder / "qrels/test.tsv").write_text(head + test, "utf-8")
    dev = "".join(f"dev{i}\t{chunks[i]['chunk_id']}\t1\n" for i in range(OTHER))
    (folder / "qrels/dev.tsv").write_text(head + dev, "utf-8")
    return folder


def runs_over_every_split(folder: Path) -> list[Path]:
    """The sample's runs, plus a row for each dev query (a harness runs the whole queries file)."""
    chunks = pq.read_table(SAMPLE / "chunks.parquet", columns=["chunk_id"]).column("chunk_id").to_pylist()
    out = []
    for _, name in ARMS:
        dev = pa.table(
            {
                "query_id": [f"dev{i}" for i in range(OTHER)],
                "retrieved": [[chunks[i], chunks[i + 1]] for i in range(OTHER)],
                "scores": [[2.0, 1.0]] * OTHER,
            }
        )
        pq.write_table(
            pa.concat_tables([sample_run(name), dev.cast(sample_run(name).schema)]),
            folder / f"{name}.parquet",
        )
        out.append(folder / f"{name}.parquet")
    return out


def cli(*args: str) -> tuple[int, dict | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["report", *args, "--format", "json", "--k", "5"])
    return code, json.loads(out.getvalue()) if code == 0 else None, err.getvalue()


@pytest.fixture(scope="module")
def beir_parquet_form(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The Parquet form of what a BEIR folder holds: queries with their text only, the corpus's
    ids, titles and texts."""
    folder = tmp_path_factory.mktemp("beir-parquet")
    runs = []
    for _, name in ARMS:
        pq.write_table(sample_run(name), folder / f"{name}.parquet")
        runs.append(folder / f"{name}.parquet")
    pq.write_table(sample_labels(), folder / "labels.parquet")
    pq.write_table(
        pq.read_table(SAMPLE / "queries.parquet", columns=["query_id", "text"]), folder / "q.parquet"
    )
    pq.write_table(
        pq.read_table(SAMPLE / "chunks.parquet", columns=["chunk_id", "header", "text"]), folder / "c.parquet"
    )
    return numbers(
        opened(*runs, folder / "labels.parquet", queries=folder / "q.parquet", corpus=folder / "c.parquet")
    )


def test_a_beir_folder_scores_its_test_split_with_one_notice(tmp_path: Path, beir_parquet_form: dict) -> None:
    folder = beir_folder(tmp_path / "beir")
    a, b = runs_over_every_split(tmp_path)
    code, got, err = cli(str(a), str(b), "--labels", str(folder))  # default split: test
    assert code == 0 and got is not None
    assert numbers(got) == beir_parquet_form
    assert (
        err.count("\n") == 1 and "notice" in err and f"{OTHER} queries beyond the 200 of split 'test'" in err
    )
    problems = [c for c in got["checks"] if c["level"] != "ok" and "dev" in c["message"]]
    assert problems == []  # the dev queries are neither missing nor unlabelled: not evaluated
    assert cli(str(a), str(b), "--labels", str(folder), "--split", "test")[1] == got


def test_a_beir_folder_by_split_through_the_api_and_the_manifest(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path / "beir")
    a, b = runs_over_every_split(tmp_path)
    dev = triage.open(a=a, b=b, labels=folder, split="dev", k=5).report()
    assert dev.to_json()["n_queries"] == OTHER and dev.to_json()["n_scored"] == OTHER
    assert len(dev.notices) == 1 and "200 queries beyond the 40 of split 'dev'" in dev.notices[0]
    manifest = tmp_path / "triage.toml"
    lines = ["[labels]", f'path = "{folder}"', 'split = "dev"']
    lines += [f'[arms.{side}]\npath = "{tmp_path / name}.parquet"' for side, name in ARMS]
    manifest.write_text("\n".join(lines) + "\n", "utf-8")
    code, got, _ = cli(str(manifest))
    assert code == 0 and got is not None and numbers(got) == numbers(dev.to_json())


def test_a_missing_split_names_the_file_and_the_splits_present(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path / "beir")
    a, b = runs_over_every_split(tmp_path)
    code, _, err = cli(str(a), str(b), "--labels", str(folder), "--split", "train")
    assert code == 2
    assert str(folder / "qrels" / "train.tsv") in err and "splits present: dev, test" in err
    assert "Traceback" not in err
    code, _, err = cli(str(a), str(b), "--labels", str(SAMPLE / "labels.parquet"), "--split", "test")
    assert code == 2 and "BEIR folder" in err
