"""Reads are bounded: a compressed input that inflates past its limit, memory running out and a
Parquet column named twice are each exit 2 naming the file, never a traceback (core/inputs/readers.py)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs import readers as compressed


@pytest.fixture
def ev(tmp_path: Path) -> Path:
    out = tmp_path / "ev"
    shutil.copytree(bundled("sample_runs"), out)
    rows = pq.read_table(out / "labels.parquet").to_pylist()
    text = "".join(f"{r['query_id']} 0 {r['chunk_id']} {r['relevance']}\n" for r in rows)
    (out / "labels.qrels").write_text(text)
    return out


def qrels_report(ev: Path, labels: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(
        [
            "report",
            "--format",
            "json",
            "--labels",
            str(labels),
            str(ev / "runs/plain.parquet"),
            str(ev / "runs/headers.parquet"),
        ]
    )
    out, err = capsys.readouterr()
    return rc, out, err


def bomb(ev: Path, repeats: int) -> Path:
    """The labels, then one line repeated: valid qrels that compress about 1000 to 1."""
    path = ev / "bomb.qrels.gz"
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write((ev / "labels.qrels").read_bytes())
        f.write(b"q001 0 extra#1 1\n" * repeats)
    return path


@pytest.mark.slow
def test_a_compressed_input_past_its_ratio_is_named_not_read(ev, capsys, monkeypatch) -> None:
    monkeypatch.setattr(compressed, "FLOOR", 0)
    path = bomb(ev, 200_000)  # 3.4 MB from ~10 kB
    assert path.stat().st_size * compressed.RATIO < 3_000_000
    rc, out, err = qrels_report(ev, path, capsys)
    assert rc == 2 and out == "" and "bomb.qrels.gz" in err and "TRIAGE_MAX_DECOMPRESSED" in err
    assert "Traceback" not in err
    monkeypatch.setenv("TRIAGE_MAX_DECOMPRESSED", "64M")  # raised: read
    assert qrels_report(ev, path, capsys)[0] == 0


def test_the_absolute_limit_holds_and_an_ordinary_file_is_read(ev, capsys, monkeypatch) -> None:
    plain = ev / "labels.qrels.gz"
    plain.write_bytes(gzip.compress((ev / "labels.qrels").read_bytes()))

    def numbers(got: tuple[int, str, str]) -> tuple[int, object, object]:
        body = json.loads(got[1])
        return got[0], body["arms"], body["paired"]

    want = numbers(qrels_report(ev, ev / "labels.qrels", capsys))
    assert want[0] == 0 and numbers(qrels_report(ev, plain, capsys)) == want  # the same, compressed
    monkeypatch.setenv("TRIAGE_MAX_DECOMPRESSED", "1K")
    rc, _, err = qrels_report(ev, plain, capsys)
    assert rc == 2 and "more than 1,024 bytes" in err
    monkeypatch.setenv("TRIAGE_MAX_DECOMPRESSED", "lots")
    rc, _, err = qrels_report(ev, plain, capsys)
    assert rc == 2 and "TRIAGE_MAX_DECOMPRESSED" in err and "'lots'" in err


def test_running_out_of_memory_while_reading_is_exit_2(ev, capsys, monkeypatch) -> None:
    from triage.core.inputs import parquet

    def exhausted(*a: object, **k: object) -> None:
        raise MemoryError

    monkeypatch.setattr(parquet.pq, "ParquetFile", exhausted)
    rc = main(["report", str(ev / "triage.toml")])
    err = capsys.readouterr().err
    assert rc == 2 and "out of memory" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "role", ["runs/plain.parquet", "labels.parquet", "queries.parquet", "chunks.parquet"]
)
def test_a_parquet_column_named_twice_is_refused_by_name(ev, capsys, role) -> None:
    table = pq.read_table(ev / role)
    first = table.column_names[0]
    twice = pa.Table.from_arrays([*table.columns, table.column(0)], names=[*table.column_names, first])
    pq.write_table(twice, ev / role)
    rc = main(["report", str(ev / "triage.toml")])
    err = capsys.readouterr().err
    assert rc == 2 and role.split("/")[-1] in err and repr(first) in err and "more than once" in err, err
