"""Input shapes (docs/data.md "Input shapes"): the bundled sample written in each shape gives the report
JSON of its Parquet form, but for the fields that name paths and hashes; an unknown or ambiguous
file is refused with one error that names it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.errors import InputError
from triage.core.inputs.frozen import sha256_file
from triage.core.inputs.long_runs import group_long
from triage.core.inputs.readers import Parsed
from triage.core.inputs.shapes import SHAPES, Format, Role, detect, read_input

SAMPLE = bundled("sample_runs")
LABEL_META = {"name": "sample gold v1", "created_at": "2026-10-20T11:30:00Z"}  # the sample's
RUNS = {"a": ("plain", SAMPLE / "runs/plain.parquet"), "b": ("headers", SAMPLE / "runs/headers.parquet")}


def report(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def comparable(d: dict) -> dict:
    """The report without what names a file: paths, the labels' sha256 (and its short form)."""
    d = json.loads(json.dumps(d))
    for key in ("path", "frozen_sha256", "state"):
        d["labels"].pop(key)
    for side in "ab":
        d["arms"][side].pop("path")
        d["arms"][side]["meta"].pop("labels_sha256", None)
    return d


def meta_of(path: Path) -> dict[str, str]:
    raw = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items()}


def sidecar(path: Path, meta: dict[str, str]) -> None:
    """`<file>.meta.json`; for a glob, `<folder>.meta.json` beside the folder of its matches."""
    path = path.parent if "*" in path.name else path
    (path.parent / (path.name + ".meta.json")).write_text(json.dumps(meta), "utf-8")


def parquet(table: pa.Table, path: Path, meta: dict[str, str] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if meta:
        table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    pq.write_table(table, path)
    return path


def evaluation(
    folder: Path,
    runs: dict[str, Path],
    labels: Path,
    run_meta: dict[str, dict[str, str]],
    corpus: Path = SAMPLE / "chunks.parquet",
    formats: dict[str, str] | None = None,
) -> Path:
    """A manifest over `runs` and `labels`; the runs' metadata (with `labels_sha256` of `labels`
    when it is one file) in sidecars, the labels' own metadata in a sidecar too."""
    formats = formats or {}
    for side, path in runs.items():
        meta = dict(run_meta[side])
        meta["labels_sha256"] = sha256_file(labels)  # of a folder: its files' bytes in path order
        sidecar(path, meta)
    if labels.suffix != ".parquet" or not labels.is_file():
        sidecar(labels, meta_of(SAMPLE / "labels.parquet"))

    def fmt(section: str) -> list[str]:
        return [f'format = "{formats[section]}"'] if section in formats else []

    lines = ["[labels]", f'path = "{labels}"', *fmt("labels")]
    lines += ["[corpus]", f'path = "{corpus}"', *fmt("corpus")]
    lines += ["[queries]", f'path = "{SAMPLE / "queries.parquet"}"']
    lines += ["[holdout]", 'rule = "hash"', "fraction = 0.2"]  # the sample's tuning split
    for side, path in runs.items():
        lines += [f"[arms.{side}]", f'name = "{RUNS[side][0]}"', f'path = "{path}"', *fmt(side)]
    out = folder / "triage.toml"
    out.write_text("\n".join(lines) + "\n", "utf-8")
    return out


def sample_meta() -> dict[str, dict[str, str]]:
    return {side: meta_of(path) for side, (_, path) in RUNS.items()}


def long_table(path: Path, seed: int) -> pa.Table:
    """A run one row per (query, id), rows shuffled: query_id, chunk_id, rank, score and the
    per-query columns repeated on each of the query's rows."""
    t = pq.read_table(path)
    lengths = pc.list_value_length(t.column("retrieved")).to_numpy()
    parent = np.repeat(np.arange(t.num_rows), lengths)
    rank = np.concatenate([np.arange(1, n + 1) for n in lengths])
    cols = {
        "query_id": t.column("query_id").take(parent),
        "chunk_id": pc.list_flatten(t.column("retrieved")),
        "rank": pa.array(rank, pa.int64()),
        "score": pc.list_flatten(t.column("scores")),
    }
    for name in ("plan", "n_eligible", "n_returned", "latency_ms", "answer_correct"):
        cols[name] = t.column(name).take(parent)
    order = np.random.default_rng(seed).permutation(len(parent))
    return pa.table(cols).take(order)


def reduced(folder: Path) -> dict[str, Path]:
    """The sample's runs cut to query_id, retrieved, scores: what a TREC or ranx run can hold."""
    cols = ["query_id", "retrieved", "scores"]
    return {
        side: parquet(pq.read_table(path, columns=cols), folder / f"{name}.parquet")
        for side, (name, path) in RUNS.items()
    }


def labels_table() -> pa.Table:
    return pq.read_table(SAMPLE / "labels.parquet").replace_schema_metadata(None)


def write_tsv(table: pa.Table, path: Path, names: list[str]) -> Path:
    """Tab-separated with a header row, no quoting (as BEIR writes qrels/test.tsv)."""
    rows = zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True)
    body = "".join("\t".join("" if v is None else str(v) for v in r) + "\n" for r in rows)
    path.write_text("\t".join(names) + "\n" + body, "utf-8")
    return path


def write_ranx(table: pa.Table, path: Path, value: str) -> Path:
    """`{query_id: {doc_id: value}}`, rows of one query together."""
    out: dict[str, dict[str, float]] = {}
    for r in table.to_pylist():
        out.setdefault(r["query_id"], {})[r["chunk_id"]] = r[value]
    path.write_text(json.dumps(out), "utf-8")
    return path


def ranx_run(path: Path) -> pa.Table:
    t = pq.read_table(path)
    lengths = pc.list_value_length(t.column("retrieved")).to_numpy()
    return pa.table(
        {
            "query_id": t.column("query_id").take(np.repeat(np.arange(t.num_rows), lengths)),
            "chunk_id": pc.list_flatten(t.column("retrieved")),
            "score": pc.list_flatten(t.column("scores")),
        }
    )


# -- each shape against its Parquet form -------------------------------------------------------------


@pytest.fixture(scope="module")
def parquet_form(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The sample as Parquet, written the way each test writes its shape (same sidecars)."""
    folder = tmp_path_factory.mktemp("parquet")
    runs = {side: parquet(pq.read_table(p), folder / f"{n}.parquet") for side, (n, p) in RUNS.items()}
    labels = parquet(labels_table(), folder / "labels.parquet", meta_of(SAMPLE / "labels.parquet"))
    return json.loads(json.dumps(_report(evaluation(folder, runs, labels, sample_meta()))))


def _report(manifest: Path) -> dict:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["report", str(manifest), "--format", "json"]) == 0
    return json.loads(buf.getvalue())


@pytest.mark.slow
def test_the_parquet_form_is_the_sample(parquet_form: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert comparable(parquet_form) == comparable(report(capsys, str(SAMPLE)))
    assert parquet_form["paired"]["a_hit_b_miss"] == 6  # the six planted regressions


def test_beir_qrels_tsv_with_its_header(tmp_path: Path, parquet_form: dict) -> None:
    labels = write_tsv(labels_table(), tmp_path / "test.tsv", ["query-id", "corpus-id", "score"])
    assert detect(labels, Role.LABELS) is Format.TSV
    runs = {side: parquet(pq.read_table(p), tmp_path / f"{n}.parquet") for side, (n, p) in RUNS.items()}
    d = _report(evaluation(tmp_path, runs, labels, sample_meta()))
    assert comparable(d) == comparable(parquet_form)


@pytest.mark.slow
@pytest.mark.parametrize("column", ["doc_id", "docid", "corpus-id"])
def test_labels_with_another_tools_doc_column(tmp_path: Path, parquet_form: dict, column: str) -> None:
    t = labels_table()
    labels = parquet(t.rename_columns(["query_id", column, "relevance"]), tmp_path / "labels.parquet")
    sidecar(labels, meta_of(SAMPLE / "labels.parquet"))
    runs = {side: parquet(pq.read_table(p), tmp_path / f"{n}.parquet") for side, (n, p) in RUNS.items()}
    d = _report(evaluation(tmp_path, runs, labels, sample_meta()))
    assert comparable(d) == comparable(parquet_form)


@pytest.mark.slow
def test_ranx_run_and_qrels_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = sample_meta()
    base = tmp_path / "parquet"
    labels_pq = parquet(labels_table(), base / "labels.parquet", meta_of(SAMPLE / "labels.parquet"))
    want = _report(evaluation(base, reduced(base), labels_pq, meta))
    capsys.readouterr()
    shaped = tmp_path / "ranx"
    shaped.mkdir()
    runs = {side: write_ranx(ranx_run(p), shaped / f"{n}.json", "score") for side, (n, p) in RUNS.items()}
    labels = write_ranx(labels_table(), shaped / "qrels.json", "relevance")
    assert detect(runs["a"], Role.RUN) is Format.RANX and detect(labels, Role.LABELS) is Format.RANX
    got = _report(evaluation(shaped, runs, labels, meta))
    assert comparable(got) == comparable(want)
    assert got["n_scored"] == 200 and got["paired"]["a_hit_b_miss"] == 6


@pytest.mark.slow
@pytest.mark.parametrize("container", ["parquet", "csv", "tsv", "jsonl", "shards"])
def test_long_runs_in_any_row_order(tmp_path: Path, parquet_form: dict, container: str) -> None:
    runs = {}
    for seed, (side, (name, path)) in enumerate(RUNS.items()):
        t = long_table(path, seed)
        if container == "parquet":
            runs[side] = parquet(t, tmp_path / f"{name}.parquet")
        elif container == "csv":
            runs[side] = tmp_path / f"{name}.csv"
            pcsv.write_csv(t, runs[side])
        elif container == "tsv":  # BEIR-style names, ordered by score alone (no rank column)
            t = t.drop_columns(["rank"]).rename_columns(["query-id", "corpus-id", *t.column_names[3:]])
            runs[side] = write_tsv(t, tmp_path / f"{name}.tsv", t.column_names)
        elif container == "jsonl":
            runs[side] = tmp_path / f"{name}.jsonl"
            runs[side].write_text("".join(json.dumps(r) + "\n" for r in t.to_pylist()), "utf-8")
        else:
            runs[side] = tmp_path / name
            for i, part in enumerate(np.array_split(np.arange(t.num_rows), 3)):
                parquet(t.take(part), runs[side] / f"part-{i}.parquet")
    labels = parquet(labels_table(), tmp_path / "labels.parquet", meta_of(SAMPLE / "labels.parquet"))
    d = _report(evaluation(tmp_path, runs, labels, sample_meta()))
    assert comparable(d) == comparable(parquet_form)


@pytest.mark.slow
@pytest.mark.parametrize("glob", [False, True])
def test_folders_of_parquet_shards_for_runs_labels_and_corpus(
    tmp_path: Path, parquet_form: dict, glob: bool
) -> None:
    def shards(table: pa.Table, folder: Path, n: int) -> Path:
        for i, part in enumerate(np.array_split(np.arange(table.num_rows), n)):
            parquet(table.take(part), folder / f"part-{i:02d}.parquet")
        (folder / "_SUCCESS").write_text("")  # what Spark leaves: skipped
        return folder / "part-*.parquet" if glob else folder

    runs = {side: shards(pq.read_table(p), tmp_path / n, 4) for side, (n, p) in RUNS.items()}
    labels = shards(labels_table(), tmp_path / "labels", 3)
    corpus = shards(pq.read_table(SAMPLE / "chunks.parquet"), tmp_path / "chunks", 5)
    manifest = evaluation(tmp_path, runs, labels, sample_meta(), corpus=corpus)
    assert comparable(_report(manifest)) == comparable(parquet_form)
    from triage.core.inputs.manifest import from_manifest

    never_written = set(from_manifest(manifest).inputs())  # each shard, and the folder's sidecar
    assert {tmp_path / "labels" / f"part-{i:02d}.parquet" for i in range(3)} <= never_written
    assert tmp_path / "labels.meta.json" in never_written
    assert tmp_path / "labels" / "_SUCCESS" not in never_written


def test_format_named_in_the_manifest_wins(tmp_path: Path, parquet_form: dict) -> None:
    """A BEIR qrels saved as `.txt` and a long run saved as `.dat`: named, they read as given."""
    labels = write_tsv(labels_table(), tmp_path / "qrels.txt", ["query-id", "corpus-id", "score"])
    runs = {}
    for seed, (side, (name, path)) in enumerate(RUNS.items()):
        runs[side] = tmp_path / f"{name}.dat"
        pq.write_table(long_table(path, seed), runs[side])
    manifest = evaluation(
        tmp_path, runs, labels, sample_meta(), formats={"labels": "tsv", "a": "parquet", "b": "parquet"}
    )
    assert comparable(_report(manifest)) == comparable(parquet_form)
    (tmp_path / "triage.toml").write_text(manifest.read_text().replace('"tsv"', '"excel"'))
    with pytest.raises(InputError, match=r"\[labels\].*format 'excel' is not one of parquet, "):
        from triage.core.inputs.manifest import from_manifest

        from_manifest(tmp_path / "triage.toml")


# -- ordering within a query -------------------------------------------------------------------------


def _grouped(rows: list[dict]) -> dict[str, list[str]]:
    t = pa.Table.from_pylist(rows)
    out = group_long(Parsed(Path("run.parquet"), t)).table
    return dict(zip(out.column("query_id").to_pylist(), out.column("retrieved").to_pylist(), strict=True))


def test_long_runs_order_ties_as_trec_eval() -> None:
    """Scores descending, equal scores by doc id descending: checked against a plain sort over
    random rows with many ties."""
    rng = random.Random(7)
    rows = [
        {"query_id": f"q{rng.randrange(5)}", "chunk_id": f"d{i:03d}", "score": float(rng.randrange(4))}
        for i in range(300)
    ]
    rng.shuffle(rows)
    want: dict[str, list[tuple[float, str]]] = {}
    for r in rows:
        want.setdefault(r["query_id"], []).append((r["score"], r["chunk_id"]))
    got = _grouped(rows)
    assert list(got) == list(want)  # queries in the order of their first row
    for q, pairs in want.items():
        assert got[q] == [doc for _, doc in sorted(pairs, reverse=True)]


def test_rank_orders_and_ties_in_rank_fall_to_score_then_doc_id() -> None:
    rows = [
        {"query_id": "q1", "chunk_id": "a", "rank": 2, "score": 0.1},
        {"query_id": "q1", "chunk_id": "b", "rank": 1, "score": 0.2},
        {"query_id": "q1", "chunk_id": "c", "rank": 1, "score": 0.9},
        {"query_id": "q1", "chunk_id": "d", "rank": 1, "score": 0.9},
    ]
    assert _grouped(rows) == {"q1": ["d", "c", "b", "a"]}
    no_score = [{k: v for k, v in r.items() if k != "score"} for r in rows]
    assert _grouped(no_score) == {"q1": ["d", "c", "b", "a"]}


# -- refused files -----------------------------------------------------------------------------------


def refused(path: Path, role: Role, *parts: str) -> str:
    with pytest.raises(InputError) as e:
        read_input(path, role)
    for part in parts:
        assert part in e.value.message
    return e.value.message


def test_an_unknown_file_names_the_shapes_triage_reads(tmp_path: Path) -> None:
    odd = tmp_path / "run.txt"
    odd.write_text("this is not a run\n")
    message = refused(
        odd, Role.RUN, str(odd), "not a shape triage reads", "a TREC run line has 5 or 6 fields"
    )
    assert SHAPES in message and "format = one of parquet" in message
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    refused(binary, Role.LABELS, "neither Parquet nor UTF-8 text", SHAPES)
    # the same file without the cause: a TREC run line reads
    odd.write_text("q1 Q0 d1 1 0.5 tag\n")
    assert read_input(odd, Role.RUN).table.column("retrieved").to_pylist() == [["d1"]]


def test_a_run_of_neither_layout_is_refused(tmp_path: Path) -> None:
    path = parquet(pa.table({"query_id": ["q1"], "hits": [["d1"]]}), tmp_path / "run.parquet")
    refused(path, Role.RUN, "missing required column 'retrieved' (columns: query_id, hits)", "one row per")
    path = parquet(pa.table({"query_id": ["q1"], "chunk_id": ["d1"]}), tmp_path / "long.parquet")
    refused(path, Role.RUN, "needs a `rank` or `score` column")


def test_ambiguous_label_columns_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "qrels.tsv"
    path.write_text("query-id\tdoc_id\tdocid\tscore\nq1\td1\td1\t1\n")
    refused(path, Role.LABELS, "ambiguous columns: 'doc_id' and 'docid' both name 'chunk_id'")
    path.write_text("query-id\tdocid\tscore\nq1\td1\t1\n")  # one of them: read
    assert read_input(path, Role.LABELS).table.column_names == ["query_id", "chunk_id", "relevance"]


def test_errors_in_a_shape_name_the_line_or_place(tmp_path: Path) -> None:
    tsv = tmp_path / "qrels.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\n\nq1\td1\t1\nq2\td2\tx\n")
    from conftest import frozen_labels

    with pytest.raises(InputError) as e:
        frozen_labels(tsv)
    assert str(tsv) in e.value.message and "relevance" in e.value.message
    tsv.write_text("query-id\tcorpus-id\tscore\n\nq1\td1\t1\nq2\td2\t-1.5\n")
    with pytest.raises(InputError, match=r"line 4: 'relevance' is -1.5, expected an integer"):
        frozen_labels(tsv)
    tsv.write_text("query-id\tcorpus-id\tscore\n\nq1\td1\t1\nq2\td2\t-1\n")  # trec_eval's -1: read
    assert frozen_labels(tsv).judgements.column("relevance").to_pylist() == [1, -1]
    run = tmp_path / "long.csv"
    run.write_text("query_id,chunk_id,score,plan\nq1,d1,0.5,ann\nq2,d2,0.4,scan\nq1,d3,0.3,scan\n")
    refused(run, Role.RUN, "line 4", "column 'plan' changes within query 'q1'")
    run.write_text("query_id,chunk_id,score,plan\nq1,d1,0.5,ann\nq2,d2,0.4,scan\nq1,d3,0.3,ann\n")
    assert read_input(run, Role.RUN).table.column("plan").to_pylist() == ["ann", "scan"]
    run.write_text("query_id,chunk_id,score\nq1,d1,0.5\nq1,d2,inf\n")
    refused(run, Role.RUN, "line 3", "'score' is inf, expected a finite number")
    ranx = tmp_path / "run.json"
    ranx.write_text('{"q1": {"d1": 0.5, "d2": "high"}}')
    refused(ranx, Role.RUN, "query 'q1', doc 'd2'", "score 'high' is not a number")
    ranx.write_text('{"q1": {"d1": 0.5, "d1": 0.4}}')
    refused(ranx, Role.RUN, "key 'd1' appears twice")
    shards = tmp_path / "shards"
    parquet(pa.table({"query_id": ["q1"], "retrieved": [["d1"]]}), shards / "a.parquet")
    parquet(pa.table({"query_id": ["q2", "q1"], "retrieved": [["d2"], ["d3"]]}), shards / "b.parquet")
    from triage.core.inputs.contract import RUN, conform, unique_ids

    loaded = read_input(shards, Role.RUN)
    with pytest.raises(InputError, match=r"b\.parquet row 2"):
        unique_ids(loaded, conform(loaded, RUN))
    (shards / "notes.txt").write_text("not parquet")
    refused(shards, Role.RUN, "notes.txt", "not a Parquet file")


def test_ranks_win_over_disagreeing_scores_and_the_rise_is_reported() -> None:
    from triage.core.inputs.load import list_facts

    rows = [
        {"query_id": "q1", "chunk_id": "a", "rank": 1, "score": 0.1},
        {"query_id": "q1", "chunk_id": "b", "rank": 2, "score": 0.9},
        {"query_id": "q2", "chunk_id": "c", "rank": 1, "score": 0.9},
        {"query_id": "q2", "chunk_id": "d", "rank": 2, "score": 0.1},
    ]
    t = group_long(Parsed(Path("run.parquet"), pa.Table.from_pylist(rows))).table
    assert t.column("retrieved").to_pylist() == [["a", "b"], ["c", "d"]]
    assert list_facts(t).score_rises.tolist() == [0]  # q1 rises, q2 descends


def test_compressed_tsv_and_ranx_are_detected_through_the_suffix(tmp_path: Path) -> None:
    import gzip

    tsv = tmp_path / "qrels.tsv.gz"
    tsv.write_bytes(gzip.compress(b"query-id\tcorpus-id\tscore\nq1\t007\t2\n"))
    ranx = tmp_path / "run.json.gz"
    ranx.write_bytes(gzip.compress(b'{"q1": {"d1": 0.2, "d2": 0.7}}'))
    assert (detect(tsv, Role.LABELS), detect(ranx, Role.RUN)) == (Format.TSV, Format.RANX)
    assert read_input(tsv, Role.LABELS).table.to_pylist() == [
        {"query_id": "q1", "chunk_id": "007", "relevance": 2}
    ]
    assert read_input(ranx, Role.RUN).table.column("retrieved").to_pylist() == [["d2", "d1"]]


@pytest.mark.slow
def test_trec_runs_with_beir_qrels(tmp_path: Path) -> None:
    """A new user's inputs: TREC runs beside BEIR's qrels/test.tsv, against the same runs cut to
    what a TREC line holds, as Parquet."""
    meta = sample_meta()
    base = tmp_path / "parquet"
    labels_pq = parquet(labels_table(), base / "labels.parquet", LABEL_META)
    want = _report(evaluation(base, reduced(base), labels_pq, meta))
    shaped = tmp_path / "trec"
    shaped.mkdir()
    runs = {}
    for side, (name, path) in RUNS.items():
        t = pq.read_table(path).to_pylist()
        runs[side] = shaped / f"{name}.run"
        runs[side].write_text(
            "".join(
                f"{r['query_id']} Q0 {d} {i} {s!r} {name}\n"
                for r in t
                for i, (d, s) in enumerate(zip(r["retrieved"], r["scores"], strict=True), start=1)
            )
        )
    labels = write_tsv(labels_table(), shaped / "test.tsv", ["query-id", "corpus-id", "score"])
    assert (detect(runs["a"], Role.RUN), detect(labels, Role.LABELS)) == (Format.TREC, Format.TSV)
    assert comparable(_report(evaluation(shaped, runs, labels, meta))) == comparable(want)
