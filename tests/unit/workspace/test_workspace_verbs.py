"""The label verbs' rules at the workspace level (workspace/judgements.py, workspace/store.py,
workspace/spec.py), without the command line: what each returns, what it writes, what it refuses.
The wording the command line prints is tested through `triage.cli.main` in test_label_verbs.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled, sample_spec
from triage.core.errors import InputError
from triage.core.inputs.manifest import from_manifest
from triage.core.inputs.split import Holdout, Rule
from triage.core.measures.paired import Outcome
from triage.workspace import judgements, store
from triage.workspace.snapshot import open_snapshot
from triage.workspace.spec import evaluation_spec

from sample_story import NEAR_DUP_CHUNK as CHUNK
from sample_story import NEAR_DUP_QUERY as Q


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def opened(copy: Path):
    return open_snapshot(from_manifest(copy))


def lines(copy: Path) -> list[dict]:
    folder = copy / "labels.amendments"
    return [json.loads(x) for f in sorted(folder.glob("*.jsonl")) for x in f.read_text().splitlines()]


# == judgements.judge ============================================================================


def test_judge_writes_one_record_and_says_where(copy: Path) -> None:
    done = judgements.judge(opened(copy), Q, CHUNK, 2, "looks right", reviewer="ana")
    assert done.change.saved and done.seq == 1 and done.reviewer == "ana"
    assert done.path.parent == copy / "labels.amendments" and done.path.exists()
    assert done.change.before is Outcome.HIT_TO_MISS and done.change.after is Outcome.BOTH_HIT
    assert (done.before, done.after, done.frozen, done.resolves) == (None, None, None, False)
    (line,) = lines(copy)
    assert (line["query_id"], line["chunk_id"], line["relevance"], line["note"]) == (
        Q,
        CHUNK,
        2,
        "looks right",
    )
    assert line["evidence"] == {"source": "judge"}


def test_judge_reports_a_conflict_it_makes_and_one_it_resolves(copy: Path) -> None:
    assert judgements.judge(opened(copy), Q, CHUNK, 1, reviewer="r1").after is None
    made = judgements.judge(opened(copy), Q, CHUNK, 0, reviewer="r2")
    assert made.before is None and made.after is not None and made.after.grades == {"r1": 1, "r2": 0}
    voted = judgements.judge(opened(copy), Q, CHUNK, 0, reviewer="r3")
    assert voted.before is not None and not voted.resolves and voted.after is not None
    settled = judgements.judge(opened(copy), Q, CHUNK, 1, reviewer="lead", resolves=True)
    assert settled.before is not None and settled.resolves and settled.after is None
    by = {r["reviewer"]: r for r in lines(copy)}
    assert set(by["lead"]["resolves"]) == {by[r]["id"] for r in ("r1", "r2", "r3")}


def test_judge_names_the_frozen_grade_that_stands(copy: Path) -> None:
    snapshot = opened(copy)
    t = snapshot.labels.frozen.judgements
    q, c, g = (t.column(n)[0].as_py() for n in ("query_id", "chunk_id", "relevance"))
    done = judgements.judge(snapshot, q, c, 0, reviewer="ana")
    assert done.frozen == g and done.change.before == done.change.after


def test_judge_refuses_an_unknown_id_naming_the_argument_and_writes_nothing(copy: Path) -> None:
    snapshot = opened(copy)
    with pytest.raises(InputError, match="is not a query of this evaluation") as caught:
        judgements.judge(snapshot, "no-such-query", CHUNK, 1)
    assert caught.value.message.startswith("--query:")
    with pytest.raises(InputError, match="not in the corpus") as caught:
        judgements.judge(snapshot, Q, "no/such#chunk", 1, where=("query_id", "chunk_id"))
    assert caught.value.message.startswith("chunk_id:")
    assert lines(copy) == []


def test_judge_returns_the_refused_write_unsaved(copy: Path) -> None:
    (copy / "labels.amendments").write_bytes(b"not a folder\n")
    done = judgements.judge(opened(copy), Q, CHUNK, 1, reviewer="ana")
    assert not done.change.saved and done.change.error and done.seq is None and done.after is None


# == judgements.import_judgements ==================================================================


def test_import_returns_what_it_wrote_and_what_it_changed(copy: Path) -> None:
    snapshot = opened(copy)
    t = snapshot.labels.frozen.judgements
    frozen_q, frozen_c = t.column("query_id")[0].as_py(), t.column("chunk_id")[0].as_py()
    qrels = copy / "review.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 2\n{frozen_q} 0 {frozen_c} 0\n")
    done = judgements.import_judgements(snapshot, qrels, "batch", reviewer="ana")
    assert (done.rows, done.gold, done.reviewer, done.last_seq, done.failed) == (2, 1, "ana", 2, None)
    assert [(c.query_id, c.before, c.after) for c in done.changed] == [
        (Q, Outcome.HIT_TO_MISS, Outcome.BOTH_HIT)
    ]
    assert done.frozen == 1 and done.new_conflicts == 0
    written = lines(copy)
    assert [(r["query_id"], r["relevance"], r["note"]) for r in written] == [
        (Q, 2, "batch"),
        (frozen_q, 0, "batch"),
    ]
    assert written[0]["evidence"] == {"source": "import", "file": "review.qrels", "line": "line 1"}


def test_import_counts_the_conflicts_it_makes(copy: Path) -> None:
    judgements.judge(opened(copy), Q, CHUNK, 1, reviewer="r1")
    qrels = copy / "r2.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 0\n")
    done = judgements.import_judgements(opened(copy), qrels, reviewer="r2")
    assert done.new_conflicts == 1 and done.gold == 0


def test_import_refuses_the_whole_file_for_one_unknown_id(copy: Path) -> None:
    qrels = copy / "bad.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 1\nnobody 0 {CHUNK} 1\nq001 0 no/such#1 1\n")
    with pytest.raises(InputError, match=r"line 2.*'nobody'.*\(and 1 more lines refused\)"):
        judgements.import_judgements(opened(copy), qrels)
    assert lines(copy) == []


def test_import_stops_at_a_refused_write(copy: Path) -> None:
    (copy / "labels.amendments").write_bytes(b"not a folder\n")
    qrels = copy / "more.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 1\n")
    done = judgements.import_judgements(opened(copy), qrels)
    assert done.failed is not None and done.failed.written == 0 and done.failed.where == "line 1"
    assert done.changed == () and done.failed.error


def test_read_judgements_refuses_an_empty_grade(copy: Path) -> None:
    rows = copy / "rows.jsonl"
    rows.write_text(
        json.dumps({"query_id": Q, "chunk_id": CHUNK, "relevance": 1})
        + "\n"
        + json.dumps({"query_id": Q, "chunk_id": CHUNK, "relevance": None})
        + "\n"
    )
    with pytest.raises(InputError, match="relevance is empty"):
        judgements.read_judgements(rows)


# == store =========================================================================================


def test_log_entries_mark_adds_retracts_and_resolutions(copy: Path) -> None:
    from triage.workspace.session import Session

    session = Session(opened(copy), reviewer="ana")
    session.add(Q, CHUNK, 1, "", {"source": "judge"})
    session.undo()
    judgements.judge(opened(copy), Q, CHUNK, 1, reviewer="r1")
    judgements.judge(opened(copy), Q, CHUNK, 0, reviewer="r2")
    judgements.judge(opened(copy), Q, CHUNK, 2, reviewer="lead", resolves=True)
    entries = store.log_entries(opened(copy))
    marks = [(e.record.reviewer, e.mark) for e in entries]
    assert ("ana", "add (retracted)") in marks and ("ana", "retract") in marks
    resolving = next(e for e in entries if e.record.reviewer == "lead")
    assert resolving.mark == "add"
    assert sorted(r.reviewer for _, r in resolving.resolves if r is not None) == ["r1", "r2"]


def test_verify_finds_every_file_intact_then_a_changed_byte(copy: Path) -> None:
    empty = store.verify(opened(copy))
    assert empty.files == 0 and empty.findings == () and not empty.failed
    judgements.judge(opened(copy), Q, CHUNK, 1, reviewer="ana")
    ok = store.verify(opened(copy))
    assert ok.files == 1 and [f.level for f in ok.findings] == [store.FindingLevel.OK] and not ok.failed
    assert "1 record, hashes and chain intact" in ok.findings[0].text
    (path,) = (copy / "labels.amendments").glob("*.jsonl")
    text = path.read_text()
    assert f'"{Q}"' in text
    path.write_text(text.replace(f'"{Q}"', '"q151"'))
    bad = store.verify(opened(copy))
    assert bad.failed and store.FindingLevel.OK not in [f.level for f in bad.findings]


def test_verify_fails_an_amendments_path_that_is_not_a_folder(copy: Path) -> None:
    (copy / "labels.amendments").write_bytes(b"x")
    found = store.verify(opened(copy))
    assert found.failed and "not a folder" in found.findings[0].text


def test_export_counts_the_rows_it_wrote_and_refuses_an_input(copy: Path) -> None:
    judgements.judge(opened(copy), Q, CHUNK, 0, reviewer="ana")
    out = copy / "out.parquet"
    done = store.export(opened(copy), out)
    grades = pq.read_table(out).column("relevance")
    assert done.gold + done.not_relevant == len(grades) and done.not_relevant == grades.to_pylist().count(0)
    assert done.not_relevant >= 1
    with pytest.raises(InputError):
        store.export(opened(copy), copy / "labels.parquet")


def test_protected_holds_the_inputs_and_the_review_files(copy: Path) -> None:
    from triage.core.files import identity

    judgements.judge(opened(copy), Q, CHUNK, 1, reviewer="ana")
    (review,) = (copy / "labels.amendments").glob("*.jsonl")
    held = store.protected(from_manifest(copy))
    assert identity(review) in held and identity(copy / "labels.parquet") in held


# == spec.evaluation_spec =========================================================================


def test_the_cli_and_the_api_build_the_same_spec_from_the_same_files(copy: Path) -> None:
    import triage

    a, b, labels = copy / "runs/plain.parquet", copy / "runs/headers.parquet", copy / "labels.parquet"
    spec = evaluation_spec(None, (a, b), labels)
    assert (spec.a.name, spec.b.name, spec.labels, spec.k, spec.manifest) == (
        "plain",
        "headers",
        labels,
        None,
        None,
    )
    api = triage.open(a=a, b=b, labels=labels, k=5).snapshot.spec
    assert api == evaluation_spec(None, (a, b), labels, k=5) and api.ks == (5,)
    from triage.cli.main import report_parser, spec_from

    args = report_parser().parse_args([str(a), str(b), "--labels", str(labels)])
    assert spec_from(args) == spec


def test_evaluation_spec_names_checks_and_overrides(copy: Path) -> None:
    a, b, labels = copy / "runs/plain.parquet", copy / "runs/headers.parquet", copy / "labels.parquet"
    named = evaluation_spec(None, (a, b), labels, names=("one", None), amendments=copy / "elsewhere")
    assert (named.a.name, named.b.name, named.amendments) == ("one", "headers", copy / "elsewhere")
    with pytest.raises(InputError, match="file does not exist"):
        evaluation_spec(None, (a, copy / "missing.parquet"), labels)
    held = evaluation_spec(None, (Path("run a"), b), labels, in_memory={Path("run a")})
    assert held.a.path == Path("run a")
    with pytest.raises(InputError, match="k lists 5 twice"):
        evaluation_spec(None, (a, b), labels, k=[5, 5])
    with pytest.raises(ValueError, match="go with two runs"):
        evaluation_spec(copy, labels=labels)
    hashed = Holdout(Rule.HASH, fraction=0.25)
    by_manifest = evaluation_spec(copy, amendments=copy / "other", holdout=hashed)
    assert by_manifest.manifest == copy / "triage.toml" and by_manifest.amendments == copy / "other"
    assert by_manifest.holdout == hashed and by_manifest.a == from_manifest(copy).a
    assert evaluation_spec() == sample_spec()


def test_a_glob_of_run_files_opens_through_the_api_as_through_the_cli(copy: Path, capsys) -> None:
    import triage

    shards = copy / "shards"
    shards.mkdir()
    table = pq.read_table(copy / "runs/plain.parquet")
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), shards / "part-0.parquet")
    pq.write_table(table.slice(half), shards / "part-1.parquet")
    pattern = shards / "part-*.parquet"
    labels, b = copy / "labels.parquet", copy / "runs/headers.parquet"
    ev = triage.open(a=pattern, b=b, labels=labels, k=5)
    whole = triage.open(a=copy / "runs/plain.parquet", b=b, labels=labels, k=5)
    assert ev.queries().column("outcome") == whole.queries().column("outcome")
    capsys.readouterr()
    assert (
        main(["report", str(pattern), str(b), "--labels", str(labels), "--k", "5", "--format", "json"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["paired"] == ev.report().to_json()["paired"]


def test_the_api_names_a_table_arm_by_its_metadata(copy: Path) -> None:
    import triage

    table = pq.read_table(copy / "runs/plain.parquet")
    named = table.replace_schema_metadata({**(table.schema.metadata or {}), b"name": b"from-meta"})
    bare = pq.read_table(copy / "runs/headers.parquet").replace_schema_metadata(None)
    ev = triage.open(a=named, b=bare, labels=copy / "labels.parquet", k=5)
    assert ev.names == ("from-meta", "b")
    assert triage.open(a=named, b=bare, labels=copy / "labels.parquet", k=5, names=("x", "y")).names == (
        "x",
        "y",
    )
