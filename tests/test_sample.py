"""The bundled sample (DESIGN §8): committed files equal a fresh run of its generator, and the
report on it tells the story the sample was built to tell."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled

TABLES = [
    "labels.parquet",
    "chunks.parquet",
    "queries.parquet",
    "runs/plain.parquet",
    "runs/headers.parquet",
    "runs/headers_k10.parquet",
]
REGRESSIONS = {"q155", "q113", "q061", "q150", "q031", "q046"}


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


def test_regenerating_reproduces_the_committed_tables(tmp_path: Path) -> None:
    _generator().build(tmp_path)
    here = bundled("sample_runs")
    for name in TABLES:
        committed, fresh = pq.read_table(here / name), pq.read_table(tmp_path / name)
        assert committed.equals(fresh), name
        assert _meta(here / name) == _meta(tmp_path / name), name
    for name in ("triage.toml", "k10.toml"):
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


def test_sample_report_tells_the_story(capsys) -> None:
    d = report(capsys)
    p = d["paired"]
    assert (p["both_hit"], p["both_miss"], p["a_miss_b_hit"], p["a_hit_b_miss"]) == (118, 36, 40, 6)
    assert (d["arms"]["a"]["hit_rate"], d["arms"]["b"]["hit_rate"]) == (0.62, 0.79)
    assert p["reconciles"] and p["mcnemar_p"] < 1e-6
    first_six = d["flips"][:6]
    assert {f["query_id"] for f in first_six} == REGRESSIONS
    assert all(f["direction"] == "hit->miss" for f in first_six)
    assert all(f["direction"] == "miss->hit" for f in d["flips"][6:])
    assert all(c["level"] == "ok" for c in d["checks"]), d["checks"]
    postfilter = next(f for f in first_six if f["query_id"] == "q031")
    assert postfilter["plan_b"] == "postfilter" and postfilter["gold_rank_b"] is None
    assert postfilter["depth_b"] < d["k"]


def test_k10_run_trips_the_k_check_and_shows_four_cells(capsys) -> None:
    d = report(capsys, str(bundled("sample_runs") / "k10.toml"))
    assert d["k"] == 5
    check = next(c for c in d["checks"] if c["code"] == "k.mismatch")
    assert check["level"] == "error" and "k=5" in check["message"] and "k=10" in check["message"]
    cells = d["k_cells"]
    assert set(cells["a"]) == set(cells["b"]) == {"5", "10"}
    assert cells["b"]["5"] == 0.79 and cells["b"]["10"] > cells["b"]["5"]
    assert main(["report", str(bundled("sample_runs") / "k10.toml"), "--strict", "--format", "json"]) == 1


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_text_and_markdown_carry_the_same_numbers(capsys, fmt: str) -> None:
    assert main(["report", "--format", fmt]) == 0
    out = capsys.readouterr().out
    for needle in ("118", "36", "40", "0.620", "0.790", "q155", "q031", "postfilter", "3.1e-07"):
        assert needle in out, needle
    assert out.index("q046") < out.index("q005")  # regressions come before wins
