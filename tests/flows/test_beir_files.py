"""Special files in a BEIR folder are refused, not skipped: a corpus.jsonl, queries.jsonl or
qrels/SPLIT.tsv that is a FIFO, a device, a folder, or a link to one (or to nothing), and a `qrels`
that is not a folder, exit 2 naming it — never "no corpus" with exit 0, never a wait on a FIFO (each
FIFO case runs in a process with a deadline), never a message that contradicts itself ("no qrels for
split 'test' (splits present: test)")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import triage
from triage.cli.main import main
from triage.core.errors import InputError
from triage.core.inputs.manifest import from_args

from conftest import ROOT

FILES = ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"]
KINDS = {  # how a name is made special, and a word its refusal says
    "fifo": "FIFO",
    "link to a fifo": "FIFO",
    "link to /dev/null": "device",
    "folder": "folder",
    "link to a folder": "folder",
    "link to nothing": "does not exist",
}
WAITS = {"fifo", "link to a fifo"}  # opening these would wait for a writer


def beir(root: Path) -> tuple[Path, Path, Path]:
    """A BEIR folder (two queries, three passages, splits test and dev) and two TREC runs."""
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": q}) + "\n" for q in ("q1", "q2"))
    )
    docs = [{"_id": d, "title": d, "text": f"about {d}"} for d in ("d1", "d2", "d3")]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    head = "query-id\tcorpus-id\tscore\n"
    (folder / "qrels" / "test.tsv").write_text(head + "q1\td1\t1\nq2\td2\t1\n")
    (folder / "qrels" / "dev.tsv").write_text(head + "q1\td3\t1\n")
    a, b = root / "a.run", root / "b.run"
    a.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d3 2 1.0 a\nq2 Q0 d3 1 2.0 a\nq2 Q0 d2 2 1.0 a\n")
    b.write_text("q1 Q0 d3 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d2 1 2.0 b\nq2 Q0 d3 2 1.0 b\n")
    return folder, a, b


def make(path: Path, kind: str) -> None:
    """Put a special file of `kind` at `path` (what was there is removed)."""
    path.unlink()
    aside = path.with_name(f"aside-{path.name}")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to a fifo":
        os.mkfifo(aside)
        path.symlink_to(aside.name)
    elif kind == "link to /dev/null":
        path.symlink_to(os.devnull)
    elif kind == "folder":
        path.mkdir()
    elif kind == "link to a folder":
        aside.mkdir()
        path.symlink_to(aside.name)
    else:
        path.symlink_to("nowhere")


def report(*args: str, wait: bool) -> tuple[int, str, str]:
    """`triage report --format json ARGS`: in this process, or (`wait`: a FIFO is there) in a
    child process given 60 s, so a reader that waits on the FIFO fails the test, not hangs it."""
    argv = ["report", *args, "--format", "json", "--k", "2"]
    if not wait:
        return main(argv), "", ""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "triage", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "kind",
    [pytest.param(k, marks=pytest.mark.slow) if k in WAITS else k for k in KINDS],  # a process each
)
@pytest.mark.parametrize("name", FILES)
def test_a_special_file_in_a_beir_folder_is_refused_naming_it(
    tmp_path: Path, capsys, name: str, kind: str
) -> None:
    folder, a, b = beir(tmp_path)
    make(folder / name, kind)
    rc, out, err = report(str(a), str(b), "--labels", str(folder), wait=kind in WAITS)
    captured = capsys.readouterr()
    out, err = out + captured.out, err + captured.err
    assert rc == 2 and out == "" and "Traceback" not in err, err
    assert f"{folder / name}: is " in err and KINDS[kind] in err, err
    assert "no corpus" not in err and "no qrels" not in err  # neither skipped nor contradicted


@pytest.mark.parametrize(
    "kind", [pytest.param("fifo", marks=pytest.mark.slow), "link to /dev/null", "link to nothing", "a file"]
)
def test_a_qrels_that_is_not_a_folder_is_refused(tmp_path: Path, capsys, kind: str) -> None:
    folder, a, b = beir(tmp_path)
    qrels = folder / "qrels"
    for f in qrels.iterdir():
        f.unlink()
    qrels.rmdir()
    qrels.touch()
    if kind == "a file":
        qrels.write_text("query-id\tcorpus-id\tscore\n")
    else:
        make(qrels, kind)
    rc, _, err = report(str(a), str(b), "--labels", str(folder), wait=kind == "fifo")
    err += capsys.readouterr().err
    assert rc == 2 and f"{qrels}: is " in err and "Traceback" not in err, err
    assert "not a folder" in err or "which does not exist" in err, err


@pytest.mark.parametrize("kind", ["folder", "link to /dev/null"])
def test_the_manifest_and_the_api_refuse_it_too(tmp_path: Path, capsys, kind: str) -> None:
    folder, a, b = beir(tmp_path)
    make(folder / "corpus.jsonl", kind)
    with pytest.raises(InputError, match="corpus.jsonl: is ") as e:
        triage.open(a=a, b=b, labels=folder, k=2)
    assert KINDS[kind] in str(e.value)
    (tmp_path / "triage.toml").write_text(
        'k = 2\n[labels]\npath = "beir"\nsplit = "test"\n[arms.a]\npath = "a.run"\n[arms.b]\npath = "b.run"\n'
    )
    assert main(["report", str(tmp_path)]) == 2
    assert f"{folder / 'corpus.jsonl'}: is " in capsys.readouterr().err


@pytest.mark.slow
def test_a_special_file_not_read_is_not_refused(tmp_path: Path, capsys) -> None:
    """Only what is read is checked: a FIFO corpus.jsonl, with --corpus naming another file, and a
    FIFO qrels/dev.tsv, with the test split read, are left alone."""
    folder, a, b = beir(tmp_path)
    corpus = tmp_path / "corpus.jsonl"
    (folder / "corpus.jsonl").rename(corpus)
    os.mkfifo(folder / "corpus.jsonl")
    make(folder / "qrels" / "dev.tsv", "fifo")
    rc, out, err = report(str(a), str(b), "--labels", str(folder), "--corpus", str(corpus), wait=True)
    assert rc == 0 and json.loads(out)["n_queries"] == 2, err


def test_a_missing_split_lists_the_others_and_never_itself(tmp_path: Path, capsys) -> None:
    folder, a, b = beir(tmp_path)
    make(folder / "qrels" / "dev.tsv", "link to nothing")  # a name there: listed, read only if asked
    rc, _, _ = report(str(a), str(b), "--labels", str(folder), "--split", "train", wait=False)
    err = capsys.readouterr().err
    assert rc == 2 and "no qrels for split 'train' (splits present: dev, test)" in err, err
    rc, _, _ = report(str(a), str(b), "--labels", str(folder), "--split", "dev", wait=False)
    err = capsys.readouterr().err
    assert rc == 2 and "dev.tsv: is a symbolic link to nowhere, which does not exist" in err, err


@pytest.mark.parametrize("name", FILES)
def test_a_fifo_is_refused_before_anything_opens_it(tmp_path: Path, name: str) -> None:
    """The quick form of the FIFO cases: the evaluation's files are named (nothing read) in a
    thread given 10 s; were the FIFO opened, a writer opened here would let that open return."""
    folder, a, b = beir(tmp_path)
    make(folder / name, "fifo")
    found: list[BaseException] = []

    def name_files() -> None:
        try:
            from_args(a, b, folder)
        except BaseException as e:  # handed to the test
            found.append(e)

    worker = threading.Thread(target=name_files, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # an open() waits for a writer: give it one, then fail
        os.close(os.open(folder / name, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"{name}: a FIFO was opened")
    (e,) = found
    assert isinstance(e, InputError) and e.path == str(folder / name) and "FIFO" in e.problem


def test_beir_metadata_is_shown_as_fields_or_not_at_all(tmp_path: Path) -> None:
    """BEIR's `metadata` object: its keys as `metadata.key` fields in a query's detail, nothing
    for `{}` (never a list of None)."""
    from triage.workspace.detail import build_detail, flat_fields
    from triage.workspace.snapshot import open_snapshot
    from triage.workspace.spec import evaluation_spec

    folder, run_a, run_b = beir(tmp_path)
    rows = [json.loads(line) for line in (folder / "queries.jsonl").read_text("utf-8").splitlines()]
    rows[0]["metadata"] = {"source": "pubmed", "year": 2020, "venue": None, "tags": [None, "x"]}
    for row in rows[1:]:
        row["metadata"] = {}
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    snapshot = open_snapshot(
        evaluation_spec(runs=(run_a, run_b), labels=folder, queries=folder / "queries.jsonl", k=2)
    )
    ev = snapshot.ev
    first = build_detail(snapshot, ev.query_index(rows[0]["_id"]), None).fields
    assert first["metadata.source"] == "pubmed" and first["metadata.year"] == 2020
    assert "metadata.venue" not in first and "metadata" not in first and first["metadata.tags"] == ["x"]
    other = build_detail(snapshot, ev.query_index(rows[1]["_id"]), None).fields
    assert not any(k.startswith("metadata") for k in other)
    assert flat_fields("m", [None, None]) == {} and flat_fields("m", {"a": {"b": None}}) == {}


@pytest.mark.parametrize("split", ["../../other", "/abs/x", "..", "a/b", ""])
def test_a_split_that_is_a_path_is_refused(tmp_path: Path, capsys, split: str) -> None:
    """A split names qrels/NAME.tsv in the folder: a path never reads, nor writes, outside it."""
    folder, run_a, run_b = beir(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    argv = ["report", str(run_a), str(run_b), "--labels", str(folder), "--split", split]
    assert main(argv) == 2
    assert "is not a split's name" in capsys.readouterr().err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_beir_folder_of_compressed_files_is_read(tmp_path: Path, capsys) -> None:
    """corpus.jsonl.gz, queries.jsonl.gz and qrels/test.tsv.gz, as the BEIR sets ship: read as the
    plain files are, corpus included."""
    import gzip

    folder, run_a, run_b = beir(tmp_path)
    argv = ["report", str(run_a), str(run_b), "--labels", str(folder), "--format", "json"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        path = folder / name
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    assert main(argv) == 0
    packed = json.loads(capsys.readouterr().out)
    for side in ("a", "b"):
        assert {k: v for k, v in packed["arms"][side].items() if k != "path"} == {
            k: v for k, v in plain["arms"][side].items() if k != "path"
        }
    codes = {c["code"]: c["message"] for c in packed["checks"]}
    assert "no corpus given" not in codes.get("corpus.ids", "")
