"""Slices and tenants: a planted collapsed tenant surfaces; partitions hold; the gate."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from triage.cli.main import main
from triage.core.inputs.manifest import from_manifest
from triage.core.views.slices import BANDS, all_slices, filter_shape, selectivity_band, tenants
from triage.workspace.snapshot import open_snapshot

import sample_story as story
from conftest import frozen_evaluation, write_evaluation

K = 5


def evaluation(folder: Path, collapse: str | None = None, seed: int = 3) -> Path:
    """12 healthy tenants of 30 queries (B hits ~90%), one tiny tenant on exact scan; with
    `collapse`, that tenant's B answers through a postfilter that returns 2 ids and misses."""
    rng = random.Random(seed)
    tenants_ = [f"tenant-{i:02d}" for i in range(12)]
    rows_a, rows_b, labels, queries = [], [], [], []
    qn = 0

    def add(
        tenant: str, plan: str, hit_a: bool, hit_b: bool, short_b: bool = False, sel: float | None = None
    ):
        nonlocal qn
        qn += 1
        q = f"q{qn:04d}"
        gold = f"{tenant}/doc#{qn}"
        fill = [f"{tenant}/other#{qn}-{j}" for j in range(10)]
        ranked_a = ([gold] + fill)[:10] if hit_a else fill
        ranked_b = ([gold] + fill)[:10] if hit_b else fill
        if short_b:
            ranked_b = fill[:2]
        elig = None if sel is None else max(1, int(sel * 100_000))
        rows_a.append(
            {
                "query_id": q,
                "retrieved": ranked_a,
                "plan": "ann" if plan == "postfilter" else plan,
                "n_eligible": elig,
            }
        )
        rows_b.append({"query_id": q, "retrieved": ranked_b, "plan": plan, "n_eligible": elig})
        labels.append({"query_id": q, "chunk_id": gold, "relevance": 1})
        queries.append(
            {
                "query_id": q,
                "text": f"question {qn}",
                "tenant": tenant,
                "filter": None if sel is None else f"tenant = '{tenant}' AND doc_type IN ('a','b')",
                "selectivity": sel,
                "query_type": rng.choice(["lookup", "howto"]),
                "language": "en",
            }
        )

    for t in tenants_:
        for i in range(30):
            if t == collapse:
                add(t, "postfilter", True, False, short_b=True, sel=0.0004)
            else:
                add(t, "ann", rng.random() < 0.7, i % 10 != 0, sel=None if i % 3 else 0.05)
    for _ in range(4):  # the tiny tenant, answered by exact scan
        add("tiny-clinic", "scan", True, True, sel=0.002)
    return write_evaluation(folder, rows_a, rows_b, labels, queries, run_k=K, k=None)


def test_a_collapsed_tenant_surfaces_in_the_worst_three_and_moves_the_count_by_one(tmp_path: Path) -> None:
    healthy = tenants(frozen_evaluation(evaluation(tmp_path / "healthy")))
    collapsed = tenants(frozen_evaluation(evaluation(tmp_path / "collapsed", collapse="tenant-07")))
    assert healthy is not None and collapsed is not None
    assert collapsed.below_floor["b"] == healthy.below_floor["b"] + 1
    assert collapsed.below_floor["a"] == healthy.below_floor["a"]
    assert "tenant-07" in [t.name for t in collapsed.worst]
    worst = collapsed.rows[0]
    assert worst.name == "tenant-07" and worst.slice.b.hit_rate == 0.0
    assert worst.plan == "postfilter" and worst.plan_share == 1.0
    assert worst.slice.b.short_lists == 30 and worst.slice.hit_to_miss == 30
    # A blended mean barely moves: the collapse is visible only per tenant.
    assert collapsed.p5["b"] < healthy.p5["b"]


def test_tiny_scan_tenant_is_shown_with_its_plan_and_marked_few(tmp_path: Path) -> None:
    t = tenants(frozen_evaluation(evaluation(tmp_path)))
    tiny = next(x for x in t.rows if x.name == "tiny-clinic")
    assert tiny.plan == "scan" and tiny.plan_share == 1.0 and tiny.few and tiny.slice.n == 4
    assert tiny.median_selectivity == pytest.approx(0.002)


def test_every_key_partitions_the_scored_queries(tmp_path: Path) -> None:
    ev = frozen_evaluation(evaluation(tmp_path, collapse="tenant-03"))
    got = all_slices(ev)
    assert set(got) >= {"plan", "selectivity", "tenant", "query_type", "filter", "language"}
    scored = int(ev.scored.sum())
    for key, rows in got.items():
        assert sum(s.n for s in rows) == scored, key
        members = np.concatenate([s.queries for s in rows])
        assert len(np.unique(members)) == scored, key
    bands = {s.value: s.n for s in got["selectivity"]}
    assert bands["<0.1%"] == 30 and bands["0.1–1%"] == 4
    shapes = {s.value for s in got["filter"]}
    assert shapes == {"unfiltered", "doc_type & tenant"}


def test_selectivity_bands_and_filter_shapes() -> None:
    s = np.array([np.nan, 0.5, 0.10, 0.0999, 0.01, 0.005, 0.001, 0.0009, 0.0])
    assert selectivity_band(s).tolist() == [
        BANDS[0],
        "≥10%",
        "≥10%",
        "1–10%",
        "1–10%",
        "0.1–1%",
        "0.1–1%",
        "<0.1%",
        "<0.1%",
    ]
    assert filter_shape("tenant = 'x' AND source_type IN ('a', 'b')") == "source_type & tenant"
    assert filter_shape("price >= 10 and price < 20") == "price"
    assert filter_shape(None) == filter_shape("  ") == "unfiltered"


def test_slices_and_tenants_in_the_json_report(tmp_path: Path, capsys) -> None:
    path = evaluation(tmp_path, collapse="tenant-05")
    assert main(["report", str(path), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    t = d["tenants"]
    assert (
        t["floor"] == 0.8 and t["worst"][0]["tenant"] == "tenant-05" and t["worst"][0]["plan"] == "postfilter"
    )
    assert set(t["worst"][0]) >= {"tenant", "n", "hit_rate_a", "hit_rate_b", "plan"}
    assert set(t["below_floor"]) == {"a", "b"} and set(t["p5"]) == {"a", "b"}
    row = d["slices"]["tenant"][0]
    assert set(row) >= {"value", "n", "a", "b", "hit_to_miss", "miss_to_hit"}
    assert set(row["a"]) >= {"hit_rate", "recall", "short_lists"}
    assert all(p["ok"] for p in d["partition"].values())


def test_sample_tenants_below_floor_and_the_scan_tenant(sample: Path) -> None:
    t = tenants(frozen_evaluation(sample))
    assert [x.name for x in t.worst] == story.BELOW_FLOOR_B
    assert t.below_floor["b"] == len(story.BELOW_FLOOR_B)
    assert all(x.slice.b.hit_rate < story.FLOOR for x in t.worst)
    for row in t.rows:
        n, _, _ = story.TENANTS[row.name]
        rates = (row.slice.a.hit_rate, row.slice.b.hit_rate)
        assert row.slice.n == n and rates == pytest.approx([story.tenant_rate(row.name, arm) for arm in "ab"])
    assert {x.name for x in t.rows} == set(story.TENANTS)
    harbor = next(x for x in t.rows if x.name == story.SCAN_TENANT)
    assert harbor.plan == "scan" and harbor.few


def write_gate(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    return path


@pytest.mark.slow
def test_gate_exits_1_naming_each_broken_floor(tmp_path: Path, sample: Path, capsys) -> None:
    gate = write_gate(tmp_path / "floors.toml", '[floors]\noverall = 0.75\n"tenant:*" = 0.80\n')
    assert main(["report", str(sample), "--gate", str(gate), "--format", "json"]) == 1
    d = json.loads(capsys.readouterr().out)
    broken = [f["name"] for f in d["gate"]["floors"] if not f["holds"]]
    assert broken == [f"tenant:{t}" for t in story.BELOW_FLOOR_B]
    f = d["gate"]["floors"][0]
    worst = story.BELOW_FLOOR_B[0]
    assert f["n"] == story.TENANTS[worst][0] and f["noise_band"] > 0
    assert f["hit_rate"] == pytest.approx(story.tenant_rate(worst, "b"))
    assert main(["report", str(sample), "--gate", str(gate)]) == 1
    text = capsys.readouterr().out
    assert f"{len(story.BELOW_FLOOR_B)} of" in text and f"tenant:{worst}" in text and "BELOW" in text


def test_gate_holds_exit_0_and_a_named_floor_wins_over_star(tmp_path: Path, sample: Path, capsys) -> None:
    gate = write_gate(
        tmp_path / "floors.toml",
        '[floors]\noverall = 0.75\n"tenant:*" = 0.70\n'
        '"tenant:acme-legal" = 0.70\n"selectivity:<0.1%" = 0.5\n"plan:scan" = 0.8\n',
    )
    assert main(["report", str(sample), "--gate", str(gate), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    names = [f["name"] for f in d["gate"]["floors"]]
    assert names.count("tenant:acme-legal") == 1 and all(f["holds"] for f in d["gate"]["floors"])
    missing = next(f for f in d["gate"]["floors"] if f["name"] == "selectivity:<0.1%")
    assert missing["n"] == 0 and missing["hit_rate"] is None  # a band with no query: nothing to judge


@pytest.mark.parametrize(
    "text",
    [
        "overall = 0.7\n",
        "[floors]\noverall = 1.5\n",
        '[floors]\n"color:*" = 0.5\n',
        "[floors\n",
        '[floors]\n"tenant:acme-legl" = 0.99\n',  # a typo must not "hold"
    ],
)
def test_a_bad_gate_file_exits_2_naming_it(tmp_path: Path, sample: Path, capsys, text: str) -> None:
    gate = write_gate(tmp_path / "floors.toml", text)
    assert main(["report", str(sample), "--gate", str(gate)]) == 2
    assert "floors.toml" in capsys.readouterr().err


def test_a_run_and_the_queries_file_disagreeing_on_a_tenant_is_an_error(tmp_path: Path, sample: Path) -> None:
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    copy = Path(shutil.copytree(sample.parent, tmp_path / "s"))
    t = pq.read_table(copy / "runs/headers.parquet")
    pq.write_table(
        t.append_column("tenant", pa.array(["acme-legal"] * t.num_rows)), copy / "runs/headers.parquet"
    )
    conflict = [c for c in open_snapshot(from_manifest(copy)).checks if c.code == "queries.conflict"]
    assert len(conflict) == 1 and conflict[0].level == "error"
    others = story.N_QUERIES - story.TENANTS["acme-legal"][0]  # the queries of the seven other tenants
    assert "headers.parquet" in conflict[0].message and f"{others} queries" in conflict[0].message


def judged_evaluation(folder: Path) -> Path:
    """Three tenants at k = 3, each query's B list spelled out: gold `g…`, judged not relevant `n…`,
    unjudged `x…`. dense: q1 [g1 n1 x1] judges 2 of 3, q2 [n2] (a short list) 1 of 1; bare: q3
    answered by A alone, q4 [x4 x5 g4] 1 of 3; void: q5 answered by A alone (nothing listed)."""
    b_lists = {"q1": ["g1", "n1", "x1"], "q2": ["n2"], "q4": ["x4", "x5", "g4"]}
    tenant = {"q1": "dense", "q2": "dense", "q3": "bare", "q4": "bare", "q5": "void"}
    rows_a = [{"query_id": q, "retrieved": [f"g{q[1]}"]} for q in tenant]
    rows_b = [{"query_id": q, "retrieved": ids} for q, ids in b_lists.items()]
    labels = [{"query_id": q, "chunk_id": f"g{q[1]}", "relevance": 1} for q in tenant]
    labels += [{"query_id": q, "chunk_id": f"n{q[1]}", "relevance": 0} for q in ("q1", "q2")]
    queries = [{"query_id": q, "text": f"question {q}", "tenant": t} for q, t in tenant.items()]
    return write_evaluation(folder, rows_a, rows_b, labels, queries, run_k=3, k=3)


def test_each_tenants_judged_share_is_bs_judged_at_k_over_its_queries(tmp_path: Path) -> None:
    ev = frozen_evaluation(judged_evaluation(tmp_path))
    t = tenants(ev)
    assert t is not None
    judged = {x.name: x.judged_b for x in t.rows}
    assert judged["dense"] == pytest.approx((2 / 3 + 1) / 2)
    assert judged["bare"] == pytest.approx(1 / 3)  # q3: no B list, so not in the mean
    assert np.isnan(judged["void"])  # no B list at all: undefined, not 0
    # The tenants' shares, weighted by their queries with a B list, are B's judged@k.
    assert (2 * judged["dense"] + judged["bare"]) / 3 == pytest.approx(ev.judged_at_k(ev.b))


def test_the_judged_share_is_in_every_output_of_the_report(tmp_path: Path, capsys) -> None:
    manifest = judged_evaluation(tmp_path)
    assert main(["report", str(manifest), "--format", "json"]) == 0
    rows = {r["tenant"]: r for r in json.loads(capsys.readouterr().out)["tenants"]["rows"]}
    assert rows["dense"]["judged_at_k_b"] == pytest.approx(5 / 6) and rows["void"]["judged_at_k_b"] is None
    shown = {"dense": "0.833", "bare": "0.333", "void": "–"}
    header = {
        "markdown": "| # | tenant",
        "html": '<th class="num">#</th><th>tenant</th>',
        "text": "┃ # ┃ tenant",
    }
    for fmt in ("markdown", "html", "text"):
        assert main(["report", str(manifest), "--format", fmt]) == 0
        lines = capsys.readouterr().out.splitlines()
        head = cells(next(x for x in lines if header[fmt] in x))
        column = head.index("judged B")
        for name, cell in shown.items():
            row = cells(next(x for x in lines if name in x and len(cells(x)) == len(head)))
            assert row[column] == cell, (fmt, name, row)


def cells(line: str) -> list[str]:
    """A table row's cells in Markdown, HTML or the text report's Rich table."""
    if line.startswith("<tr>"):
        return re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", line)
    return [c.strip() for c in re.split(r"[|┃│]", line.strip())[1:-1]]
