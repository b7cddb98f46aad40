"""The text readers (Arrow's parsers: `trec` through pyarrow.csv, `jsonl` through pyarrow.json),
plain and compressed: the tables they give, the lines they place rows at, what the error path
names; compression is detected by name and by first bytes."""

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
from triage.core.inputs import jsonl as jsonl_reader
from triage.core.inputs.shapes import read_table

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
    return read_table(files.write(tmp_path / name, text), trec=trec)


def test_a_trec_run(tmp_path: Path, text_files: TextFiles) -> None:
    p = parsed(text_files, tmp_path, "a.run", RUN, "run")
    assert p.table.column("query_id").to_pylist() == ["007", "q2"]
    assert p.table.column("retrieved").to_pylist() == [["1e5", "0042", "tie"], ["x"]]
    assert p.table.column("scores").to_pylist() == [[2.5, 1.5, 1.5], [1.0]]
    assert p.table.schema.field("query_id").type == pa.string()
    assert (p.where(0), p.where(1), p.meta) == ("line 1", "line 4", {"name": "bm25"})


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        RUN.replace(" ", "\t"),  # tab separated
        RUN.replace("bm25\r\n\r\n", "bm25  \r\n\r\n"),  # trailing spaces
        RUN.replace("007 Q0 1e5", "007  Q0\t1e5"),  # mixed spacing
        RUN.replace("007 Q0 1e5", " \t007\u00a0Q0\u3000\x0b1e5"),  # leading, Unicode spaces
        RUN.replace("q2 Q0 x", "q2\rQ0 x"),  # a CR inside a line splits fields, as str.split()
        RUN.replace("\r\n\r\n", "\r\n \t\r\r\n"),  # a blank line of whitespace and CRs
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


def test_an_integer_beyond_int64_keeps_its_column_as_text(tmp_path: Path) -> None:
    text = '{"query_id": "q1", "n": 1}\n\n{"query_id": "q2", "n": 99999999999999999999}\n'
    (tmp_path / "a.jsonl").write_text(text)
    p = read_table(tmp_path / "a.jsonl")
    assert p.table.column("n").to_pylist() == ["1", "99999999999999999999"]  # as written
    assert p.oversize == {"n": (1, 99999999999999999999)} and p.where(1) == "line 3"


def test_a_float_that_large_stays_a_float(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"query_id": "q1", "n": 1}\n{"query_id": "q2", "n": 2, "s": 1e300}\n')
    p = read_table(tmp_path / "a.jsonl")
    assert p.table.column("s").to_pylist() == [None, 1e300] and p.oversize == {}
    assert p.table.column("n").type == pa.int64()


def test_an_indented_object_line(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"query_id": "q1", "n": 1}\n\n   {"query_id": "q2", "n": 2}  \n')
    p = read_table(tmp_path / "a.jsonl")
    assert p.table.column("n").to_pylist() == [1, 2] and (p.where(0), p.where(1)) == ("line 1", "line 3")


def test_a_list_mixing_text_and_integer_ids_is_read_as_text(tmp_path: Path) -> None:
    text = (
        '{"query_id": "q1", "retrieved": ["g1", 7], "x": "\u00e9"}\n'
        '{"query_id": "q2", "retrieved": ["g2"], "x": "b"}\n'
        '{"query_id": "q3", "retrieved": [99999999999999999999], "x": null}\n'
    )
    (tmp_path / "a.jsonl").write_text(text)
    p = read_table(tmp_path / "a.jsonl")
    assert p.table.column("retrieved").to_pylist() == [["g1", "7"], ["g2"], ["99999999999999999999"]]
    assert p.table.column("x").to_pylist() == ["\u00e9", "b", None]
    assert p.lines is not None and p.lines.tolist() == [1, 2, 3]


def test_objects_unlike_each_other_in_an_extra_column_are_kept_as_json_text(tmp_path: Path) -> None:
    text = '{"query_id": "q1", "extra": {"x": 1}}\n{"query_id": "q2", "extra": {"x": "a"}}\n'
    (tmp_path / "a.jsonl").write_text(text)
    p = read_table(tmp_path / "a.jsonl")
    assert p.table.column("extra").to_pylist() == ['{"x": 1}', '{"x": "a"}']


def test_a_cr_inside_a_jsonl_line(tmp_path: Path) -> None:
    # between values a CR is JSON whitespace (Arrow would end a line there); inside a string it
    # is a control character JSON refuses
    (tmp_path / "a.jsonl").write_bytes(b'{"query_id": "q1",\r"n": 1}\r\n{"query_id": "q2", "n": 2}\n')
    p = read_table(tmp_path / "a.jsonl")
    assert p.table.column("n").to_pylist() == [1, 2] and p.where(1) == "line 2"
    (tmp_path / "b.jsonl").write_bytes(b'{"query_id": "q1"}\n{"query_id": "q\r2"}\n')
    with pytest.raises(InputError, match="line 2: not valid JSON: Invalid control character"):
        read_table(tmp_path / "b.jsonl")


@pytest.mark.slow
@pytest.mark.parametrize(
    "line, needles",
    [
        ('{"query_id": "q2", "x": NaN}', ("line 3", "NaN is not a number JSON allows")),
        ('{"query_id": "q2", "x": [1, -Infinity]}', ("line 3", "-Infinity is not a number")),
        ('{"query_id": "q2", "x": [{"a": 1, "a": 2}]}', ("line 3", "'a' appears twice")),
        ('{"query_id": "q2", "x": "\\udc00"}', ("line 3", "lone surrogate")),
        ('{"query_id": "q2", "x": 1} {"query_id": "q3"}', ("line 3", "not valid JSON", "Extra data")),
        ('{"query_id": "q2", "x": ', ("line 3", "not valid JSON")),  # a torn last line
        ('{"query_id": 7, "x": 1}', ("line 3", "'query_id' holds an integer here but a string")),
        ('{"query_id": "q2", "x": ["a", 1.5]}', ("line 3", "'x' holds lists mixing float and string")),
        ('{"query_id": "q2", "x": 1}\n{"query_id": "q3"', ("line 4", "not valid JSON")),
    ],
)
def test_jsonl_refusals_name_the_line(tmp_path: Path, line: str, needles: tuple[str, ...]) -> None:
    (tmp_path / "a.jsonl").write_text('{"query_id": "q1", "x": null}\r\n\r\n' + line)
    with pytest.raises(InputError) as e:
        read_table(tmp_path / "a.jsonl")
    assert all(n in str(e.value) for n in needles), str(e.value)
    assert str(e.value).startswith(str(tmp_path / "a.jsonl"))


@pytest.mark.parametrize(
    "text, needles",
    [
        ("q1 Q0 d1 1 1.0 t\n\nq1 Q0 d2 2 1.0\n", ("line 3", "expected 6 fields", "found 5")),
        ("q1 Q0 d1 1 1.0 t\nq1 Q0 d\xe92 2 1.0 t\nq1 Q0\n", ("line 2", "not UTF-8 (byte 0xe9 at column 8)")),
        ("q1 Q0 d1 1 1.0 t\nq1 Q0\nq1 Q0 d\xe92 2 1.0 t\n", ("line 2", "expected 6 fields", "found 2")),
        ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 inf t\nq1 Q0 d3 x 1 t\n", ("line 2", "score 'inf' is not finite")),
        ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 x 1 t\nq1 Q0 d3 2 nan t\n", ("line 2", "rank 'x' / score '1'")),
        ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d3 3", ("line 3", "found 4")),  # a torn last line
    ],
)
def test_trec_refusals_name_the_line(tmp_path: Path, text: str, needles: tuple[str, ...]) -> None:
    (tmp_path / "a.run").write_bytes(text.encode("latin-1"))
    with pytest.raises(InputError) as e:
        read_table(tmp_path / "a.run", trec="run")
    assert all(n in str(e.value) for n in needles), str(e.value)


def test_qrels_relevance_past_int64_is_too_large(tmp_path: Path) -> None:
    (tmp_path / "l.qrels").write_text("q1 0 d1 1\nq1 0 d2 99999999999999999999\nq1 0 d3 x\n")
    with pytest.raises(InputError, match=r"line 2: relevance 1e\+20 is too large"):
        read_table(tmp_path / "l.qrels", trec="qrels")


def test_any_spacing_reads_as_str_split_reads_it(tmp_path: Path) -> None:
    # Random whitespace between and around the fields: the same fields as Python's str.split().
    rng = np.random.default_rng(5)
    spaces = [" ", "\t", "  ", " \t ", "\x0b", "\u00a0", "\u2003", "\r"]
    lines, want = [], []
    for q in range(300):
        fields = [f"q{q % 7}", "Q0", f"d{q}", str(q // 7 + 1), f"{1 / (q + 1)!r}", "tag"]
        gaps = [spaces[i] for i in rng.integers(0, len(spaces), 7)]
        gaps[0], gaps[-1] = ("" if q % 3 else gaps[0]), ("" if q % 2 else gaps[-1].replace("\r", " "))
        lines.append(gaps[0] + "".join(f + g for f, g in zip(fields, gaps[1:], strict=True)))
        want.append(lines[-1].split())
    text = "\n".join(lines) + "\n"
    (tmp_path / "a.run").write_text(text)
    p = read_table(tmp_path / "a.run", trec="run")
    by_query: dict[str, list[tuple[int, int, str]]] = {}
    for n, f in enumerate(want):
        by_query.setdefault(f[0], []).append((int(f[3]), n, f[2]))
    assert p.table.column("query_id").to_pylist() == list(by_query)
    assert p.table.column("retrieved").to_pylist() == [[d for *_, d in sorted(v)] for v in by_query.values()]


@pytest.mark.slow
def test_a_larger_file_in_both_formats(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = [
        {
            "query_id": f"{i:04d}",
            "retrieved": [str(d) for d in rng.integers(0, 10**6, 20)],
            "scores": rng.random(20).tolist(),
        }
        for i in range(3000)
    ]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "a.run").write_text(
        "".join(
            f"{r['query_id']} Q0 {d} {n} {s!r} t\n"
            for r in rows
            for n, (d, s) in enumerate(zip(r["retrieved"], r["scores"], strict=True), 1)
        )
    )
    want = pa.table(
        {
            "query_id": pa.array([r["query_id"] for r in rows]),
            "retrieved": pa.array([r["retrieved"] for r in rows], pa.list_(pa.string())),
            "scores": pa.array([r["scores"] for r in rows], pa.list_(pa.float64())),
        }
    )
    j, t = read_table(tmp_path / "a.jsonl"), read_table(tmp_path / "a.run", trec="run")
    assert j.table.equals(want) and t.table.equals(want)  # floats exact
    assert j.lines is not None and j.lines.tolist() == list(range(1, 3001))
    assert t.lines is not None and t.lines.tolist() == list(range(1, 60001, 20))


def test_compression_detected_by_first_bytes_under_a_plain_name(tmp_path: Path) -> None:
    for how in ("gzip", "zstd", "bz2"):
        f = write_compressed(tmp_path / f"{how}.run", RUN, how)
        plain = f.rename(tmp_path / f"{how}-plain.run")
        p = read_table(plain, trec="run")
        assert p.table.column("query_id").to_pylist() == ["007", "q2"]


def test_a_compressed_name_must_hold_those_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.run.gz").write_text(RUN)
    with pytest.raises(InputError, match=r"named \.gz but holds bytes that are not compressed"):
        read_table(tmp_path / "a.run.gz", trec="run")
    write_compressed(tmp_path / "b.run", RUN, "bz2").rename(tmp_path / "b.run.zst")
    with pytest.raises(InputError, match=r"named \.zst but holds bzip2-compressed bytes"):
        read_table(tmp_path / "b.run.zst", trec="run")


def test_a_truncated_compressed_file_is_named(tmp_path: Path) -> None:
    data = gzip.compress(RUN.encode() * 200)
    (tmp_path / "a.run.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cannot decompress") as e:
        read_table(tmp_path / "a.run.gz", trec="run")
    assert "a.run.gz" in str(e.value)


def test_a_fifo_under_a_compressed_name_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "a.run.gz")
    with pytest.raises(InputError, match="FIFO"):
        read_table(tmp_path / "a.run.gz", trec="run")


def test_a_link_to_a_compressed_file_is_read(tmp_path: Path) -> None:
    target = write_compressed(tmp_path / "a.run", RUN, "gzip")
    (tmp_path / "link.run.gz").symlink_to(target)
    assert read_table(tmp_path / "link.run.gz", trec="run").table.num_rows == 2


@pytest.mark.parametrize("how", ["gzip", "zstd", "bz2"])
def test_compressed_parquet_with_its_columns_and_metadata(tmp_path: Path, how: str) -> None:
    table = pa.table({"chunk_id": ["c1", "c2"], "text": ["x", "y"]}).replace_schema_metadata({"name": "n"})
    pq.write_table(table, tmp_path / "c.parquet")
    f = write_compressed(tmp_path / "c2.parquet", (tmp_path / "c.parquet").read_bytes(), how)
    p = read_table(f, columns=["chunk_id"])
    assert p.table.column_names == ["chunk_id"] and p.meta == {"name": "n"}
    assert p.where(1) == "row 2"
    # a compressed file that is not Parquet inside, under a Parquet name
    bad = write_compressed(tmp_path / "bad.parquet", b"not parquet", how)
    with pytest.raises(InputError, match="no PAR1"):
        read_table(bad)


def test_the_sidecar_of_a_compressed_file(tmp_path: Path) -> None:
    f = write_compressed(tmp_path / "a.run", RUN, "zstd")
    (tmp_path / "a.run.zst.meta.json").write_text('{"k": 3, "name": "mine"}')
    assert read_table(f, trec="run").meta == {"k": "3", "name": "mine"}


def test_a_jsonl_line_longer_than_a_parse_block(tmp_path: Path) -> None:
    long = "x" * (jsonl_reader._BLOCK + 10)
    text = '{"_id": "c1", "text": "a"}\n' * 1000 + json.dumps({"_id": "c2", "text": long}) + "\n"
    (tmp_path / "c.jsonl").write_text(text)
    p = read_table(tmp_path / "c.jsonl")
    assert p.table.column("text")[1000].as_py() == long and p.where(1000) == "line 1001"


@pytest.mark.slow
@pytest.mark.parametrize("depth", [2100, 100_000])
def test_deep_nesting_never_reaches_arrow(tmp_path: Path, depth: int) -> None:
    # Arrow's JSON parser crashes the process some 10,000 levels down: such a line is not given
    # to it; Python's json names it. 1,000 levels are read by Arrow.
    line = '{"query_id": "q2", "x": ' + "[" * depth + "]" * depth + "}"
    (tmp_path / "a.jsonl").write_text('{"query_id": "q1", "x": []}\n' + line + "\n")
    with pytest.raises(InputError, match="line 2: holds JSON nested too deeply"):
        read_table(tmp_path / "a.jsonl")
    shallow = '{"query_id": "q1", "x": []}\n{"query_id": "q2", "x": ' + "[" * 1000 + "]" * 1000 + "}\n"
    (tmp_path / "b.jsonl").write_text(shallow)
    assert read_table(tmp_path / "b.jsonl").table.num_rows == 2


def test_a_line_with_brackets_in_its_text_past_the_bound_is_named(tmp_path: Path) -> None:
    # Brackets are counted in strings too (a bound, not a parse): such a line is refused by line,
    # never given to Arrow.
    text = '{"query_id": "q1"}\n\n' + json.dumps({"query_id": "q2", "text": "[" * 2500}) + "\n"
    (tmp_path / "a.jsonl").write_text(text)
    with pytest.raises(InputError, match="line 3: opens more than 2000 arrays or objects"):
        read_table(tmp_path / "a.jsonl")
