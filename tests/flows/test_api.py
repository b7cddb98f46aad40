"""The Python API (triage/api.py): an evaluation opened from files, Arrow tables or DataFrames gives
the report `triage report --format json` prints, a per-query table, and the app on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import triage
from triage.api import Comparison, open_evaluation
from triage.cli.main import main
from triage.core.errors import InputError
from triage.report.model import dumps_report

from app_helpers import wait_loaded
from conftest import ROOT

SAMPLE = ROOT / "sample_runs"
FILES = {
    "a": "runs/plain.parquet",
    "b": "runs/headers.parquet",
    "labels": "labels.parquet",
    "queries": "queries.parquet",
    "corpus": "chunks.parquet",
}


def as_json(ev: Comparison) -> dict:
    return json.loads(dumps_report(ev.report()))


def without_paths(report: dict) -> dict:
    out = json.loads(json.dumps(report))
    for arm in ("a", "b"):
        del out["arms"][arm]["path"]
    del out["labels"]["path"]
    return out


def tables() -> dict[str, pa.Table]:
    return {role: pq.read_table(SAMPLE / name) for role, name in FILES.items()}


class Stream:
    """A table-like object that is neither pyarrow nor a DataFrame: only the Arrow C stream."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


def meta_of(table: pa.Table) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}


@pytest.fixture(scope="module")
def from_tables() -> Comparison:
    return open_evaluation(**tables())  # type: ignore[arg-type]


@pytest.mark.slow
def test_the_report_is_the_one_triage_report_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(SAMPLE), "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    ev = triage.open(SAMPLE)
    assert ev.names == ("plain", "headers") and ev.k == 5
    api = as_json(ev)
    assert api["paired"]["a_hit_b_miss"] == 6 and api["paired"]["a_miss_b_hit"] == 40
    assert without_paths(api) == without_paths(cli)
    assert ev.report().to_json()["paired"] == cli["paired"]  # the typed model itself, not a re-parse


@pytest.mark.slow
def test_tables_give_the_files_report_but_for_paths_and_the_labels_hash(from_tables: Comparison) -> None:
    files = without_paths(as_json(open_evaluation(**{r: SAMPLE / n for r, n in FILES.items()})))
    got = without_paths(as_json(from_tables))
    assert got["arms"]["a"]["name"] == "plain"  # the table's own name metadata
    # Labels given as a table have no file bytes: they are identified by a hash of their rows, and
    # the runs' recorded labels_sha256 (a file's) is noted, not compared.
    for section in (files, got):
        del section["labels"]["frozen_sha256"], section["labels"]["state"]
    assert files["labels"] == got["labels"]
    sha_checks = [c for c in got.pop("checks") if c["code"] == "meta.labels_sha256"]
    assert [c["level"] for c in sha_checks] == ["ok", "ok"] and "given as a table" in sha_checks[0]["message"]
    assert not [c for c in files.pop("checks") if c["code"] == "meta.labels_sha256"]  # the hashes agree
    assert got == files


@pytest.mark.slow
def test_labels_given_as_a_table_are_hashed_by_their_rows() -> None:
    labels = tables()["labels"]
    one = open_evaluation(**{**tables(), "labels": labels}).snapshot.labels.frozen.sha256
    again = open_evaluation(**{**tables(), "labels": labels.combine_chunks()}).snapshot.labels.frozen.sha256
    fewer = open_evaluation(**{**tables(), "labels": labels.slice(1)}).snapshot.labels.frozen.sha256
    assert one == again and one != fewer


@pytest.mark.slow
def test_an_arrow_stream_and_a_batch_reader_give_the_same_as_tables(from_tables: Comparison) -> None:
    t = tables()
    bare = {role: table.replace_schema_metadata(None) for role, table in t.items()}  # as a DataFrame
    ev = open_evaluation(
        a=Stream(bare["a"]),
        b=pa.RecordBatchReader.from_batches(bare["b"].schema, bare["b"].to_batches()),
        labels=Stream(bare["labels"]),
        queries=Stream(bare["queries"]),
        corpus=bare["corpus"].to_batches()[0] if bare["corpus"].num_rows else bare["corpus"],
        names=("plain", "headers"),
        meta={"a": meta_of(t["a"]), "b": meta_of(t["b"]), "labels": meta_of(t["labels"])},
    )
    assert as_json(ev) == as_json(from_tables)
    assert ev.queries(hints=True).equals(from_tables.queries(hints=True))


def test_without_metadata_k_is_10_and_said_and_names_come_from_the_call() -> None:
    bare = {role: table.replace_schema_metadata(None) for role, table in tables().items()}
    defaulted = open_evaluation(**bare)  # type: ignore[arg-type]
    assert defaulted.k == 10 and "k.default" in {c["code"] for c in defaulted.report().to_json()["checks"]}  # type: ignore[union-attr,index]
    ev = open_evaluation(**bare, k=3)  # type: ignore[arg-type]
    assert ev.k == 3 and ev.names == ("a", "b")
    assert ev.report().to_json()["k"] == 3


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_dataframes_give_the_same_as_tables(library: str, from_tables: Comparison) -> None:
    pytest.importorskip(library)
    t = tables()
    if library == "pandas":
        frames = {role: table.to_pandas() for role, table in t.items()}
    else:
        import polars

        frames = {role: polars.from_arrow(table) for role, table in t.items()}
    ev = open_evaluation(
        **frames,  # type: ignore[arg-type]
        names=("plain", "headers"),
        meta={"a": meta_of(t["a"]), "b": meta_of(t["b"]), "labels": meta_of(t["labels"])},
    )
    assert as_json(ev) == as_json(from_tables)


@pytest.mark.slow
def test_paths_and_tables_mix() -> None:
    t = tables()
    ev = open_evaluation(a=SAMPLE / FILES["a"], b=t["b"], labels=str(SAMPLE / FILES["labels"]), k=5)
    report = ev.report().to_json()
    assert ev.names == ("plain", "headers")  # a file's stem, a table's name metadata
    assert report["arms"]["b"]["path"] == "run b"
    assert report["labels"]["frozen_sha256"] == as_json(triage.open(SAMPLE))["labels"]["frozen_sha256"]


def _bad(role: str, table: pa.Table) -> str:
    with pytest.raises(InputError) as e:
        open_evaluation(**{**tables(), role: table})
    return e.value.message


def test_a_malformed_table_names_its_argument_and_row() -> None:
    t = tables()
    retrieved = t["a"].column("retrieved").to_pylist()
    retrieved[2] = None
    at = t["a"].column_names.index("retrieved")
    msg = _bad("a", t["a"].set_column(at, "retrieved", pa.array(retrieved)))
    assert msg.startswith("run a: row 3: 'retrieved' is empty (null)")
    scores = t["b"].column("scores").to_pylist()
    scores[4][1] = float("nan")
    msg = _bad("b", t["b"].set_column(t["b"].column_names.index("scores"), "scores", pa.array(scores)))
    assert msg.startswith("run b: row 5: 'scores' holds NaN")
    grades = t["labels"].column("relevance").to_numpy().astype("int64")
    grades[6] = 2**53
    msg = _bad("labels", t["labels"].set_column(2, "relevance", pa.array(grades)))
    assert msg == "labels: row 7: 'relevance' is 9.01e+15, expected an integer from −2^53 to 2^53"
    ids = t["queries"].column("query_id").to_pylist()
    ids[9] = ids[0]
    msg = _bad("queries", t["queries"].set_column(0, "query_id", pa.array(ids)))
    assert msg.startswith(f"queries: row 10: duplicate query_id {ids[0]!r} (row 1 and row 10)")
    msg = _bad("corpus", t["corpus"].drop_columns(["chunk_id"]))
    assert msg.startswith("corpus: missing required column 'chunk_id'")


def test_what_is_not_a_table_is_refused_by_name() -> None:
    msg = _bad("a", 42)  # type: ignore[arg-type]
    assert msg.startswith("run a: is a int: expected a path, an Arrow table")
    with pytest.raises(InputError, match="does not exist"):
        open_evaluation(a=SAMPLE / "nope.parquet", b=SAMPLE / FILES["b"], labels=SAMPLE / FILES["labels"])
    with pytest.raises(InputError, match="labels: none given, and the runs are not RAG evaluations"):
        open_evaluation(a=tables()["a"], b=tables()["b"])
    with pytest.raises(ValueError, match="missing input: b"):
        open_evaluation(a=tables()["a"], labels=tables()["labels"])
    with pytest.raises(ValueError, match="not both"):
        open_evaluation(SAMPLE, a=tables()["a"])


def test_the_per_query_table_agrees_with_the_report(from_tables: Comparison) -> None:
    table = from_tables.queries(hints=True)
    report = from_tables.report()
    assert table.num_rows == report.n_queries and table.schema.metadata[b"k"] == b"5"
    outcomes = pc.value_counts(table.column("outcome")).to_pylist()
    counts = {o["values"]: o["counts"] for o in outcomes}
    p = report.paired
    assert counts == {
        "both-hit": p.both_hit,
        "both-miss": p.both_miss,
        "hit->miss": p.a_hit_b_miss,
        "miss->hit": p.a_miss_b_hit,
    }
    for arm, section in (("a", report.arms.a), ("b", report.arms.b)):
        assert pc.mean(pc.cast(table.column(f"hit_{arm}"), pa.float64())).as_py() == section.hit_rate
        assert pc.mean(table.column(f"ndcg_{arm}")).as_py() == pytest.approx(section.ndcg)
    by_id = {row["query_id"]: row for row in table.to_pylist()}
    assert {f.query_id for f in report.flips[:6]} == {"q155", "q113", "q061", "q150", "q031", "q046"}
    for flip in report.flips:
        row = by_id[flip.query_id]
        assert (row["gold_rank_a"], row["gold_rank_b"]) == (flip.gold_rank_a, flip.gold_rank_b)
        assert (row["plan_a"], row["plan_b"], row["tenant"]) == (flip.plan_a, flip.plan_b, flip.tenant)
        assert row["hints"] == [h.kind.value for h in flip.hints]
    flipped = {f.query_id for f in report.flips}
    assert all(row["hints"] is None for q, row in by_id.items() if q not in flipped)
    assert "hints" not in from_tables.queries().column_names


def test_a_query_without_gold_has_no_metrics_and_a_gold_rank_only_where_stored() -> None:
    t = tables()
    extra = pa.table({"query_id": ["q999"], "text": ["a query nobody labelled"]})
    queries = pa.concat_tables([t["queries"], extra], promote_options="default")
    ev = open_evaluation(**{**t, "queries": queries})
    row = ev.queries().to_pylist()[-1]
    assert row["query_id"] == "q999" and row["outcome"] == "unlabelled"
    assert [row[f"{m}_a"] for m in ("hit", "recall", "mrr", "ndcg", "gold_rank", "plan")] == [None] * 6
    ranks = ev.queries().column("gold_rank_b").to_numpy(zero_copy_only=False)
    assert np.isnan(ranks).sum() == ev.ev.n - int((ev.ev.b.judged.gold_rank > 0).sum())


@pytest.mark.slow
def test_the_package_root_loads_the_api_only_when_asked() -> None:
    code = (
        "import sys, triage; before = 'triage.api' in sys.modules; f = triage.open; "
        "print(before, 'triage.api' in sys.modules, f.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "True", "open_evaluation"]
    with pytest.raises(AttributeError):
        triage.nothing  # noqa: B018


@pytest.mark.slow
async def test_the_app_opens_on_an_evaluation_given_as_tables(from_tables: Comparison) -> None:
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.lists import FlipsScreen

    app = from_tables.app()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        session = app.session
        assert session is not None and session.snapshot is from_tables.snapshot
        assert session.corpus is from_tables.snapshot.inputs.chunks and session.corpus_note == "ready"
        await pilot.press("f")
        screen = app.screen
        assert isinstance(screen, FlipsScreen)
        assert session.query_id(int(screen.order[0])) == from_tables.report().flips[0].query_id
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, DetailScreen) and detail.detail is not None
        gold = detail.detail.golds[0]
        assert gold.chunk is not None and gold.chunk.text  # read from the corpus given as a table


def test_judgements_are_saved_only_for_labels_given_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from triage.workspace.session import Session

    monkeypatch.chdir(tmp_path)  # a stray "labels" name must not reach the working folder
    t = tables()
    in_memory = Session(open_evaluation(a=t["a"], b=t["b"], labels=t["labels"]).snapshot, reviewer="r")
    change = in_memory.add("q150", "c-any")
    assert not change.saved and "given as a table" in change.error and in_memory.unsaved == 1
    assert list(tmp_path.iterdir()) == []
    labels = tmp_path / "gold.parquet"
    labels.write_bytes((SAMPLE / FILES["labels"]).read_bytes())
    on_disk = Session(open_evaluation(a=t["a"], b=t["b"], labels=labels).snapshot, reviewer="r")
    change = on_disk.add("q150", "c-any")
    assert change.saved and on_disk.unsaved == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.amendments", "gold.parquet"]


def test_several_cut_offs_through_the_api_match_the_cli(capsys) -> None:
    """`k=[1, 5, 10]` gives each arm at every k, as `triage report --k 1,5,10` does."""
    import json

    from triage.cli.main import main

    sample = ROOT / "sample_runs"
    runs = [str(sample / "runs/plain.parquet"), str(sample / "runs/headers.parquet")]
    ev = triage.open(a=runs[0], b=runs[1], labels=sample / "labels.parquet", k=[1, 5, 10])
    got = json.loads(json.dumps(ev.report().to_json()))
    argv = ["report", *runs, "--labels", str(sample / "labels.parquet"), "--k", "1,5,10", "--format", "json"]
    assert main(argv) == 0
    want = json.loads(capsys.readouterr().out)
    assert got["k"] == want["k"] == 1
    for arm in ("a", "b"):
        assert sorted(got["arms"][arm]["at_k"], key=int) == ["1", "5", "10"]
        assert got["arms"][arm]["at_k"] == want["arms"][arm]["at_k"]
    assert got["paired"] == want["paired"]


def test_the_per_query_hints_are_the_reports_past_the_text_cap(from_tables: Comparison, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Text is read for the first TEXT_FLIPS flips in both; past them both give the hints that
    # need no text, so the table and the report never disagree, whatever the number of flips.
    from triage.core.views import hints as hints_mod

    monkeypatch.setattr(hints_mod, "TEXT_FLIPS", 3)
    by_id = {row["query_id"]: row["hints"] for row in from_tables.queries(hints=True).to_pylist()}
    flips = from_tables.report().flips
    assert len(flips) > 3
    assert [by_id[f.query_id] for f in flips] == [[h.kind.value for h in f.hints] for f in flips]
    text_kinds = {"header-dominates", "misleading-path", "likely-unlabelled", "window"}
    assert not any(set(by_id[f.query_id]) & text_kinds for f in flips[3:])


def test_the_error_an_input_raises_is_importable_from_the_package() -> None:
    from triage.core.errors import InputError as Inner

    assert triage.InputError is Inner
    with pytest.raises(triage.InputError, match="does not exist"):
        triage.open(a="nowhere.run", b="nowhere.run", labels="nowhere.qrels")
