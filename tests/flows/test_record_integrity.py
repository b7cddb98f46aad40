"""Records that prove themselves (docs/labels.md "Label amendments"): an edited record is caught by its own
hash
wherever it sits, its neighbours are kept, copies count once, a future schema costs only its own line, and a
tear a later writer repaired is reported once as repaired, not as damage forever."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.labels.log import read_log
from triage.labels.records import ADD, ProblemKind, parse_record, read_file
from triage.labels.writer import Writer
from triage.workspace.snapshot import open_snapshot

PAIRS = [("q150", "driftwood/handbook-2023#009"), ("q001", "extra#1"), ("q002", "extra#2"), ("q003", "x#3")]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    out = tmp_path / "sample"
    shutil.copytree(bundled("sample_runs"), out)
    return out


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def written(copy: Path, pairs=PAIRS, name: str = "ana@host.s1.jsonl") -> Path:
    frozen = copy / "labels.parquet"
    w = Writer(copy / "labels.amendments", frozen, sha(frozen), "ana", file_name=name)
    for q, c in pairs:
        w.append(w.new_record(ADD, q, c, evidence={"arm": "b", "rank": 1}))
    return w.path


def edit_line(path: Path, index: int, **changes: object) -> None:
    """Change fields of line `index` as a hand with a text editor would: the hash stays as it was."""
    lines = path.read_bytes().split(b"\n")[:-1]
    obj = json.loads(lines[index])
    obj.update(changes)
    lines[index] = json.dumps(obj, ensure_ascii=False, sort_keys=True).encode()
    path.write_bytes(b"".join(line + b"\n" for line in lines))


@pytest.mark.parametrize("index", [0, 2, 3])  # first, middle, last
def test_an_edited_record_is_quarantined_alone_wherever_it_sits(copy: Path, index: int) -> None:
    path = written(copy)
    edit_line(path, index, chunk_id="forged#1")
    records, problems = read_file(path)
    assert [(p.kind, p.seq) for p in problems] == [(ProblemKind.EDITED, index + 1)]
    assert [r.seq for r in records] == [s for s in (1, 2, 3, 4) if s != index + 1]
    assert "forged#1" not in {r.chunk_id for r in records}


def test_labels_verify_names_an_edit_of_the_last_record(copy: Path, capsys) -> None:
    path = written(copy)
    assert main(["labels", "verify", str(copy)]) == 0
    edit_line(path, 3, relevance=3)
    capsys.readouterr()
    assert main(["labels", "verify", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "edited after it was written" in out and "(seq 4)" in out


@pytest.mark.slow
@pytest.mark.parametrize("how", ["copy", "symlink", "hardlink"])
def test_a_copied_or_linked_session_file_counts_once(copy: Path, how: str) -> None:
    path = written(copy)
    before = open_snapshot(from_manifest(copy)).labels
    twin = path.with_name("ana@host.s1 (copy).jsonl")
    {
        "copy": lambda: shutil.copy(path, twin),
        "symlink": lambda: twin.symlink_to(path),
        "hardlink": lambda: os.link(path, twin),
    }[how]()
    after = open_snapshot(from_manifest(copy)).labels
    assert len(after.records) == len(before.records) == 4
    assert after.head == before.head and after.by_arm() == before.by_arm() == {"a": 0, "b": 4, "none": 0}
    assert after.log.damage == ()


def test_one_id_with_two_contents_is_reported_and_the_first_kept(copy: Path) -> None:
    path = written(copy)
    twin = path.with_name("zed@host.s9.jsonl")
    lines = path.read_bytes().split(b"\n")[:-1]
    obj = json.loads(lines[0])
    obj["chunk_id"] = "other#1"
    twin.write_bytes(json.dumps(obj).encode() + b"\n")  # its own hash is stale too: edited
    log = read_log(copy / "labels.amendments", sha(copy / "labels.parquet"))
    assert len(log.records) == 4 and {p.kind for p in log.problems} == {ProblemKind.EDITED}
    # Re-sealed, it proves itself, and still cannot replace the record first read under its id.
    resealed = replace(parse_record(lines[0]), chunk_id="other#1", prev=None).sealed()
    twin.write_bytes(resealed.line() + b"\n")
    log = read_log(copy / "labels.amendments", sha(copy / "labels.parquet"))
    assert len(log.records) == 4 and "other#1" not in {r.chunk_id for r in log.records}
    assert [p.kind for p in log.problems] == [ProblemKind.DUPLICATE]


def test_a_future_schema_costs_only_its_own_line(copy: Path) -> None:
    path = written(copy)
    edit_line(path, 1, schema=2)
    records, problems = read_file(path)
    assert [(p.kind, p.offset > 0) for p in problems] == [(ProblemKind.QUARANTINED, True)]
    assert "schema 2" in problems[0].message
    assert [r.seq for r in records] == [1, 3, 4]


def test_a_huge_relevance_is_quarantined_by_name_not_a_traceback(copy: Path, capsys) -> None:
    path = written(copy)
    edit_line(path, 1, relevance=10**20)
    records, problems = read_file(path)
    assert [r.seq for r in records] == [1, 3, 4] and "relevance" in problems[0].message
    assert len(problems[0].message) < 200
    capsys.readouterr()
    assert main(["report", str(copy), "--format", "json"]) == 0
    checks = {c["code"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["labels.amendments_damaged"]["level"] == "warning"
    assert main(["labels", "log", str(copy)]) == 0
    assert main(["labels", "verify", str(copy)]) == 1


def test_a_tear_completed_by_the_next_writer_is_repaired_not_damage(copy: Path, capsys) -> None:
    path = written(copy, PAIRS[:2])
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"schema": 1, "id": "cut-sh')  # a crash mid-write
    assert main(["labels", "verify", str(copy)]) == 1  # torn: said so
    w = Writer(
        copy / "labels.amendments", copy / "labels.parquet", sha(copy / "labels.parquet"), "ana", path.name
    )
    done = w.append(w.new_record(ADD, *PAIRS[2]))
    assert done.repairs == len(whole) and done.seq == 3
    records, problems = read_file(path)
    assert [r.seq for r in records] == [1, 2, 3]
    assert [p.kind for p in problems] == [ProblemKind.REPAIRED]
    capsys.readouterr()
    assert main(["labels", "verify", str(copy)]) == 0
    assert "note" in capsys.readouterr().out
    assert open_snapshot(from_manifest(copy)).labels.log.damage == ()


def test_a_record_torn_only_of_its_newline_does_not_break_the_chain(copy: Path) -> None:
    path = written(copy, PAIRS[:2])
    path.write_bytes(path.read_bytes()[:-1])  # all of record 2 but its newline
    w = Writer(
        copy / "labels.amendments", copy / "labels.parquet", sha(copy / "labels.parquet"), "ana", path.name
    )
    done = w.append(w.new_record(ADD, *PAIRS[2]))
    assert done.seq == 3
    records, problems = read_file(path)
    assert [r.seq for r in records] == [1, 2, 3] and problems == []


def test_a_fifo_in_the_amendments_folder_is_named_not_opened(copy: Path) -> None:
    written(copy)
    os.mkfifo(copy / "labels.amendments" / "pipe.jsonl")
    log = read_log(copy / "labels.amendments", sha(copy / "labels.parquet"))  # would block if opened
    assert len(log.records) == 4
    assert [(p.file, p.kind) for p in log.problems] == [("pipe.jsonl", ProblemKind.SPECIAL)]
