"""Every bad input names its file, the row or line, and the problem: exit 2, no traceback, and
never a silently different number (docs/data.md "The data contract")."""

from __future__ import annotations

import gzip
import json
import lzma
import math
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from triage.cli.main import main

from conftest import RUN_SCHEMA, TextFiles, manifest, write_parquet

GOOD = [
    {"query_id": "q1", "retrieved": ["g1", "x1"], "scores": [2.0, 1.0], "plan": "ann"},
    {"query_id": "q2", "retrieved": ["x2", "g2"], "scores": [2.0, 1.0], "plan": "ann"},
    {"query_id": "q3", "retrieved": ["x3", "x4"], "scores": [2.0, 1.0], "plan": "ann"},
]
LABELS = [
    {"query_id": "q1", "chunk_id": "g1", "relevance": 1},
    {"query_id": "q2", "chunk_id": "g2", "relevance": 1},
    {"query_id": "q3", "chunk_id": "g3", "relevance": 1},
]


# GOOD judged at k = 2 against LABELS: q1 gold at rank 1, q2 at rank 2, q3 not retrieved.
GOOD_NUMBERS = {
    "hit_rate": pytest.approx(2 / 3),
    "recall": pytest.approx(2 / 3),
    "mrr": pytest.approx((1 + 1 / 2 + 0) / 3),
    "ndcg": pytest.approx((1 + 1 / math.log2(3) + 0) / 3),
}
GOOD_CELLS = {"both_hit": 2, "both_miss": 1, "a_hit_b_miss": 0, "a_miss_b_hit": 0}


def numbers(d: dict, arm: str) -> dict:
    return {key: d["arms"][arm][key] for key in GOOD_NUMBERS}


def cells(d: dict) -> dict:
    return {key: d["paired"][key] for key in GOOD_CELLS}


def problems(d: dict) -> list[tuple[str, str]]:
    return [(c["level"], c["code"]) for c in d["checks"] if c["level"] != "ok"]


@pytest.fixture
def ev(tmp_path: Path) -> Path:
    write_parquet(tmp_path / "a.parquet", GOOD, {"k": "2"}, RUN_SCHEMA)
    write_parquet(tmp_path / "b.parquet", GOOD, {"k": "2"}, RUN_SCHEMA)
    write_parquet(tmp_path / "labels.parquet", LABELS)
    manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=None)
    return tmp_path


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["report", *args, "--format", "json"])
    out = capsys.readouterr()
    return rc, out.out, out.err


def refused(capsys, folder: Path, *needles: str) -> str:
    rc, out, err = run_cli(capsys, str(folder))
    assert rc == 2, (out, err)
    assert out == ""
    assert "Traceback" not in err
    for n in needles:
        assert n in err, err
    return err


def test_truncated_parquet(ev: Path, capsys) -> None:
    data = (ev / "b.parquet").read_bytes()
    (ev / "b.parquet").write_bytes(data[: len(data) // 2])
    refused(capsys, ev, "b.parquet", "cannot read Parquet")


def test_zero_byte_parquet(ev: Path, capsys) -> None:
    (ev / "a.parquet").write_bytes(b"")
    refused(capsys, ev, "a.parquet", "empty (0 bytes)")


def test_git_lfs_pointer(ev: Path, capsys) -> None:
    (ev / "labels.parquet").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a2146\nsize 12345\n"
    )
    refused(capsys, ev, "labels.parquet", "Git LFS pointer")


def test_gzip_bytes_under_a_plain_name_are_read(ev: Path, capsys) -> None:
    (ev / "a.jsonl").write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in GOOD).encode()))
    manifest(ev, "a.jsonl", "b.parquet", "labels.parquet", k=2)
    rc, out, _ = run_cli(capsys, str(ev))
    assert rc == 0 and numbers(json.loads(out), "a") == GOOD_NUMBERS


def test_xz_bytes_are_named_and_refused(ev: Path, capsys) -> None:
    (ev / "a.jsonl").write_bytes(lzma.compress(b'{"query_id": "q1", "retrieved": []}\n'))
    manifest(ev, "a.jsonl", "b.parquet", "labels.parquet", k=2)
    refused(capsys, ev, "a.jsonl", "xz-compressed", "gzip, zstd and bzip2")


def test_missing_required_column(ev: Path, capsys) -> None:
    write_parquet(ev / "b.parquet", [{"query_id": r["query_id"], "ids": r["retrieved"]} for r in GOOD])
    refused(capsys, ev, "b.parquet", "missing required column 'retrieved'")


def test_wrong_column_type(ev: Path, capsys) -> None:
    rows = [dict(r, scores=[str(s) for s in r["scores"]]) for r in GOOD]
    write_parquet(ev / "a.parquet", rows, {"k": "2"})
    refused(capsys, ev, "a.parquet", "'scores'", "list<element: string>", "list of numbers")


def test_float_query_ids_are_refused_not_guessed(ev: Path, capsys) -> None:
    write_parquet(ev / "labels.parquet", [dict(r, query_id=float(i)) for i, r in enumerate(LABELS)])
    refused(capsys, ev, "labels.parquet", "'query_id'", "double")


def test_duplicate_query_ids(ev: Path, capsys) -> None:
    write_parquet(ev / "b.parquet", [*GOOD, GOOD[1]], {"k": "2"}, RUN_SCHEMA)
    refused(capsys, ev, "b.parquet", "duplicate query_id 'q2'", "row 2 and row 4")


def test_same_id_twice_in_a_ranked_list_is_an_error_check(ev: Path, capsys) -> None:
    # q1's gold listed twice: counted once, at its first rank (recall 1, not 2; ndcg 1, not more)
    rows = [dict(GOOD[0], retrieved=["g1", "g1"]), *GOOD[1:]]
    write_parquet(ev / "b.parquet", rows, {"k": "2"}, RUN_SCHEMA)
    rc, out, _ = run_cli(capsys, str(ev))
    assert rc == 0
    d = json.loads(out)
    assert problems(d) == [("error", "run.duplicates")]  # B's check only; A's stays ok
    check = next(c for c in d["checks"] if c["code"] == "run.duplicates" and c["level"] == "error")
    assert (
        "b.parquet" in check["message"]
        and "row 1" in check["message"]
        and "'g1' at ranks 1,2" in check["message"]
    )
    assert numbers(d, "b") == GOOD_NUMBERS and cells(d) == GOOD_CELLS  # the numbers are unchanged
    assert main(["report", str(ev), "--strict", "--format", "json"]) == 1


def test_scores_of_another_length(ev: Path, capsys) -> None:
    rows = [*GOOD[:2], dict(GOOD[2], scores=[2.0])]
    write_parquet(ev / "a.parquet", rows, {"k": "2"}, RUN_SCHEMA)
    refused(capsys, ev, "a.parquet", "row 3", "1 scores for 2 retrieved ids")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_or_infinite_scores_in_parquet(ev: Path, capsys, bad: float) -> None:
    rows = [GOOD[0], dict(GOOD[1], scores=[2.0, bad]), GOOD[2]]
    write_parquet(ev / "a.parquet", rows, {"k": "2"}, RUN_SCHEMA)
    refused(capsys, ev, "a.parquet", "row 2", "NaN or an infinite value")


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_nan_scores_in_jsonl(ev: Path, capsys, text_files: TextFiles, bad: str) -> None:
    f = text_files.write(
        ev / "a.jsonl",
        json.dumps(GOOD[0])
        + "\n"
        + f'{{"query_id": "q2", "retrieved": ["x2", "g2"], "scores": [2.0, {bad}]}}\n',
    )
    manifest(ev, f.name, "b.parquet", "labels.parquet", k=2)
    refused(capsys, ev, f.name, "line 2", bad)


@pytest.mark.slow
def test_non_utf8_bytes_in_jsonl(ev: Path, capsys, text_files: TextFiles) -> None:
    f = text_files.write(
        ev / "labels.jsonl",
        b'{"query_id": "q1", "chunk_id": "g1"}\n{"query_id": "q2", "chunk_id": "g\xe92"}\n',
    )
    manifest(ev, "a.parquet", "b.parquet", f.name)
    refused(capsys, ev, f.name, "line 2", "not UTF-8", "0xe9")


@pytest.mark.slow
@pytest.mark.parametrize(
    "line",
    [
        '["q1", "g1"]',
        '"q1"',
        "{not json}",
        '{"query_id": "q2", "chunk_id": "g2"} {"query_id": "q3", "chunk_id": "g3"}',  # two on one line
        '{"query_id": "q2",',  # an object across two lines
    ],
)
def test_a_line_that_is_not_a_json_object(ev: Path, capsys, text_files: TextFiles, line: str) -> None:
    text = '{"query_id": "q1", "chunk_id": "g1"}\n\n' + line + '\n "chunk_id": "g2"}\n'
    f = text_files.write(ev / "labels.jsonl", text if line.endswith(",") else text.rsplit("\n", 2)[0] + "\n")
    manifest(ev, "a.parquet", "b.parquet", f.name)
    refused(capsys, ev, f.name, "line 3")


def test_duplicate_json_keys(ev: Path, capsys, text_files: TextFiles) -> None:
    text = '{"query_id": "q0", "chunk_id": "g0"}\n\n{"query_id": "q1", "chunk_id": "g1", "chunk_id": "g9"}\n'
    f = text_files.write(ev / "labels.jsonl", text)
    manifest(ev, "a.parquet", "b.parquet", f.name)
    refused(capsys, ev, f.name, "line 3", "'chunk_id' appears twice")


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, needles",
    [
        ("q1 Q0 g1 1 2.0 tag\nq1 Q0 x1 2 1.0\n", ("line 2", "expected 6 fields")),
        ("q1 Q0 g1 1 2.0 tag\r\n\r\nq1 Q0 x\xa01 2 1.0 tag\r\n", ("line 3", "expected 6 fields", "found 7")),
        ("q1\tQ0\tg1\t1\t2.0\ttag\nq1\tQ0\tx1\t2\tnan\ttag\n", ("line 2", "'nan' is not finite")),
        ("q1 Q0 g1 1 2.0 tag\n\nq1 Q0 x1 2.5 1.0 tag\n", ("line 3", "rank '2.5'", "not numbers")),
        ("q1 Q0 g1 1 2.0 tag\nq1 Q0 x1 2 NA tag\n", ("line 2", "score 'NA'", "not numbers")),
    ],
)
def test_trec_run_line_with_wrong_fields(ev: Path, capsys, text_files: TextFiles, text: str, needles) -> None:
    f = text_files.write(ev / "b.run", text)
    manifest(ev, "a.parquet", f.name, "labels.parquet", k=2)
    refused(capsys, ev, f.name, *needles)


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, needles",
    [
        ("q1 0 g1 1\nq2 0 g2\n", ("line 2", "expected 4 fields")),
        ("q1\t0\tg1\t1\n\nq2\t0\tg2\t1.0\n", ("line 3", "relevance '1.0' is not an integer")),
        ("q1 0 g1 1\nq2 0 g2 9007199254740992\n", ("line 2", "too large")),
    ],
)
def test_trec_qrels_line_with_wrong_fields(
    ev: Path, capsys, text_files: TextFiles, text: str, needles
) -> None:
    f = text_files.write(ev / "labels.qrels", text)
    manifest(ev, "a.parquet", "b.parquet", f.name)
    refused(capsys, ev, f.name, *needles)


def test_manifest_naming_a_missing_file(ev: Path, capsys) -> None:
    manifest(ev, "a.parquet", "runs/nowhere.parquet", "labels.parquet")
    refused(capsys, ev, "triage.toml", "[arms.b]", "runs/nowhere.parquet", "missing file")


@pytest.mark.slow
@pytest.mark.parametrize("other", ['["q2"]', "true", '{"id": "q2"}', "7"])
def test_mixed_value_kinds_in_a_jsonl_column(ev: Path, capsys, text_files: TextFiles, other: str) -> None:
    text = f'{{"query_id": "q1", "chunk_id": "g1"}}\n{{"query_id": {other}, "chunk_id": "g2"}}\n'
    f = text_files.write(ev / "labels.jsonl", text)
    manifest(ev, "a.parquet", "b.parquet", f.name)
    refused(capsys, ev, f.name, "line 2", "'query_id'")


def test_query_whose_only_labels_have_relevance_zero_is_unlabelled(ev: Path, capsys) -> None:
    write_parquet(ev / "labels.parquet", [*LABELS[:2], dict(LABELS[2], relevance=0)])
    rc, out, _ = run_cli(capsys, str(ev))
    d = json.loads(out)
    assert rc == 0
    assert (d["n_queries"], d["n_scored"], d["n_unlabelled"], d["unlabelled"]) == (3, 2, 1, ["q3"])
    # q3 (the miss) is not scored: q1 and q2 are two hits, at ranks 1 and 2.
    assert cells(d) == {"both_hit": 2, "both_miss": 0, "a_hit_b_miss": 0, "a_miss_b_hit": 0}
    assert d["paired"]["n"] == 2 and d["arms"]["a"]["n"] == 2
    assert d["arms"]["a"]["hit_rate"] == 1.0 and d["arms"]["b"]["hit_rate"] == 1.0
    assert d["arms"]["a"]["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    assert problems(d) == [("warning", "labels.unlabelled")]
    check = next(c for c in d["checks"] if c["code"] == "labels.unlabelled")
    assert check["message"].endswith(": q3") and check["message"].startswith("1 queries")


def test_integer_ids_are_read_as_their_text(ev: Path, capsys) -> None:
    # Runs with integer query and chunk ids; labels spelling them as text. A: q1 gold at 1, q2 at
    # 2, q3 missed; B: q1 at 2, q2 at 1, q3 at 1.
    lists_a, lists_b = {1: [7, 8], 2: [7, 8], 3: [7, 8]}, {1: [8, 7], 2: [8, 7], 3: [9, 7]}
    for arm, lists in (("a", lists_a), ("b", lists_b)):
        rows = [{"query_id": q, "retrieved": r, "scores": [2.0, 1.0]} for q, r in lists.items()]
        write_parquet(ev / f"{arm}.parquet", rows, {"k": "2"})
    gold = [("1", "7"), ("2", "8"), ("3", "9")]
    write_parquet(ev / "labels.parquet", [{"query_id": q, "chunk_id": c} for q, c in gold])
    rc, out, _ = run_cli(capsys, str(ev))
    d = json.loads(out)
    assert rc == 0
    assert (d["n_queries"], d["n_scored"], d["unlabelled"]) == (3, 3, [])  # int 1 met "1", 7 met "7"
    assert d["missing"] == {"a": [], "b": []} and problems(d) == []
    assert d["arms"]["a"]["hit_rate"] == pytest.approx(2 / 3) and d["arms"]["b"]["hit_rate"] == 1.0
    assert d["arms"]["a"]["mrr"] == pytest.approx((1 + 1 / 2) / 3)
    assert d["arms"]["b"]["mrr"] == pytest.approx((1 / 2 + 1 + 1) / 3)
    assert [(f["query_id"], f["gold_rank_a"], f["gold_rank_b"]) for f in d["flips"]] == [("3", None, 1)]


@pytest.mark.slow
def test_no_traceback_at_the_process_level(ev: Path) -> None:
    (ev / "b.parquet").write_bytes(b"PAR1 not really")
    out = subprocess.run([sys.executable, "-m", "triage", "report", str(ev)], capture_output=True, text=True)
    assert out.returncode == 2
    assert "b.parquet" in out.stderr and "Traceback" not in out.stderr


def test_two_runs_without_labels_is_a_usage_error(ev: Path, capsys) -> None:
    rc = main(["report", str(ev / "a.parquet"), str(ev / "b.parquet")])
    assert rc == 2 and "--labels" in capsys.readouterr().err


def test_list_of_ids_with_a_null_element(ev: Path, capsys) -> None:
    rows = [GOOD[0], dict(GOOD[1], retrieved=["x2", None]), GOOD[2]]
    write_parquet(ev / "a.parquet", rows, {"k": "2"}, RUN_SCHEMA)
    refused(capsys, ev, "a.parquet", "row 2", "null")


def test_unknown_manifest_key_is_named(ev: Path, capsys) -> None:
    text = (ev / "triage.toml").read_text().replace("[labels]", '[labels]\npaht = "x"')
    (ev / "triage.toml").write_text(text)
    refused(capsys, ev, "triage.toml", "unknown key 'paht'")


def test_arrow_schema_kinds_round_trip(ev: Path, capsys) -> None:
    # large_string ids and large_list lists are the same contract as string / list.
    schema = pa.schema([("query_id", pa.large_string()), ("retrieved", pa.large_list(pa.large_string()))])
    write_parquet(
        ev / "b.parquet", [{k: r[k] for k in ("query_id", "retrieved")} for r in GOOD], {"k": "2"}, schema
    )
    labels = pa.schema(
        [("query_id", pa.large_string()), ("chunk_id", pa.large_string()), ("relevance", pa.int8())]
    )
    write_parquet(ev / "labels.parquet", LABELS, schema=labels)
    rc, out, _ = run_cli(capsys, str(ev))
    d = json.loads(out)
    assert rc == 0 and problems(d) == []
    assert numbers(d, "b") == GOOD_NUMBERS and numbers(d, "a") == GOOD_NUMBERS
    assert cells(d) == GOOD_CELLS and d["n_scored"] == 3


@pytest.mark.slow
def test_jsonl_and_parquet_give_the_same_numbers(ev: Path, capsys, text_files: TextFiles) -> None:
    rc, parquet_out, _ = run_cli(capsys, str(ev))
    text = "\ufeff" + "\r\n\r\n".join(json.dumps(r) for r in GOOD) + "\r\n"  # BOM, CRLF, blank lines
    f = text_files.write(ev / "a.jsonl", text)
    (ev / (f.name + ".meta.json")).write_text('{"k": 2}')
    manifest(ev, f.name, "b.parquet", "labels.parquet", k=None)
    rc2, jsonl_out, _ = run_cli(capsys, str(ev))
    assert rc == rc2 == 0
    parquet, jsonl = json.loads(parquet_out), json.loads(jsonl_out)
    assert numbers(parquet, "a") == numbers(jsonl, "a") == GOOD_NUMBERS
    assert cells(parquet) == cells(jsonl) == GOOD_CELLS
    assert jsonl["arms"]["a"]["k"] == 2


def test_an_error_naming_a_hostile_path_shows_its_escapes_as_tokens(tmp_path: Path, capsys) -> None:
    hostile = tmp_path / "runs\x1b]0;pwned\x07\x1b[2J"
    rc = main(["report", str(hostile)])
    err = capsys.readouterr().err
    assert rc == 2 and "\x1b" not in err and "\x07" not in err
    assert "runs␛]0;pwned␇␛[2J" in err


@pytest.mark.slow
def test_a_jsonl_list_mixing_string_and_integer_ids_reads_them_as_text(
    ev: Path, capsys, text_files: TextFiles
) -> None:
    f = text_files.write(
        ev / "a.jsonl",
        '{"query_id": "q1", "retrieved": ["g1", 7]}\n{"query_id": "q2", "retrieved": [8, "g2"]}\n'
        '{"query_id": "q3", "retrieved": ["x3"]}\n',
    )
    manifest(ev, f.name, "b.parquet", "labels.parquet", k=2)
    rc, out, _ = run_cli(capsys, str(ev))
    assert rc == 0 and json.loads(out)["arms"]["a"]["hit_rate"] == pytest.approx(2 / 3)


@pytest.mark.slow
def test_a_jsonl_list_mixing_ids_and_floats_is_refused_by_line(
    ev: Path, capsys, text_files: TextFiles
) -> None:
    f = text_files.write(
        ev / "a.jsonl",
        '{"query_id": "q1", "retrieved": ["g1"]}\n{"query_id": "q2", "retrieved": ["g2", 1.5]}\n',
    )
    manifest(ev, f.name, "b.parquet", "labels.parquet", k=2)
    refused(capsys, ev, f.name, "line 2", "'retrieved'")


@pytest.mark.parametrize("given", [["nowhere"], ["nowhere_a.parquet", "nowhere_b.parquet", "--labels", "x"]])
def test_the_app_refuses_a_path_that_names_nothing_before_it_opens(
    tmp_path: Path, capsys, monkeypatch, given: list[str]
) -> None:
    """`triage bogus` exits 2 naming the path; no app is started (one would wait for keys)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("triage.ui.app.run", lambda *a, **k: pytest.fail("the app was started"))
    code = main(given)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert f"{given[0]}: does not exist" in err


def test_measures_by_name_are_said_to_keep_their_own_cut_off(capsys) -> None:
    """Under a table titled 'at k = 5', nDCG@10 is at 10: the note under the table says so, and only
    when a measure is named."""
    assert main(["report", "--format", "markdown", "--measures", "nDCG@10"]) == 0
    assert "measures by name are at their own cut-off" in capsys.readouterr().out
    assert main(["report", "--format", "markdown"]) == 0
    assert "own cut-off" not in capsys.readouterr().out


def test_the_app_takes_measures_by_name_and_refuses_an_unknown_one_before_it_opens(
    capsys, monkeypatch
) -> None:
    """`triage --measures …` opens the app on the named measures (the spec it is handed names them);
    an unknown name exits 2 listing the close ones, no app started."""
    handed = []
    monkeypatch.setattr("triage.ui.app.run", lambda make, *a: handed.append(make) or 0)
    assert main(["--measures", "ndcg_cut_10,AP", "--tests", "t,wilcoxon"]) == 0
    spec = handed[0]()
    assert [str(m) for m in spec.measures] == ["nDCG@10", "AP"] and spec.tests[:2] == ("t", "wilcoxon")
    handed.clear()
    assert main(["--measures", "nDCG@10,APP"]) == 2
    assert handed == [] and "unknown measure 'APP' (close: AP" in capsys.readouterr().err
