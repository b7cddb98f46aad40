"""Several cut-offs: `--k 1,5,10` judges the flips at the first k and shows each
arm's metrics at every k and recall at its stored depth, each checked against trec_eval."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from rich.console import Console
from test_sample import rows

from triage.cli.main import main
from triage.core.bundled import bundled, sample_spec
from triage.core.evaluation import Evaluation, evaluate
from triage.core.inputs.load import load_inputs
from triage.report.build import build
from triage.workspace.snapshot import open_snapshot

from conftest import frozen_evaluation, manifest, write_parquet
from trec_oracle import as_run, generated, trec_inputs

KS = (1, 5, 10)
METRICS = ("hit_rate", "recall", "mrr", "ndcg")


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def report(capsys, *args: str) -> dict:
    rc, out, err = run(capsys, "report", *args, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


# -- the sample ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_several_k_print_each_arm_at_each_k_and_the_flips_of_the_first(capsys) -> None:
    rc, text, _ = run(capsys, "report", "--k", "1,5,10")
    assert rc == 0
    assert "Each arm at each k (flips and the paired table at k = 1)" in text
    assert re.search(r"┃ arm +┃ metric +┃ k = 1 ┃ k = 5 ┃ k = 10 ┃ recall@depth ┃", text)
    table = [r for r in rows(text) if len(r) == 6 and r[1] in METRICS]
    assert [r[1] for r in table] == [*METRICS, *METRICS]
    several = report(capsys, "--k", "1,5,10")
    # Each arm at k = 1, 5 and 10 is what a report at that one k says, in the text and the JSON.
    for k in KS:
        one = report(capsys, "--k", str(k))
        for side in ("a", "b"):
            got = several["arms"][side]["at_k"][str(k)]
            assert got["within_depth"] is True
            assert {m: got[m] for m in METRICS} == {m: one["arms"][side][m] for m in METRICS}
    assert (table[0][0], table[4][0]) == ("A plain", "B headers")
    for i, r in enumerate(table):
        x = several["arms"]["a" if i < 4 else "b"]["at_k"]
        assert r[2:5] == [f"{x[str(k)][r[1]]:.3f}" for k in KS], r
    # The flips, the paired table and every other k-dependent section are those of --k 1.
    first = report(capsys, "--k", "1")
    for key in ("k", "paired", "flips", "ranks", "slices", "tenants", "frozen"):
        assert several[key] == first[key], key
    assert several["ks"] == [1, 5, 10] and first["ks"] == [1]
    assert several["k_cells"] == {
        side: {str(k): several["arms"][side]["at_k"][str(k)]["hit_rate"] for k in KS} for side in "ab"
    }


@pytest.mark.slow
def test_the_decision_k_is_the_first_given_not_the_smallest(capsys) -> None:
    d = report(capsys, "--k", "10,1,5")
    assert d["k"] == 10 and d["ks"] == [10, 1, 5]
    assert d["flips"] == report(capsys, "--k", "10")["flips"]
    assert list(d["arms"]["a"]["at_k"]) == ["1", "5", "10"]  # ascending


@pytest.mark.slow
def test_one_k_keeps_the_report_as_it_was(capsys) -> None:
    _, plain, _ = run(capsys, "report")
    _, five, _ = run(capsys, "report", "--k", "5")
    assert plain == five and "Each arm at each k" not in plain and "recall@depth" not in plain
    _, md, _ = run(capsys, "report", "--format", "markdown")
    assert "Each arm at each k" not in md
    d = report(capsys)
    assert d["k_cells"] is None and d["ks"] == [5]
    for side in ("a", "b"):
        arm = d["arms"][side]
        assert list(arm["at_k"]) == ["5"]
        assert {m: arm["at_k"]["5"][m] for m in METRICS} == {m: arm[m] for m in METRICS}
        assert arm["depth"] == 20 and 0 < arm["recall_at_depth"] <= 1


def test_markdown_shows_the_per_k_table(capsys) -> None:
    _, md, _ = run(capsys, "report", "--k", "1,5,10", "--format", "markdown")
    assert "**Each arm at each k (flips and the paired table at k = 1)**" in md
    assert "| arm | metric | k = 1 | k = 5 | k = 10 | recall@depth |" in md
    table = rows(md)
    a_rows = table[table.index(["arm", "metric", "k = 1", "k = 5", "k = 10", "recall@depth"]) + 1 :][:8]
    assert [r[1] for r in a_rows] == [*METRICS, *METRICS]
    assert a_rows[0][0] == "A plain" and a_rows[4][0] == "B headers" and a_rows[1][0] == ""
    assert a_rows[1][5].endswith("@20") and a_rows[0][5] == ""


@pytest.mark.slow
def test_the_k10_sample_keeps_its_k_cells_and_gains_the_metrics(capsys) -> None:
    d = report(capsys, str(bundled("sample_runs") / "k10.toml"))
    assert d["ks"] == [5] and list(d["k_cells"]["a"]) == ["5", "10"]
    assert all(d["k_cells"][s][k] == d["arms"][s]["at_k"][k]["hit_rate"] for s in "ab" for k in ("5", "10"))
    _, text, _ = run(capsys, "report", str(bundled("sample_runs") / "k10.toml"))
    assert "Each arm at each k (flips and the paired table at k = 5)" in text


@pytest.mark.slow
def test_the_manifest_may_list_k(tmp_path: Path, capsys) -> None:
    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "s"))
    toml = copy / "triage.toml"
    body = toml.read_text("utf-8")
    assert not re.search(r"^k =", body, re.M)
    toml.write_text("k = [1, 5, 10]\n" + body, "utf-8")
    listed = report(capsys, str(copy))
    given = report(capsys, "--k", "1,5,10")
    assert listed["ks"] == [1, 5, 10] and listed["arms"]["b"]["at_k"] == given["arms"]["b"]["at_k"]
    assert listed["flips"] == given["flips"]
    assert report(capsys, str(copy), "--k", "5")["ks"] == [5]  # --k wins over the manifest
    for bad, said in (
        ("[]", "list of them"),
        ("[5, 5]", "lists 5 twice"),
        ("[0, 5]", "found 0"),
        ('"5"', "'5'"),
    ):
        toml.write_text(f"k = {bad}\n" + body, "utf-8")
        rc, out, err = run(capsys, "report", str(copy))
        assert rc == 2 and out == "" and said in err and "triage.toml" in err, (bad, err)


@pytest.mark.parametrize(
    ("arg", "said"),
    [
        ("5,5", "5 is given twice"),
        ("5,", "'' is not a whole number"),
        ("0,5", "0 is not positive"),
        ("1;5", "'1;5'"),
    ],
)
def test_bad_k_lists_are_refused_naming_the_flag(capsys, arg: str, said: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(["report", "--k", arg])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--k" in err and said in err, err


@pytest.mark.slow
async def test_the_app_overview_shows_each_arm_at_each_k() -> None:
    from textual.widgets import Static

    from triage.ui.app import TriageApp

    from app_helpers import wait_loaded

    app = TriageApp(k=(1, 5, 10))
    async with app.run_test(size=(140, 60)) as pilot:
        await wait_loaded(pilot)
        box = app.screen.query_one("#k-cells", Static)
        assert box.display
        console = Console(width=140, record=True, file=io.StringIO())
        console.print(box.content)
        shown = console.export_text()
        for cell in ("k = 1", "k = 5", "k = 10", "recall@depth", "A plain", "B headers", "ndcg"):
            assert cell in shown, cell
        assert "also k = 5, 10" in str(app.screen.query_one("#title", Static).render())
        assert "34 regressions, 56 wins" in str(app.screen.query_one("#hint", Static).render())  # at k = 1


@pytest.mark.slow
async def test_the_app_overview_with_one_k_has_no_per_k_table() -> None:
    from textual.widgets import Static

    from triage.ui.app import TriageApp

    from app_helpers import wait_loaded

    app = TriageApp()
    async with app.run_test(size=(140, 60)) as pilot:
        await wait_loaded(pilot)
        assert not app.screen.query_one("#k-cells", Static).display
        assert "also k" not in str(app.screen.query_one("#title", Static).render())


# -- against trec_eval ---------------------------------------------------------------------------


def trec_means(ev: Evaluation, side: str, ks: tuple[int, ...], depth: int) -> dict[str, float]:
    """Each metric's mean over the scored queries at each k, and recall at `depth`, from trec_eval;
    recall turned into ours: |top ∩ gold| / min(k, |gold|[, n_eligible]) (README, The numbers)."""
    arm = ev.a if side == "a" else ev.b
    qrels, lists = trec_inputs(ev, arm.run.path)
    cut = ",".join(map(str, (*ks, depth)))
    full = pytrec_eval.RelevanceEvaluator(
        qrels, {f"success.{cut}", f"ndcg_cut.{cut}", f"recall.{cut}", "num_rel"}
    ).evaluate(as_run(lists))
    rr = {k: pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(as_run(lists, k)) for k in ks}
    qids = ev.query_ids.to_pylist()
    scored = [i for i in range(ev.n) if ev.scored[i]]
    eligible = arm.n_eligible
    out: dict[str, float] = {}
    for k in (*ks, depth):
        hit, rec, mrr, ndcg = [], [], [], []
        for i in scored:
            t = full.get(qids[i])
            if t is None:  # the arm lacks the query: an empty list, zero everywhere
                for values in (hit, rec, mrr, ndcg):
                    values.append(0.0)
                continue
            n_rel = int(t["num_rel"])
            found = round(t[f"recall_{k}"] * n_rel)
            denom = min(k, n_rel)
            if eligible[i] >= 0 and eligible[i] >= found:
                denom = min(denom, int(eligible[i]))
            if denom > 0:
                rec.append(found / denom)
            hit.append(t[f"success_{k}"])
            ndcg.append(t[f"ndcg_cut_{k}"])
            mrr.append(rr[k][qids[i]]["recip_rank"] if k in rr else 0.0)
        if k in ks:
            out |= {f"hit_rate@{k}": np.mean(hit), f"mrr@{k}": np.mean(mrr), f"ndcg@{k}": np.mean(ndcg)}
            out[f"recall@{k}"] = float(np.mean(rec))
        if k == depth:
            out["recall@depth"] = float(np.mean(rec))
    return out


def agree_at_every_k(ev: Evaluation) -> int:
    r = build(open_snapshot(ev.inputs.spec, ev.cutoffs), corpus=None)
    checked = 0
    for side, arm in r.arms.items():
        want = trec_means(ev, side, ev.cutoffs, arm.depth)
        for k in ev.cutoffs:
            got = arm.at_k[k]
            for m in METRICS:
                assert abs(getattr(got, m) - want[f"{m}@{k}"]) <= 1e-9, (side, k, m)
                checked += 1
        assert arm.recall_at_depth is not None
        assert abs(arm.recall_at_depth - want["recall@depth"]) <= 1e-9, side
    return checked


@pytest.mark.slow
def test_the_sample_at_every_k_agrees_with_trec_eval() -> None:
    inputs = load_inputs(sample_spec())
    ev = evaluate(inputs, inputs.frozen.table, KS)
    assert (ev.a.n_eligible >= 0).any()  # the filtered queries' recall denominators are there
    assert agree_at_every_k(ev) == 2 * len(KS) * len(METRICS)


@pytest.mark.slow
def test_a_generated_evaluation_at_every_k_agrees_with_trec_eval(tmp_path: Path) -> None:
    path = generated(tmp_path, n=1500, seed=5)
    ev = frozen_evaluation(path, (10, 1, 3, 15))
    assert ev.k == 10 and ev.cutoffs == (10, 1, 3, 15)
    assert int(ev.gold.sets.n_gold.max()) > 10  # recall's denominator is cut by k
    assert (~ev.b.present & ev.scored).any()
    assert agree_at_every_k(ev) == 2 * 4 * len(METRICS)


def test_a_k_deeper_than_every_list_reads_depth_too_short(tmp_path: Path, capsys) -> None:
    rows_a = [{"query_id": f"q{i}", "retrieved": [f"c{i}", "x", "y"]} for i in range(4)]
    rows_b = [{"query_id": f"q{i}", "retrieved": ["x", f"c{i}", "y", "z", "w", "v"]} for i in range(4)]
    write_parquet(tmp_path / "a.parquet", rows_a, {"k": "3"})
    write_parquet(tmp_path / "b.parquet", rows_b, {"k": "3"})
    write_parquet(tmp_path / "l.parquet", [{"query_id": f"q{i}", "chunk_id": f"c{i}"} for i in range(4)])
    path = manifest(tmp_path, "a.parquet", "b.parquet", "l.parquet", k=None)
    d = report(capsys, str(path), "--k", "1,5")
    a5, b5 = d["arms"]["a"]["at_k"]["5"], d["arms"]["b"]["at_k"]["5"]
    assert a5 == {"hit_rate": None, "recall": None, "mrr": None, "ndcg": None, "within_depth": False}
    assert b5["within_depth"] and b5["hit_rate"] == 1.0 and b5["mrr"] == 0.5
    assert d["arms"]["a"]["at_k"]["1"]["hit_rate"] == 1.0 and d["arms"]["b"]["at_k"]["1"]["hit_rate"] == 0.0
    assert (d["arms"]["a"]["depth"], d["arms"]["b"]["depth"]) == (3, 6)
    assert d["arms"]["a"]["recall_at_depth"] == d["arms"]["b"]["recall_at_depth"] == 1.0
    assert d["k_cells"] == {"a": {"1": 1.0, "3": 1.0, "5": None}, "b": {"1": 0.0, "3": 1.0, "5": 1.0}}
    rc, text, _ = run(capsys, "report", str(path), "--k", "1,5")
    assert rc == 0 and "depth too short" in text
    # The flips at the decision k: every query is a hit in A and a miss in B at k = 1.
    assert [f["direction"] for f in d["flips"]] == ["hit->miss"] * 4


def test_recall_at_depth_counts_the_gold_below_k(tmp_path: Path, capsys) -> None:
    """Gold at rank 8 of a 10-deep list: no hit at k = 5, but a reranker of the list can reach it."""
    rows_a = [{"query_id": "q", "retrieved": [f"x{j}" for j in range(7)] + ["g1", "x8", "x9"]}]
    rows_b = [{"query_id": "q", "retrieved": [f"x{j}" for j in range(10)]}]
    write_parquet(tmp_path / "a.parquet", rows_a, {"k": "5"})
    write_parquet(tmp_path / "b.parquet", rows_b, {"k": "5"})
    write_parquet(tmp_path / "l.parquet", [{"query_id": "q", "chunk_id": c} for c in ("g1", "g2")])
    d = report(capsys, str(manifest(tmp_path, "a.parquet", "b.parquet", "l.parquet")))
    a, b = d["arms"]["a"], d["arms"]["b"]
    assert a["hit_rate"] == 0.0 and a["recall_at_depth"] == 0.5 and a["depth"] == 10
    assert b["recall_at_depth"] == 0.0


def test_several_cut_offs_at_once_equal_one_at_a_time(tmp_path: Path) -> None:
    """`judge_at` shares the best ranks, gains and ideal positions across ks: value for value what
    `judge` gives at each k alone (graded multi-gold, n_eligible, a query an arm lacks)."""
    from triage.core.measures.metrics import judge_arm, judge_at

    inputs = load_inputs(sample_spec())
    for ev in (frozen_evaluation(generated(tmp_path, n=1200, seed=3)), evaluate(inputs, inputs.frozen.table)):
        for arm in ev.arms:
            ks = (1, 2, 5, 10, 25)
            together = judge_at(arm.hits, ks, ev.gold.sets, arm.n_eligible)
            assert list(together) == list(ks)
            for k in ks:
                alone = judge_arm(arm.hits, k, ev.gold.sets, arm.n_eligible)
                for name in ("gold_rank", "hit", "recall", "mrr", "ndcg"):
                    np.testing.assert_array_equal(getattr(together[k], name), getattr(alone, name), name)
    assert judge_at(ev.a.hits, (), ev.gold.sets) == {}
