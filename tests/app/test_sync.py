"""An open session sees what other processes write to the review folder: the CLI's judgements, a
second app's verdicts, applied as a new snapshot without a restart (and in the app within 3 s)."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

import triage.labels.log as log_module
import triage.workspace.folder as folder_module
from triage.core.bundled import bundled
from triage.core.inputs.frozen import sha256_file
from triage.core.inputs.manifest import from_manifest
from triage.labels.records import ADD, RETRACT, ProblemKind, line_hash
from triage.labels.verdicts import Cause
from triage.labels.writer import Writer
from triage.ui.app import TriageApp
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from app_helpers import wait_loaded
from sample_story import NEAR_DUP_CHUNK as CHUNK
from sample_story import NEAR_DUP_QUERY as QUERY


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def session(copy: Path, reviewer: str) -> Session:
    return Session(open_snapshot(from_manifest(copy)), reviewer=reviewer)


def judge_in_another_process(copy: Path, grade: int, reviewer: str = "bo") -> None:
    env = {**os.environ, "TRIAGE_REVIEWER": reviewer}
    args = ["labels", "judge", str(copy), "--query", QUERY, "--chunk", CHUNK, "--grade", str(grade)]
    done = subprocess.run([sys.executable, "-m", "triage", *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_judgement_written_by_another_process_is_applied_by_sync(copy: Path) -> None:
    ana = session(copy, "ana")
    q = ana.ev.query_index(QUERY)
    assert ana.sync() == 0  # nothing new: nothing read, nothing changed
    before = ana.version
    assert ana.ev.paired().a_hit_b_miss == 6
    judge_in_another_process(copy, 1)
    assert ana.sync() == 1
    assert (QUERY, CHUNK) in ana.labels.added and CHUNK in dict(ana.ev.gold_of(q))
    assert ana.ev.paired().a_hit_b_miss == 5 and ana.version != before
    assert ana.sync() == 0  # read once


def test_own_writes_are_not_counted_again_and_unsaved_decisions_are_kept(copy: Path) -> None:
    ana = session(copy, "ana")
    assert ana.add(QUERY, CHUNK, 1).saved
    assert ana.sync() == 0 and (QUERY, CHUNK) in ana.labels.added


def test_a_verdict_from_another_session_arrives_without_judging_anything_again(copy: Path) -> None:
    ana, bo = session(copy, "ana"), session(copy, "bo")
    ev = ana.ev
    assert bo.verdict(QUERY, Cause.LIKELY_UNLABELLED, "the 2023 copy").saved
    assert ana.sync() == 1
    assert ana.ev is ev and ana.verdicts.for_query(QUERY)


def test_a_retraction_elsewhere_takes_the_gold_back(copy: Path) -> None:
    ana, bo = session(copy, "ana"), session(copy, "bo")
    assert bo.add(QUERY, CHUNK, 1).saved
    assert ana.sync() == 1 and ana.ev.paired().a_hit_b_miss == 5
    assert bo.undo() is not None
    assert ana.sync() == 1 and ana.ev.paired().a_hit_b_miss == 6


@pytest.mark.slow  # a whole-app Pilot run
async def test_the_open_app_sees_the_clis_judgement_within_3_seconds(copy: Path) -> None:
    app = TriageApp(copy)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        assert app.session is not None and app.session.ev.paired().a_hit_b_miss == 6
        judge_in_another_process(copy, 1)
        start = time.monotonic()
        while app.session.ev.paired().a_hit_b_miss != 5 and time.monotonic() - start < 3:
            await pilot.pause(0.1)
        assert app.session.ev.paired().a_hit_b_miss == 5, "not seen within 3 s"
        assert any("from another session" in str(n.message) for n in app._notifications)


# -- reading only what was appended, off the UI thread ---------------------------------------------
def many(copy: Path, n: int, name: str = "zed@bulk.jsonl") -> None:
    """n judgements (adds of pairs the sample's queries do not retrieve) in one session file,
    chained and sealed as the writer writes them, in one buffered write."""
    frozen = copy / "labels.parquet"
    w = Writer(copy / "labels.amendments", frozen, sha256_file(frozen), "zed", file_name=name)
    lines, prev = [], None
    for seq in range(1, n + 1):
        rec = w.new_record(ADD, f"q{seq % 200:03d}", f"bulk#{seq}", seq % 3)
        line = replace(rec, seq=seq, prev=prev).sealed().line()
        lines.append(line)
        prev = line_hash(line)
    w.folder.mkdir(parents=True, exist_ok=True)
    w.path.write_bytes(b"\n".join(lines) + b"\n")


def test_a_look_changes_nothing_until_taken_and_one_built_on_a_replaced_snapshot_is_built_again(
    copy: Path,
) -> None:
    ana, bo = session(copy, "ana"), session(copy, "bo")
    assert bo.add(QUERY, CHUNK, 1).saved
    found = ana.look()
    assert found is not None and found.new == 1 and found.gone == 0 and QUERY in found.touched
    assert ana.ev.paired().a_hit_b_miss == 6  # the session is as it was until the look is taken
    assert ana.verdict("q001", Cause.LIKELY_UNLABELLED).saved  # a decision meanwhile
    assert not ana.take(found) and ana.ev.paired().a_hit_b_miss == 6  # built on the old snapshot
    again = ana.look()  # nothing new in the folder, but what was dropped is built again
    assert again is not None and ana.take(again)
    assert ana.ev.paired().a_hit_b_miss == 5 and ana.verdicts.for_query("q001")
    assert ana.look() is None


def test_records_gone_from_the_folder_are_taken_back_and_named(copy: Path) -> None:
    ana, bo = session(copy, "ana"), session(copy, "bo")
    assert bo.add(QUERY, CHUNK, 1).saved
    assert ana.sync() == 1 and ana.ev.paired().a_hit_b_miss == 5
    bo.review.writer.path.unlink()
    found = ana.look()
    assert found is not None and (found.new, found.gone) == (0, 1) and ana.take(found)
    assert ana.ev.paired().a_hit_b_miss == 6 and (QUERY, CHUNK) not in ana.labels.added
    (gone,) = ana.labels.log.problems
    assert gone.kind is ProblemKind.GONE and "the file was removed" in gone.message
    damaged = [c for c in ana.checks if c.code == "labels.amendments_damaged"]
    assert damaged and "1 record read from it earlier" in damaged[0].message


def test_a_look_reads_the_bytes_appended_and_not_the_records_before(copy: Path, monkeypatch) -> None:
    many(copy, 3000)
    ana = session(copy, "ana")
    assert len(ana.labels.records) == 3000
    reads: list[tuple[int, int]] = []
    real = log_module._pread
    monkeypatch.setattr(log_module, "_pread", lambda fd, a, b: reads.append((a, b)) or real(fd, a, b))
    judge_in_another_process(copy, 1)
    assert ana.sync() == 1 and ana.ev.paired().a_hit_b_miss == 5
    assert sum(b - a for a, b in reads) < 2000  # one new file of one record; the bulk file untouched


@pytest.mark.slow  # a whole-app Pilot run with a slow read
async def test_the_app_reads_the_folder_off_the_ui_thread_and_answers_keys_meanwhile(
    copy: Path, monkeypatch
) -> None:
    many(copy, 3000)
    threads: list[threading.Thread] = []
    real = folder_module.read_log

    def slow_read(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        if kwargs.get("since") is not None and kwargs["since"].records != ():
            time.sleep(1.5)  # a slow disk: the UI thread must not wait for it
        return real(*args, **kwargs)

    monkeypatch.setattr(folder_module, "read_log", slow_read)
    app = TriageApp(copy)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        assert app.session is not None and app.session.ev.paired().a_hit_b_miss == 6
        judge_in_another_process(copy, 1)
        lag = [0.0]  # the longest the UI thread's event loop was held beyond a 20 ms sleep

        async def watch() -> None:
            while True:
                t = time.monotonic()
                await asyncio.sleep(0.02)
                lag[0] = max(lag[0], time.monotonic() - t - 0.02)

        watcher = asyncio.create_task(watch())
        await pilot.press("f")
        start = time.monotonic()
        while app.session.ev.paired().a_hit_b_miss != 5 and time.monotonic() - start < 15:
            await pilot.press("down")  # keys all along: the look still comes (at most 3 s apart)
        watcher.cancel()
        assert app.session.ev.paired().a_hit_b_miss == 5, "not applied"
        assert lag[0] < 1.0, f"the UI thread was held {lag[0]:.2f} s"
        assert threads and threading.main_thread() not in threads
        assert any("from another session applied" in str(n.message) for n in app._notifications)


@pytest.mark.slow  # a whole-app Pilot run while another writer appends
async def test_the_app_applies_a_steady_writers_records_over_many(copy: Path) -> None:
    many(copy, 5000)
    frozen = copy / "labels.parquet"
    bo = Writer(copy / "labels.amendments", frozen, sha256_file(frozen), "bo")
    stop = threading.Event()

    def judging() -> None:  # another reviewer, five records a second
        i = 0
        while not stop.is_set():
            i += 1
            pair = (QUERY, CHUNK) if i == 5 else (f"q{i % 200:03d}", f"seen#{i}")
            bo.append(bo.new_record(ADD, *pair, 1))
            stop.wait(0.2)

    app = TriageApp(copy)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        assert app.session is not None
        before = len(app.session.labels.records)
        writer = threading.Thread(target=judging)
        writer.start()
        try:
            start = time.monotonic()
            while len(app.session.labels.records) < before + 10 and time.monotonic() - start < 15:
                await pilot.pause(0.2)
        finally:
            stop.set()
            writer.join()
        assert len(app.session.labels.records) >= before + 10
        assert app.session.ev.paired().a_hit_b_miss == 5  # the fifth record moved the numbers
        assert any("from another session applied" in str(n.message) for n in app._notifications)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 11))
def test_looks_taken_or_dropped_in_any_order_end_where_a_fresh_read_is(copy: Path, seed: int) -> None:
    """Own decisions, another writer's records, looks, and looks taken late (dropped as stale) in a
    random order: once the looks catch up, the session is what a fresh start on the folder shows."""
    rng = random.Random(seed)
    ana = session(copy, "ana")
    frozen = copy / "labels.parquet"
    bo = Writer(copy / "labels.amendments", frozen, sha256_file(frozen), "bo")
    pairs = [(QUERY, CHUNK), ("q001", "x#1"), ("q002", "x#2"), ("q155", "y#1"), ("q113", "y#2")]
    found: list = []
    adds: list = []
    for _ in range(40):
        step = rng.choice(["mine", "other", "other", "look", "take", "undo"])
        q, c = rng.choice(pairs)
        if step == "mine":
            ana.add(q, c, rng.choice((0, 1, 2)))
        elif step == "undo":
            ana.undo()
        elif step == "other":
            if adds and rng.random() < 0.3:
                gone = adds.pop(rng.randrange(len(adds)))
                bo.append(bo.new_record(RETRACT, gone.query_id, gone.chunk_id, retracts=gone.id))
            else:
                adds.append(bo.append(bo.new_record(ADD, q, c, rng.choice((0, 1, 2)))))
        elif step == "look" and (look := ana.look()) is not None:
            found.append(look)
        elif step == "take" and found:
            ana.take(found.pop(0))
    while (look := ana.look()) is not None:
        assert ana.take(look)
    fresh = open_snapshot(from_manifest(copy))
    # the same records (own ones stay where they were applied, after those read, until a look
    # brings others'), deciding the same grades
    assert sorted(r.id for r in ana.labels.records) == sorted(r.id for r in fresh.labels.records)
    assert {p: r.relevance for p, r in ana.labels.decided.items()} == {
        p: r.relevance for p, r in fresh.labels.decided.items()
    }
    assert ana.ev.paired() == fresh.ev.paired()
    assert [c.message for c in ana.checks] == [c.message for c in fresh.checks]


def test_a_snapshot_holding_many_records_has_a_short_repr(copy: Path) -> None:
    """A thread worker's name holds the repr of its arguments, made on the UI thread when it starts
    (Textual's `work`): a snapshot's must not spell out every record."""
    many(copy, 3000)
    snapshot = session(copy, "ana").snapshot
    for value in (snapshot, snapshot.labels, snapshot.labels.log):
        assert len(repr(value)) < 200, repr(value)[:200]
    assert "3000 saved" in repr(snapshot.labels) and "3000 records" in repr(snapshot.labels.log)
