"""The label store's verbs from the command line: `labels judge`,
`labels import`, `labels conflicts`, `labels agreement`, grade-0 rows in `labels export`, and
`labels log` naming not relevant and resolves. Every test runs `triage.cli.main.main` on a copy of
the bundled sample."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.labels.agreement import cohen_kappa, reviewer_agreement
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from conftest import frozen_labels
from sample_story import AMENDED, FROZEN
from sample_story import NEAR_DUP_CHUNK as CHUNK
from sample_story import NEAR_DUP_GOLD as GOLD
from sample_story import NEAR_DUP_QUERY as Q

PAIR = f"{Q}  {CHUNK}"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def judge(capsys: pytest.CaptureFixture[str], copy: Path, *extra: str) -> tuple[int, str, str]:
    return cli(capsys, "labels", "judge", str(copy), "--query", Q, "--chunk", CHUNK, *extra)


def folder(copy: Path) -> Path:
    return copy / "labels.amendments"


def amendment_lines(copy: Path) -> list[dict]:
    if not folder(copy).is_dir():
        return []
    return [
        json.loads(line) for f in sorted(folder(copy).glob("*.jsonl")) for line in f.read_text().splitlines()
    ]


def cells(copy: Path) -> tuple[int, int, int, int]:
    p = Session(open_snapshot(from_manifest(copy))).ev.paired()
    return p.both_hit, p.both_miss, p.a_miss_b_hit, p.a_hit_b_miss


def retrieved(copy: Path, query_id: str, arm: str = "plain") -> list[str]:
    rows = pq.read_table(copy / "runs" / f"{arm}.parquet").to_pylist()
    return next(r["retrieved"] for r in rows if r["query_id"] == query_id)


# == acceptance ====================================================================================


@pytest.mark.slow
def test_two_reviewers_disagree_then_a_resolving_judgement_settles_it(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = judge(capsys, copy, "--grade", "1", "--reviewer", "r1")
    assert rc == 0
    assert f"judged {Q} / {CHUNK}: grade 1 by r1" in out
    (r1_file,) = folder(copy).glob("r1@*.jsonl")
    assert f"written to {r1_file} #1" in out
    assert f"{Q}: regression resolved by amendment" in out
    assert cells(copy) == AMENDED

    rc, out, _ = judge(capsys, copy, "--grade", "0", "--reviewer", "r2")
    assert rc == 0 and "not relevant by r2" in out and "now disagree" in out and "r1: 1, r2: 0" in out
    assert cells(copy) == FROZEN  # the conflict keeps the pair unjudged: the regression stands

    rc, out, _ = cli(capsys, "labels", "conflicts", str(copy))
    assert rc == 1
    lines = out.splitlines()
    assert lines[0].startswith("1 conflict:")
    at = lines.index(PAIR)
    r1_line, r2_line = lines[at + 1], lines[at + 2]
    assert r1_line.split()[:3] == ["r1", "grade", "1"] and r1_line.endswith(f"{r1_file.name}#1")
    assert r2_line.split()[:3] == ["r2", "not", "relevant"] and r2_line.rstrip().endswith("#1")

    rc, out, _ = cli(capsys, "report", str(copy), "--format", "json")
    (check,) = [c for c in json.loads(out)["checks"] if c["code"] == "labels.conflicts"]
    assert check["level"] == "warning" and check["facts"]["count"] == 1

    # One pair, r1 relevant, r2 not: the table is [[0, 1], [0, 0]], n = 1. p_o = 0; r1 said
    # relevant always, r2 never, so p_e = 1·0 + 0·1 = 0 and κ = (0 − 0) / (1 − 0) = 0: defined.
    rc, out, _ = cli(capsys, "labels", "agreement", str(copy))
    assert rc == 0
    assert "r1 × r2: 1 pair both judged" in out
    assert "observed agreement 0.000, by chance 0.000, Cohen's kappa 0.000" in out

    # A third reviewer without --resolves is one more vote: still a conflict.
    rc, out, _ = judge(capsys, copy, "--grade", "1", "--reviewer", "r3")
    assert rc == 0 and "--resolves settles it" in out
    assert cli(capsys, "labels", "conflicts", str(copy))[0] == 1

    rc, out, _ = judge(capsys, copy, "--grade", "1", "--reviewer", "r3", "--resolves")
    assert rc == 0 and "resolving" in out and f"{Q}: regression resolved by amendment" in out
    rc, out, _ = cli(capsys, "labels", "conflicts", str(copy))
    assert rc == 0 and "no conflicts" in out
    assert cells(copy) == AMENDED
    rc, out, _ = cli(capsys, "report", str(copy), "--format", "json")
    assert not [c for c in json.loads(out)["checks"] if c["code"] == "labels.conflicts"]
    (resolving,) = [r for r in amendment_lines(copy) if "resolves" in r]
    others = {r["id"] for r in amendment_lines(copy) if r["id"] != resolving["id"]}
    assert set(resolving["resolves"]) == others  # r1's, r2's and r3's first: the conflict's records


def test_resolves_without_a_conflict_resolves_nothing_and_says_so(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = judge(capsys, copy, "--grade", "2", "--reviewer", "r1", "--resolves")
    assert rc == 0 and "nothing to resolve" in out
    (record,) = amendment_lines(copy)
    assert "resolves" not in record and record["relevance"] == 2 and record["evidence"] == {"source": "judge"}


def test_judging_a_pair_the_frozen_file_judges_changes_nothing_and_says_so(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = cli(capsys, "labels", "judge", str(copy), "--query", Q, "--chunk", GOLD, "--grade", "0")
    assert rc == 0 and "frozen judgements stand" in out and "outcome unchanged" in out
    assert cells(copy) == FROZEN


@pytest.mark.slow
def test_a_reviewers_later_judgement_replaces_their_earlier_one_however_quick(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each `labels judge` is a session file of its own; files merge in name order, so names must
    keep one reviewer's sessions in the order they began, within one second too."""
    for grade in ("1", "0", "2", "0", "1", "2"):
        assert judge(capsys, copy, "--grade", grade, "--reviewer", "r1")[0] == 0
        state = Session(open_snapshot(from_manifest(copy))).labels
        assert state.decided[(Q, CHUNK)].relevance == int(grade) and state.conflicts == []


# == refusals ====================================================================================


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [
        ("--query", "q999", "'q999' is not a query of this evaluation"),
        ("--chunk", "nobody/nothing#001", "chunk 'nobody/nothing#001' is not in the corpus"),
    ],
)
def test_judge_refuses_an_id_the_evaluation_does_not_know(
    copy: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, named: str
) -> None:
    argv = {"--query": Q, "--chunk": CHUNK, flag: value}
    rc, out, err = cli(
        capsys, "labels", "judge", str(copy), *(x for kv in argv.items() for x in kv), "--grade", "1"
    )
    assert rc == 2 and named in err and "nothing written" in err and flag in err
    assert not folder(copy).exists()


@pytest.mark.parametrize("grade", ["-1", "1.5", "two", str(2**53)])
def test_judge_refuses_a_grade_that_is_not_an_integer_from_0_to_2_53(
    copy: Path, capsys: pytest.CaptureFixture[str], grade: str
) -> None:
    with pytest.raises(SystemExit) as e:
        cli(capsys, "labels", "judge", str(copy), "--query", Q, "--chunk", CHUNK, "--grade", grade)
    assert e.value.code == 2
    assert "argument --grade" in capsys.readouterr().err
    assert not folder(copy).exists()


def test_the_largest_grade_is_taken(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert judge(capsys, copy, "--grade", str(2**53 - 1))[0] == 0
    assert amendment_lines(copy)[0]["relevance"] == 2**53 - 1


def no_corpus(copy: Path, extra_label: tuple[str, str, int] | None = None) -> Path:
    """The copy's manifest without its corpus; `extra_label` added to its frozen labels."""
    text = (copy / "triage.toml").read_text()
    text = text.replace('[corpus]\npath = "chunks.parquet"\n', "")
    assert "chunks" not in text
    (copy / "bare.toml").write_text(text)
    if extra_label is not None:
        table = pq.read_table(copy / "labels.parquet")
        row = pa.table(
            {"query_id": [extra_label[0]], "chunk_id": [extra_label[1]], "relevance": [extra_label[2]]}
        )
        pq.write_table(pa.concat_tables([table, row.cast(table.schema)]), copy / "labels.parquet")
    return copy / "bare.toml"


def test_without_a_corpus_a_chunk_is_known_from_either_arm_or_the_labels(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = no_corpus(copy, ("q001", "only/in-the-labels#1", 0))
    only_b = next(c for c in retrieved(copy, "q001", "headers") if c not in retrieved(copy, "q001", "plain"))

    def judged(manifest: Path, chunk: str) -> tuple[int, str]:
        rc, _, err = cli(
            capsys, "labels", "judge", str(manifest), "--query", "q001", "--chunk", chunk, "--grade", "1"
        )
        return rc, err

    assert judged(bare, only_b)[0] == 0  # retrieved by B only
    assert judged(bare, "only/in-the-labels#1")[0] == 0  # named by the labels only
    rc, err = judged(bare, "nobody/nothing#001")
    assert rc == 2 and "neither retrieved by either arm nor in the labels (no corpus given)" in err
    rc, err = judged(copy, "only/in-the-labels#1")  # with the corpus, the corpus decides
    assert rc == 2 and "not in the corpus" in err
    assert [r["chunk_id"] for r in amendment_lines(copy)] == [only_b, "only/in-the-labels#1"]


def test_a_refused_write_exits_2_and_loses_nothing_silently(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder(copy).write_bytes(b"not a folder\n")  # the amendments folder is a regular file
    logs = sorted(copy.rglob("*.jsonl"))  # the bundled files' own (the on-call case's query log)
    rc, out, err = judge(capsys, copy, "--grade", "1", "--reviewer", "r1")
    assert rc == 2
    assert "NOT SAVED" in err and "nothing was written" in err and f"{Q} / {CHUNK}" in err
    assert "judged" not in out
    assert folder(copy).read_bytes() == b"not a folder\n"
    assert sorted(copy.rglob("*.jsonl")) == logs  # no amendment written anywhere
    qrels = copy / "more.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 1\n")
    rc, _, err = cli(capsys, "labels", "import", str(copy), "--from", str(qrels))
    assert rc == 2 and "NOT SAVED" in err and "0 of 1 judgements were written" in err
    assert sorted(copy.rglob("*.jsonl")) == logs


# == import ======================================================================================


def test_import_a_qrels_file(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_gold = retrieved(copy, "q001")[0]
    qrels = copy / "review.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 2\nq001 0 {not_gold} 0\nq002 0 borealis/handbook-2024#006 0\n")
    rc, out, _ = cli(
        capsys, "labels", "import", str(copy), "--from", str(qrels), "--reviewer", "ana", "--note", "batch 1"
    )
    assert rc == 0
    assert f"imported 3 judgements from {qrels} (1 gold, 2 not relevant) by ana" in out
    assert "1 query changed outcome" not in out and "1 queries changed outcome" in out
    assert f"{Q}: regression resolved by amendment" in out
    assert "1 lines judge pairs the frozen file already judges" in out  # q002's gold stands
    records = amendment_lines(copy)
    assert [(r["query_id"], r["chunk_id"], r["relevance"], r["seq"]) for r in records] == [
        (Q, CHUNK, 2, 1),
        ("q001", not_gold, 0, 2),
        ("q002", "borealis/handbook-2024#006", 0, 3),
    ]
    assert {r["reviewer"] for r in records} == {"ana"} and {r["note"] for r in records} == {"batch 1"}
    assert records[1]["evidence"] == {"source": "import", "file": "review.qrels", "line": "line 2"}
    state = Session(open_snapshot(from_manifest(copy))).labels
    assert (Q, CHUNK) in state.added and ("q001", not_gold) in state.not_relevant
    assert cells(copy) == AMENDED


def test_import_a_json_lines_file(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_gold = retrieved(copy, "q001")[0]
    jsonl = copy / "review.jsonl"
    rows = [
        {"query_id": Q, "chunk_id": CHUNK, "relevance": 1},
        {"query_id": "q001", "chunk_id": not_gold, "relevance": 0},
    ]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc, out, _ = cli(capsys, "labels", "import", str(copy), "--from", str(jsonl), "--reviewer", "bo")
    assert rc == 0 and "imported 2 judgements" in out and "(1 gold, 1 not relevant)" in out
    got = [(r["query_id"], r["chunk_id"], r["relevance"], r["reviewer"]) for r in amendment_lines(copy)]
    assert got == [(Q, CHUNK, 1, "bo"), ("q001", not_gold, 0, "bo")]
    rc, out, _ = cli(capsys, "labels", "log", str(copy))
    assert rc == 0 and "imported from review.jsonl line 2" in out


def test_import_refuses_the_whole_file_for_one_unknown_id(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = copy / "review.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 1\nq001 0 nobody/nothing#001 1\nq999 0 {CHUNK} 0\n")
    rc, _, err = cli(capsys, "labels", "import", str(copy), "--from", str(qrels))
    assert rc == 2
    assert f"{qrels}: line 2: chunk 'nobody/nothing#001' is not in the corpus" in err
    assert "(and 1 more lines refused)" in err and "nothing written" in err
    assert not folder(copy).exists()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (f"{Q} 0 {CHUNK}\n", "line 1: expected 4 fields"),
        (f"{Q} 0 {CHUNK} 1\n{Q} 0 {CHUNK} yes\n", "line 2: relevance 'yes' is not an integer"),
        (f"{Q} 0 {CHUNK} -1\n", "line 1: 'relevance' is -1"),
    ],
)
def test_import_a_bad_file_exits_2_naming_file_and_line(
    copy: Path, capsys: pytest.CaptureFixture[str], text: str, named: str
) -> None:
    qrels = copy / "bad.qrels"
    qrels.write_text(text)
    rc, _, err = cli(capsys, "labels", "import", str(copy), "--from", str(qrels))
    assert rc == 2 and f"{qrels}: {named}" in err
    assert not folder(copy).exists()


def test_import_json_lines_with_a_null_relevance_is_refused(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jsonl = copy / "review.jsonl"
    jsonl.write_text(
        json.dumps({"query_id": Q, "chunk_id": CHUNK, "relevance": 1})
        + "\n"
        + json.dumps({"query_id": Q, "chunk_id": CHUNK, "relevance": None})
        + "\n"
    )
    rc, _, err = cli(capsys, "labels", "import", str(copy), "--from", str(jsonl))
    assert rc == 2 and "line 2" in err and "write 0 for not relevant" in err
    assert not folder(copy).exists()


# == export and log ==============================================================================


@pytest.mark.slow
@pytest.mark.parametrize("name", ["v2.parquet", "v2.qrels"])
def test_export_writes_grade_zero_and_reads_back_as_the_same_gold_and_judged_set(
    copy: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    not_gold = retrieved(copy, "q001")[0]
    assert judge(capsys, copy, "--grade", "2")[0] == 0
    args = ("labels", "judge", str(copy), "--query", "q001", "--chunk", not_gold, "--grade", "0")
    assert cli(capsys, *args)[0] == 0
    state = Session(open_snapshot(from_manifest(copy))).labels
    out = copy / name
    rc, printed, _ = cli(capsys, "labels", "export", str(copy), "--out", str(out))
    assert rc == 0 and "1 judged not relevant" in printed

    def pairs(table: pa.Table) -> set[tuple[str, str, int]]:
        return {(r["query_id"], r["chunk_id"], int(r["relevance"])) for r in table.to_pylist()}

    again = frozen_labels(out)
    assert pairs(again.table) == pairs(state.gold_table())
    assert pairs(again.judgements) == pairs(state.judged_table())
    assert ("q001", not_gold, 0) in pairs(again.judgements) and (Q, CHUNK, 2) in pairs(again.table)
    if name.endswith(".qrels"):
        assert f"q001 0 {not_gold} 0" in out.read_text().splitlines()
        meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    else:
        meta = {k.decode(): v.decode() for k, v in pq.read_schema(out).metadata.items()}
    assert meta["triage_not_relevant"] == "1" and meta["triage_in_force"] == "2"


def test_log_names_not_relevant_and_resolves(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judge(capsys, copy, "--grade", "1", "--reviewer", "r1")
    judge(capsys, copy, "--grade", "0", "--reviewer", "r2")
    judge(capsys, copy, "--grade", "1", "--reviewer", "r3", "--resolves")
    ids = {r["reviewer"]: r["id"] for r in amendment_lines(copy)}
    rc, out, _ = cli(capsys, "labels", "log", str(copy))
    assert rc == 0
    body = out.splitlines()[1:]
    assert "grade 1" in body[0] and "resolves" not in body[0]
    assert "not relevant" in body[1] and "grade 0" not in body[1]
    assert f"resolves r1 grade 1 ({ids['r1']}), r2 not relevant ({ids['r2']})" in body[2]


# == Cohen's kappa ===============================================================================


@pytest.mark.parametrize(
    ("table", "kappa"),
    [
        # a=20 b=5 c=10 d=15, n=50: p_o = 35/50 = 0.7; first relevant 25/50, second 30/50;
        # p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5)/(1 − 0.5) = 0.4.
        ((20, 5, 10, 15), Fraction(2, 5)),
        # a=45 b=15 c=25 d=15, n=100: p_o = 0.6; first relevant 0.6, second 0.7;
        # p_e = 0.6·0.7 + 0.4·0.3 = 0.54; κ = 0.06/0.46 = 3/23.
        ((45, 15, 25, 15), Fraction(3, 23)),
        # perfect agreement, both classes used: p_o = 1, p_e = 0.5, κ = 1.
        ((2, 0, 0, 2), Fraction(1)),
        # disagreement on every pair, balanced: p_o = 0, p_e = (2·2 + 2·2)/16 = 0.5, κ = −1.
        ((0, 2, 2, 0), Fraction(-1)),
        # the first always relevant, the second never: p_o = 0, p_e = 0, κ = 0.
        ((0, 3, 0, 0), Fraction(0)),
    ],
)
def test_kappa_against_hand_computed_tables(table: tuple[int, int, int, int], kappa: Fraction) -> None:
    assert cohen_kappa(*table).value == kappa


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        ((0, 0, 0, 0), "no pairs both judged"),
        ((3, 0, 0, 0), "every shared pair relevant"),
        ((0, 0, 0, 4), "every shared pair not relevant"),
    ],
)
def test_kappa_is_undefined_without_pairs_or_when_chance_agreement_is_1(
    table: tuple[int, int, int, int], reason: str
) -> None:
    k = cohen_kappa(*table)
    assert k.value is None and reason in k.reason


def brute_force_kappa(first: list[bool], second: list[bool]) -> Fraction | None:
    """Cohen's kappa from its definition over the two label lists, independently of the table."""
    n = len(first)
    if n == 0:
        return None
    observed = Fraction(sum(1 for x, y in zip(first, second, strict=True) if x == y), n)
    chance = sum(
        (Fraction(sum(1 for x in first if x == label), n) * Fraction(sum(1 for y in second if y == label), n))
        for label in (True, False)
    )
    if chance == 1:
        return None
    return (observed - chance) / (1 - chance)


@pytest.mark.slow
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60))
def test_kappa_matches_the_definition_on_any_labels(pairs: list[tuple[bool, bool]]) -> None:
    first, second = [x for x, _ in pairs], [y for _, y in pairs]
    table = (
        sum(1 for x, y in pairs if x and y),
        sum(1 for x, y in pairs if x and not y),
        sum(1 for x, y in pairs if y and not x),
        sum(1 for x, y in pairs if not x and not y),
    )
    assert cohen_kappa(*table).value == brute_force_kappa(first, second)


@pytest.mark.slow
def test_agreement_takes_each_reviewers_latest_judgement_in_force(copy: Path) -> None:
    def reviewer(name: str) -> Session:
        return Session(open_snapshot(from_manifest(copy)), reviewer=name)

    chunks = retrieved(copy, "q001")[:5]
    ana, bo = reviewer("ana"), reviewer("bo")
    # ana: 1 1 0 0 (chunk 0 first said 0, then 1: the latest counts), chunk 4 added then undone
    ana.add("q001", chunks[0], 0)
    for c, g in zip(chunks, (1, 1, 0, 0), strict=False):
        ana.add("q001", c, g)
    ana.add("q001", chunks[4], 1)
    ana.undo()
    # bo: 1 0 0 0, and 1 on chunk 4 (ana retracted hers: not shared)
    for c, g in zip(chunks, (1, 0, 0, 0, 1), strict=True):
        bo.add("q001", c, g)
    # cy resolves the conflict on chunk 1: ana's and bo's judgements still count for agreement
    conflict = next(c for c in reviewer("cy").labels.conflicts if c.chunk_id == chunks[1])
    reviewer("cy").add("q001", chunks[1], 1, resolves=tuple(r.id for r in conflict.judgements))

    found = {(a.first, a.second): a for a in reviewer_agreement(reviewer("x").labels)}
    assert set(found) == {("ana", "bo"), ("ana", "cy"), ("bo", "cy")}
    ana_bo = found[("ana", "bo")]
    assert [s.chunk_id for s in ana_bo.shared] == sorted(chunks[:4])
    # table [[1, 1], [0, 2]], n = 4: p_o = 3/4; ana relevant 2/4, bo 1/4; p_e = 1/2·1/4 + 1/2·3/4
    # = 1/2; κ = (3/4 − 1/2)/(1/2) = 1/2.
    assert ana_bo.table == (1, 1, 0, 2)
    assert ana_bo.kappa.value == Fraction(1, 2)
    assert found[("ana", "cy")].table == (1, 0, 0, 0) and found[("ana", "cy")].kappa.value is None
    assert found[("bo", "cy")].table == (0, 0, 1, 0) and found[("bo", "cy")].kappa.value == 0
