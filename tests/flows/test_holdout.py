"""Held-out documents: the tuning split, held-out queries, `holdout.tuned_targets`."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.split import hashed_out

import sample_story as story
from conftest import manifest, write_parquet


def reference_held_out(doc_id: str, fraction: float) -> bool:
    """The README's definition, as written there."""
    return int.from_bytes(hashlib.sha256(doc_id.encode()).digest()[:8], "big") / 2**64 < fraction


def test_the_hash_rule_is_the_readmes_definition() -> None:
    rng = random.Random(13)
    docs = [f"doc-{rng.random()}-é✓" for _ in range(2000)] + ["", "acme/handbook-2024"]
    for fraction in (0.2, 0.5, 0.01, 0.999):
        mine = hashed_out(docs, fraction)
        assert mine.tolist() == [reference_held_out(d, fraction) for d in docs]
    assert 0.17 < hashed_out(docs, 0.2).mean() < 0.23  # about the fraction asked for


# Documents: "keep" (held out) and "tune" (tuned on, listed in tuned.txt); chunk "lost" is absent
# from the corpus, chunk "nodoc" has no doc_id.
CORPUS = [
    {"chunk_id": "keep#1", "doc_id": "keep", "text": "t", "header": "h"},
    {"chunk_id": "keep#2", "doc_id": "keep", "text": "t", "header": "h"},
    {"chunk_id": "tune#1", "doc_id": "tune", "text": "t", "header": "h"},
    {"chunk_id": "nodoc", "doc_id": None, "text": "t", "header": "h"},
    {"chunk_id": "x", "doc_id": "other", "text": "t", "header": "h"},
]
# query -> (gold chunks, hit in A, hit in B)
QUERIES = {
    "h1": (["keep#1"], True, True),  # held out
    "h2": (["keep#1", "keep#2"], False, True),  # held out, two gold
    "h3": (["keep#2"], True, False),  # held out
    "t1": (["tune#1"], False, True),  # tuned
    "t2": (["keep#1", "tune#1"], False, True),  # tuned: one gold in a tuned document is enough
    "u1": (["nodoc"], True, True),  # unknown: no doc_id
    "u2": (["keep#2", "lost"], True, True),  # unknown: a gold chunk absent from the corpus
}


def write_split_eval(
    folder: Path, holdout: str | None, queries: dict = QUERIES, corpus: list = CORPUS
) -> Path:
    rows: dict[str, list[dict]] = {"a": [], "b": []}
    labels = []
    for q, (golds, hit_a, hit_b) in queries.items():
        for side, hit in (("a", hit_a), ("b", hit_b)):
            rows[side].append({"query_id": q, "retrieved": [golds[0], "x"] if hit else ["x"]})
        labels += [{"query_id": q, "chunk_id": g, "relevance": 1} for g in golds]
    for side in "ab":
        write_parquet(folder / f"{side}.parquet", rows[side], {"k": "2"})
    write_parquet(folder / "labels.parquet", labels)
    write_parquet(folder / "chunks.parquet", corpus)
    path = manifest(folder, "a.parquet", "b.parquet", "labels.parquet", corpus="chunks.parquet")
    if holdout is not None:
        path.write_text(path.read_text("utf-8") + holdout, "utf-8")
    return path


def report(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def check(d: dict, code: str = "holdout.tuned_targets") -> dict:
    (c,) = [c for c in d["checks"] if c["code"] == code]
    return c


TUNED = '[holdout]\ntuned_docs = "tuned.txt"\n'


@pytest.mark.slow
def test_queries_split_by_where_their_gold_comes_from(tmp_path: Path, capsys) -> None:
    (tmp_path / "tuned.txt").write_text("# tuned on\n\n  tune  \ntune\n", "utf-8")
    path = write_split_eval(tmp_path, TUNED)
    d = report(capsys, str(path))
    h = d["holdout"]
    assert (h["n_held_out"], h["n_tuned"], h["n_unknown"]) == (3, 2, 2)
    assert h["n_held_out"] + h["n_tuned"] + h["n_unknown"] == d["n_scored"]
    assert (h["docs"], h["held_out_docs"]) == (3, 2)  # keep, tune, other; "tune" alone is tuned
    # On h1, h2, h3: A hits h1, h3; B hits h1, h2.
    assert (h["arms"]["a"]["hit_rate"], h["arms"]["b"]["hit_rate"]) == (2 / 3, 2 / 3)
    p = h["paired"]
    assert (p["n"], p["both_hit"], p["a_hit_b_miss"], p["a_miss_b_hit"], p["both_miss"]) == (3, 1, 1, 1, 0)
    c = check(d)
    assert c["level"] == "warning" and c["facts"]["tuned"] == 2 and c["facts"]["unknown"] == 2
    assert "2 of 7 scored queries have gold from tuned documents: t1, t2" in c["message"]
    assert "u1, u2" in c["message"] and "over the other 3" in c["message"]
    # The text and Markdown reports show the held-out row beside the blend.
    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Held-out documents beside the blend" in text and "all scored (blend)" in text
    assert main(["report", str(path), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "## Held-out documents" in md and "| held out | 3 | 0.667 | 0.667 |" in md


def test_every_gold_held_out_is_ok(tmp_path: Path, capsys) -> None:
    (tmp_path / "tuned.txt").write_text("tune\n", "utf-8")
    kept = {q: v for q, v in QUERIES.items() if q.startswith("h")}
    d = report(capsys, str(write_split_eval(tmp_path, TUNED, kept)))
    c = check(d)
    assert c["level"] == "ok" and d["holdout"]["n_held_out"] == 3 == d["n_scored"]
    assert d["holdout"]["arms"]["b"] == {k: d["arms"]["b"][k] for k in d["holdout"]["arms"]["b"]}


def test_without_a_split_there_is_no_holdout(tmp_path: Path, capsys) -> None:
    d = report(capsys, str(write_split_eval(tmp_path, None)))
    assert d["holdout"] is None and not any(c["code"].startswith("holdout.") for c in d["checks"])


def test_a_tuned_id_naming_no_document_is_named(tmp_path: Path, capsys) -> None:
    (tmp_path / "tuned.txt").write_text("tune\ntunne\n", "utf-8")
    kept = {q: v for q, v in QUERIES.items() if q.startswith("h")}
    c = check(report(capsys, str(write_split_eval(tmp_path, TUNED, kept))))
    assert c["level"] == "warning" and "1 tuned id names no document of the corpus: tunne" in c["message"]


def test_the_hash_rule_in_the_manifest_and_on_the_command_line(tmp_path: Path, capsys) -> None:
    docs = {c["doc_id"] for c in CORPUS if c["doc_id"]}
    fraction = 0.5
    held = {doc for doc in docs if reference_held_out(doc, fraction)}
    path = write_split_eval(tmp_path, f'[holdout]\nrule = "hash"\nfraction = {fraction}\n')
    d = report(capsys, str(path))
    assert d["holdout"]["held_out_docs"] == len(held) and d["holdout"]["fraction"] == fraction
    (tmp_path / "bare").mkdir()
    bare = write_split_eval(tmp_path / "bare", None)
    given = report(capsys, str(bare), "--holdout-fraction", str(fraction))
    assert given["holdout"] == d["holdout"]
    (tmp_path / "t.txt").write_text("tune\n", "utf-8")
    listed = report(capsys, str(bare), "--tuned-docs", str(tmp_path / "t.txt"))
    assert listed["holdout"]["rule"] == "tuned_docs" and listed["holdout"]["n_tuned"] == 2


def test_a_judgement_in_force_moves_a_query_out_of_the_held_out_set(tmp_path: Path, capsys) -> None:
    (tmp_path / "tuned.txt").write_text("tune\n", "utf-8")
    path = write_split_eval(tmp_path, TUNED)
    assert report(capsys, str(path))["holdout"]["n_held_out"] == 3
    rc = main(["labels", "judge", str(path), "--query", "h1", "--chunk", "tune#1", "--grade", "1"])
    assert rc == 0
    capsys.readouterr()
    d = report(capsys, str(path))
    assert (d["holdout"]["n_held_out"], d["holdout"]["n_tuned"]) == (2, 3)
    assert "3 of 7 scored queries have gold from tuned documents: h1, t1, t2" in check(d)["message"]
    frozen = report(capsys, str(path), "--label-state", "frozen")
    assert frozen["holdout"]["n_held_out"] == 3


def test_no_doc_ids_says_so(tmp_path: Path, capsys) -> None:
    corpus = [{k: v for k, v in c.items() if k != "doc_id"} for c in CORPUS]
    d = report(capsys, str(write_split_eval(tmp_path, '[holdout]\nrule = "hash"\n', corpus=corpus)))
    c = check(d, "holdout.doc_ids")
    assert c["level"] == "warning" and "the corpus has no doc_id column" in c["message"]
    assert d["holdout"]["doc_ids"] is False and d["holdout"]["n_unknown"] == d["n_scored"]
    assert d["holdout"]["fraction"] == 0.2  # the default fraction
    assert d["holdout"]["arms"]["b"]["hit_rate"] is None


@pytest.mark.parametrize(
    ("holdout", "says"),
    [
        ('[holdout]\nrule = "hash"\nfraction = 1.0\n', "fraction must be a number above 0 and below 1"),
        ('[holdout]\nrule = "hash"\nfraction = "0.2"\n', "fraction must be a number"),
        ('[holdout]\nrule = "random"\n', "found rule 'random'"),
        ('[holdout]\ntuned_docs = "tuned.txt"\nfraction = 0.2\n', "not both"),
        ('[holdout]\ntuned_docs = "gone.txt"\n', "names a missing file"),
        ('[holdout]\nrule = "hash"\nseed = 3\n', "unknown key 'seed'"),
    ],
)
def test_a_bad_holdout_table_exits_2(tmp_path: Path, capsys, holdout: str, says: str) -> None:
    (tmp_path / "tuned.txt").write_text("tune\n", "utf-8")
    path = write_split_eval(tmp_path, holdout)
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert says in err and "[holdout]" in err and str(path) in err


@pytest.mark.parametrize(
    ("data", "where", "says"),
    [
        (b"tune\nkeep\tnotes\n", "line 2", "a tab inside a doc id"),
        (b"tune\n\xff\xfe\n", "line 2", "not UTF-8"),
        (b"ok\nbad\x00id\n", "line 2", "control character U+0000"),
        (b"# only a comment\n\n", "", "names no document"),
    ],
)
def test_a_malformed_tuned_docs_file_names_file_and_line(
    tmp_path: Path, capsys, data: bytes, where: str, says: str
) -> None:
    (tmp_path / "tuned.txt").write_bytes(data)
    assert main(["report", str(write_split_eval(tmp_path, TUNED))]) == 2
    err = capsys.readouterr().err
    assert says in err and (f"tuned.txt: {where}: " if where else "tuned.txt: ") in err


def test_a_crlf_file_with_a_bom_reads(tmp_path: Path, capsys) -> None:
    (tmp_path / "tuned.txt").write_bytes(b"\xef\xbb\xbftune\r\n")
    assert report(capsys, str(write_split_eval(tmp_path, TUNED)))["holdout"]["n_tuned"] == 2


@pytest.mark.slow
def test_the_samples_held_out_figure_recomputed_from_its_files(capsys) -> None:
    here = bundled("sample_runs")
    chunks = pq.read_table(here / "chunks.parquet").to_pydict()
    doc = dict(zip(chunks["chunk_id"], chunks["doc_id"], strict=True))
    labels = pq.read_table(here / "labels.parquet").to_pylist()
    golds: dict[str, set[str]] = {}
    for row in labels:
        golds.setdefault(row["query_id"], set()).add(row["chunk_id"])
    held = {q for q, g in golds.items() if all(reference_held_out(doc[c], 0.2) for c in g)}
    hits = {}
    for side, stem in (("a", "plain"), ("b", "headers")):
        run = pq.read_table(here / f"runs/{stem}.parquet").to_pylist()
        hits[side] = {r["query_id"] for r in run if set(r["retrieved"][: story.K]) & golds[r["query_id"]]}
    d = report(capsys)
    h = d["holdout"]
    assert h["n_held_out"] == len(held) == story.HELD_OUT and h["n_tuned"] == story.TUNED
    assert (h["docs"], h["held_out_docs"]) == (story.DOCS, story.HELD_OUT_DOCS)
    for side in "ab":
        assert h["arms"][side]["hit_rate"] == pytest.approx(len(hits[side] & held) / len(held))
    both = np.array([len(hits["a"] & hits["b"] & held), len(held - hits["a"] - hits["b"])])
    assert (h["paired"]["both_hit"], h["paired"]["both_miss"]) == tuple(both.tolist())


@pytest.mark.slow
async def test_the_overview_shows_the_held_out_figure_beside_the_blend(tmp_path: Path) -> None:
    from textual.widgets import Static

    from triage.ui.app import TriageApp

    from app_helpers import wait_loaded

    app = TriageApp()  # the bundled sample: the hash rule at 0.2
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        hint = str(app.screen.query_one("#hint", Static).render())
        assert f"held out ({story.HELD_OUT} of {story.N_QUERIES} queries): hit rate 0.526 → 0.684" in hint
        assert "all 0.620 → 0.790 (+0.170)" in hint
    (tmp_path / "tuned.txt").write_text("tune\n", "utf-8")
    app = TriageApp(write_split_eval(tmp_path, None))  # no split: no line
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        assert "held out" not in str(app.screen.query_one("#hint", Static).render())


def test_a_split_named_with_no_corpus_is_said_not_dropped(tmp_path: Path, capsys) -> None:
    """--holdout-fraction with no corpus at all: the holdout.doc_ids warning, never a silent null."""
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\n", "utf-8")
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n", "utf-8")
    run = str(tmp_path / "a.run")
    argv = ["report", run, run, "--labels", str(tmp_path / "q.qrels"), "--holdout-fraction", "0.2"]
    assert main([*argv, "--format", "json"]) == 0
    checks = {c["code"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert "no corpus is given" in checks["holdout.doc_ids"]["message"]
