"""The on-call's flow on the bundled case (sample_runs/oncall/, README "The on-call reviewer"):
the README's commands run as written — `triage sample` → `triage truth` → `triage A B --labels
truth/` (here `triage report … --format json`, the same evaluation) — and what the on-call sees is
checked against a computation apart, from the files alone (plain sets and numpy): each tenant's
recall per arm, the tenants below the floor, the worst three, the 5th percentile; the planted
failures named by the check or screen meant to catch them; and the generator reproduces the files.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled

from conftest import ROOT

K = 10
FLOOR = 0.8
PLACE = "/tmp/oncall"  # where the README's commands write; a test's own folder here
ONCALL = bundled("sample_runs") / "oncall"
# where the README's `sample_runs/…` paths start: a checkout, or the installed package's copy
BESIDE = ONCALL.parent.parent


def readme_steps() -> list[list[str]]:
    """The `triage …` lines of the README's on-call block, as argv (without `triage`)."""
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("## The on-call reviewer", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)\n```", section, re.S)
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("triage ")]


def at(argv: list[str], root: Path, tmp: Path) -> list[str]:
    """A README command line with its `sample_runs/…` paths under `root` and PLACE under `tmp`."""
    out = []
    for word in argv:
        if word.startswith(PLACE):
            word = str(tmp) + word[len(PLACE) :]
        elif word.startswith("sample_runs/"):
            word = str(root / word)
        out.append(word)
    return out


class Flow:
    """The README's three commands, run once: the sampled queries, the truth, the report's JSON."""

    def __init__(self, tmp: Path) -> None:
        sample, truth, judge = (at(argv, BESIDE, tmp) for argv in readme_steps())
        assert sample[0] == "sample" and truth[0] == "truth" and "--labels" in judge
        for argv in (sample, truth):
            assert main(argv) == 0, argv
        self.queries = Path(sample[sample.index("--out") + 1])
        self.truth = Path(truth[truth.index("--out") + 1])
        self.judge = judge
        self.run_a, self.run_b = (Path(p) for p in self.judge[:2])


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> Flow:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIAGE_CACHE", str(tmp_path_factory.mktemp("cache")))
        mp.setenv("TRIAGE_DATA", str(tmp_path_factory.mktemp("data")))
        # PLACE's folder is not there before the first command, as on a fresh machine
        return Flow(tmp_path_factory.mktemp("fresh") / "oncall")


@pytest.fixture(scope="module")
def got(flow: Flow) -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", *flow.judge, "--format", "json"]) == 0
    return json.loads(out.getvalue())


def checks(got: dict, code: str, arm: str | None = None) -> list[dict]:
    return [c for c in got["checks"] if c["code"] == code and (arm is None or c["facts"].get("arm") == arm)]


# -- the computation apart ------------------------------------------------------------------------


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def recall_apart(flow: Flow) -> dict[str, dict[str, float]]:
    """Per arm, per query with something eligible: |top k ∩ truth| / min(k, n_eligible), at most
    min(k, n_eligible) counted (the truth at its own K: every listed id, tied extras too)."""
    n_elig = {r["query_id"]: r["n_eligible"] for r in rows(flow.truth / "queries.parquet")}
    truth: dict[str, set[str]] = defaultdict(set)
    for r in rows(flow.truth / "labels.parquet"):
        truth[r["query_id"]].add(r["chunk_id"])
    out = {}
    for side, run in (("a", flow.run_a), ("b", flow.run_b)):
        top = {r["query_id"]: set(r["retrieved"][:K]) for r in rows(run)}
        out[side] = {
            q: min(len(top[q] & truth[q]), min(K, n)) / min(K, n) for q, n in n_elig.items() if n > 0
        }
    return out


def tenants_apart(flow: Flow) -> dict[str, dict[str, float]]:
    """Each tenant's mean recall per arm and its n (a query without a tenant: "(none)")."""
    tenant = {r["query_id"]: r["tenant"] or "(none)" for r in rows(flow.truth / "queries.parquet")}
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"a": [], "b": []})
    for side, values in recall_apart(flow).items():
        for q, value in values.items():
            per[tenant[q]][side].append(value)
    return {
        t: {"a": float(np.mean(v["a"])), "b": float(np.mean(v["b"])), "n": len(v["b"])}
        for t, v in per.items()
    }


# -- the flow ---------------------------------------------------------------------------------------


def test_the_readme_names_the_four_steps_with_paths_that_work_from_a_checkout() -> None:
    sample, truth, judge = readme_steps()
    assert sample[:2] == ["sample", "sample_runs/oncall/log.jsonl"] and "--out" in sample
    assert truth[0] == "truth" and truth[truth.index("--k") + 1] == str(K)
    assert judge[:2] == ["sample_runs/oncall/runs/a.parquet", "sample_runs/oncall/runs/b.parquet"]
    assert judge[judge.index("--labels") + 1] == truth[truth.index("--out") + 1]  # the truth just made
    assert judge[judge.index("--labels") + 1].startswith(PLACE)  # triage never writes where it reads
    section = (ROOT / "README.md").read_text("utf-8").split("## The on-call reviewer", 1)[1]
    assert re.search(r"^\d\. `t`", section, re.M)  # the fourth step: the tenants screen


def test_the_runs_answer_every_query_the_readmes_sample_draws(flow: Flow) -> None:
    sampled = [r["query_id"] for r in rows(flow.queries)]
    for run in (flow.run_a, flow.run_b):
        assert [r["query_id"] for r in rows(run)] == sampled
    answered = {r["query_id"]: r for r in rows(flow.run_b)}
    for q in rows(flow.truth / "queries.parquet"):  # the same tenant and filter as the log's
        assert (answered[q["query_id"]]["tenant"], answered[q["query_id"]]["filter"]) == (
            q["tenant"],
            q["filter"],
        )


def test_the_tenants_below_the_floor_the_worst_three_and_the_5th_percentile_equal_a_computation_apart(
    flow: Flow, got: dict
) -> None:
    t = got["tenants"]
    mine = tenants_apart(flow)
    assert t["measure"] == f"recall@{K}" and t["floor"] == FLOOR
    for side in ("a", "b"):
        rates = np.array([m[side] for m in mine.values()])
        assert t["below_floor"][side] == int((np.round(rates, 12) < FLOOR).sum())
        assert t["p5"][side] == pytest.approx(float(np.percentile(rates, 5)), abs=1e-12)
    ranked = sorted(mine, key=lambda name: (round(mine[name]["b"], 12), -mine[name]["n"], name))
    assert [r["tenant"] for r in t["worst"]] == ranked[:3]
    assert [r["tenant"] for r in t["rows"]] == ranked
    for row in t["rows"]:
        assert row["recall"]["a"] == pytest.approx(mine[row["tenant"]]["a"], abs=1e-12)
        assert row["recall"]["b"] == pytest.approx(mine[row["tenant"]]["b"], abs=1e-12)
        assert row["n"] == mine[row["tenant"]]["n"]
    every = recall_apart(flow)
    for side in ("a", "b"):
        assert got["arms"][side]["recall"] == pytest.approx(
            float(np.mean(list(every[side].values()))), abs=1e-12
        )
    # the change under review: more tenants below the floor in B than in A
    assert t["below_floor"]["b"] > t["below_floor"]["a"]


def test_atlas_s_ticket_queries_postfiltered_below_0_1_percent_are_named_beside_their_short_lists(
    flow: Flow, got: dict
) -> None:
    truth = {q["query_id"]: q for q in rows(flow.truth / "queries.parquet")}
    b = {r["query_id"]: r for r in rows(flow.run_b)}
    low = sorted(
        q
        for q, r in b.items()
        if r["plan"] == "postfilter" and truth[q]["filter"] and truth[q]["selectivity"] < 0.01
    )
    tickets = [q for q, x in truth.items() if x["filter"] == "tenant = 'atlas' AND doc_type = 'ticket'"]
    assert tickets and set(tickets) <= set(low)
    (check,) = checks(got, "truth.postfilter", "b")
    assert check["level"] == "warning" and check["facts"]["count"] == len(low)
    assert check["facts"]["short_lists"] == sum(b[q]["n_returned"] < K for q in low)
    corpus_rows = pq.read_metadata(ONCALL / "corpus.parquet").num_rows
    assert truth[tickets[0]]["selectivity"] == 3 / corpus_rows < 0.001
    named = re.findall(r"req-\d+", check["message"])
    assert named and set(named) <= set(tickets)  # every query the message names is an atlas ticket query
    assert not checks(got, "truth.postfilter", "a")  # A scans them
    every = recall_apart(flow)
    assert all(every["b"][q] == 0.0 and every["a"][q] == 1.0 for q in tickets)
    (lowest,) = [s for s in got["slices"]["selectivity"] if s["value"] == "<0.1%"]
    assert lowest["b"]["short_lists"] >= len(tickets)


def test_granite_s_300_chunks_by_exact_scan_stand_at_1_0_beside_neighbours_at_0_3_in_their_band(
    flow: Flow, got: dict
) -> None:
    rows_by = {r["tenant"]: r for r in got["tenants"]["rows"]}
    granite = rows_by["granite"]
    assert (granite["plan"], granite["plan_share"], granite["recall"]["b"]) == ("scan", 1.0, 1.0)
    truth = {q["query_id"]: q for q in rows(flow.truth / "queries.parquet")}
    b = {r["query_id"]: r for r in rows(flow.run_b)}
    every = recall_apart(flow)["b"]
    band = {}
    for name in ("granite", "evergreen", "fjord"):
        whole = [q for q, x in truth.items() if x["filter"] == f"tenant = '{name}'"]
        assert whole, name
        assert {round(truth[q]["selectivity"], 6) for q in whole} == {
            round(truth[whole[0]]["selectivity"], 6)
        }
        assert 0.01 <= truth[whole[0]]["selectivity"] < 0.1  # the same band, 1–10%
        band[name] = (sorted({b[q]["plan"] for q in whole}), float(np.mean([every[q] for q in whole])))
    assert band["granite"] == (["scan"], 1.0)
    for name in ("evergreen", "fjord"):
        plans, recall = band[name]
        assert plans == ["postfilter"] and 0.15 <= recall <= 0.45, (name, band[name])
    (mid,) = [s for s in got["slices"]["selectivity"] if s["value"] == "1–10%"]
    assert 0.3 < mid["b"]["recall"] < 1.0  # the band's mean hides both


def test_the_router_s_estimates_are_named_and_the_truth_is_the_runs(flow: Flow, got: dict) -> None:
    exact = {q["query_id"]: q["n_eligible"] for q in rows(flow.truth / "queries.parquet")}
    for side, run in (("a", flow.run_a), ("b", flow.run_b)):
        off = [r["query_id"] for r in rows(run) if r["n_eligible"] != exact[r["query_id"]]]
        (warned,) = [c for c in checks(got, "truth.n_eligible", side) if c["level"] == "warning"]
        assert off and warned["facts"]["count"] == len(off)
    # the runs record the snapshot, the queries' vectors and the metric the truth was computed from
    for code in ("truth.corpus", "truth.queries", "truth.metric"):
        assert [c["level"] for c in checks(got, code)] == ["ok"], code
    assert not [c for c in got["checks"] if c["level"] == "error"]
    assert [c["level"] for c in checks(got, "truth.no_eligible")] == ["ok"]  # lumen holds nothing


def test_the_case_s_readme_and_the_flows_page_quote_the_figures_the_on_call_sees(
    flow: Flow, got: dict
) -> None:
    """sample_runs/oncall/README.md's story, its table and sentences, and docs/flows.md's, from the report
    and the files."""
    text = re.sub(r"\s+", " ", (ONCALL / "README.md").read_text("utf-8"))
    t = got["tenants"]
    small = ("harbor", "iris", "juniper", "kestrel")
    for row in t["rows"]:
        if row["tenant"] in small:
            assert (row["recall"]["a"], row["recall"]["b"], row["plan"], row["plan_share"]) == (
                1.0,
                1.0,
                "scan",
                1.0,
            )
            continue
        cells = (
            f"| {row['tenant']} | {row['n']} | {row['recall']['a']:.3f} | {row['recall']['b']:.3f} | "
            f"{row['plan']} ({row['plan_share']:.0%}) |"
        )
        assert cells in text, cells
    n_small = sum(r["n"] for r in t["rows"] if r["tenant"] in small)
    assert f"| {', '.join(small)} | {n_small} | 1.000 | 1.000 | scan (100%) |" in text
    worst = [r["tenant"] for r in t["worst"]]
    assert (
        f"{t['below_floor']['a']} tenants below 0.80 in A and {t['below_floor']['b']} in B; the worst three "
        f"are {worst[0]}, {worst[1]} and {worst[2]}"
    ) in text
    arms, cost = got["arms"], got["cost"]["arms"]
    p95, p50 = (tuple(cost[s][f"latency_{p}_ms"]["value"] for s in "ab") for p in ("p95", "p50"))
    assert (
        f"from {p95[0]:.1f} ms to {p95[1]:.1f} ms (the median {p50[0]:.1f} → {p50[1]:.1f} ms), and costs "
        f"recall@10 {arms['a']['recall']:.3f} → {arms['b']['recall']:.3f}"
    ) in text
    scored = got["paired"]["n"]
    assert scored == len(recall_apart(flow)["b"])
    (no_eligible,) = checks(got, "truth.no_eligible")
    zero = no_eligible["facts"]["count"]
    assert f"{scored} of the {scored + zero} queries scored, {zero} match nothing" in text
    (pf,) = checks(got, "truth.postfilter", "b")
    count = pf["facts"]["count"]
    assert count == got["paired"]["a_hit_b_miss"]  # every regression is one of them
    assert f"atlas's {count} ticket queries, the {count} regressions" in text
    assert f"k × s = {pf['facts']['expected_results']:.2g}" in text
    b = {r["query_id"]: r for r in rows(flow.run_b)}
    tickets = {b[q]["n_eligible"] for q in b if b[q]["filter"] == "tenant = 'atlas' AND doc_type = 'ticket'"}
    corpus = pq.read_table(ONCALL / "corpus.parquet", columns=["tenant", "doc_type"]).to_pylist()
    share = {
        c: sum(r[c] == v for r in corpus) / len(corpus)
        for c, v in (("tenant", "atlas"), ("doc_type", "ticket"))
    }
    (estimate,) = tickets
    assert f"estimated {estimate} (atlas's {share['tenant']:.0%} × tickets' {share['doc_type']:.0%})" in text
    assert f"its `n_eligible` {estimate} beside the exact 3" in text
    log = json.loads(flow.queries.with_name("q.allocation.json").read_text("utf-8"))["log"]
    assert f"| `log.jsonl` | {log['rows']} queries of one day" in text
    assert f"{log['repeats']} rows ask an earlier query again" in text
    assert f"{log['distinct']} distinct queries |" in text
    flows = re.sub(r"\s+", " ", (ROOT / "docs" / "flows.md").read_text("utf-8"))
    below = ", ".join(r["tenant"] for r in t["rows"] if round(r["recall"]["b"], 12) < FLOOR)
    granite = next(r for r in t["rows"] if r["tenant"] == "granite")
    assert f"{t['below_floor']['a']} below the floor in A, {t['below_floor']['b']} in B ({below})" in flows
    chunks = sum(r["tenant"] == "granite" for r in corpus)
    assert f"Granite's {chunks} chunks, scanned in both arms, stand at {granite['recall']['b']:.3f}" in flows


# -- the generator ----------------------------------------------------------------------------------


def generator():
    path = bundled("sample_runs") / "make_oncall.py"
    spec = importlib.util.spec_from_file_location("make_oncall", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FILES = ("corpus.parquet", "runs/a.parquet", "runs/b.parquet")


@pytest.mark.slow
def test_the_generator_reproduces_the_shipped_files(tmp_path: Path) -> None:
    """log.jsonl byte for byte; the Parquet files as tables and metadata, and byte for byte when
    written by the pyarrow that wrote the shipped ones (Parquet records its writer's version)."""
    generator().build(tmp_path)
    assert (tmp_path / "log.jsonl").read_bytes() == (ONCALL / "log.jsonl").read_bytes()
    for name in FILES:
        shipped, fresh = ONCALL / name, tmp_path / name
        assert pq.read_table(shipped).equals(pq.read_table(fresh)), name
        assert pq.read_schema(shipped).metadata == pq.read_schema(fresh).metadata, name
        if pq.read_metadata(shipped).created_by == pq.read_metadata(fresh).created_by:
            assert shipped.read_bytes() == fresh.read_bytes(), name


def test_the_case_is_small() -> None:
    size = sum(p.stat().st_size for p in ONCALL.rglob("*") if p.is_file())
    assert size < 700_000, size


def test_the_readmes_gate_fails_on_the_four_tenants_below_0_80_recall(
    flow: Flow, capsys: pytest.CaptureFixture[str]
) -> None:
    """Step 7: the README's gate line, run as written, exits 1 naming the tenants under the floor."""
    section = (
        (ROOT / "README.md").read_text("utf-8").split("## The on-call reviewer", 1)[1].split("\n## ", 1)[0]
    )
    line = re.search(r"`(triage report [^`]*--gate [^`]*)`", re.sub(r"\s+", " ", section)).group(1)
    argv = at(shlex.split(line)[1:], BESIDE, flow.truth.parent)
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 1
    gate = json.loads(capsys.readouterr().out)["gate"]
    broken = sorted(f["name"] for f in gate["floors"] if not f["holds"])
    assert gate["rate"] == "recall@10"
    assert broken == ["tenant:atlas", "tenant:borealis", "tenant:cobalt", "tenant:fjord"]
    for name in broken:
        assert name.split(":")[1] in section
