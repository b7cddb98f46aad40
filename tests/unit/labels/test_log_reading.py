"""Reading a review folder on from an earlier look (`read_log(..., since=)`, what the open app does
every second): only the bytes appended are read, and the log is the one a whole read gives (docs/labels.md
"Several sessions at once"); the label state built on from it is the one built afresh."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import triage.labels.log as log_module
from triage.core.inputs.frozen import FrozenLabels
from triage.labels.log import Log, read_log
from triage.labels.records import ADD, RETRACT, ProblemKind, Record, line_hash, parse_record
from triage.labels.state import LabelState
from triage.labels.writer import Writer

FROZEN = b"frozen labels"
SHA = hashlib.sha256(FROZEN).hexdigest()


class Folder:
    """A review folder beside a stand-in frozen file (`read_log` only reads its digest)."""

    def __init__(self, root: Path) -> None:
        self.frozen = root / "labels.parquet"
        self.frozen.write_bytes(FROZEN)
        self.path = root / "labels.amendments"
        self.writers: dict[str, Writer] = {}

    def writer(self, name: str) -> Writer:
        if name not in self.writers:
            self.writers[name] = Writer(self.path, self.frozen, SHA, name.split("@")[0], file_name=name)
        return self.writers[name]

    def judge(self, name: str, q: str, c: str, grade: int = 1) -> Record:
        w = self.writer(name)
        return w.append(w.new_record(ADD, q, c, grade))

    def retract(self, name: str, add: Record) -> Record:
        w = self.writer(name)
        return w.append(w.new_record(RETRACT, add.query_id, add.chunk_id, retracts=add.id))

    def whole(self) -> Log:
        return read_log(self.path, SHA)

    def on(self, since: Log) -> Log:
        return read_log(self.path, SHA, since=since)


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    return Folder(tmp_path)


def view(log: Log, torn: bool = True, gone: bool = True) -> tuple[object, ...]:
    """What a log says: its records (with where each was read), problems and stale files; `torn`,
    `gone`: with the problems of those kinds."""
    left = {kind for kind, keep in ((ProblemKind.TORN, torn), (ProblemKind.GONE, gone)) if not keep}
    problems = [p for p in log.problems if p.kind not in left]
    return [(r.id, r.file, r.file_offset) for r in log.records], problems, log.stale, log.applied_stale


def state(labels: LabelState) -> tuple[object, ...]:
    """What a label state decides, by record id."""
    queries = {q for q, _ in labels.decided} | {r.query_id for r in labels.records}
    return (
        labels.head,
        {pair: r.id for pair, r in labels.decided.items()},
        [r.id for r in labels.in_force],
        sorted((c.query_id, c.chunk_id) for c in labels.conflicts),
        sorted((d.query_id, d.chunk_id) for d in labels.grade_differences),
        {q: {c: r.id for c, r in labels.decided_for(q).items()} for q in sorted(queries)},
    )


class Reads:
    """Every byte range the log reader reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ranges: list[tuple[int, int]] = []
        real = log_module._pread

        def pread(fd: int, start: int, end: int) -> bytes:
            self.ranges.append((start, end))
            return real(fd, start, end)

        monkeypatch.setattr(log_module, "_pread", pread)

    @property
    def bytes(self) -> int:
        return sum(end - start for start, end in self.ranges)


def test_only_the_appended_bytes_are_read_and_the_log_is_the_whole_reads(folder: Folder, monkeypatch) -> None:
    for i in range(40):
        folder.judge("ana@h.1.jsonl", f"q{i}", f"c{i}")
        folder.judge("bo@h.1.jsonl", f"q{i}", f"d{i}", 2)
    first = folder.whole()
    sizes = {p.name: p.stat().st_size for p in folder.path.iterdir()}
    last = [p.read_bytes().split(b"\n")[-2] for p in sorted(folder.path.iterdir())]
    new = [folder.judge("ana@h.1.jsonl", "q1", "c9"), folder.judge("bo@h.1.jsonl", "q2", "d9")]
    new.insert(1, folder.judge("ana@h.1.jsonl", "q3", "c9"))
    reads = Reads(monkeypatch)
    log = folder.on(first)
    appended = sum(p.stat().st_size - sizes[p.name] for p in folder.path.iterdir())
    again = sum(len(line) + log_module.CHECK for line in last)  # each file's last line read, and more
    assert reads.bytes == appended + again  # the new bytes, and those read again to see nothing changed
    assert view(log) == view(folder.whole())
    assert log.adds_to(first) and [r.id for r in log.added] == [r.id for r in new]  # in merge order
    reads.ranges.clear()
    assert folder.on(log) is log and reads.ranges == []  # nothing changed: nothing read


def test_a_label_state_built_on_from_a_look_is_the_one_built_afresh(folder: Folder) -> None:
    adds = [folder.judge("bo@h.1.jsonl", f"q{i % 5}", f"c{i % 7}", i % 3) for i in range(30)]
    labels = LabelState.read(_frozen(folder), folder.whole())
    labels.decided  # noqa: B018 - its index built: the next state carries it on
    # a later file and an earlier one (merge order puts ana's records first), a retract of an
    # add read before, an add of a pair others judged, a retract naming an add that comes later
    folder.judge("ana@h.1.jsonl", "q1", "c1", 0)
    folder.retract("bo@h.1.jsonl", adds[3])
    folder.judge("cy@h.1.jsonl", "q2", "c2", 2)
    log = folder.on(labels.log)
    assert log.adds_to(labels.log)
    on = labels.with_log(log)
    assert "_index" in on.__dict__  # carried on, not built again
    assert state(on) == state(LabelState.read(_frozen(folder), folder.whole()))


def test_a_partial_last_line_is_left_for_the_next_look(folder: Folder) -> None:
    folder.judge("ana@h.1.jsonl", "q1", "c1")
    first = folder.whole()
    path = folder.writer("ana@h.1.jsonl").path
    line = _sealed_line(folder, path, "q2", "c2")
    with path.open("ab") as f:
        f.write(line[:30])  # a writer mid-append
    midway = folder.on(first)
    assert len(midway.records) == 1 and midway.problems == ()  # not an error yet
    with path.open("ab") as f:
        f.write(line[30:] + b"\n")
    done = folder.on(midway)
    assert [r.query_id for r in done.records] == ["q1", "q2"] and done.problems == ()
    assert view(done) == view(folder.whole()) and done.adds_to(midway)


def test_a_tail_still_unterminated_at_the_next_look_is_torn_and_a_writer_repairs_it(folder: Folder) -> None:
    folder.judge("ana@h.1.jsonl", "q1", "c1")
    first = folder.whole()
    path = folder.writer("ana@h.1.jsonl").path
    with path.open("ab") as f:
        f.write(b'{"schema": 1, "id": "cut sh')  # a crash mid-write
    seen = folder.on(first)
    assert seen.problems == ()
    again = folder.on(seen)  # unchanged since: no writer is finishing it
    assert [p.kind for p in again.problems] == [ProblemKind.TORN]
    assert view(again) == view(folder.whole())
    other = Writer(folder.path, folder.frozen, SHA, "ana", file_name="ana@h.1.jsonl")  # a new process
    other.append(other.new_record(ADD, "q3", "c3"))  # completes the tail with its newline first
    repaired = folder.on(again)
    assert [p.kind for p in repaired.problems] == [ProblemKind.REPAIRED]
    assert view(repaired) == view(folder.whole()) and [r.query_id for r in repaired.records] == ["q1", "q3"]


def test_a_file_that_shrank_is_read_whole_and_the_records_gone_are_named(folder: Folder) -> None:
    for i in range(4):
        folder.judge("ana@h.1.jsonl", f"q{i}", "c")
    labels = LabelState.read(_frozen(folder), folder.whole())
    labels.decided  # noqa: B018
    path = folder.writer("ana@h.1.jsonl").path
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:2]) + b"\n")  # cut at a line's end: a whole read cannot tell
    log = folder.on(labels.log)
    assert [r.query_id for r in log.records] == ["q0", "q1"] and not log.adds_to(labels.log)
    (gone,) = log.problems
    assert gone.kind is ProblemKind.GONE and gone.file == path.name and gone in log.damage
    assert "2 records read from it earlier (seq 3, 4) are no longer in it: it shrank to" in gone.message
    assert folder.whole().problems == ()  # only a reader that looked before can say so
    assert state(labels.with_log(log)) == state(LabelState.read(_frozen(folder), folder.whole()))
    assert folder.on(log) is log  # said once, kept


@pytest.mark.parametrize("how", ["other records", "the same and more", "rewritten in place"])
def test_a_replaced_or_rewritten_file_is_read_whole(folder: Folder, how: str) -> None:
    for i in range(3):
        folder.judge("ana@h.1.jsonl", f"q{i}", "c")
    first = folder.whole()
    path = folder.writer("ana@h.1.jsonl").path
    data = path.read_bytes()
    if how == "other records":
        (folder.path.parent / "elsewhere").mkdir()
        scratch = Folder(folder.path.parent / "elsewhere")
        scratch.judge("ana@h.1.jsonl", "q9", "c")
        os.replace(scratch.writer("ana@h.1.jsonl").path, path)
    elif how == "the same and more":
        twin = path.with_name("tmp")
        twin.write_bytes(data)
        os.replace(twin, path)  # a sync tool's copy: another inode, the same bytes
        folder.writers.pop("ana@h.1.jsonl")
        folder.judge("ana@h.1.jsonl", "q3", "c")
    else:
        at = data.rindex(b'"hash": "') + 9
        edited = data[:at] + (b"0" if data[at : at + 1] != b"0" else b"1") + data[at + 1 :]
        with path.open("r+b") as f:  # the last record's hash changed, size and inode kept
            f.write(edited)
    log = folder.on(first)
    whole = folder.whole()
    assert view(log)[0] == view(whole)[0]
    assert [p for p in log.problems if p.kind is not ProblemKind.GONE] == list(whole.problems)
    kinds = [p.kind for p in log.problems]
    if how == "other records":
        assert [r.query_id for r in log.records] == ["q9"] and kinds == [ProblemKind.GONE]
        assert "3 records read from it earlier" in log.problems[0].message
        assert "another file now has its name" in log.problems[0].message
    elif how == "the same and more":
        assert [r.query_id for r in log.records] == ["q0", "q1", "q2", "q3"] and kinds == []
    else:
        assert kinds == [ProblemKind.EDITED, ProblemKind.GONE] and len(log.records) == 2
        assert "its bytes were rewritten" in log.problems[1].message


def test_a_new_file_is_read_whole_in_its_place(folder: Folder) -> None:
    folder.judge("mo@h.1.jsonl", "q1", "c1")
    first = folder.whole()
    folder.judge("al@h.1.jsonl", "q2", "c2")  # sorts first: its records come first
    log = folder.on(first)
    assert view(log) == view(folder.whole()) and log.adds_to(first)
    assert [r.query_id for r in log.records] == ["q2", "q1"]


def test_an_id_read_from_a_later_file_now_in_an_earlier_one_is_merged_afresh(folder: Folder) -> None:
    folder.judge("mo@h.1.jsonl", "q1", "c1")
    first = folder.whole()
    path = folder.writer("mo@h.1.jsonl").path
    copy = path.with_name("al@h.1.jsonl")
    copy.write_bytes(path.read_bytes())  # a copy sorting first: the record counts from there now
    log = folder.on(first)
    assert view(log) == view(folder.whole()) and not log.adds_to(first)
    assert [r.file for r in log.records] == [copy.name]


def test_a_corrupted_appended_record_is_judged_by_the_rules_of_a_whole_read(folder: Folder) -> None:
    for i in range(3):
        folder.judge("ana@h.1.jsonl", f"q{i}", "c")
    labels = LabelState.read(_frozen(folder), folder.whole())
    labels.decided  # noqa: B018
    path = folder.writer("ana@h.1.jsonl").path
    edited = json.loads(_sealed_line(folder, path, "q7", "c"))
    edited["relevance"] = 3  # its hash no longer matches its content
    with path.open("ab") as f:
        f.write(b"not json\n" + json.dumps(edited).encode() + b"\n")
    log = folder.on(labels.log)
    assert view(log) == view(folder.whole()) and log.adds_to(labels.log)
    assert [p.kind for p in log.problems] == [ProblemKind.QUARANTINED, ProblemKind.EDITED]
    folder.writers.pop("ana@h.1.jsonl")
    folder.judge("ana@h.1.jsonl", "q8", "c")  # chained to the edited line: applied
    log = folder.on(log)
    assert "q8" in {r.query_id for r in log.records}
    broken = _append_unchained(path)  # its prev is not the line before: the chain breaks there
    after = folder.on(log)
    assert view(after) == view(folder.whole()) and not after.adds_to(log)
    assert {"q8", "qx"}.isdisjoint({r.query_id for r in after.records})  # neither is applied
    (chain,) = [p for p in after.problems if p.kind is ProblemKind.CHAIN]
    assert "neither record is applied" in chain.message and chain.seq == parse_record(broken).seq
    built_on = labels.with_log(folder.on(labels.log))
    assert state(built_on) == state(LabelState.read(_frozen(folder), folder.whole()))


def test_a_file_turning_stale_leaves_the_log(folder: Folder) -> None:
    folder.judge("ana@h.1.jsonl", "q1", "c1")
    first = folder.whole()
    w = folder.writer("ana@h.1.jsonl")
    w.frozen.write_bytes(b"other frozen labels")
    w.base = hashlib.sha256(b"other frozen labels").hexdigest()
    w.append(w.new_record(ADD, "q2", "c2"))
    log = folder.on(first)
    assert view(log) == view(folder.whole()) and log.records == () and log.stale == ("ana@h.1.jsonl",)
    assert not log.adds_to(first)


def test_a_removed_file_and_one_turned_into_a_fifo_name_what_went(folder: Folder) -> None:
    folder.judge("ana@h.1.jsonl", "q1", "c1")
    folder.judge("bo@h.1.jsonl", "q2", "c2")
    first = folder.whole()
    folder.writer("ana@h.1.jsonl").path.unlink()
    bo = folder.writer("bo@h.1.jsonl").path
    bo.unlink()
    os.mkfifo(bo)
    log = folder.on(first)
    assert log.records == ()
    kinds = [(p.file, p.kind) for p in log.problems]
    assert kinds == [
        ("ana@h.1.jsonl", ProblemKind.GONE),
        ("bo@h.1.jsonl", ProblemKind.SPECIAL),
        ("bo@h.1.jsonl", ProblemKind.GONE),
    ]
    assert "the file was removed" in log.problems[0].message
    assert folder.on(log) is log


def test_a_folder_made_after_the_first_look_is_read(folder: Folder) -> None:
    first = folder.whole()
    assert first.records == () and first.reading is not None
    folder.judge("ana@h.1.jsonl", "q1", "c1")
    log = folder.on(first)
    assert view(log) == view(folder.whole()) and log.adds_to(first)


# -- any sequence of appends and looks -----------------------------------------------------------
WRITERS = ["al@h.1.jsonl", "bo@h.1.jsonl", "cy@h.1.jsonl"]
STEP = st.one_of(
    st.tuples(
        st.just("judge"), st.sampled_from(WRITERS), st.integers(0, 5), st.integers(0, 3), st.integers(0, 2)
    ),
    st.tuples(st.just("retract"), st.sampled_from(WRITERS), st.integers(0, 30), st.just(0), st.just(0)),
    st.tuples(st.just("garbage"), st.sampled_from(WRITERS), st.just(0), st.just(0), st.just(0)),
    st.tuples(st.just("torn"), st.sampled_from(WRITERS), st.integers(1, 60), st.just(0), st.just(0)),
    st.tuples(st.just("cut"), st.sampled_from(WRITERS), st.integers(0, 2000), st.just(0), st.just(0)),
    st.tuples(st.just("look"), st.just(""), st.just(0), st.just(0), st.just(0)),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(STEP, min_size=1, max_size=30))
def test_any_appends_read_on_look_by_look_give_the_whole_reads_log_and_state(tmp_path_factory, steps) -> None:
    folder = Folder(tmp_path_factory.mktemp("f"))
    labels = LabelState.read(_frozen(folder), folder.whole())
    labels.decided  # noqa: B018
    adds: list[Record] = []
    for op, name, a, b, c in [*steps, ("look", "", 0, 0, 0)]:
        path = folder.path / name
        if op == "judge":
            adds.append(folder.judge(name, f"q{a}", f"c{b}", c))
        elif op == "retract" and adds:
            folder.retract(name, adds[a % len(adds)])
        elif op in ("garbage", "torn") and path.exists():
            with path.open("ab") as f:
                f.write(b"not a record\n" if op == "garbage" else _sealed_line(folder, path, "qt", "ct")[:a])
            folder.writers.pop(name, None)  # its next record is appended by a new process, as after a crash
        elif op == "cut" and path.exists():
            os.truncate(path, min(a, path.stat().st_size))  # records read before may go
            folder.writers.pop(name, None)
        elif op == "look":
            log = folder.on(labels.log)
            whole = folder.whole()
            assert view(log, torn=False, gone=False) == view(whole, torn=False)
            assert {p for p in log.problems if p.kind is ProblemKind.TORN} <= set(whole.problems)
            labels = labels.with_log(log)
            assert state(labels) == state(LabelState.read(_frozen(folder), whole))


# -- helpers -------------------------------------------------------------------------------------
def _frozen(folder: Folder) -> FrozenLabels:
    """Frozen labels judging nothing (every pair the records name is the amendments' to decide)."""
    empty = pa.table({"query_id": pa.array([], pa.string()), "chunk_id": pa.array([], pa.string())})
    empty = empty.append_column("relevance", pa.array([], pa.int64()))
    return FrozenLabels(None, SHA, empty, pa.array([], pa.string()), [], empty)  # type: ignore[arg-type]


def _sealed_line(folder: Folder, path: Path, q: str, c: str) -> bytes:
    """A record's line as the next one of `path` would be written (not written)."""
    w = Writer(folder.path, folder.frozen, SHA, "ana", file_name="scratch")
    rec = w.new_record(ADD, q, c)
    data = path.read_bytes() if path.exists() else b""
    lines = [x for x in data.split(b"\n") if x.strip()]
    return replace(rec, seq=len(lines) + 1, prev=line_hash(lines[-1]) if lines else None).sealed().line()


def _append_unchained(path: Path) -> bytes:
    """Append a good record whose `prev` is not the hash of the line before; its line."""
    last = parse_record(path.read_bytes().split(b"\n")[-2])
    line = replace(last, id="e" * 16, seq=last.seq + 1, prev="1" * 64, query_id="qx").sealed().line()
    with path.open("ab") as f:
        f.write(line + b"\n")
    return line


def test_records_that_come_back_are_no_longer_named_gone(folder: Folder) -> None:
    for i in range(3):
        folder.judge("ana@h.1.jsonl", f"q{i}", "c")
    first = folder.whole()
    path = folder.writer("ana@h.1.jsonl").path
    data = path.read_bytes()
    path.unlink()
    gone = folder.on(first)
    assert [p.kind for p in gone.problems] == [ProblemKind.GONE] and gone.records == ()
    path.write_bytes(data[: data.index(b"\n") + 1])  # one of the three back
    some = folder.on(gone)
    assert "2 records read from it earlier (seq 2, 3)" in some.problems[0].message
    assert "the file was removed" in some.problems[0].message  # what happened then
    path.write_bytes(data)  # all back (a backup restored)
    back = folder.on(some)
    assert back.problems == () and view(back) == view(folder.whole())
