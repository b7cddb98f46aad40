"""The bundled sample (docs/getting-started.md "The bundled sample"): committed files equal a fresh run of its
generator, and the report on it tells the story the sample was built to tell."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled

import sample_story as story

TABLES = [
    "labels.parquet",
    "chunks.parquet",
    "queries.parquet",
    "runs/plain.parquet",
    "runs/headers.parquet",
    "runs/headers_k10.parquet",
]


def _generator():
    path = bundled("sample_runs") / "make_sample.py"
    spec = importlib.util.spec_from_file_location("make_sample", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _meta(path: Path) -> dict[bytes, bytes]:
    meta = dict(pq.read_schema(path).metadata or {})
    # The labels file's sha256 depends on the Parquet writer's version string; checked below.
    meta.pop(b"labels_sha256", None)
    return meta


@pytest.mark.slow
def test_regenerating_reproduces_the_committed_tables(tmp_path: Path) -> None:
    _generator().build(tmp_path)
    here = bundled("sample_runs")
    for name in TABLES:
        committed, fresh = pq.read_table(here / name), pq.read_table(tmp_path / name)
        assert committed.equals(fresh), name
        assert _meta(here / name) == _meta(tmp_path / name), name
    for name in ("triage.toml", "k10.toml", "FLOORS.toml"):
        assert (here / name).read_text() == (tmp_path / name).read_text()


def test_runs_record_the_committed_labels_sha256() -> None:
    here = bundled("sample_runs")
    sha = hashlib.sha256((here / "labels.parquet").read_bytes()).hexdigest()
    for run in ("plain", "headers"):
        assert pq.read_schema(here / f"runs/{run}.parquet").metadata[b"labels_sha256"].decode() == sha


def report(capsys, *args: str) -> dict:
    rc = main(["report", *args, "--format", "json"])
    assert rc == 0
    return json.loads(capsys.readouterr().out)


def test_the_story_adds_up() -> None:
    # The story's own numbers agree with each other: cells sum to n, rates reconcile with cells,
    # the tenants partition the queries and their hits sum to each arm's hits.
    assert sum(story.PAIRED.values()) == story.N_QUERIES
    assert story.HIT_RATE_A * story.N_QUERIES == story.BOTH_HIT + story.A_HIT_B_MISS
    assert story.HIT_RATE_B * story.N_QUERIES == story.BOTH_HIT + story.A_MISS_B_HIT
    n, a, b = (sum(t[i] for t in story.TENANTS.values()) for i in range(3))
    assert (n, a, b) == (
        story.N_QUERIES,
        story.BOTH_HIT + story.A_HIT_B_MISS,
        story.BOTH_HIT + story.A_MISS_B_HIT,
    )
    below = [t for t in story.TENANTS if story.tenant_rate(t, "b") < story.FLOOR]
    assert sorted(below) == sorted(story.BELOW_FLOOR_B)
    assert len(story.REGRESSIONS) == story.A_HIT_B_MISS


def test_sample_report_tells_the_story(capsys) -> None:
    d = report(capsys)
    p = d["paired"]
    assert {key: p[key] for key in story.PAIRED} == story.PAIRED
    assert (d["arms"]["a"]["hit_rate"], d["arms"]["b"]["hit_rate"]) == (story.HIT_RATE_A, story.HIT_RATE_B)
    assert p["reconciles"] and p["mcnemar_p"] < 1e-6
    first_six = d["flips"][: story.A_HIT_B_MISS]
    assert {f["query_id"] for f in first_six} == set(story.REGRESSIONS)
    assert all(f["direction"] == "hit->miss" for f in first_six)
    assert all(f["direction"] == "miss->hit" for f in d["flips"][story.A_HIT_B_MISS :])
    assert len(d["flips"]) == story.A_HIT_B_MISS + story.A_MISS_B_HIT
    for f in first_six:
        assert f["tenant"] == story.REGRESSIONS[f["query_id"]][0], f
        assert (f["gold_rank_a"], f["gold_rank_b"]) == story.REGRESSION_RANKS[f["query_id"]], f
    # Two warnings, both planted: the gold of most queries is in tuned documents, and the
    # generated part of the query set reuses its chunks' words.
    warned = sorted(c["code"] for c in d["checks"] if c["level"] != "ok")
    assert warned == ["holdout.tuned_targets", "queries.generated_like"], d["checks"]
    generated = [c for c in d["checks"] if c["code"] == "queries.generated_like" and c["level"] != "ok"]
    assert [c["facts"]["group"] for c in generated] == ["queries of origin 'generated'"]
    split = d["holdout"]
    assert (split["n_held_out"], split["n_tuned"], split["n_unknown"]) == (story.HELD_OUT, story.TUNED, 0)
    assert {key: split["paired"][key] for key in story.PAIRED} == story.HELD_OUT_PAIRED
    postfilter = next(f for f in first_six if f["query_id"] == story.POSTFILTER_QUERY)
    assert postfilter["plan_b"] == "postfilter" and postfilter["gold_rank_b"] is None
    assert postfilter["depth_b"] == story.POSTFILTER_DEPTH_B < d["k"] == story.K


@pytest.mark.slow
def test_k10_run_trips_the_k_check_and_shows_four_cells(capsys) -> None:
    d = report(capsys, str(bundled("sample_runs") / "k10.toml"))
    assert d["k"] == story.K
    check = next(c for c in d["checks"] if c["code"] == "k.mismatch")
    assert check["level"] == "error" and "k=5" in check["message"] and "k=10" in check["message"]
    assert d["k_cells"] == story.K10_CELLS
    assert main(["report", str(bundled("sample_runs") / "k10.toml"), "--strict", "--format", "json"]) == 1


def rows(out: str) -> list[list[str]]:
    """Every table row of a text or Markdown report, in order: its cells, stripped. Rows are read
    from the `|` (Markdown) or `│` (text) separators; rule lines are skipped."""
    found = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith(("|", "│")) and not set(line) <= set("|-─│ "):
            found.append([c.strip() for c in line.replace("│", "|").strip("|").split("|")])
    return found


def starting(table: list[list[str]], first: str) -> list[list[str]]:
    return [r for r in table if r[0] == first]


def rank(r: int | None) -> str:
    return "absent" if r is None else f"{r} (>k)" if r > story.K else str(r)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_text_and_markdown_carry_the_same_numbers(capsys, fmt: str) -> None:
    assert main(["report", "--format", fmt]) == 0
    out = capsys.readouterr().out
    table = rows(out)
    # The paired table: rows A hit / A miss, columns B hit / B miss.
    assert starting(table, "A hit") == [["A hit", str(story.BOTH_HIT), str(story.A_HIT_B_MISS)]]
    assert starting(table, "A miss") == [["A miss", str(story.A_MISS_B_HIT), str(story.BOTH_MISS)]]
    # The metrics table: hit rate in A, in B, and the difference.
    delta = f"{story.HIT_RATE_B - story.HIT_RATE_A:+.3f}"
    assert starting(table, f"hit_rate@{story.K}") == [
        [f"hit_rate@{story.K}", f"{story.HIT_RATE_A:.3f}", f"{story.HIT_RATE_B:.3f}", delta]
    ]
    assert f"p = {story.MCNEMAR_P}" in out
    # The flips: the six regressions first, each with its tenant, its gold ranks, B's plan and the
    # unjudged ids in each arm's top k (A/B: B's never 0 here, each regression possibly false).
    # Columns: # | query | text | direction | tenant | gold A | gold B | plan A | plan B | unjudged | hints
    flips = [r for r in table if len(r) == 11 and r[0].isdigit()]
    assert {r[1] for r in flips[: story.A_HIT_B_MISS]} == set(story.REGRESSIONS)
    for r in flips[: story.A_HIT_B_MISS]:
        ranks = story.REGRESSION_RANKS[r[1]]
        assert r[3:7] == ["hit→miss", story.REGRESSIONS[r[1]][0], rank(ranks[0]), rank(ranks[1])], r
        assert int(r[9].split("/")[1]) > 0, r
        assert r[10] not in ("", "–"), r  # each regression has a hint
    assert flips[story.A_HIT_B_MISS][1] == story.FIRST_WIN
    postfilter = next(r for r in flips if r[1] == story.POSTFILTER_QUERY)
    assert postfilter[8] == "postfilter" and postfilter[10].split()[0] == "short"
    # The tenants: n, its share of the scored queries (n %) and both hit rates on its own row.
    scored = sum(n for n, _, _ in story.TENANTS.values())
    for name, (n, _, _) in story.TENANTS.items():
        got = next(r for r in table if len(r) > 4 and r[1] == name)
        rates = [f"{float(story.tenant_rate(name, arm)):.3f}" for arm in "ab"]
        assert got[2:6] == [str(n), f"{n / scored:.0%}", *rates], got


@pytest.mark.slow
def test_sample_report_quotes_the_real_queries(capsys) -> None:
    d = report(capsys)
    rows = {o["origin"]: o for o in d["origins"]}
    for origin, (n, hits_a, hits_b) in story.ORIGINS.items():
        row = rows[origin]
        assert row["paired"]["n"] == n
        assert (row["arms"]["a"]["hit_rate"], row["arms"]["b"]["hit_rate"]) == (hits_a / n, hits_b / n)
    assert rows["generated"]["paired"]["a_hit_b_miss"] == rows["generated"]["paired"]["a_miss_b_hit"] == 0
    q = d["origin_quote"]
    assert q["quote"] == "real" and (q["n_real"], q["n_generated"]) == (160, 40)
    assert q["gap"]["a"] == pytest.approx(36 / 40 - story.ORIGINS["real"][1] / 160)
    main(["report"])
    text = capsys.readouterr().out
    assert "Quote the real figure: hit rate A 0.550 / B 0.762 on 160 real queries" in text
