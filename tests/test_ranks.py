"""Rank movements beyond the flips (docs/measures.md: The numbers, rank movements): wins, ties and losses on
mrr@k and ndcg@k, the both-hit drops, the gold-rank change histogram.

By hand on a small evaluation with each case present, then per query against trec_eval
(pytrec_eval: `recip_rank` on the first k, `ndcg_cut_k`) and against a plain reading of the ranked
lists, on a generated evaluation and on the bundled sample.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from test_oracle import as_run, generated, trec_inputs

from triage.cli.main import main
from triage.core.evaluation import Evaluation
from triage.core.views.ranks import TIE, Ranks, ranks, win_tie_loss
from triage.report import cells
from triage.report.sections.ranks import DROP_CAP, histogram_rows, wins_ties_losses

from conftest import frozen_evaluation, manifest, write_parquet

K = 5
PAD = [f"x{i}" for i in range(20)]


def ranked(gold_at: dict[str, int], depth: int = 8) -> list[str]:
    """A list of `depth` ids with each gold id at its 1-based rank, filler elsewhere."""
    out = PAD[:depth]
    for g, r in gold_at.items():
        out[r - 1] = g
    return out


# query -> (gold grades, A's list, B's list or None when B did not answer)
CASES: dict[str, tuple[dict[str, int], list[str], list[str] | None]] = {
    "qz": ({"g": 1}, ranked({"g": 1}), ranked({"g": 4})),  # drop 3 from rank 1
    "qa": ({"g": 1}, ranked({"g": 1}), ranked({"g": 4})),  # the same drop: after qz by name
    "qm": ({"g": 1}, ranked({"g": 2}), ranked({"g": 5})),  # drop 3 from rank 2: after both
    "qd": ({"g": 1}, ranked({"g": 3}), ranked({"g": 4})),  # drop 1
    "qt": ({"g": 1}, ranked({"g": 2}), ranked({"g": 2})),  # tie, change 0
    "qw": ({"g": 1}, ranked({"g": 3}), ranked({"g": 1})),  # win, change +2
    "qf": ({"g": 1}, ranked({"g": 1}), ranked({"g": 7})),  # hit→miss: a loss, not a drop; −6
    "qo": ({"g": 1}, ranked({"g": 2}), ranked({})),  # gold in A's list only
    "qn": ({"g": 1}, ranked({}), ranked({})),  # in neither
    "qb": ({"g": 1}, ranked({"g": 1}), None),  # B did not answer: only in A, a loss
    # two golds swap places: the first gold stays at 1 (mrr ties), the grades move (ndcg wins)
    "qs": ({"h": 1, "g": 3}, ranked({"h": 1, "g": 2}), ranked({"g": 1, "h": 2})),
    "qu": ({}, ranked({"g": 1}), ranked({"g": 4})),  # unlabelled: not compared
}


@pytest.fixture
def hand(tmp_path: Path) -> Evaluation:
    labels, runs = [], {"a": [], "b": []}
    for q, (gold, a, b) in CASES.items():
        labels += [{"query_id": q, "chunk_id": c, "relevance": g} for c, g in gold.items()]
        if not gold:
            labels.append({"query_id": q, "chunk_id": "g", "relevance": 0})
        for arm, lst in (("a", a), ("b", b)):
            if lst is not None:
                runs[arm].append({"query_id": q, "retrieved": lst})
    for arm, rows in runs.items():
        write_parquet(tmp_path / f"{arm}.parquet", rows, {"k": str(K)})
    write_parquet(tmp_path / "labels.parquet", labels)
    return frozen_evaluation(manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet"))


def test_each_case_by_hand(hand: Evaluation) -> None:
    x = ranks(hand)
    assert x.n == len(CASES) - 1  # qu has no gold
    # mrr: wins qw; ties qt qn qs; losses qz qa qm qd qf qo qb
    assert (x.mrr.wins, x.mrr.ties, x.mrr.losses) == (1, 3, 7)
    # ndcg: qs becomes a win (grade 3 moves from rank 2 to rank 1)
    assert (x.ndcg.wins, x.ndcg.ties, x.ndcg.losses) == (2, 2, 7)
    assert hand.query_ids.take(x.drops).to_pylist() == ["qa", "qz", "qm", "qd"]
    c = x.changes
    # qz qa qm −3, qd −1, qt 0, qw +2, qf −6, qs 0 (its best gold stays at rank 1)
    assert dict(zip(c.change.tolist(), c.count.tolist(), strict=True)) == {-6: 1, -3: 3, -1: 1, 0: 2, 2: 1}
    assert (c.only_a, c.only_b, c.neither) == (2, 0, 1)  # qo qb; qn
    assert (c.n, c.fell, c.same, c.rose) == (8, 5, 2, 1)
    assert c.n + c.only_a + c.only_b + c.neither == x.n


def test_the_report_section_by_hand(hand: Evaluation, tmp_path: Path, capsys) -> None:
    assert main(["report", str(tmp_path / "triage.toml"), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)["ranks"]
    assert d["mrr"] == {"wins": 1, "ties": 3, "losses": 7} and d["ndcg"]["wins"] == 2
    assert d["drops"][0] == {
        "query_id": "qa",
        "rank_a": 1,
        "rank_b": 4,
        "drop": 3,
        "tenant": None,
        "text": None,
    }
    assert [r["query_id"] for r in d["drops"]] == ["qa", "qz", "qm", "qd"]
    h = d["histogram"]
    assert list(h["changes"]) == ["-6", "-3", "-1", "0", "2"] and h["changes"]["-3"] == 3
    assert (h["only_a"], h["only_b"], h["neither"], h["n"]) == (2, 0, 1, 8)


def test_nothing_moved_gives_no_drop_and_only_ties(tmp_path: Path) -> None:
    """The cause absent: B returns A's lists exactly."""
    rows = [{"query_id": f"q{i}", "retrieved": ranked({"g": 1 + i % 6})} for i in range(12)]
    for arm in "ab":
        write_parquet(tmp_path / f"{arm}.parquet", rows, {"k": str(K)})
    write_parquet(tmp_path / "labels.parquet", [{"query_id": f"q{i}", "chunk_id": "g"} for i in range(12)])
    x = ranks(frozen_evaluation(manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet")))
    assert (x.mrr.wins, x.mrr.ties, x.mrr.losses) == (0, 12, 0) == (x.ndcg.wins, x.ndcg.ties, x.ndcg.losses)
    assert len(x.drops) == 0 and x.changes.change.tolist() == [0] and x.changes.count.tolist() == [12]


def test_the_tolerance_separates_noise_from_a_step() -> None:
    a = np.array([0.5, 0.5, 0.5, 0.5, 0.5])
    b = a + np.array([TIE / 2, -TIE / 2, 2 * TIE, -2 * TIE, 0.0])
    w = win_tie_loss(a, b, np.ones(5, bool))
    assert (w.wins, w.ties, w.losses) == (1, 3, 1)
    assert win_tie_loss(a, b, np.array([False, False, True, False, False])).wins == 1


# -- against an independent implementation ------------------------------------------------------


def first_gold(lst: list[str], gold: set[str]) -> int:
    """1-based position of the first gold id in a list; 0 when none is there."""
    return next((i for i, c in enumerate(lst, 1) if c in gold), 0)


def independent(ev: Evaluation, k: int) -> tuple[dict, list[str], Counter, tuple[int, int, int]]:
    """The same figures from the files alone: trec_eval per query for the metrics, a plain walk
    over the ranked lists for the ranks."""
    qrels, lists_a = trec_inputs(ev, ev.a.run.path)
    _, lists_b = trec_inputs(ev, ev.b.run.path)
    scored = [q for q, judged in qrels.items() if any(g > 0 for g in judged.values())]
    per: dict[str, dict[str, dict]] = {}
    for side, lists in (("a", lists_a), ("b", lists_b)):
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(as_run(lists, k))
        nd = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"}).evaluate(as_run(lists))
        per[side] = {
            "mrr": {q: rr.get(q, {}).get("recip_rank", 0.0) for q in scored},
            "ndcg": {q: nd.get(q, {}).get(f"ndcg_cut_{k}", 0.0) for q in scored},
        }
    wtl = {}
    for m in ("mrr", "ndcg"):
        d = [per["b"][m][q] - per["a"][m][q] for q in scored]
        wtl[m] = (sum(x > TIE for x in d), sum(abs(x) <= TIE for x in d), sum(x < -TIE for x in d))
    drops, hist = [], Counter()
    only = [0, 0, 0]
    for q in scored:
        gold = {c for c, g in qrels[q].items() if g > 0}
        ra, rb = first_gold(lists_a.get(q, []), gold), first_gold(lists_b.get(q, []), gold)
        if 0 < ra <= k and 0 < rb <= k and rb > ra:
            drops.append((-(rb - ra), ra, q))
        if ra and rb:
            hist[ra - rb] += 1
        else:
            only[0 if ra else 1 if rb else 2] += 1
    return wtl, [q for *_, q in sorted(drops)], hist, (only[0], only[1], only[2])


def agree(ev: Evaluation, k: int) -> Ranks:
    x = ranks(ev)
    wtl, drops, hist, only = independent(ev, k)
    assert (x.mrr.wins, x.mrr.ties, x.mrr.losses) == wtl["mrr"]
    assert (x.ndcg.wins, x.ndcg.ties, x.ndcg.losses) == wtl["ndcg"]
    assert ev.query_ids.take(x.drops).to_pylist() == drops
    assert dict(zip(x.changes.change.tolist(), x.changes.count.tolist(), strict=True)) == dict(hist)
    assert (x.changes.only_a, x.changes.only_b, x.changes.neither) == only
    return x


@pytest.mark.slow
def test_generated_evaluation_agrees_with_trec_eval(tmp_path: Path) -> None:
    ev = frozen_evaluation(generated(tmp_path, n=3000, seed=5), K)
    x = agree(ev, K)
    assert x.n > 2800 and len(x.drops) > 100  # the cases are there in numbers
    assert min(x.mrr.wins, x.mrr.ties, x.mrr.losses, x.ndcg.wins, x.ndcg.ties, x.ndcg.losses) > 100
    assert x.changes.only_a and x.changes.only_b and x.changes.neither


def test_sample_agrees_with_trec_eval(sample: Path) -> None:
    ev = frozen_evaluation(sample)
    x = agree(ev, ev.k)
    p = ev.paired()
    # An mrr loss is a regression (hit→miss) or a drop; an mrr win a miss→hit or a rise in the top k.
    assert x.mrr.losses == len(x.drops) + p.a_hit_b_miss
    assert len(x.drops) > 6 * p.a_hit_b_miss  # far more than the flips show
    assert x.mrr.wins + x.mrr.ties + x.mrr.losses == x.n == p.n


@pytest.mark.slow
def test_reports_cap_the_drops_and_say_how_many_more(capsys) -> None:
    assert main(["report", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)["ranks"]
    n = len(d["drops"])
    assert n > DROP_CAP
    hidden = n - DROP_CAP
    assert main(["report"]) == 0
    text = capsys.readouterr().out
    assert f"and {hidden} more" in text and f"{n} queries hit in both arms" in text
    assert main(["report", "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    first, last_shown, first_hidden = (
        d["drops"][0],
        d["drops"][DROP_CAP - 1],
        d["drops"][DROP_CAP],
    )
    drops_md = md.split("## Rank drops")[1].split("\n## ")[0]
    assert f"| 1 | {first['query_id']} |" in drops_md
    assert f"| {DROP_CAP} | {last_shown['query_id']} |" in drops_md
    assert f"| {first_hidden['query_id']} |" not in drops_md
    assert f"… and {hidden} more" in md
    m = d["mrr"]
    assert f"| mrr@5 | {m['wins']} | {m['ties']} | {m['losses']} |" in md


def test_histogram_rows_zero_fill_a_short_span_only() -> None:
    from triage.report.sections.ranks import RankHistogram

    h = RankHistogram(4, {-2: 1, 1: 3}, 1, 0, 3, 0, 0, 0)
    rows = histogram_rows(h, width=8)
    assert [c for c, _ in rows] == [-2, -1, 0, 1]
    assert rows[0][1] == ["−2", "1", "██▋"] and rows[1][1] == ["−1", "0", ""] and rows[3][1][2] == "█" * 8
    wide = RankHistogram(2, {-40: 1, 40: 1}, 1, 0, 1, 0, 0, 0)
    assert [c for c, _ in histogram_rows(wide)] == [-40, 40]


def test_queries_absent_from_b_count_as_empty(tmp_path: Path) -> None:
    """trec_eval leaves out a query the run lacks; here it is an empty list: a loss for B."""
    write_parquet(tmp_path / "a.parquet", [{"query_id": "q1", "retrieved": ranked({"g": 2})}], {"k": "5"})
    write_parquet(tmp_path / "b.parquet", [{"query_id": "q2", "retrieved": ranked({"g": 2})}], {"k": "5"})
    write_parquet(tmp_path / "labels.parquet", [{"query_id": q, "chunk_id": "g"} for q in ("q1", "q2")])
    x = agree(frozen_evaluation(manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet")), K)
    assert (x.mrr.wins, x.mrr.ties, x.mrr.losses) == (1, 0, 1)
    assert (x.changes.n, x.changes.only_a, x.changes.only_b) == (0, 1, 1)


# -- the app -------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_r_opens_the_drops_from_the_overview_its_gold_rank_choice_the_reports_drops() -> None:
    from textual.widgets import Static

    from triage.core.views.deltas import GOLD_RANK
    from triage.report.build import build
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.help import HelpScreen
    from triage.ui.screens.overview import OverviewScreen
    from triage.ui.screens.ranks import RankDropsScreen
    from triage.ui.table import VirtualTable

    from app_helpers import wait_loaded

    app = TriageApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        assert app.session is not None
        r = build(app.session.snapshot)
        hint = str(app.screen.query_one("#hint", Static).render())
        assert wins_ties_losses(r.ranks, r.k) in hint and "r: rank drops" in hint
        assert (
            f"mrr@5 {r.ranks.mrr.wins} wins / {r.ranks.mrr.ties} ties / {r.ranks.mrr.losses} losses" in hint
        )
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RankDropsScreen)
        table = screen.query_one(VirtualTable)
        assert table.has_focus and "Δ ndcg@5 = B − A" in str(screen.query_one("#list-title", Static).render())
        while screen.chosen != GOLD_RANK:  # M cycles to the gold rank: the report's drops first
            await pilot.press("M")
        assert "Δ gold rank (both hit)" in str(screen.query_one("#list-title", Static).render())
        drops = r.ranks.drops
        assert table.count > len(drops) > DROP_CAP  # every drop, then the rises
        texts = app.session.texts
        for i in (0, len(drops) - 1):
            d = drops[i]
            q = app.session.ev.query_index(d.query_id)
            assert table.cells(i)[:5] == [
                d.query_id,
                d.tenant,
                str(d.rank_a),
                str(d.rank_b),
                f"−{d.drop}",
            ]
            assert table.cells(i)[5] == cells.text(texts[q].as_py())[: len(table.cells(i)[5])]
        assert table.cells(len(drops))[4].startswith("+")  # the first rise follows the last drop
        bars = str(screen.query_one("#histogram", Static).render())
        for _, (label, count, bar) in histogram_rows(r.ranks.histogram, 20):
            assert f"{label:>4} {count:>4} {bar}" in bars
        assert f"query 1 of {table.count}" in str(screen.query_one("#list-title", Static).render())
        await pilot.press("j", "j", "enter")
        detail = app.screen
        assert isinstance(detail, DetailScreen) and detail.detail is not None
        assert detail.detail.query_id == drops[2].query_id
        assert f"Δ gold rank: 3 of {table.count}, worst first" in str(
            detail.query_one("#detail-title", Static).render()
        )
        await pilot.press("n")
        assert app.screen.detail.query_id == drops[3].query_id  # type: ignore[attr-defined]
        await pilot.press("escape")
        assert app.screen is screen and table.cursor == 3  # back at the query last read
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = str(app.screen.query_one(Static).render())
        assert "Rank drops — keys here" in help_text  # this screen's keys first
        await pilot.press("escape", "o")
        assert isinstance(app.screen, OverviewScreen)


@pytest.mark.slow
async def test_the_queues_R_filters_regressions_and_r_is_the_rank_drops_there_too(tmp_path: Path) -> None:
    import shutil

    from triage.core.bundled import bundled
    from triage.ui.app import TriageApp
    from triage.ui.screens.queue import QueueScreen
    from triage.ui.screens.ranks import RankDropsScreen

    from app_helpers import wait_loaded

    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("J")
        screen = app.screen
        assert isinstance(screen, QueueScreen)
        for _ in range(200):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if screen.queue is not None:
                break
        assert screen.queue is not None and not screen.queue.filters.regressions
        await pilot.press("R")
        assert app.screen is screen and screen.queue.filters.regressions
        await pilot.press("r")
        assert isinstance(app.screen, RankDropsScreen)  # r is the rank drops everywhere, the queue too


@pytest.mark.slow
async def test_the_drops_show_ids_tenants_and_texts_literally(tmp_path: Path) -> None:
    from test_untrusted_text import BOLD, CLEAR, OSC0, QUIT, check_screen, click_on, running

    from triage.ui.screens.ranks import RankDropsScreen
    from triage.ui.table import VirtualTable

    qid, tenant, text = "[@click=app.quit]q9[/]", "[bold]t[/bold]" + OSC0, f"{BOLD} {CLEAR} {QUIT}"
    write_parquet(tmp_path / "a.parquet", [{"query_id": qid, "retrieved": ranked({"g": 1})}], {"k": "5"})
    write_parquet(tmp_path / "b.parquet", [{"query_id": qid, "retrieved": ranked({"g": 3})}], {"k": "5"})
    write_parquet(tmp_path / "labels.parquet", [{"query_id": qid, "chunk_id": "g"}])
    write_parquet(tmp_path / "queries.parquet", [{"query_id": qid, "text": text, "tenant": tenant}])
    path = manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", queries="queries.parquet")
    async with running(path) as (app, pilot):
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RankDropsScreen)
        rows = app.screen.query_one(VirtualTable)
        check_screen(app, qid, tenant[:16], text[:16], "-0.500", widget=rows)  # cut to the columns
        await click_on(pilot, app, qid, "q9")
        await pilot.press("enter")
        await pilot.pause()
        check_screen(app, text)  # the detail of the drop


@pytest.mark.slow
def test_the_reports_drops_carry_the_query_text(capsys) -> None:
    """Each drop names its query's text (JSON in full; the Markdown table cut to one line)."""
    import json

    import pyarrow.parquet as pq

    from triage.cli.main import main
    from triage.core.bundled import sample_manifest

    rows = pq.read_table(sample_manifest().parent / "queries.parquet", columns=["query_id", "text"])
    texts = {r["query_id"]: r["text"] for r in rows.to_pylist()}
    assert main(["report", "--format", "json"]) == 0
    drops = json.loads(capsys.readouterr().out)["ranks"]["drops"]
    assert drops and all(d["text"] == texts[d["query_id"]] for d in drops)
    assert main(["report", "--format", "markdown"]) == 0
    first = drops[0]
    row = next(
        x for x in capsys.readouterr().out.splitlines() if x.startswith(f"| 1 | {first['query_id']} |")
    )
    assert row.endswith(f"| {first['text']} |")  # the sample's first drop: short, nothing to escape
