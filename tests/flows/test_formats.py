"""The same evaluation written as TREC run and qrels files, a BEIR corpus.jsonl and JSON Lines
queries gives the same numbers as the Parquet sample; the command-line form equals the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled

from conftest import COMPRESSION_SUFFIX, write_compressed

pytestmark = pytest.mark.slow  # the sample in every input format, evaluated again: out of the quick loop

SAMPLE = bundled("sample_runs")


def report(capsys, *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def numbers(d: dict) -> tuple:
    return (
        d["k"],
        d["n_scored"],
        d["paired"],
        [f["query_id"] for f in d["flips"]],
        {side: {k: d["arms"][side][k] for k in ("hit_rate", "recall", "mrr", "ndcg")} for side in "ab"},
        [c["code"] + c["level"] for c in d["checks"] if c["level"] != "ok"],
    )


def to_trec_run(src: Path, dst: Path, tag: str, how: str = "plain") -> Path:
    lines = []
    for row in pq.read_table(src).to_pylist():
        for rank, (doc, score) in enumerate(zip(row["retrieved"], row["scores"], strict=True), start=1):
            lines.append(f"{row['query_id']} Q0 {doc} {rank} {score!r} {tag}")
    return write_compressed(dst, "\n".join(lines) + "\n", how)


@pytest.mark.parametrize("how", list(COMPRESSION_SUFFIX))
def test_trec_beir_and_jsonl_give_the_parquet_numbers(tmp_path: Path, capsys, how: str) -> None:
    parquet = numbers(report(capsys))
    a = to_trec_run(SAMPLE / "runs/plain.parquet", tmp_path / "plain.run", "plain", how)
    b = to_trec_run(SAMPLE / "runs/headers.parquet", tmp_path / "headers.run", "headers", how)
    for run in (a, b):
        (run.parent / (run.name + ".meta.json")).write_text(json.dumps({"k": 5}))
    qrels = write_compressed(
        tmp_path / "labels.qrels",
        "".join(
            f"{r['query_id']} 0 {r['chunk_id']} {r['relevance']}\n"
            for r in pq.read_table(SAMPLE / "labels.parquet").to_pylist()
        ),
        how,
    )
    corpus = write_compressed(
        tmp_path / "corpus.jsonl",
        "".join(
            json.dumps({"_id": r["chunk_id"], "title": r["header"], "text": r["text"], "doc_id": r["doc_id"]})
            + "\n"
            for r in pq.read_table(SAMPLE / "chunks.parquet").to_pylist()
        ),
        how,
    )
    queries = write_compressed(
        tmp_path / "queries.jsonl",
        "".join(json.dumps(r) + "\n" for r in pq.read_table(SAMPLE / "queries.parquet").to_pylist()),
        how,
    )
    d = report(
        capsys,
        *(str(a), str(b), "--labels", str(qrels), "--corpus", str(corpus), "--queries", str(queries)),
        *("--holdout-fraction", "0.2"),  # the sample manifest's tuning split, on the command line
    )
    assert numbers(d) == parquet
    # The TREC runs record no created_at (their sidecars give only k): timing is said unchecked.
    timing = next(c for c in d["checks"] if c["code"] == "labels.time")
    assert timing["level"] == "ok" and "not checked" in timing["message"]


def test_command_line_form_equals_the_manifest(capsys) -> None:
    manifest = numbers(report(capsys, str(SAMPLE)))
    d = report(
        capsys,
        str(SAMPLE / "runs/plain.parquet"),
        str(SAMPLE / "runs/headers.parquet"),
        "--labels",
        str(SAMPLE / "labels.parquet"),
        "--corpus",
        str(SAMPLE / "chunks.parquet"),
        "--queries",
        str(SAMPLE / "queries.parquet"),
        "--holdout-fraction",
        "0.2",
    )
    assert numbers(d) == manifest and d["holdout"] == report(capsys, str(SAMPLE))["holdout"]
    assert (d["arms"]["a"]["name"], d["arms"]["b"]["name"]) == ("plain", "headers")


def test_k_from_the_command_line_judges_both_arms(capsys) -> None:
    d = report(capsys, str(SAMPLE), "--k", "10")
    assert d["k"] == 10 and d["arms"]["b"]["hit_rate"] > 0.79
    assert any(c["code"] == "k.override" for c in d["checks"])


def test_parquet_read_a_few_rows_at_a_time_gives_the_same_report(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Parquet is decoded parquet.BATCH_ROWS rows at a time: with batches of 7 rows the sample's
    # runs and labels are read in many pieces, and the report is the same. A truncated file is
    # still named.
    from triage.core.inputs import parquet

    whole = report(capsys, str(SAMPLE))
    monkeypatch.setattr(parquet, "BATCH_ROWS", 7)
    assert report(capsys, str(SAMPLE)) == whole
    cut = tmp_path / "cut.parquet"
    data = (SAMPLE / "runs/plain.parquet").read_bytes()
    cut.write_bytes(data[: len(data) // 2] + data[-8:])  # the footer's length and magic, no footer
    assert (
        main(
            [
                "report",
                str(cut),
                str(SAMPLE / "runs/headers.parquet"),
                "--labels",
                str(SAMPLE / "labels.parquet"),
            ]
        )
        == 2
    )
    assert "cut.parquet" in capsys.readouterr().err
