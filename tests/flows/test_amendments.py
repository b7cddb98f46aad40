"""Amendments (docs/labels.md "Label amendments"): a review session's decisions are
chained JSON Lines records beside a frozen label file that is never written; reading keeps every
good record and reports the rest; faults (concurrent writers, kill -9, a full or read-only disk)
lose nothing. Everything runs on a copy of the bundled sample or on files written here."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.core.measures.paired import Outcome
from triage.labels import writer as amendments
from triage.labels.records import ADD, RETRACT, Problem, Record, line_hash, read_file
from triage.labels.state import LabelMode
from triage.labels.writer import FrozenFileChanged, Writer
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

import sample_story as story

# The sample's story: q150 regressed (A hit, B missed) because B ranked first a near-duplicate of
# the gold chunk that the frozen labels do not hold. Paired counts are
# (both_hit, both_miss, a_miss_b_hit, a_hit_b_miss).
Q, CHUNK = story.NEAR_DUP_QUERY, story.NEAR_DUP_CHUNK
EVIDENCE = {"arm": "b", "rank": story.NEAR_DUP_RANK_B}
FROZEN = story.FROZEN
RESOLVED = story.AMENDED


# -- helpers ------------------------------------------------------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A private copy of the bundled sample (its labels.parquet is the frozen file)."""
    out = tmp_path / "sample"
    shutil.copytree(bundled("sample_runs"), out)
    return out


def labels_of(copy: Path) -> Path:
    return copy / "labels.parquet"


def folder_of(copy: Path) -> Path:
    return copy / "labels.amendments"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fingerprint(path: Path) -> tuple[bytes, str, int]:
    """Bytes, sha256 and mtime: what "never written" means for the frozen file."""
    return path.read_bytes(), sha256(path), path.stat().st_mtime_ns


def evaluate(copy: Path, label_state: str = "amended", apply_stale: bool = False) -> Session:
    """A review session of "ana" on `copy`: its decisions are written and move the numbers."""
    snapshot = open_snapshot(from_manifest(copy), mode=LabelMode(label_state), apply_stale=apply_stale)
    return Session(snapshot, reviewer="ana")


def counts(paired: dict) -> tuple[int, int, int, int]:
    return paired["both_hit"], paired["both_miss"], paired["a_miss_b_hit"], paired["a_hit_b_miss"]


def ev_counts(session: Session) -> tuple[int, int, int, int]:
    p = session.ev.paired()
    return p.both_hit, p.both_miss, p.a_miss_b_hit, p.a_hit_b_miss


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()  # drop anything printed before
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def report(capsys: pytest.CaptureFixture[str], copy: Path, *extra: str) -> dict:
    rc, out, err = cli(capsys, "report", str(copy), "--format", "json", *extra)
    assert rc == 0, err
    return json.loads(out)


def check(ev: Session, code: str) -> tuple[str, str] | None:
    """(level, message) of the check `code`, None when absent."""
    found = [(c.level, c.message) for c in ev.checks if c.code == code]
    return found[0] if found else None


def jsonl_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jsonl"))


def only_file(copy: Path) -> Path:
    files = jsonl_files(folder_of(copy))
    assert len(files) == 1, files
    return files[0]


def lines_of(path: Path) -> list[bytes]:
    """Complete lines, without their newline."""
    return path.read_bytes().split(b"\n")[:-1]


def writer(copy: Path, file_name: str = "ana@host.s1.jsonl", reviewer: str = "ana") -> Writer:
    frozen = labels_of(copy)
    return Writer(folder_of(copy), frozen, sha256(frozen), reviewer, file_name=file_name)


def append_adds(w: Writer, pairs: list[tuple[str, str]], note: str = "") -> list[Record]:
    return [w.append(w.new_record(ADD, q, c, note=note, evidence=EVIDENCE)) for q, c in pairs]


# Four adds; the first resolves q150, the others add gold the sample's numbers do not notice.
FOUR = [(Q, CHUNK), ("q001", "extra#1"), ("q002", "extra#2"), ("q003", "extra#3")]


def assert_chain(records: list[Record], problems: list[Problem], n: int) -> None:
    """`n` records, seq 1..n, each `prev` the hash of the record before, nothing reported."""
    assert problems == []
    assert [r.seq for r in records] == list(range(1, n + 1))
    assert records[0].prev is None
    for before, after in zip(records, records[1:], strict=False):
        assert after.prev == line_hash(before.line())


# -- mechanisms for a full or read-only disk ----------------------------------------------------
# The tests run as root, so chmod stops no write. Used: a small tmpfs mounted on the amendments
# folder (`mount -t tmpfs -o size=64k`, then filled: the kernel answers ENOSPC; `mount -o
# remount,ro`: EROFS) — root here holds CAP_SYS_ADMIN, so mounting works and these are real
# filesystem refusals. Where mount is not permitted, the full disk falls back to `os.write`
# raising ENOSPC (a link to /dev/full would be refused: session files are opened without following
# links), the read-only folder to `os.open` raising EROFS, and a write cut short to `os.write`
# writing only part; the fallback is announced with a warning, never skipped. The os.write and
# os.open variants also run as parameters of their own, so the fallbacks stay tested where
# mounting works.


def _run(*argv: str) -> bool:
    if shutil.which(argv[0]) is None:
        return False
    return subprocess.run(list(argv), capture_output=True).returncode == 0


@contextmanager
def tmpfs(folder: Path, size: str = "64k", wanted: bool = True) -> Iterator[bool]:
    """A small tmpfs mounted on `folder` (True), or False when mounting is not permitted (or not
    `wanted`: the test's mechanism needs no mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    if not wanted:
        yield False
        return
    if not _run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)):
        warnings.warn(f"cannot mount a tmpfs on {folder}: using the fallback mechanism", stacklevel=3)
        yield False
        return
    try:
        yield True
    finally:
        _run("mount", "-o", "remount,rw", str(folder))
        assert _run("umount", str(folder)), f"could not unmount {folder}"


def fill(path: Path) -> None:
    """Write to `path` until its filesystem is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)


def erofs_on_open(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Fallback: opening anything under `folder` fails as on a read-only filesystem."""
    real_open = os.open

    def fake_open(path, flags, *args, **kwargs):
        if str(path).startswith(str(folder)) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(amendments.os, "open", fake_open)


# -- a helper process that appends records ------------------------------------------------------

WRITER_SCRIPT = r"""
import hashlib, os, sys
from pathlib import Path
from triage.labels.records import ADD
from triage.labels.writer import Writer

folder, frozen, tag = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
n, note_bytes, big = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
file_name = sys.argv[7] if len(sys.argv) > 7 else None
w = Writer(folder, frozen, hashlib.sha256(frozen.read_bytes()).hexdigest(), tag, file_name=file_name)
print("ready", flush=True)
sys.stdin.readline()  # the test starts every writer at once
for i in range(n):
    w.append(w.new_record(ADD, "q001", f"{tag}-{i}", note=f"{tag}:{i}:" + "n" * note_bytes))
if big:
    record = w.new_record(ADD, "q001", "big", note="x" * big)
    print("big", flush=True)
    w.append(record)
print("done", flush=True)
"""


def start_writers(
    tmp_path: Path, copy: Path, specs: list[tuple[str, int, int, int, str | None]]
) -> list[subprocess.Popen]:
    """One process per (tag, n, note bytes, big note bytes, file name); all released together."""
    script = tmp_path / "append_records.py"
    script.write_text(WRITER_SCRIPT, "utf-8")
    procs = []
    for tag, n, note_bytes, big, file_name in specs:
        argv = [sys.executable, str(script), str(folder_of(copy)), str(labels_of(copy)), tag]
        argv += [str(n), str(note_bytes), str(big)] + ([file_name] if file_name else [])
        procs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("\n")
        p.stdin.flush()
    return procs


def finish(proc: subprocess.Popen, timeout: float = 300) -> int:
    """Wait for a writer process, closing its pipes; its exit status."""
    proc.communicate(timeout=timeout)
    return proc.returncode


def note_for(tag: str, i: int, note_bytes: int) -> str:
    return f"{tag}:{i}:" + "n" * note_bytes


# == 1. Round trip on the sample ================================================================


def test_add_resolves_the_regression_and_writes_one_chained_record(copy: Path) -> None:
    ev = evaluate(copy)
    change = ev.add(Q, CHUNK, evidence=EVIDENCE)
    assert change.saved and "regression resolved by amendment" in change.message
    assert (change.before, change.after) == (Outcome.HIT_TO_MISS, Outcome.BOTH_HIT)
    assert ev_counts(ev) == RESOLVED  # the numbers in memory follow at once

    path = only_file(copy)
    assert path.parent == labels_of(copy).with_name("labels.amendments")
    assert path.name.startswith("ana@") and path.suffix == ".jsonl"
    (line,) = lines_of(path)
    assert path.read_bytes() == line + b"\n"
    record = json.loads(line)
    assert record["schema"] == 1 and record["seq"] == 1 and record["prev"] is None
    assert record["base"] == sha256(labels_of(copy))
    assert record["evidence"] == EVIDENCE
    assert (record["op"], record["query_id"], record["chunk_id"], record["relevance"]) == (ADD, Q, CHUNK, 1)
    assert record["reviewer"] == "ana" and record["at"].endswith("Z")


@pytest.mark.slow
def test_report_shows_amended_numbers_beside_the_frozen_ones(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert counts(report(capsys, copy)["paired"]) == FROZEN
    evaluate(copy).add(Q, CHUNK, evidence=EVIDENCE)

    data = report(capsys, copy)
    assert counts(data["paired"]) == RESOLVED
    assert counts(data["frozen"]["paired"]) == FROZEN
    assert data["frozen"]["changed"] == [{"query_id": Q, "frozen": "hit->miss", "amended": "both-hit"}]
    labels = data["labels"]
    assert labels["amendments"] == 1 and labels["in_force"] == 1
    assert labels["by_arm"] == {"a": 0, "b": 1, "none": 0}
    assert isinstance(labels["head"], str) and len(labels["head"]) == 64
    int(labels["head"], 16)
    assert labels["state"].startswith(f"frozen {sha256(labels_of(copy))[:12]} + 1 amendments (head ")

    frozen_only = report(capsys, copy, "--label-state", "frozen")
    assert counts(frozen_only["paired"]) == FROZEN
    assert frozen_only["labels"]["amendments"] == 1 and frozen_only["labels"]["applied"] is False


@pytest.mark.slow
def test_undo_restores_the_frozen_numbers_and_keeps_both_records(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ev = evaluate(copy)
    review = ev
    added = review.add(Q, CHUNK, evidence=EVIDENCE)
    undone = review.undo()
    assert undone is not None and undone.saved
    assert (added.after, undone.after) == (Outcome.BOTH_HIT, Outcome.HIT_TO_MISS)
    assert ev_counts(ev) == FROZEN

    records, problems = read_file(only_file(copy))
    assert_chain(records, problems, 2)
    assert [r.op for r in records] == [ADD, RETRACT] and records[1].retracts == records[0].id
    data = report(capsys, copy)
    assert counts(data["paired"]) == FROZEN and data["labels"]["amendments"] == 2
    assert data["labels"]["in_force"] == 0
    # every header says both numbers, so "+ 2 amendments" is not read as two judgements in force
    for fmt in ("text", "markdown", "html"):
        rc, out, _ = cli(capsys, "report", str(copy), "--format", fmt)
        assert rc == 0 and "+ 2 amendments (head " in out and "; 0 judgements in force" in out, fmt
    assert cli(capsys, "labels", "verify", str(copy))[0] == 0
    assert review.undo() is None  # nothing of ana's left in force


@pytest.mark.slow
def test_regrade_sets_the_pairs_effective_grade(copy: Path) -> None:
    ev = evaluate(copy)
    review = ev
    review.add(Q, CHUNK, evidence=EVIDENCE)
    q = ev.ev.query_index(Q)
    assert (CHUNK, 1) in ev.ev.gold_of(q)
    change = review.regrade(3)
    assert change is not None and change.saved and change.after is Outcome.BOTH_HIT
    assert (CHUNK, 3) in ev.ev.gold_of(q) and (CHUNK, 1) not in ev.ev.gold_of(q)
    assert review.regrade(3) is None  # already 3

    again = evaluate(copy)  # and from disk: add, retract, add(3)
    assert dict(again.ev.gold_of(q))[CHUNK] == 3
    assert [(r.op, r.relevance) for r in again.labels.records] == [(ADD, 1), (RETRACT, 1), (ADD, 3)]
    assert_chain(*read_file(only_file(copy)), 3)


# == 2. The frozen file is never written ========================================================


@pytest.mark.slow
def test_a_session_never_writes_the_frozen_file(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frozen = labels_of(copy)
    before = fingerprint(frozen)
    time.sleep(0.01)  # an mtime written now would differ
    ev = evaluate(copy)
    review = ev
    review.add(Q, CHUNK, evidence=EVIDENCE)
    review.regrade(2)
    review.add("q001", "extra#1", note="second")
    review.undo()
    review.add("q002", "extra#2")
    assert cli(capsys, "labels", "export", str(copy), "--out", str(copy / "next.parquet"))[0] == 0
    assert fingerprint(frozen) == before
    assert len(read_file(only_file(copy))[0]) == 6


def test_an_amendments_folder_linked_to_the_frozen_file_is_refused(copy: Path) -> None:
    frozen = labels_of(copy)
    before = fingerprint(frozen)
    folder_of(copy).symlink_to(frozen)
    ev = evaluate(copy)  # reading finds no folder: frozen labels only
    assert ev_counts(ev) == FROZEN and ev.labels.records == ()
    change = ev.add(Q, CHUNK, evidence=EVIDENCE)  # refused, kept in memory: never a crash
    assert not change.saved and "frozen label file" in change.error
    assert [r.chunk_id for r in ev.labels.unsaved] == [CHUNK]
    w = Writer(folder_of(copy), frozen, sha256(frozen), "ana")
    with pytest.raises(FrozenFileChanged):
        w.append(w.new_record(ADD, Q, CHUNK))
    assert fingerprint(frozen) == before


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_session_file_linked_to_the_frozen_file_is_refused(copy: Path, link: str) -> None:
    frozen = labels_of(copy)
    before = fingerprint(frozen)
    name = "ana@host.linked.jsonl"

    def make_link() -> None:
        target = folder_of(copy) / name
        if link == "symlink":
            target.symlink_to(frozen)
        else:
            target.hardlink_to(frozen)

    folder_of(copy).mkdir()
    make_link()  # present when the writer starts
    early = writer(copy, file_name=name)
    with pytest.raises(FrozenFileChanged):
        early.append(early.new_record(ADD, Q, CHUNK))
    (folder_of(copy) / name).unlink()

    w = writer(copy, file_name=name)
    make_link()  # appears after the writer started: the next write is refused
    with pytest.raises(FrozenFileChanged):
        w.append(w.new_record(ADD, Q, CHUNK))
    assert fingerprint(frozen) == before


def test_a_frozen_file_changed_under_a_session_keeps_the_record_in_memory(copy: Path) -> None:
    frozen = labels_of(copy)
    original = frozen.read_bytes()
    ev = evaluate(copy)
    review = ev
    assert review.add("q001", "extra#1").saved

    frozen.write_bytes(original + b"\0")  # someone else changes the frozen file
    change = review.add(Q, CHUNK, evidence=EVIDENCE)
    assert not change.saved and "NOT SAVED" in change.message and "changed since" in change.message
    assert [(r.query_id, r.chunk_id) for r in ev.labels.unsaved] == [(Q, CHUNK)]
    assert ev_counts(ev) == RESOLVED  # applied in memory, marked unsaved
    assert len(read_file(only_file(copy))[0]) == 1
    assert review.retry() == 0 and len(ev.labels.unsaved) == 1
    assert frozen.read_bytes() == original + b"\0"  # triage wrote nothing to it either

    frozen.write_bytes(original)  # put back: the kept record is written
    assert review.retry() == 1 and ev.labels.unsaved == ()
    assert_chain(*read_file(only_file(copy)), 2)


# == 3. Reading back =============================================================================


def test_a_torn_last_line_is_reported_and_skipped(copy: Path) -> None:
    w = writer(copy)
    append_adds(w, FOUR[:3])
    whole = w.path.read_bytes()
    torn = lines_of(w.path)[-1][:60]  # a record cut short
    w.path.write_bytes(whole + torn)  # a crash mid-write: no newline

    records, problems = read_file(w.path)
    assert [r.seq for r in records] == [1, 2, 3]
    assert [(p.kind, p.offset, p.file) for p in problems] == [("torn", len(whole), w.path.name)]
    ev = evaluate(copy)
    assert len(ev.labels.records) == 3 and ev_counts(ev) == RESOLVED
    level, message = check(ev, "labels.amendments_damaged")
    assert level == "warning" and "unterminated" in message


def _bad_lines(good: bytes) -> dict[str, bytes]:
    record = json.loads(good)
    missing = {k: v for k, v in record.items() if k != "base"}
    return {
        "garbage": b'{"schema": 1, "id": "x", garbage',
        "not an object": b"[1, 2, 3]",
        "missing field": json.dumps({**missing, "id": "no-base"}).encode(),
        "wrong op": json.dumps({**record, "id": "bad-op", "op": "delete"}).encode(),
        "evidence not an object": json.dumps({**record, "id": "bad-ev", "evidence": "b"}).encode(),
        "lone surrogate": json.dumps({**record, "id": "bad-text", "query_id": "q\ud800"}).encode(),
        "not utf-8": b'{"id": "\xff\xfe"}',
    }


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(_bad_lines(b'{"base": 1}')))
def test_a_bad_line_in_the_middle_is_quarantined_with_its_offset(
    copy: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    w = writer(copy)
    append_adds(w, FOUR)
    lines = lines_of(w.path)
    bad = _bad_lines(lines[0])[kind]
    head = b"".join(line + b"\n" for line in lines[:2])
    w.path.write_bytes(head + bad + b"\n" + b"".join(line + b"\n" for line in lines[2:]))

    records, problems = read_file(w.path)
    assert [r.seq for r in records] == [1, 2, 3, 4]  # the chain skips the bad line
    assert [(p.kind, p.file, p.offset) for p in problems] == [("quarantined", w.path.name, len(head))]
    assert w.path.read_bytes()[problems[0].offset :].startswith(bad)
    assert f"at byte {len(head)}" in str(problems[0])

    ev = evaluate(copy)  # the numbers are computed, every good record applied
    assert len(ev.labels.records) == 4 and ev_counts(ev) == RESOLVED
    assert check(ev, "labels.amendments_damaged")[0] == "warning"
    rc, out, _ = cli(capsys, "labels", "log", str(copy))
    assert rc == 0 and f"at byte {len(head)}" in out
    # a writer continues the chain after it
    assert w.append(w.new_record(ADD, "q004", "extra#4")).seq == 5


def test_a_chain_break_is_reported_with_its_seq(copy: Path) -> None:
    w = writer(copy)
    append_adds(w, FOUR)
    lines = lines_of(w.path)
    w.path.write_bytes(b"".join(line + b"\n" for i, line in enumerate(lines) if i != 1))

    records, problems = read_file(w.path)
    assert [(p.kind, p.seq, p.offset, p.before_seq, p.before) for p in problems] == [
        ("chain", 3, len(lines[0]) + 1, 1, 0)
    ]
    assert "between seq 1 (byte 0) and seq 3" in str(problems[0]) and "neither" in str(problems[0])
    assert [r.seq for r in records] == [4]  # the records on both sides of the break are disowned
    ev = evaluate(copy)
    assert [r.seq for r in ev.labels.records] == [4]


@pytest.mark.slow
def test_a_record_rewritten_and_resealed_in_the_middle_is_not_applied(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An edit with its own hash recomputed and its prev kept breaks the chain only at the next
    line: the rewritten record is as suspect as that one, and neither is applied."""
    from triage.cli.main import main
    from triage.labels.records import canonical_hash

    w = writer(copy)
    append_adds(w, FOUR)
    lines = lines_of(w.path)
    forged = json.loads(lines[1])
    forged["relevance"] = 0  # judged not relevant instead
    forged.pop("hash")
    forged["hash"] = canonical_hash(forged)
    lines[1] = json.dumps(forged, ensure_ascii=False, sort_keys=True).encode()
    w.path.write_bytes(b"".join(line + b"\n" for line in lines))
    records, problems = read_file(w.path)
    assert [r.seq for r in records] == [1, 4] and [p.kind for p in problems] == ["chain"]
    ev = evaluate(copy)
    assert all(r.relevance != 0 for r in ev.labels.records)  # the forged judgement is not in force
    assert main(["labels", "verify", str(copy)]) == 1
    out = capsys.readouterr().out
    assert f"{w.path.name} at byte" in out and "between seq 2 (byte" in out and "and seq 3 (byte" in out
    assert main(["report", "--format", "json", str(copy)]) == 0
    checks = {c["code"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    chain = checks["labels.amendments_chain"]
    assert chain["level"] == "error" and w.path.name in chain["message"] and "seq 2" in chain["message"]


@pytest.mark.slow
def test_a_file_written_against_other_frozen_labels_is_not_applied_unless_asked(
    copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = tmp_path / "labels-v0.parquet"
    older.write_bytes(b"an earlier frozen version")
    w = Writer(folder_of(copy), older, sha256(older), "ana", file_name="ana@host.old.jsonl")
    append_adds(w, [(Q, CHUNK)])
    assert read_file(w.path)[0][0].base == sha256(older) != sha256(labels_of(copy))

    ev = evaluate(copy)
    assert ev_counts(ev) == FROZEN and ev.labels.records == ()
    assert ev.labels.log.stale == (w.path.name,)
    level, message = check(ev, "labels.amendments_base")
    assert level == "error" and "not applied" in message and w.path.name in message
    assert counts(report(capsys, copy)["paired"]) == FROZEN

    applied = evaluate(copy, apply_stale=True)
    assert ev_counts(applied) == RESOLVED and len(applied.labels.records) == 1
    assert check(applied, "labels.amendments_base")[0] == "error"  # still said, not silent
    assert counts(report(capsys, copy, "--apply-stale")["paired"]) == RESOLVED
    rc, out, _ = cli(capsys, "labels", "verify", str(copy))
    assert rc == 1 and w.path.name in out


def test_amendments_naming_an_unknown_query_warn(copy: Path) -> None:
    ev = evaluate(copy)
    assert check(ev, "labels.amendments_unknown") is None
    change = ev.add("q-nobody-asked", CHUNK)
    assert change.saved and change.after is None and "unknown query" in change.message
    assert ev_counts(ev) == FROZEN
    for e in (ev, evaluate(copy)):  # refreshed in the session, and on reading
        level, message = check(e, "labels.amendments_unknown")
        assert level == "warning" and "q-nobody-asked" in message


def test_amendments_naming_a_chunk_missing_from_the_corpus_warn(copy: Path) -> None:
    ev = evaluate(copy)
    assert check(ev, "labels.amendments_corpus") is None
    ev.add(Q, "driftwood/no-such-chunk#404")
    for e in (ev, evaluate(copy)):
        level, message = check(e, "labels.amendments_corpus")
        assert level == "warning" and "driftwood/no-such-chunk#404" in message


# == 4. Faults ===================================================================================

N_RECORDS, NOTE_BYTES = 300, 3000


@pytest.mark.slow
def test_two_processes_appending_to_one_folder_keep_every_record(copy: Path, tmp_path: Path) -> None:
    procs = start_writers(tmp_path, copy, [(tag, N_RECORDS, NOTE_BYTES, 0, None) for tag in ("ana", "ben")])
    assert [finish(p) for p in procs] == [0, 0]
    files = jsonl_files(folder_of(copy))
    assert len(files) == 2
    for path in files:
        records, problems = read_file(path)
        assert_chain(records, problems, N_RECORDS)
        tag = records[0].reviewer
        assert path.name.startswith(f"{tag}@")
        assert [r.note for r in records] == [note_for(tag, i, NOTE_BYTES) for i in range(N_RECORDS)]
    ev = evaluate(copy)
    assert len(ev.labels.records) == 2 * N_RECORDS and ev.labels.log.problems == ()


@pytest.mark.slow
def test_two_processes_appending_to_one_file_keep_every_record(copy: Path, tmp_path: Path) -> None:
    name = "shared@host.same.jsonl"
    procs = start_writers(tmp_path, copy, [(tag, N_RECORDS, NOTE_BYTES, 0, name) for tag in ("ana", "ben")])
    assert [finish(p) for p in procs] == [0, 0]
    (path,) = jsonl_files(folder_of(copy))
    assert path.name == name
    records, problems = read_file(path)
    assert_chain(records, problems, 2 * N_RECORDS)
    for tag in ("ana", "ben"):
        mine = [r.note for r in records if r.reviewer == tag]
        assert mine == [note_for(tag, i, NOTE_BYTES) for i in range(N_RECORDS)]
    assert len({r.reviewer for r in records[:N_RECORDS]}) == 2  # they did run at once


def _kill_mid_write(tmp_path: Path, copy: Path, name: str) -> tuple[int, bytes]:
    """Start a writer of 3 small records and one of 80 MB; kill -9 it while the big one is being
    written. Returns its exit status and the file's bytes."""
    (proc,) = start_writers(tmp_path, copy, [("kim", 3, 100, 80 << 20, name)])
    path = folder_of(copy) / name
    try:
        while proc.poll() is None:
            size = path.stat().st_size if path.exists() else 0
            if size > 1 << 20:  # past the small records: the big write is under way
                os.kill(proc.pid, signal.SIGKILL)
                break
    finally:
        finish(proc, timeout=60)
    return proc.returncode, path.read_bytes()


@pytest.mark.slow
def test_a_writer_killed_mid_write_loses_only_its_own_record(copy: Path, tmp_path: Path) -> None:
    for attempt in range(3):  # the big write finishing before the kill lands is unlikely; retry
        name = f"kim@host.killed{attempt}.jsonl"
        status, data = _kill_mid_write(tmp_path, copy, name)
        if not data.endswith(b"\n"):
            break
    assert status == -signal.SIGKILL
    assert not data.endswith(b"\n"), "the kill never landed mid-write"
    path = folder_of(copy) / name
    good = data[: data.rindex(b"\n") + 1]
    assert 1 << 20 < len(data) < len(good) + (80 << 20)  # a partial record

    records, problems = read_file(path)
    assert [(r.seq, r.chunk_id) for r in records] == [(1, "kim-0"), (2, "kim-1"), (3, "kim-2")]
    assert [(p.kind, p.offset) for p in problems] == [("torn", len(good))]

    w = Writer(folder_of(copy), labels_of(copy), sha256(labels_of(copy)), "lea", file_name=name)
    done = w.append(w.new_record(ADD, Q, CHUNK, evidence=EVIDENCE))
    # The fragment becomes a complete line when the new record's leading newline lands: the chain
    # runs through it, and the new record names it as the tear it repaired.
    assert done.seq == 4 and done.prev == line_hash(data[len(good) :]) and done.repairs == len(good)
    after = path.read_bytes()
    assert after.startswith(data)  # nothing truncated or rewritten
    assert after == data + b"\n" + done.line() + b"\n"  # the new record starts on a fresh line
    records, problems = read_file(path)
    assert [r.seq for r in records] == [1, 2, 3, 4] and records[3].id == done.id
    assert [(p.kind, p.offset) for p in problems] == [("repaired", len(good))]  # not damage
    ev = evaluate(copy)
    assert ev_counts(ev) == RESOLVED  # the fragment's file is otherwise in force


def _assert_kept_in_memory(ev: Session, change, reason: str) -> None:
    assert not change.saved
    assert "NOT SAVED" in change.message and reason in change.message
    assert [(r.query_id, r.chunk_id) for r in ev.labels.unsaved] == [(Q, CHUNK)]
    assert ev_counts(ev) == RESOLVED  # the numbers already reflect it


def _assert_written_after_fix(ev: Session, review: Session, copy: Path, capsys, n: int) -> None:
    assert review.retry() == 1 and ev.labels.unsaved == ()
    records, problems = read_file(review.review.writer.path)
    assert_chain(records, problems, n)
    assert (records[-1].query_id, records[-1].chunk_id, records[-1].evidence) == (Q, CHUNK, EVIDENCE)
    assert cli(capsys, "labels", "verify", str(copy))[0] == 0
    assert ev_counts(evaluate(copy)) == RESOLVED  # nothing lost: on disk now


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["tmpfs", "os.write-ENOSPC"])
def test_a_full_disk_keeps_the_amendment_in_memory(
    copy: Path, mechanism: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(copy)
    with tmpfs(folder, wanted=mechanism == "tmpfs") as mounted:
        ev = evaluate(copy)
        review = ev
        if mounted:
            fill(folder / "filler")
            fix: Callable[[], None] = (folder / "filler").unlink
        else:  # every write fails as on a full disk (a link to /dev/full is refused: no links)

            def full(fd: int, data: bytes) -> int:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            monkeypatch.setattr(amendments.os, "write", full)
            fix = monkeypatch.undo
        change = review.add(Q, CHUNK, evidence=EVIDENCE)
        _assert_kept_in_memory(ev, change, os.strerror(errno.ENOSPC))
        assert review.retry() == 0 and len(ev.labels.unsaved) == 1  # still full: kept
        fix()
        _assert_written_after_fix(ev, review, copy, capsys, 1)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["remount-ro", "os.open-EROFS"])
def test_a_read_only_folder_keeps_the_amendment_in_memory(
    copy: Path, mechanism: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(copy)
    with tmpfs(folder, size="1m", wanted=mechanism == "remount-ro") as mounted:
        ev = evaluate(copy)
        review = ev
        assert review.add("q001", "extra#1").saved  # the session file exists already
        if mounted:
            assert _run("mount", "-o", "remount,ro", str(folder))

            def fix() -> None:
                assert _run("mount", "-o", "remount,rw", str(folder))
        else:
            erofs_on_open(monkeypatch, folder)
            fix = monkeypatch.undo
        change = review.add(Q, CHUNK, evidence=EVIDENCE)
        _assert_kept_in_memory(ev, change, os.strerror(errno.EROFS))
        assert review.retry() == 0
        fix()
        _assert_written_after_fix(ev, review, copy, capsys, 2)


def test_a_disk_filling_mid_record_loses_nothing(
    copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A write cut short (a few KB left on the disk) keeps the record in memory; the fragment it
    left is never truncated: the retry starts a fresh line and the fragment is reported."""
    folder = folder_of(copy)
    with tmpfs(folder, size="64k") as mounted:
        ev = evaluate(copy)
        review = ev
        assert review.add("q001", "extra#1").saved
        first = review.review.writer.path.read_bytes()
        if mounted:  # leave 16 KB free, then write a record of ~40 KB
            with open(folder / "filler", "wb") as f:
                f.write(b"\0" * (44 << 10))
            fix: Callable[[], None] = (folder / "filler").unlink
        else:  # fallback: os.write writes 16 KB and returns a short count
            real_write = os.write
            monkeypatch.setattr(amendments.os, "write", lambda fd, b: real_write(fd, b[: 16 << 10]))
            fix = monkeypatch.undo
        change = review.add(Q, CHUNK, note="n" * (40 << 10), evidence=EVIDENCE)
        _assert_kept_in_memory(ev, change, "short write")
        fix()
        assert review.retry() == 1 and ev.labels.unsaved == ()
        records, problems = read_file(review.review.writer.path)
        assert [r.seq for r in records] == [1, 2] and records[1].note == "n" * (40 << 10)
        assert [(p.kind, p.offset) for p in problems] == [("repaired", len(first))]
        assert review.review.writer.path.read_bytes().startswith(first)
        assert ev_counts(evaluate(copy)) == RESOLVED


# == 5. `triage labels` ==========================================================================


@pytest.mark.slow
def test_labels_log_lists_reviewer_note_and_evidence(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    review = evaluate(copy)
    review.add(Q, CHUNK, note="same passage, 2023 edition", evidence=EVIDENCE)
    review.add("q001", "extra#1", evidence={"arm": "a", "rank": 4})
    review.undo()
    rc, out, _ = cli(capsys, "labels", "log", str(copy))
    assert rc == 0
    lines = out.splitlines()
    assert "+ 3 amendments (head " in lines[0]
    body = [line for line in lines[1:] if line.strip()]
    assert len(body) == 3
    assert all("ana" in line for line in body)
    assert Q in body[0] and CHUNK in body[0] and "from B rank 1" in body[0]
    assert "note: same passage, 2023 edition" in body[0] and " add " in body[0]
    assert "from A rank 4" in body[1] and "add (retracted)" in body[1]
    assert "retract" in body[2] and "note: undo" in body[2]


def test_labels_verify_names_a_damaged_file(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "labels", "verify", str(copy))[0] == 0  # no folder yet
    good, damaged = writer(copy, "ana@host.good.jsonl"), writer(copy, "ben@host.bad.jsonl", "ben")
    append_adds(good, FOUR[:2])
    append_adds(damaged, FOUR[2:])
    rc, out, _ = cli(capsys, "labels", "verify", str(copy))
    assert rc == 0 and out.count("chain intact") == 2

    with open(damaged.path, "ab") as f:
        f.write(b"this is not a record\n")
    rc, out, _ = cli(capsys, "labels", "verify", str(copy))
    assert rc == 1
    assert any(line.startswith("FAIL ben@host.bad.jsonl") for line in out.splitlines())
    assert not any("ana@host.good.jsonl" in line and "FAIL" in line for line in out.splitlines())


def _amend(copy: Path) -> Session:
    ev = evaluate(copy)
    review = ev
    review.add(Q, CHUNK, evidence=EVIDENCE)
    review.add("q001", "extra#1")
    review.undo()
    return ev


@pytest.mark.slow
def test_labels_export_parquet_with_provenance(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ev = _amend(copy)
    out = copy / "labels-v2.parquet"
    rc, printed, _ = cli(capsys, "labels", "export", str(copy), "--out", str(out))
    assert rc == 0 and str(out) in printed
    table = pq.read_table(out)
    frozen = pq.read_table(labels_of(copy))
    gold = {(row["query_id"], row["chunk_id"]) for row in frozen.to_pylist() if row["relevance"] > 0}
    rows = {(row["query_id"], row["chunk_id"]) for row in table.to_pylist()}
    assert rows == gold | {(Q, CHUNK)}  # frozen + the add in force; the undone add is not there
    assert table.num_rows == len(gold) + 1
    meta = {k.decode(): v.decode() for k, v in pq.read_schema(out).metadata.items()}
    assert meta["triage_base_sha256"] == sha256(labels_of(copy))
    assert meta["triage_head"] == ev.labels.head and len(meta["triage_head"]) == 64
    assert meta["triage_amendments"] == "3"

    # the export is a new frozen version: the sample reads it and gives the resolved numbers
    manifest = (copy / "triage.toml").read_text().replace('"labels.parquet"', '"labels-v2.parquet"')
    (copy / "v2.toml").write_text(manifest)
    shutil.rmtree(folder_of(copy))
    assert ev_counts(Session(open_snapshot(from_manifest(copy / "v2.toml")))) == RESOLVED


def test_labels_export_qrels_with_a_sidecar(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ev = _amend(copy)
    out = copy / "labels-v2.qrels"
    assert cli(capsys, "labels", "export", str(copy), "--out", str(out))[0] == 0
    lines = out.read_text().splitlines()
    parsed = [line.split(" ") for line in lines]
    assert all(len(p) == 4 and p[1] == "0" and p[3].isdigit() and int(p[3]) >= 1 for p in parsed)
    assert [Q, "0", CHUNK, "1"] in parsed
    assert len(parsed) == ev.labels.gold_table().num_rows
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["triage_base_sha256"] == sha256(labels_of(copy))
    assert meta["triage_head"] == ev.labels.head
    assert meta["triage_amendments"] == "3"


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["same path", "dotted path", "symlink", "hardlink"])
def test_labels_export_refuses_the_frozen_file(
    copy: Path, spelling: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _amend(copy)
    frozen = labels_of(copy)
    out = {
        "same path": frozen,
        "dotted path": copy / "runs" / ".." / "labels.parquet",
        "symlink": copy / "alias.parquet",
        "hardlink": copy / "twin.parquet",
    }[spelling]
    if spelling == "symlink":
        out.symlink_to(frozen)
    if spelling == "hardlink":
        out.hardlink_to(frozen)
    before = fingerprint(frozen)
    time.sleep(0.01)
    rc, _, err = cli(capsys, "labels", "export", str(copy), "--out", str(out))
    assert rc == 2 and "frozen" in err
    assert fingerprint(frozen) == before


@pytest.mark.slow
def test_labels_suggest_on_the_pristine_sample(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "labels", "suggest", str(copy))
    assert rc == 0
    listed = [line.split() for line in out.splitlines()[1:] if line.strip()]
    assert [(row[0], row[1]) for row in listed] == [(Q, CHUNK)]
    rc, out, _ = cli(capsys, "labels", "suggest", str(copy), "--format", "json")
    assert rc == 0
    data = json.loads(out)
    assert [(s["query_id"], s["chunk_id"]) for s in data["suggestions"]] == [(Q, CHUNK)]
    assert data["suggestions"][0]["gold_id"] == story.NEAR_DUP_GOLD


# == 6. Ten thousand amendments =================================================================


def _chain(records: list[Record]) -> bytes:
    """The lines of one file: seq and prev filled in as a writer would."""
    out, prev = [], None
    for seq, r in enumerate(records, 1):
        line = replace(r, seq=seq, prev=prev).line()
        out.append(line + b"\n")
        prev = line_hash(line)
    return b"".join(out)


@pytest.mark.slow
def test_ten_thousand_amendments_are_all_kept(copy: Path) -> None:
    """Correctness at size only; the speed is measured by the benchmarks."""
    base = sha256(labels_of(copy))
    query_ids = evaluate(copy).ev.query_ids.to_pylist()
    folder = folder_of(copy)
    folder.mkdir()
    per_file, files = 2500, 4
    all_records: list[Record] = []
    for f in range(files):
        recs: list[Record] = []
        for i in range(per_file):
            n = f * per_file + i
            common = {
                "seq": 0,
                "prev": None,
                "reviewer": f"rev{f}",
                "at": "2025-01-01T00:00:00.000Z",
                "base": base,
            }
            if i % 10 == 9:  # every tenth record retracts the add just before it
                last = recs[-1]
                rec = Record(
                    id=f"r{n:05d}",
                    op=RETRACT,
                    query_id=last.query_id,
                    chunk_id=last.chunk_id,
                    relevance=last.relevance,
                    retracts=last.id,
                    **common,
                )
            else:
                rec = Record(
                    id=f"a{n:05d}",
                    op=ADD,
                    query_id=query_ids[n % len(query_ids)],
                    chunk_id=f"bulk#{n:05d}",
                    relevance=1 + n % 3,
                    evidence={"arm": "ab"[n % 2]},
                    **common,
                )
            recs.append(rec)
        (folder / f"rev{f}@host.bulk.jsonl").write_bytes(_chain(recs))
        all_records += recs

    ev = evaluate(copy)
    assert len(ev.labels.records) == 10_000 and ev.labels.log.problems == ()
    assert [r.id for r in ev.labels.records] == [r.id for r in all_records]
    in_force = [r for r in all_records if r.op == ADD and int(r.id[1:]) % 10 != 8]
    assert len(ev.labels.in_force) == len(in_force) == 8000
    assert set(ev.labels.added) == {(r.query_id, r.chunk_id) for r in in_force}
    want = hashlib.sha256(b"".join(r.id.encode() + b"\n" for r in all_records)).hexdigest()
    assert ev.labels.head == want == evaluate(copy).labels.head
    assert ("bulk#00000", 1) in ev.ev.gold_of(ev.ev.query_index(query_ids[0]))
    assert ("bulk#00008", 3) not in ev.ev.gold_of(ev.ev.query_index(query_ids[8]))  # retracted

    # a writer continues one of the long chains
    w = Writer(folder, labels_of(copy), base, "rev0", file_name="rev0@host.bulk.jsonl")
    assert w.append(w.new_record(ADD, Q, CHUNK)).seq == per_file + 1
    records, problems = read_file(w.path)
    assert problems == [] and len(records) == per_file + 1
    more = evaluate(copy).labels
    assert len(more.records) == 10_001 and more.head != want
