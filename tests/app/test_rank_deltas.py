"""The rank-drops screen (`r`): every moved query by B − A of a chosen measure, worst first
(core/views/deltas.py; docs/app.md, Rank drops).

By hand on six queries whose gold ranks make each measure's order known (ndcg@5 and mrr@5 order the
rises differently), then against a plain per-query reading on a generated evaluation with measures
named in its manifest, then the screen driven with the keys: the order drawn, `M` cycling the
measure, `enter` opening the detail and `n` walking the list, the worker path for large lists.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from triage.core.evaluation import Evaluation
from triage.core.views.deltas import GOLD_RANK, choices, deltas
from triage.core.views.per_query import query_table
from triage.core.views.ranks import TIE, ranks
from triage.ui.app import TriageApp
from triage.ui.screens.detail import DetailScreen
from triage.ui.screens.ranks import RankDropsScreen
from triage.ui.table import VirtualTable

from app_helpers import wait_loaded
from conftest import frozen_evaluation, write_evaluation
from trec_oracle import generated

K = 5
PAD = [f"x{i}" for i in range(10)]


def ranked(gold_rank: int | None) -> list[str]:
    """Eight ids, the gold "g" at `gold_rank` (1-based; None: not in the list)."""
    out = PAD[:8]
    if gold_rank:
        out[gold_rank - 1] = "g"
    return out


# query -> (A's gold rank, B's gold rank); one gold, grade 1, so ndcg@5 = 1/log2(rank + 1)
GOLD = {
    "q1": (1, 3),  # ndcg −0.5, mrr −2/3
    "q2": (1, None),  # −1 on every measure: B lost the gold
    "q3": (2, 2),  # unchanged
    "q4": (3, 1),  # ndcg +0.5, mrr +2/3
    "q5": (1, 3),  # as q1: after it by id
    "q0": (None, 2),  # ndcg +0.631, mrr +0.5
}
NDCG = ["q2", "q1", "q5", "q4", "q0"]
MRR = ["q2", "q1", "q5", "q0", "q4"]  # q0's rise (+0.5) is now the smaller
HIT = ["q2", "q0"]  # the flips: hit→miss, then miss→hit
GOLD_RANKS = ["q1", "q5", "q4"]  # both hit: q1 and q5 fell two places, q4 rose two


def write(folder: Path) -> Path:
    rows = {
        arm: [{"query_id": q, "retrieved": ranked(r[i])} for q, r in GOLD.items()]
        for i, arm in enumerate("ab")
    }
    labels = [{"query_id": q, "chunk_id": "g", "relevance": 1} for q in GOLD]
    return write_evaluation(folder, rows["a"], rows["b"], labels)


@pytest.fixture
def hand(tmp_path: Path) -> Path:
    return write(tmp_path)


def ids(ev: Evaluation, order: np.ndarray) -> list[str]:
    return ev.query_ids.take(order).to_pylist()


def test_each_choice_orders_the_moved_queries_worst_first_by_hand(hand: Path) -> None:
    ev = frozen_evaluation(hand)
    assert choices(ev) == [f"ndcg@{K}", f"recall@{K}", f"mrr@{K}", f"hit_rate@{K}", GOLD_RANK]
    d = deltas(ev, f"ndcg@{K}")
    assert ids(ev, d.order) == NDCG
    assert (d.fell, d.rose, d.same, d.not_compared) == (3, 2, 1, 0)
    assert d.choice.delta[d.order].tolist() == pytest.approx(
        [-1, 0.5 - 1, 0.5 - 1, 1 - 0.5, 1 / math.log2(3)]
    )
    assert ids(ev, deltas(ev, f"mrr@{K}").order) == MRR
    assert ids(ev, deltas(ev, f"hit_rate@{K}").order) == HIT
    assert ids(ev, deltas(ev, f"recall@{K}").order) == HIT
    g = deltas(ev, GOLD_RANK)
    assert ids(ev, g.order) == GOLD_RANKS and g.choice.delta[g.order].tolist() == [-2, -2, 2]
    assert (g.fell, g.rose, g.same, g.not_compared) == (2, 1, 1, 2)  # q2, q0: not hit by both


def test_the_gold_rank_falls_are_the_reports_drops_and_ndcg_counts_its_wins_and_losses(
    tmp_path: Path,
) -> None:
    ev = frozen_evaluation(generated(tmp_path, n=1500))
    x = ranks(ev)
    g = deltas(ev, GOLD_RANK)
    assert g.order[: g.fell].tolist() == x.drops.tolist() and g.fell > 20
    n = deltas(ev, f"ndcg@{ev.k}")
    assert (n.fell, n.same, n.rose) == (x.ndcg.losses, x.ndcg.ties, x.ndcg.wins)
    h = deltas(ev, f"hit_rate@{ev.k}")
    p = ev.paired()
    assert (h.fell, h.rose) == (p.a_hit_b_miss, p.a_miss_b_hit)
    assert sorted(h.order.tolist()) == sorted(ev.flips.tolist())


def test_named_measures_come_first_and_order_as_the_per_query_table_says(tmp_path: Path) -> None:
    path = generated(tmp_path, n=1500)
    path.write_text('measures = ["nDCG@10", "AP"]\n' + path.read_text("utf-8"), "utf-8")
    ev = frozen_evaluation(path)
    assert choices(ev)[:3] == ["nDCG@10", "AP", f"ndcg@{ev.k}"]
    table = query_table(ev).to_pylist()
    for name in ("nDCG@10", "AP"):
        # the plain reading: B − A per scored query from the API's table, moved ones by (Δ, id)
        pairs = [
            (r[f"{name}_b"] - r[f"{name}_a"], r["query_id"]) for r in table if r[f"{name}_a"] is not None
        ]
        moved = sorted((round(d / TIE), q) for d, q in pairs if abs(d) > TIE)
        d = deltas(ev, name)
        assert ids(ev, d.order) == [q for _, q in moved]
        assert d.fell == sum(1 for s, _ in moved if s < 0) > 0 and d.rose > 0
        assert d.fell + d.rose + d.same + d.not_compared == int(ev.scored.sum())


# -- the screen ------------------------------------------------------------------------------------


def column(table: VirtualTable, title: str) -> list[str]:
    at = [c.title for c in table.columns].index(title)
    return [table.cells(i)[at] for i in range(table.count)]


def title(app: TriageApp) -> str:
    return str(app.screen.query_one("#list-title").render())


async def settle(pilot, *keys: str) -> None:  # type: ignore[no-untyped-def]
    for key in keys:
        await pilot.press(key)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (140, 45)])
async def test_the_screen_lists_worst_first_and_m_cycles_the_measure(
    hand: Path, size: tuple[int, int]
) -> None:
    app = TriageApp(hand)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await settle(pilot, "r")
        assert isinstance(app.screen, RankDropsScreen)
        table = app.screen.query_one(VirtualTable)
        assert column(table, "query") == NDCG
        assert column(table, "Δ") == ["-1.000", "-0.500", "-0.500", "+0.500", "+0.631"]
        assert column(table, "A")[0] == "1.000" and column(table, "B")[0] == "0.000"
        head = title(app)
        assert f"Δ ndcg@{K} = B − A, worst first" in head and "3 fell · 2 rose · 1 unchanged" in head
        assert f"M: recall@{K} next" in head
        expected = {f"recall@{K}": HIT, f"mrr@{K}": MRR, f"hit_rate@{K}": HIT, GOLD_RANK: GOLD_RANKS}
        for name, order in expected.items():
            await settle(pilot, "M")
            assert f"Δ {name}" in title(app) and column(table, "query") == order, name
        assert column(table, "Δ") == ["−2", "−2", "+2"] and column(table, "A") == ["1", "1", "3"]
        assert "1 unchanged (not listed) · 2 not hit by both" in title(app)
        await settle(pilot, "M")  # round again to the first
        assert column(table, "query") == NDCG and table.cursor == 0


async def test_enter_opens_the_detail_and_n_walks_the_list(hand: Path) -> None:
    app = TriageApp(hand)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        await settle(pilot, "r", "M", "M")  # mrr@5
        await settle(pilot, "j", "j", "enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        ev = app.session.ev
        assert ev.query_ids[screen.q].as_py() == MRR[2]
        assert screen.label(screen.position) == f"Δ mrr@{K}: 3 of 5, worst first"
        await settle(pilot, "n")
        assert ev.query_ids[screen.q].as_py() == MRR[3]
        await settle(pilot, "escape")
        assert isinstance(app.screen, RankDropsScreen)


async def test_a_large_list_is_ordered_in_a_worker_then_drawn(
    hand: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RankDropsScreen, "SYNC_LIMIT", 0)
    app = TriageApp(hand)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one(VirtualTable)
        assert column(table, "query") == NDCG and "3 fell" in title(app)
        await settle(pilot, "M", "M")
        assert column(table, "query") == MRR
        assert app.session.ready(f"deltas:mrr@{K}") is not None  # cached: shown again without a worker
