"""Verdicts: a reader's cause and note for a query, a `verdict` record in the same
session files as the judgements, under the same discipline (chained, hashed, fsync, nothing lost
on a refused write), and read by no label: no number and no label-state version moves."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.core.views.hints import HintKind
from triage.labels import records as records_module
from triage.labels.agreement import reviewer_agreement
from triage.labels.records import (
    ADD,
    RETRACT,
    VERDICT,
    Edited,
    ProblemKind,
    Record,
    canonical_hash,
    parse_record,
    read_file,
)
from triage.labels.verdicts import Cause, Verdict, Verdicts
from triage.labels.writer import Writer
from triage.ui.screens.verdict import CAUSE_KEYS, cause_order
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

import sample_story as story

Q, CHUNK = story.NEAR_DUP_QUERY, story.NEAR_DUP_CHUNK


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def writer(copy: Path, reviewer: str = "ana", name: str | None = None) -> Writer:
    frozen = copy / "labels.parquet"
    return Writer(
        copy / "labels.amendments", frozen, sha(frozen), reviewer, file_name=name or f"{reviewer}@h.s1.jsonl"
    )


def session(copy: Path, reviewer: str = "ana") -> Session:
    return Session(open_snapshot(from_manifest(copy)), reviewer=reviewer)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(list(argv))
    return rc, capsys.readouterr().out


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def resealed(obj: dict[str, object]) -> bytes:
    """`obj` as a line whose own hash holds: what is wrong with it is its content, not an edit."""
    body = {k: v for k, v in obj.items() if k != "hash"}
    return json.dumps({**body, "hash": canonical_hash(body)}, sort_keys=True).encode()


# -- the record ---------------------------------------------------------------------------------


def test_a_verdict_round_trips_and_names_no_chunk(copy: Path) -> None:
    w = writer(copy)
    done = w.append(w.new_verdict(Q, Cause.LIKELY_UNLABELLED, "the near-duplicate answers it"))
    (line,) = lines_of(w.path)
    stored = json.loads(line)
    assert stored["op"] == "verdict" and stored["cause"] == "likely-unlabelled"
    assert stored["note"] == "the near-duplicate answers it" and stored["query_id"] == Q
    for absent in ("chunk_id", "relevance", "retracts", "evidence", "resolves"):
        assert absent not in stored
    records, problems = read_file(w.path)
    assert problems == [] and records == [done]
    r = records[0]
    assert (r.op, r.cause, r.chunk_id, r.relevance, r.seq, r.prev) == (
        VERDICT,
        Cause.LIKELY_UNLABELLED,
        "",
        0,
        1,
        None,
    )
    assert r.hash == r.content_hash() and r.line() == line


def test_a_judgement_line_is_spelled_as_before_verdicts_existed() -> None:
    """Old readers' invariant: an add or retract has no `cause` key, and its hash is over exactly
    the fields it had (a record written before verdicts existed still proves itself)."""
    body = {
        "schema": 1, "id": "a1", "seq": 1, "op": "add", "query_id": "q1", "chunk_id": "c1",
        "relevance": 1, "retracts": None, "reviewer": "ana", "at": "2025-01-01T00:00:00.000Z",
        "note": "", "base": "f" * 64, "evidence": {"arm": "b", "rank": 1}, "prev": None,
    }  # fmt: skip
    line = json.dumps({**body, "hash": canonical_hash(body)}, sort_keys=True).encode()
    add = parse_record(line)
    assert add.cause is None and add.line() == line and add.content_hash() == canonical_hash(body)
    retract = parse_record(resealed({**body, "id": "r1", "op": "retract", "retracts": "a1"}))
    assert retract.op == RETRACT and retract.cause is None and b"cause" not in retract.line()


def test_a_reader_that_predates_verdicts_keeps_every_judgement(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older triage refuses the op and quarantines the verdict line alone; the chain runs
    through it, so the judgements after it show no gap."""
    path = _mixed(copy)
    newer = records_module.parse_record

    def older(raw: bytes) -> Record:
        if json.loads(raw).get("op") not in ("add", "retract"):
            raise ValueError("op 'verdict' is neither add nor retract")
        return newer(raw)

    monkeypatch.setattr(records_module, "parse_record", older)
    records, problems = read_file(path)
    assert [r.seq for r in records] == [1, 3] and all(r.op == ADD for r in records)
    assert [(p.kind, p.offset > 0) for p in problems] == [(ProblemKind.QUARANTINED, True)] * 2


def _verdict(copy: Path) -> dict[str, object]:
    w = writer(copy)
    w.append(w.new_verdict(Q, Cause.OTHER, "n"))
    return json.loads(lines_of(w.path)[0])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"cause": None}, "cause"),
        ({"cause": "bogus"}, "is not one of"),
        ({"cause": 3}, "is not one of"),
        ({"cause": "HEADER-DOMINATES"}, "is not one of"),
        ({"chunk_id": "c#1"}, "chunk_id must be absent"),
        ({"relevance": 1}, "relevance must be absent"),
        ({"retracts": "x"}, "retracts must be absent"),
        ({"evidence": {"arm": "b"}}, "evidence must be absent"),
        ({"resolves": ["x"]}, "resolves must be absent"),
        ({"op": "add"}, "missing chunk_id"),
        ({"op": "add", "chunk_id": "c#1", "relevance": 1}, "judgement (add) has no cause"),
        ({"op": "verdicts"}, "neither add, retract nor verdict"),
        ({"note": 7}, "note must be a string"),
        ({"query_id": ""}, "query_id must be a non-empty string"),
    ],
)
def test_parse_rejects_a_bad_verdict(copy: Path, change: dict[str, object], words: str) -> None:
    obj = {k: v for k, v in {**_verdict(copy), **change}.items() if v is not None or k != "cause"}
    with pytest.raises(ValueError, match=re.escape(words)) as caught:
        parse_record(resealed(obj))
    assert not isinstance(caught.value, Edited)  # its hash holds: the content itself is refused


def test_the_writer_keeps_cause_and_op_together(copy: Path) -> None:
    w = writer(copy)
    with pytest.raises(ValueError, match="only a verdict"):
        w.new_record(VERDICT, Q, "", 0)
    with pytest.raises(ValueError, match="only a verdict"):
        w.new_record(ADD, Q, CHUNK, cause=Cause.OTHER)


# -- torn, edited, broken, copied: a verdict line is handled like any record --------------------


def _mixed(copy: Path) -> Path:
    """ana's file: an add, a verdict, an add, a verdict (seq 1–4)."""
    w = writer(copy)
    w.append(w.new_record(ADD, "q001", "extra#1"))
    w.append(w.new_verdict(Q, Cause.HEADER_DOMINATES, "first look"))
    w.append(w.new_record(ADD, "q002", "extra#2"))
    w.append(w.new_verdict("q113", Cause.MISLEADING_PATH))
    return w.path


def _edit(path: Path, index: int, **changes: object) -> None:
    lines = lines_of(path)
    obj = json.loads(lines[index])
    obj.update(changes)  # as a hand with an editor would: the hash stays
    lines[index] = json.dumps(obj, sort_keys=True).encode()
    path.write_bytes(b"".join(x + b"\n" for x in lines))


def _causes(copy: Path) -> dict[str, Cause]:
    v = open_snapshot(from_manifest(copy)).verdicts
    return {q: vs[0].cause for q, vs in v.by_query.items()}


def test_an_edited_verdict_is_quarantined_alone(copy: Path, capsys) -> None:
    path = _mixed(copy)
    _edit(path, 1, cause="label-error")  # a verdict changed after it was written
    records, problems = read_file(path)
    assert [(p.kind, p.seq) for p in problems] == [(ProblemKind.EDITED, 2)]
    assert [r.seq for r in records] == [1, 3, 4]  # its neighbours are kept, the chain runs on
    assert _causes(copy) == {"q113": Cause.MISLEADING_PATH}
    rc, out = cli(capsys, "labels", "verify", str(copy))
    assert rc == 1 and "edited after it was written" in out and "(seq 2)" in out


def test_a_torn_last_verdict_is_skipped_and_the_next_writer_repairs_it(copy: Path, capsys) -> None:
    path = _mixed(copy)
    whole = path.read_bytes()
    cut = len(whole) - len(lines_of(path)[-1]) - 1
    path.write_bytes(whole[: cut + 40])  # the last verdict cut short: no newline
    records, problems = read_file(path)
    assert [r.seq for r in records] == [1, 2, 3] and [p.kind for p in problems] == [ProblemKind.TORN]
    assert _causes(copy) == {Q: Cause.HEADER_DOMINATES}
    w = writer(copy)
    done = w.append(w.new_verdict("q061", Cause.SHORT_LIST))
    assert done.repairs == cut and done.seq == 4
    records, problems = read_file(path)
    assert [r.seq for r in records] == [1, 2, 3, 4] and [p.kind for p in problems] == [ProblemKind.REPAIRED]
    assert cli(capsys, "labels", "verify", str(copy))[0] == 0


def test_a_verdict_line_removed_breaks_the_chain_and_is_said(copy: Path) -> None:
    path = _mixed(copy)
    lines = lines_of(path)
    path.write_bytes(b"".join(x + b"\n" for i, x in enumerate(lines) if i != 1))
    records, problems = read_file(path)
    assert [(p.kind, p.seq, p.before_seq) for p in problems] == [(ProblemKind.CHAIN, 3, 1)]
    assert [r.seq for r in records] == [4]  # both sides of the break disowned


def test_a_bad_cause_costs_only_its_own_line(copy: Path) -> None:
    path = _mixed(copy)
    lines = lines_of(path)
    lines[1] = resealed({**json.loads(lines[1]), "cause": "vibes"})
    path.write_bytes(b"".join(x + b"\n" for x in lines))
    records, problems = read_file(path)
    assert [p.kind for p in problems] == [ProblemKind.QUARANTINED] and "vibes" in problems[0].message
    assert [r.seq for r in records] == [1, 3, 4]


def test_a_copied_file_of_verdicts_counts_once(copy: Path) -> None:
    path = _mixed(copy)
    before = open_snapshot(from_manifest(copy))
    shutil.copy(path, path.with_name("ana@h.s1 (copy).jsonl"))
    after = open_snapshot(from_manifest(copy))
    assert after.verdicts == before.verdicts and after.verdicts.count == 2
    assert after.labels.log.damage == ()


# -- latest per reviewer, disagreements ---------------------------------------------------------


def test_a_reviewers_later_verdict_replaces_their_earlier(copy: Path) -> None:
    w = writer(copy)
    w.append(w.new_verdict(Q, Cause.HEADER_DOMINATES))
    w.append(w.new_verdict(Q, Cause.LIKELY_UNLABELLED, "second look"))
    (v,) = open_snapshot(from_manifest(copy)).verdicts.for_query(Q)
    assert (v.reviewer, v.cause, v.note) == ("ana", Cause.LIKELY_UNLABELLED, "second look")
    assert open_snapshot(from_manifest(copy)).verdicts.disagreements() == []


def test_reviewers_who_name_different_causes_disagree_until_they_agree(copy: Path) -> None:
    writer(copy, "ana").append(writer(copy, "ana").new_verdict(Q, Cause.LIKELY_UNLABELLED))
    bo = writer(copy, "bo")
    bo.append(bo.new_verdict(Q, Cause.HEADER_DOMINATES, "the header is most of it"))
    bo.append(bo.new_verdict("q113", Cause.MISLEADING_PATH))
    verdicts = open_snapshot(from_manifest(copy)).verdicts
    assert [(v.reviewer, v.cause) for v in verdicts.for_query(Q)] == [
        ("ana", Cause.LIKELY_UNLABELLED),
        ("bo", Cause.HEADER_DOMINATES),
    ]  # both listed: neither wins
    assert verdicts.disagreements() == [Q]  # q113 has one reviewer: no disagreement
    bo.append(bo.new_verdict(Q, Cause.LIKELY_UNLABELLED))
    assert open_snapshot(from_manifest(copy)).verdicts.disagreements() == []


def test_verdicts_latest_in_memory() -> None:
    def v(i: int, q: str, who: str, cause: Cause) -> Verdict:
        return Verdict(f"id{i}", q, cause, "", who, "t")

    got = Verdicts.latest(
        [v(1, "q1", "bo", Cause.OTHER), v(2, "q1", "ana", Cause.OTHER), v(3, "q1", "bo", Cause.WINDOW)]
    )
    assert [x.id for x in got.for_query("q1")] == ["id2", "id3"]  # reviewer order, bo's latest
    assert got.disagreements() == ["q1"] and got.count == 2 and got.ids == {"id2", "id3"}
    assert got.for_query("q2") == () and Verdicts().disagreements() == []


# -- no number moves ----------------------------------------------------------------------------


@pytest.mark.slow
def test_verdicts_change_no_number_and_no_label_state_version(copy: Path, capsys) -> None:
    ana = session(copy, "ana")
    assert ana.add(Q, CHUNK, evidence={"arm": "b", "rank": 1}).saved  # a judgement in force too
    rc, before = cli(capsys, "report", str(copy), "--format", "json")
    assert rc == 0
    state = ana.labels
    version, head, describe = ana.version, state.head, state.describe()
    gold, judged, kappas = state.gold_table(), state.judged_table(), reviewer_agreement(state)
    outcomes = ana.outcomes.copy()
    assert main(["labels", "export", str(copy), "--out", str(copy / "before.parquet")]) == 0
    for q in (Q, "q155", "q113"):
        for cause in (Cause.LABEL_ERROR, Cause.REAL_REGRESSION):
            change = ana.verdict(q, cause, "n")
            assert change.saved and change.before == change.after
    bo = session(copy, "bo")
    assert bo.verdict(Q, Cause.OTHER).saved
    assert ana.version == version and ana.labels.head == head and ana.labels.describe() == describe
    assert (ana.outcomes == outcomes).all() and ana.labels.gold_table().equals(gold)
    again = open_snapshot(from_manifest(copy))  # read back from disk: 7 verdicts, 1 judgement
    assert again.verdicts.count == 4 and again.verdicts.disagreements() == [Q]
    labels = again.labels
    assert labels.version == version.split("|")[0] and labels.head == head and labels.describe() == describe
    assert labels.gold_table().equals(gold) and labels.judged_table().equals(judged)
    assert labels.conflicts == [] and reviewer_agreement(labels) == kappas
    assert len(labels.records) == 1 and len(labels.every_record) == 8
    rc, after = cli(capsys, "report", str(copy), "--format", "json")
    assert rc == 0 and json.loads(after) == json.loads(before)
    assert main(["labels", "export", str(copy), "--out", str(copy / "after.parquet")]) == 0
    a, b = pq.read_table(copy / "before.parquet"), pq.read_table(copy / "after.parquet")
    assert a.equals(b)
    meta = {k: v for k, v in (b.schema.metadata or {}).items() if k != b"created_at"}
    assert meta == {k: v for k, v in (a.schema.metadata or {}).items() if k != b"created_at"}


# -- a refused write ----------------------------------------------------------------------------


def test_a_refused_verdict_is_kept_in_memory_said_and_retried(copy: Path) -> None:
    folder = copy / "labels.amendments"
    folder.write_text("not a folder")  # the folder cannot be created
    ana = session(copy)
    version = ana.version
    change = ana.verdict(Q, Cause.HEADER_DOMINATES, "kept")
    assert not change.saved and "NOT SAVED" in change.message and "verdict header-dominates" in change.message
    assert ana.unsaved == 1 and ana.version == version  # counted as unsaved; no number moved
    (v,) = ana.verdicts.for_query(Q)
    assert (v.cause, v.note, v.saved) == (Cause.HEADER_DOMINATES, "kept", False)
    again = ana.add("q001", "extra#1")  # a judgement after it waits behind it, in order
    assert not again.saved and "earlier decisions are still unsaved" in again.error
    assert ana.retry() == 0 and ana.unsaved == 2
    folder.unlink()
    assert ana.retry() == 2 and ana.unsaved == 0
    (v,) = ana.verdicts.for_query(Q)
    assert v.saved
    (path,) = folder.glob("*.jsonl")
    records, problems = read_file(path)
    assert problems == [] and [(r.op, r.seq) for r in records] == [(VERDICT, 1), (ADD, 2)]
    assert open_snapshot(from_manifest(copy)).verdicts.for_query(Q)[0].note == "kept"


def test_discarding_drops_an_unsaved_verdict(copy: Path) -> None:
    (copy / "labels.amendments").write_text("not a folder")
    ana = session(copy)
    assert not ana.verdict(Q, Cause.OTHER).saved
    ana.discard_unsaved()
    assert ana.unsaved == 0 and ana.verdicts.for_query(Q) == ()


# -- labels log and verify ----------------------------------------------------------------------


def test_labels_log_lists_verdicts_and_names_disagreements(copy: Path, capsys) -> None:
    ana, bo = writer(copy, "ana"), writer(copy, "bo")
    ana.append(ana.new_record(ADD, "q001", "extra#1", note="a judgement"))
    ana.append(ana.new_verdict(Q, Cause.HEADER_DOMINATES))
    ana.append(ana.new_verdict(Q, Cause.LIKELY_UNLABELLED, "near-duplicate of the gold"))
    bo.append(bo.new_verdict(Q, Cause.LABEL_ERROR))
    bo.append(bo.new_verdict("q113", Cause.MISLEADING_PATH))
    rc, out = cli(capsys, "labels", "log", str(copy))
    assert rc == 0
    lines = out.splitlines()
    verdict_lines = [x for x in lines[1:] if " verdict" in x]
    assert len(verdict_lines) == 4
    assert any(
        "ana" in x and "verdict (replaced)" in x and "cause header-dominates" in x for x in verdict_lines
    )
    assert any(
        "ana" in x
        and f"{Q}  cause likely-unlabelled  note: near-duplicate of the gold" in x
        and "(replaced)" not in x
        for x in verdict_lines
    )
    assert any("bo" in x and "cause label-error" in x for x in verdict_lines)
    assert f"verdicts disagree on {Q}: ana likely-unlabelled, bo label-error" in out
    assert "disagree on q113" not in out
    assert "+ 1 amendments" in lines[0] and "3 verdicts in force" in lines[0]  # not amendments
    rc, out = cli(capsys, "labels", "verify", str(copy))
    assert rc == 0 and "3 records (2 verdicts)" in out and "2 records (2 verdicts)" in out


def test_labels_log_without_verdicts_says_none(copy: Path, capsys) -> None:
    w = writer(copy)
    w.append(w.new_record(ADD, "q001", "extra#1"))
    rc, out = cli(capsys, "labels", "log", str(copy))
    assert rc == 0 and "verdict" not in out
    assert "verdict" not in cli(capsys, "labels", "verify", str(copy))[1]


# -- the keys -----------------------------------------------------------------------------------


def test_every_cause_has_its_own_key_and_every_hint_kind_is_a_cause() -> None:
    assert set(CAUSE_KEYS) == set(Cause)
    assert len(set(CAUSE_KEYS.values())) == len(Cause)
    assert all(len(k) == 1 and k.islower() for k in CAUSE_KEYS.values())
    assert {k.value for k in HintKind} <= {c.value for c in Cause}
    assert "v" not in CAUSE_KEYS.values()  # the key that opened it


def test_hinted_causes_come_first() -> None:
    order = cause_order([Cause.WINDOW, Cause.SHORT_LIST, Cause.WINDOW])
    assert order[:2] == [Cause.WINDOW, Cause.SHORT_LIST] and sorted(order) == sorted(Cause)
    assert cause_order([]) == list(Cause)
