"""The text readers give the same table on both paths (Arrow's parsers and the line reader), plain
and compressed; the fast path reads the ordinary files itself; compression is detected by name
and by first bytes."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.core.errors import InputError
from triage.core.inputs import arrowtext, readers

from conftest import TextFiles, write_compressed

RUN = (
    "\ufeff007 Q0 0042 2 1.5 bm25\r\n"  # BOM, CRLF, ids that look like numbers
    "\r\n"
    "007 Q0 1e5 1 2.5 bm25\r\n"  # out of rank order
    "q2 Q0 x 1 1 bm25\r\n"
    "\r\n"
    "007 Q0 tie 2 1.5 bm25\r\n"  # same rank as 0042: file order kept
)


def parsed(files: TextFiles, tmp_path: Path, name: str, text: str | bytes, trec: str | None = None):
    return readers.read_table(files.write(tmp_path / name, text), trec=trec)


def test_a_trec_run(tmp_path: Path, text_files: TextFiles) -> None:
    p = parsed(text_files, tmp_path, "a.run", RUN, "run")
    assert p.table.column("query_id").to_pylist() == ["007", "q2"]
    assert p.table.column("retrieved").to_pylist() == [["1e5", "0042", "tie"], ["x"]]
    assert p.table.column("scores").to_pylist() == [[2.5, 1.5, 1.5], [1.0]]
    assert p.table.schema.field("query_id").type == pa.string()
    assert (p.where(0), p.where(1), p.meta) == ("line 1", "line 4", {"name": "bm25"})
    assert text_files.fallbacks == (0 if text_files.path_kind == "fast" else 1)


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        RUN.replace(" ", "\t"),  # tab separated
        RUN.replace("bm25\r\n\r\n", "bm25  \r\n\r\n"),  # trailing spaces: the line reader reads it
        RUN.replace("007 Q0 1e5", "007  Q0\t1e5"),  # mixed spacing: the line reader reads it
    ],
)
def test_a_trec_run_spaced_otherwise(tmp_path: Path, text_files: TextFiles, text: str) -> None:
    p = parsed(text_files, tmp_path, "a.run", text, "run")
    assert p.table.column("retrieved").to_pylist() == [["1e5", "0042", "tie"], ["x"]]
    assert (p.where(0), p.where(1)) == ("line 1", "line 4")


def test_two_tags_give_no_name(tmp_path: Path, text_files: TextFiles) -> None:
    p = parsed(text_files, tmp_path, "a.run", "q1 Q0 d1 1 1.0 x\nq1 Q0 d2 2 0.5 y\n", "run")
    assert p.meta == {}


def test_trec_qrels(tmp_path: Path, text_files: TextFiles) -> None:
    p = parsed(
        text_files, tmp_path, "l.qrels", "\ufeff1 0 0042 2\r\n\r\nq2\t0\t7\t0\r\n".replace("\t", " "), "qrels"
    )
    assert p.table.to_pylist() == [
        {"query_id": "1", "chunk_id": "0042", "relevance": 2},
        {"query_id": "q2", "chunk_id": "7", "relevance": 0},
    ]
    assert (p.where(0), p.where(1)) == ("line 1", "line 3")
    assert text_files.fallbacks == (0 if text_files.path_kind == "fast" else 1)


JSONL = (
    "\ufeff"
    + json.dumps({"query_id": "q1", "retrieved": ["a", "b"], "scores": [1.5, 1], "created_at": "2024-05-01"})
    + "\r\n   \r\n\r\n"
    + json.dumps({"query_id": "2024-05-02T10:00:00", "retrieved": [], "extra": {"x": 1}})
    + "\n"
)


def test_jsonl(tmp_path: Path, text_files: TextFiles) -> None:
    p = parsed(text_files, tmp_path, "a.jsonl", JSONL)
    assert p.table.column("query_id").to_pylist() == ["q1", "2024-05-02T10:00:00"]  # dates stay text
    assert p.table.column("created_at").to_pylist() == ["2024-05-01", None]
    assert p.table.column("scores").to_pylist() == [[1.5, 1.0], None]
    assert p.table.column("extra").to_pylist() == [None, {"x": 1}]
    assert (p.where(0), p.where(1)) == ("line 1", "line 4")
    assert text_files.fallbacks == (0 if text_files.path_kind == "fast" else 1)


@pytest.mark.slow
@pytest.mark.parametrize(
    "line",
    [
        '{"query_id": "q2", "n": 99999999999999999999}',  # beyond int64: text, by the line reader
        '{"query_id": "q2", "n": 2, "s": 1e300}',  # a float that large also goes there: same table
        '   {"query_id": "q2", "n": 2}',  # indented
    ],
)
def test_jsonl_read_by_the_line_reader(tmp_path: Path, text_files: TextFiles, line: str) -> None:
    text = '{"query_id": "q1", "n": 1}\n' + line + "\n"
    p = parsed(text_files, tmp_path, "a.jsonl", text)
    assert text_files.fallbacks == 1
    lines = readers._jsonl_lines(tmp_path / "same.jsonl", text.encode())
    assert p.table.equals(lines.table) and p.oversize == lines.oversize


@pytest.mark.slow
def test_both_paths_agree_on_a_larger_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = [
        {
            "query_id": f"{i:04d}",
            "retrieved": [str(d) for d in rng.integers(0, 10**6, 20)],
            "scores": rng.random(20).tolist(),
        }
        for i in range(3000)
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    trec = "".join(
        f"{r['query_id']} Q0 {d} {n} {s!r} t\n"
        for r in rows
        for n, (d, s) in enumerate(zip(r["retrieved"], r["scores"], strict=True), 1)
    )
    fast_j = arrowtext.jsonl(text.encode())
    fast_t = arrowtext.trec_run(trec.encode())
    assert fast_j is not None and fast_t is not None
    lines_j = readers._jsonl_lines(tmp_path / "a", text.encode())
    lines_t = readers._trec_run_lines(tmp_path / "b", trec.encode())
    assert fast_j[0].equals(lines_j.table) and np.array_equal(fast_j[1], lines_j.lines)
    assert fast_t[0].equals(lines_t.table) and np.array_equal(fast_t[2], lines_t.lines)
    assert fast_t[0].column("scores").to_pylist() == [r["scores"] for r in rows]  # floats exact


def test_compression_detected_by_first_bytes_under_a_plain_name(tmp_path: Path) -> None:
    for how in ("gzip", "zstd", "bz2"):
        f = write_compressed(tmp_path / f"{how}.run", RUN, how)
        plain = f.rename(tmp_path / f"{how}-plain.run")
        p = readers.read_table(plain, trec="run")
        assert p.table.column("query_id").to_pylist() == ["007", "q2"]


def test_a_compressed_name_must_hold_those_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.run.gz").write_text(RUN)
    with pytest.raises(InputError, match=r"named \.gz but holds bytes that are not compressed"):
        readers.read_table(tmp_path / "a.run.gz", trec="run")
    write_compressed(tmp_path / "b.run", RUN, "bz2").rename(tmp_path / "b.run.zst")
    with pytest.raises(InputError, match=r"named \.zst but holds bzip2-compressed bytes"):
        readers.read_table(tmp_path / "b.run.zst", trec="run")


def test_a_truncated_compressed_file_is_named(tmp_path: Path) -> None:
    data = gzip.compress(RUN.encode() * 200)
    (tmp_path / "a.run.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cannot decompress") as e:
        readers.read_table(tmp_path / "a.run.gz", trec="run")
    assert "a.run.gz" in str(e.value)


def test_a_fifo_under_a_compressed_name_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "a.run.gz")
    with pytest.raises(InputError, match="FIFO"):
        readers.read_table(tmp_path / "a.run.gz", trec="run")


def test_a_link_to_a_compressed_file_is_read(tmp_path: Path) -> None:
    target = write_compressed(tmp_path / "a.run", RUN, "gzip")
    (tmp_path / "link.run.gz").symlink_to(target)
    assert readers.read_table(tmp_path / "link.run.gz", trec="run").table.num_rows == 2


@pytest.mark.parametrize("how", ["gzip", "zstd", "bz2"])
def test_compressed_parquet_with_its_columns_and_metadata(tmp_path: Path, how: str) -> None:
    table = pa.table({"chunk_id": ["c1", "c2"], "text": ["x", "y"]}).replace_schema_metadata({"name": "n"})
    pq.write_table(table, tmp_path / "c.parquet")
    f = write_compressed(tmp_path / "c2.parquet", (tmp_path / "c.parquet").read_bytes(), how)
    p = readers.read_table(f, columns=["chunk_id"])
    assert p.table.column_names == ["chunk_id"] and p.meta == {"name": "n"}
    assert p.where(1) == "row 2"
    # a compressed file that is not Parquet inside, under a Parquet name
    bad = write_compressed(tmp_path / "bad.parquet", b"not parquet", how)
    with pytest.raises(InputError, match="no PAR1"):
        readers.read_table(bad)


def test_the_sidecar_of_a_compressed_file(tmp_path: Path) -> None:
    f = write_compressed(tmp_path / "a.run", RUN, "zstd")
    (tmp_path / "a.run.zst.meta.json").write_text('{"k": 3, "name": "mine"}')
    assert readers.read_table(f, trec="run").meta == {"k": "3", "name": "mine"}


def test_a_jsonl_line_longer_than_a_parse_block(tmp_path: Path) -> None:
    long = "x" * (arrowtext._BLOCK + 10)
    text = '{"_id": "c1", "text": "a"}\n' * 1000 + json.dumps({"_id": "c2", "text": long}) + "\n"
    fast = arrowtext.jsonl(text.encode())
    assert fast is not None and fast[0].column("text")[1000].as_py() == long and fast[1][-1] == 1001


@pytest.mark.slow
@pytest.mark.parametrize("depth", [2100, 100_000])
def test_deep_nesting_never_reaches_arrow(tmp_path: Path, depth: int) -> None:
    # Arrow's JSON parser crashes the process some 10,000 levels down: such a line is the line
    # reader's, which names it; 1,000 levels are read by Arrow
    line = '{"query_id": "q2", "x": ' + "[" * depth + "]" * depth + "}"
    text = '{"query_id": "q1", "x": []}\n' + line + "\n"
    assert arrowtext.jsonl(text.encode()) is None
    (tmp_path / "a.jsonl").write_text(text)
    if depth > 1_000:
        with pytest.raises(InputError, match="line 2: holds JSON nested too deeply"):
            readers.read_table(tmp_path / "a.jsonl")
    shallow = '{"query_id": "q1", "x": []}\n{"query_id": "q2", "x": ' + "[" * 1000 + "]" * 1000 + "}\n"
    assert arrowtext.jsonl(shallow.encode()) is not None
