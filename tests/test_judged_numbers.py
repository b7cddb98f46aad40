"""What is judged, in the numbers: each arm's judged@k, the unjudged
ids in its top k and the hit rate if they were all relevant; the regressions that may be false; the
detail's rows marked gold ★, judged not relevant ✗ or unjudged ·; and the evidence balance of the
amendments — on a hand-built evaluation whose figures are worked out below, and on the sample."""

from __future__ import annotations

import json
import re
import shutil
from fractions import Fraction
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from textual.widgets import Static

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.report import cells, markdown
from triage.report.build import build
from triage.report.model import Report
from triage.report.sections.labels import label_state_rows
from triage.report.sections.metrics import JUDGED_NOTE, judged_rows, metric_rows, metrics_note
from triage.report.sections.paired import paired_rows, unjudged_regressions
from triage.ui.app import TriageApp
from triage.ui.screens.detail import DetailScreen
from triage.ui.table import VirtualTable
from triage.workspace.detail import Judgement, build_detail
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from app_helpers import wait_loaded
from conftest import RUN_SCHEMA, manifest, write_parquet
from sample_story import AMENDED, NEAR_DUP_CHUNK, NEAR_DUP_GOLD, NEAR_DUP_QUERY

SIZE = (120, 36)

# -- a hand-built evaluation at k = 3 -------------------------------------------------------------
#
# Labels: q1 gold g1, n1 judged not relevant; q2 gold g2; q3 gold g3, n3 not relevant; q4 gold g4,
# n4 and n5 not relevant; q5 only a not-relevant pair (unlabelled: never scored).
#
#        A's top 3   judged/shown  unjudged  hit  |  B's top 3   judged/shown  unjudged  hit
#   q1   g1 n1 x1    2 / 3         1 (x1)    yes  |  x1 x2 g1    1 / 3         2         yes
#   q2   x3 g2       1 / 2         1 (x3)    yes  |  x3 x4 x5    0 / 3         3         no
#   q3   n3 x6       1 / 2         1 (x6)    no   |  g3 n3       2 / 2         0         yes
#   q4   g4          1 / 1         0         yes  |  n4 n5       2 / 2         0         no
#
# judged@3  A = (2/3 + 1/2 + 1/2 + 1) / 4 = 2/3;    B = (1/3 + 0 + 1 + 1) / 4 = 7/12
# unjudged  A = 1 + 1 + 1 + 0 = 3;                  B = 2 + 3 + 0 + 0 = 5
# hit rate  A = 3/4; upper A = 4/4 (q3's x6 could be relevant)
#           B = 2/4; upper B = 3/4 (q2's x3 x4 x5 could be; q4's top 3 is all judged)
# regressions (A hit, B miss): q2 and q4; with an unjudged id in B's top 3: q2 alone → 1 of 2.

LISTS_A = {"q1": ["g1", "n1", "x1", "x2"], "q2": ["x3", "g2"], "q3": ["n3", "x6"], "q4": ["g4"], "q5": ["n6"]}
LISTS_B = {
    "q1": ["x1", "x2", "g1"],
    "q2": ["x3", "x4", "x5"],
    "q3": ["g3", "n3"],
    "q4": ["n4", "n5"],
    "q5": ["n6"],
}
LABELS = [
    ("q1", "g1", 1),
    ("q1", "n1", 0),
    ("q2", "g2", 1),
    ("q3", "g3", 1),
    ("q3", "n3", 0),
    ("q4", "g4", 2),
    ("q4", "n4", 0),
    ("q4", "n5", 0),
    ("q5", "n6", 0),
]
JUDGED_AT_K = {"a": Fraction(2, 3), "b": Fraction(7, 12)}
UNJUDGED = {"a": 3, "b": 5}
HIT_RATE = {"a": 0.75, "b": 0.5}
UPPER = {"a": 1.0, "b": 0.75}


@pytest.fixture
def hand(tmp_path: Path) -> Path:
    def run(lists: dict[str, list[str]]) -> list[dict]:
        return [
            {
                "query_id": q,
                "retrieved": ids,
                "scores": [float(9 - i) for i in range(len(ids))],
                "plan": "ann",
            }
            for q, ids in lists.items()
        ]

    write_parquet(tmp_path / "a.parquet", run(LISTS_A), {"k": "3", "name": "plain"}, RUN_SCHEMA)
    write_parquet(tmp_path / "b.parquet", run(LISTS_B), {"k": "3", "name": "headers"}, RUN_SCHEMA)
    write_parquet(
        tmp_path / "labels.parquet",
        [{"query_id": q, "chunk_id": c, "relevance": r} for q, c, r in LABELS],
    )
    return manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=3)


def report_json(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    assert main(["report", str(path), "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def session(path: Path, reviewer: str = "ana") -> Session:
    return Session(open_snapshot(from_manifest(path)), reviewer=reviewer)


def test_the_hand_built_figures_in_the_json(hand: Path, capsys) -> None:
    d = report_json(hand, capsys)
    assert d["schema"] == 1 and d["n_scored"] == 4 and d["unlabelled"] == ["q5"]
    for side in ("a", "b"):
        arm = d["arms"][side]
        assert arm["judged_at_k"] == pytest.approx(float(JUDGED_AT_K[side]))
        assert arm["unjudged_in_top_k"] == UNJUDGED[side]
        assert arm["hit_rate"] == HIT_RATE[side] and arm["hit_rate_upper"] == UPPER[side]
    p = d["paired"]
    assert (p["both_hit"], p["both_miss"], p["a_miss_b_hit"], p["a_hit_b_miss"]) == (1, 0, 1, 2)
    assert p["regressions_with_unjudged"] == 1  # q2; q4's top 3 in B is all judged not relevant
    unjudged = {f["query_id"]: (f["unjudged_in_top_k_a"], f["unjudged_in_top_k_b"]) for f in d["flips"]}
    assert unjudged == {"q2": (1, 3), "q4": (0, 0), "q3": (1, 0)}
    labels = d["labels"]
    assert (labels["gold_added"], labels["not_relevant"], labels["conflicts"]) == (0, 0, 0)
    assert labels["reviewers"] == {} and labels["moved"] is None and labels["in_force"] == 0
    assert d["frozen"]["paired"]["regressions_with_unjudged"] == 1


def test_the_hand_built_rows_in_text_markdown_and_cells(hand: Path, capsys) -> None:
    r = build(open_snapshot(from_manifest(hand)))
    rows = judged_rows(r)
    assert rows == [
        ["judged@3", "0.667", "0.583", "-0.083"],
        # B − A over both lists cut at the shorter one (3, 2, 2, 1 ids): A 1+1+1+0, B 2+2+0+0
        ["unjudged in top 3", "3", "5", "+1"],
        ["hit_rate@3 upper", "1.000", "0.750", "-0.250"],
    ]
    assert metric_rows(r)[-3:] == rows
    assert unjudged_regressions(r) == "regressions with an unjudged passage in B's top 3: 1 of 2"
    md = markdown.render_markdown(r)
    assert body(md, "## Metrics")[-3:] == rows
    assert (
        "regressions with an unjudged passage in B's top 3: 1 of 2 (each a possible false regression)." in md
    )
    flips = body(md, "## Flips (hit→miss first)")
    assert [(f[1], f[-2]) for f in flips] == [("q2", "1/3"), ("q4", "0/0"), ("q3", "1/0")]
    assert main(["report", str(hand)]) == 0
    text = capsys.readouterr().out
    for name, *figures in rows:  # each row on one line of the text report, in its order
        line = next(x for x in text.splitlines() if name in x)
        assert re.search(r".*".join(re.escape(f) for f in figures), line), (name, line)
    assert unjudged_regressions(r) in text


def test_judging_an_unjudged_passage_not_relevant_moves_the_judged_numbers(hand: Path, capsys) -> None:
    """q3 misses in A with one unjudged id in its top 3 (x6): judged 0, A's judged@3 rises from
    2/3 to (2/3 + 1/2 + 2/2 + 1) / 4 = 19/24, its unjudged ids fall from 3 to 2 and its upper
    bound from 4/4 to 3/4 (q3 can no longer be a hit); B, which did not retrieve x6, is unchanged."""
    s = session(hand)
    before = build(s.snapshot)
    change = s.add("q3", "x6", 0, evidence={"arm": "a", "rank": 2})
    assert change.saved and change.after == change.before  # no gold: the outcome stays
    after = build(s.snapshot)
    a0, a1 = before.arms.a, after.arms.a
    assert a0.judged_at_k is not None and a1.judged_at_k is not None and a1.judged_at_k > a0.judged_at_k
    assert a1.judged_at_k == pytest.approx(19 / 24)
    assert a1.unjudged_in_top_k == a0.unjudged_in_top_k - 1 == 2
    assert a0.hit_rate_upper == 1.0 and a1.hit_rate_upper == 0.75
    assert after.arms.b == before.arms.b and after.paired == before.paired
    assert (after.labels.not_relevant, after.labels.gold_added, after.labels.moved) == (1, 0, None)
    d = report_json(hand, capsys)  # from disk, through the CLI
    assert d["arms"]["a"]["unjudged_in_top_k"] == 2 and d["arms"]["a"]["hit_rate_upper"] == 0.75
    assert d["labels"]["not_relevant"] == 1 and d["labels"]["reviewers"] == {"ana": 1}


def test_the_evidence_balance_and_the_frozen_regressions(hand: Path, capsys) -> None:
    """x3 judged gold for q2 from B's results (q2 becomes both-hit: B 2/4 → 3/4, A stays 3/4),
    x4 and x5 judged not relevant: on the frozen labels q2 is still a regression, and its whole top 3
    in B is unjudged there; on the amended labels the one regression left (q4) has none."""
    s = session(hand)
    s.add("q2", "x3", 1, evidence={"arm": "b", "rank": 1})
    s.add("q2", "x4", 0, evidence={"arm": "b", "rank": 2})
    s.add("q2", "x5", 0, evidence={"arm": "b", "rank": 3})
    d = report_json(hand, capsys)
    labels = d["labels"]
    assert labels["moved"] == {"a": 0.0, "b": 0.25}
    assert (labels["gold_added"], labels["not_relevant"], labels["in_force"]) == (1, 2, 3)
    assert labels["by_arm"] == {"a": 0, "b": 1, "none": 0} and labels["reviewers"] == {"ana": 3}
    assert d["paired"]["a_hit_b_miss"] == 1 and d["paired"]["regressions_with_unjudged"] == 0
    frozen = d["frozen"]["paired"]
    assert frozen["a_hit_b_miss"] == 2 and frozen["regressions_with_unjudged"] == 1
    assert d["arms"]["b"]["unjudged_in_top_k"] == 2  # q1's x1 x2 alone
    assert d["arms"]["b"]["judged_at_k"] == pytest.approx((1 / 3 + 1 + 1 + 1) / 4)
    check = next(c for c in d["checks"] if c["code"] == "labels.amendments")
    assert check["level"] == "warning" and check["facts"]["one_sided"] == "b"  # all gold from B
    assert check["facts"]["moved"] == {"a": 0.0, "b": 0.25} and check["facts"]["by_arm"]["b"] == 1
    assert "from A's results 0, from B's 1" in check["message"]
    assert "hit rate frozen → amended: A +0.000, B +0.250" in check["message"]
    r = build(s.snapshot)
    assert r.frozen.arms.b.hit_rate == 0.5 and s.ev.frozen_hit_rate(s.ev.b) == 0.5
    rows = label_state_rows(r)
    assert rows is not None and ("hit rate moved A / B", "", "+0.000 / +0.250") in rows
    frozen_only = report_json(hand, capsys, "--label-state", "frozen")["labels"]
    assert (frozen_only["gold_added"], frozen_only["not_relevant"], frozen_only["moved"]) == (0, 0, None)
    assert frozen_only["reviewers"] == {} and frozen_only["conflicts"] == 0


def test_a_query_scored_by_an_amendment_alone_moves_the_rates_by_its_denominator(hand: Path, capsys) -> None:
    """q5 (unlabelled) given gold x9, which neither arm retrieved: 5 scored queries instead of 4,
    so A moves 3/4 → 3/5 (−0.15) and B 2/4 → 2/5 (−0.1); the check's cheap frozen hit rate and
    the report's frozen view agree."""
    s = session(hand)
    s.add("q5", "x9", 1)
    d = report_json(hand, capsys)
    assert d["n_scored"] == 5 and d["frozen"]["arms"]["a"]["n"] == 4
    assert d["labels"]["moved"] == {"a": pytest.approx(-0.15), "b": pytest.approx(-0.1)}
    assert d["labels"]["by_arm"]["none"] == 1
    check = next(c for c in d["checks"] if c["code"] == "labels.amendments")
    assert check["level"] == "ok" and check["facts"]["moved"] == d["labels"]["moved"]
    assert "A -0.150, B -0.100" in check["message"]
    for side, arm in (("a", s.ev.a), ("b", s.ev.b)):
        assert s.ev.frozen_hit_rate(arm) == d["frozen"]["arms"][side]["hit_rate"]


def test_reviewers_who_disagree_are_counted_and_the_pair_stays_unjudged(hand: Path, capsys) -> None:
    session(hand, "ana").add("q1", "x1", 0)
    session(hand, "bo").add("q1", "x1", 1)
    d = report_json(hand, capsys)
    assert d["labels"]["conflicts"] == 1 and d["labels"]["reviewers"] == {"ana": 1, "bo": 1}
    assert (d["labels"]["gold_added"], d["labels"]["not_relevant"]) == (0, 0)
    assert d["arms"]["b"]["unjudged_in_top_k"] == UNJUDGED["b"]  # neither arm favoured


# -- the bundled sample ---------------------------------------------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def body(text: str, heading: str) -> list[list[str]]:
    """The body rows of the Markdown table under `heading`, split into cells."""
    lines = text.splitlines()
    rows = []
    for line in lines[lines.index(heading) + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("| ") and not line.startswith("|---"):
            rows.append(line[2:-2].split(" | "))
    return rows[1:]


def by_hand(copy: Path) -> dict[str, tuple[float, int, float]]:
    """judged@5, unjudged in the top 5 and the upper hit rate per arm, from the files alone."""
    labels = pq.read_table(copy / "labels.parquet").to_pylist()
    judged: dict[str, set[str]] = {}
    gold: dict[str, set[str]] = {}
    for row in labels:
        judged.setdefault(row["query_id"], set()).add(row["chunk_id"])
        if row.get("relevance", 1) >= 1:
            gold.setdefault(row["query_id"], set()).add(row["chunk_id"])
    out = {}
    for side, name in (("a", "plain"), ("b", "headers")):
        runs = {
            r["query_id"]: r["retrieved"][:5]
            for r in pq.read_table(copy / "runs" / f"{name}.parquet").to_pylist()
        }
        shares, unjudged, upper = [], 0, 0
        for q in gold:
            top = runs.get(q, [])
            j = sum(1 for c in top if c in judged[q])
            if top:
                shares.append(j / len(top))
            unjudged += len(top) - j
            upper += bool(set(top) & gold[q]) or len(top) > j
        out[side] = (sum(shares) / len(shares), unjudged, upper / len(gold))
    return out


@pytest.mark.slow
def test_the_sample_figures_match_the_files(copy: Path, capsys) -> None:
    d = report_json(copy, capsys)
    want = by_hand(copy)
    for side in ("a", "b"):
        arm = d["arms"][side]
        assert (arm["judged_at_k"], arm["unjudged_in_top_k"], arm["hit_rate_upper"]) == pytest.approx(
            want[side]
        )
    assert (d["arms"]["a"]["unjudged_in_top_k"], d["arms"]["b"]["unjudged_in_top_k"]) == (874, 837)
    assert d["arms"]["a"]["judged_at_k"] == pytest.approx(0.126)
    assert d["arms"]["b"]["judged_at_k"] == pytest.approx(0.161)
    assert d["arms"]["a"]["hit_rate_upper"] == d["arms"]["b"]["hit_rate_upper"] == 1.0
    assert d["paired"]["regressions_with_unjudged"] == 6  # every regression could be a false one
    regressions = [f for f in d["flips"] if f["direction"] == "hit->miss"]
    assert all(f["unjudged_in_top_k_b"] > 0 for f in regressions)
    q031 = next(f for f in regressions if f["query_id"] == "q031")
    assert q031["unjudged_in_top_k_b"] == 3  # B's postfilter returned 3 ids, none judged
    labels = d["labels"]
    assert (labels["conflicts"], labels["reviewers"], labels["not_relevant"], labels["gold_added"]) == (
        0,
        {},
        0,
        0,
    )
    assert labels["moved"] is None


NEAR_DUP_ZEROS = ["driftwood/handbook-2024#010", "driftwood/handbook-2024#011", "driftwood/handbook-2023#011"]


@pytest.mark.slow
def test_the_acceptance_q150_judged_then_three_unjudged_passages_judged_not_relevant(
    copy: Path, capsys
) -> None:
    """q150's near-duplicate judged gold, and three other unjudged passages of B's top 5 judged 0:
    119 / 36 / 40 / 5, B's judged@5 up by (4/5) / 200 = 0.004, its unjudged ids down by 4; A's top 5
    holds the near-duplicate and 2024#010, so A's unjudged fall by 2."""
    before = report_json(copy, capsys)
    s = session(copy)
    s.add(NEAR_DUP_QUERY, NEAR_DUP_CHUNK, 1, evidence={"arm": "b", "rank": 1})
    for rank, chunk in enumerate(NEAR_DUP_ZEROS, 2):
        s.add(NEAR_DUP_QUERY, chunk, 0, evidence={"arm": "b", "rank": rank})
    d = report_json(copy, capsys)
    p = d["paired"]
    assert (p["both_hit"], p["both_miss"], p["a_miss_b_hit"], p["a_hit_b_miss"]) == AMENDED
    for side in ("a", "b"):
        assert d["arms"][side]["judged_at_k"] > before["arms"][side]["judged_at_k"]
    assert d["arms"]["b"]["judged_at_k"] - before["arms"]["b"]["judged_at_k"] == pytest.approx(0.8 / 200)
    assert d["arms"]["b"]["unjudged_in_top_k"] == before["arms"]["b"]["unjudged_in_top_k"] - 4
    assert d["arms"]["a"]["unjudged_in_top_k"] == before["arms"]["a"]["unjudged_in_top_k"] - 2
    assert p["regressions_with_unjudged"] == 5 and d["frozen"]["paired"]["regressions_with_unjudged"] == 6
    labels = d["labels"]
    assert (labels["gold_added"], labels["not_relevant"], labels["in_force"]) == (1, 3, 4)
    assert labels["moved"] == {"a": 0.0, "b": pytest.approx(0.005)}
    check = next(c for c in d["checks"] if c["code"] == "labels.amendments")
    assert "A +0.000, B +0.005" in check["message"] and check["facts"]["one_sided"] == "b"
    for side, arm in (("a", s.ev.a), ("b", s.ev.b)):  # the check's frozen rate, the report's
        assert s.ev.frozen_hit_rate(arm) == d["frozen"]["arms"][side]["hit_rate"]
    assert main(["report", str(copy)]) == 0
    text = capsys.readouterr().out
    r = build(s.snapshot)
    (hit, both_hit, down), (miss, up, both_miss) = paired_rows(r.paired)
    assert (both_hit, both_miss, up, down) == tuple(str(x) for x in AMENDED)
    assert re.search(rf"A hit\s+│\s+{both_hit}\s+│\s+{down}\s+│", text)
    assert re.search(rf"A miss\s+│\s+{up}\s+│\s+{both_miss}\s+│", text)
    judged = next(x for x in text.splitlines() if "judged@5" in x)
    assert cells.rate(r.arms.b.judged_at_k) in judged and cells.rate(r.arms.b.judged_at_k) == "0.165"


def screen_lines(app: TriageApp) -> list[str]:
    """The current screen as rendered: one string per terminal row."""
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


@pytest.mark.slow
async def test_the_overview_draws_the_judged_cells(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        r = build(app.session.snapshot)
        await show_metrics(pilot, app)
        assert_overview(app, r)
        # Judged in the session, the overview follows when it is shown again.
        app.session.add(NEAR_DUP_QUERY, NEAR_DUP_ZEROS[0], 0, evidence={"arm": "b", "rank": 2})
        await pilot.press("f", "o")
        await pilot.pause()
        now = build(app.session.snapshot)
        assert now.arms.b.unjudged_in_top_k == r.arms.b.unjudged_in_top_k - 1
        await show_metrics(pilot, app)
        assert_overview(app, now)


async def show_metrics(pilot, app: TriageApp) -> None:  # type: ignore[no-untyped-def]
    """The overview scrolled to its metrics (the checks above them may fill the first screen)."""
    app.screen.query_one("#overview").scroll_to_widget(app.screen.query_one("#metrics"), animate=False)
    await pilot.pause()


def assert_overview(app: TriageApp, r: Report) -> None:
    """Each judged row on one line of the overview, its cells in order as `cells` spells them,
    and the count of regressions with an unjudged passage in B's top k (the overview scrolled to
    its metrics: the checks above them may take the first screen)."""
    lines = screen_lines(app)
    for name, *figures in judged_rows(r):
        line = next(x for x in lines if f"│ {name} " in x)
        assert re.search(r"│\s*" + r"\s*│\s*".join(re.escape(f) for f in figures) + r"\s*│", line), (
            name,
            line,
        )
    assert any(unjudged_regressions(r).split(" (sparse")[0] in x for x in lines)  # the reason may wrap
    assert any(JUDGED_NOTE.split(";")[0].split(",")[0] in x for x in lines)


async def open_q150(pilot, app: TriageApp) -> DetailScreen:  # type: ignore[no-untyped-def]
    app.open_query(app.session.ev.query_index(NEAR_DUP_QUERY))
    for _ in range(200):
        await pilot.pause()
        screen = app.screen
        if isinstance(screen, DetailScreen) and screen.detail is not None:
            return screen
    raise TimeoutError("the detail did not open")


@pytest.mark.slow
async def test_the_detail_marks_gold_not_relevant_and_unjudged(copy: Path) -> None:
    """q150 in B: the near-duplicate ≈ (unjudged), the gold ★2 at rank 7, everything else ·; once
    2024#010 is judged not relevant it is ✗ in both lists and the near-duplicate, judged gold, +1."""
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        screen = await open_q150(pilot, app)
        b = screen.query_one("#list-b", VirtualTable)
        marks = [b.cells(i)[1] for i in range(b.count)]
        assert marks == ["≈", "·", "·", "·", "·", "·", "★2", "·", "·", "·"]
        assert str(b.render_line(1).text).split()[:3] == ["1", "≈", NEAR_DUP_CHUNK]
        assert str(b.render_line(7).text).split()[:3] == ["7", "★2", NEAR_DUP_GOLD]
        assert str(b.render_line(2).text).split()[:3] == ["2", "·", NEAR_DUP_ZEROS[0]]
        title = str(screen.query_one("#list-b-title", Static).render())
        assert "★ gold ✗ irrelevant · unjudged ≈ likely" in title
        d = screen.detail
        assert d is not None and [r.judgement for r in d.b.rows[:2]] == [Judgement.UNJUDGED] * 2
        assert d.b.rows[6].judgement is Judgement.GOLD
        await pilot.press("j")  # B #2: unjudged, and the preview says so
        assert "· unjudged" in str(screen.query_one("#preview", Static).render())
        await pilot.press("escape")

        app.session.add(NEAR_DUP_QUERY, NEAR_DUP_ZEROS[0], 0, evidence={"arm": "b", "rank": 2})
        app.session.add(NEAR_DUP_QUERY, NEAR_DUP_CHUNK, 1, evidence={"arm": "b", "rank": 1})
        screen = await open_q150(pilot, app)
        b, a = screen.query_one("#list-b", VirtualTable), screen.query_one("#list-a", VirtualTable)
        assert [b.cells(i)[1] for i in range(b.count)] == ["+1", "✗", "·", "·", "·", "·", "★2", "·", "·", "·"]
        assert str(b.render_line(2).text).split()[:3] == ["2", "✗", NEAR_DUP_ZEROS[0]]
        assert [a.cells(i)[1] for i in range(4)] == ["★2", "·", "+1", "✗"]  # A's ranks 1-4
        await pilot.press("j")
        preview = str(screen.query_one("#preview", Static).render())
        assert "✗ judged not relevant (by ana)" in preview


def test_a_frozen_judgement_of_not_relevant_is_marked_as_the_frozen_files(hand: Path) -> None:
    snap = open_snapshot(from_manifest(hand))
    d = build_detail(snap, snap.ev.query_index("q1"), None)
    assert [(r.chunk_id, r.judgement) for r in d.a.rows] == [
        ("g1", Judgement.GOLD),
        ("n1", Judgement.NOT_RELEVANT),
        ("x1", Judgement.UNJUDGED),
        ("x2", Judgement.UNJUDGED),
    ]
    assert d.not_relevant == {}  # judged in the frozen file, by no reviewer


def test_unjudged_counts_of_lists_of_different_lengths_compare_at_one_depth(tmp_path: Path) -> None:
    """A keeps 6 ids a query, B 10: B − A of the unjudged counts is taken over both lists cut at 6
    (the same ids here: +0), not over 6 against 10 (+30); the note says so; the JSON keeps
    `unjudged_in_top_k` as it was."""
    for arm, n in (("a", 6), ("b", 10)):
        lines = [f"q{q} Q0 d{q}_{r} {r + 1} {20 - r} {arm}" for q in range(10) for r in range(n)]
        (tmp_path / f"{arm}.run").write_text("\n".join(lines) + "\n", "utf-8")
    qrels = "".join(f"q{q} 0 d{q}_0 1\nq{q} 0 d{q}_3 0\nq{q} 0 d{q}_8 0\n" for q in range(10))
    (tmp_path / "q.qrels").write_text(qrels, "utf-8")
    import triage

    r = triage.open(a=tmp_path / "a.run", b=tmp_path / "b.run", labels=tmp_path / "q.qrels", k=10).report()
    assert (r.arms.a.unjudged_in_top_k, r.arms.b.unjudged_in_top_k) == (40, 70)
    row = next(x for x in judged_rows(r) if x[0] == "unjudged in top 10")
    assert row == ["unjudged in top 10", "40", "70", "+0"]
    assert "cut at the shorter one" in metrics_note(r) and "60 ids each" in metrics_note(r)
    assert "unjudged_same_depth" not in str(r.to_json())
