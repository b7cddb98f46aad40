"""Wilson 95% intervals for hit rates: the core against an independent
computation, and the interval in the JSON, text and Markdown reports, the gate and the app."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from triage.cli.main import main
from triage.core.measures.intervals import Z95, wilson, wilson_one
from triage.core.views.slices import tenants
from triage.report import cells
from triage.ui.app import TriageApp
from triage.ui.screens.slices import TenantsScreen
from triage.ui.table import VirtualTable

from app_helpers import wait_loaded
from conftest import frozen_evaluation, write_evaluation

try:
    from statsmodels.stats.proportion import proportion_confint
except ImportError:  # not installed: the score test's roots below are the independent computation
    proportion_confint = None


def score_roots(x: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson interval as the two roots in p of (x/n − p)² = z²·p(1 − p)/n, by the quadratic
    formula: (1 + z²/n)p² − (2x/n + z²/n)p + (x/n)² = 0 (a different route from core/intervals)."""
    if proportion_confint is not None:
        low, high = proportion_confint(x, n, alpha=0.05, method="wilson")
        return float(low), float(high)
    ph = x / n
    a, b, c = 1 + z * z / n, -(2 * ph + z * z / n), ph * ph
    root = math.sqrt(b * b - 4 * a * c)
    return max(0.0, (-b - root) / (2 * a)), min(1.0, (-b + root) / (2 * a))


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [(5, 5, 0.566, 1.000), (0, 5, 0.000, 0.434), (50, 100, 0.404, 0.596), (24, 34, 0.538, 0.832)],
)
def test_known_intervals(x: int, n: int, low: float, high: float) -> None:
    got = wilson_one(x, n)
    assert round(got[0], 3) == low and round(got[1], 3) == high


def test_the_core_matches_the_score_test_roots_over_a_grid() -> None:
    n = np.repeat(np.arange(1, 61), np.arange(1, 61) + 1)
    x = np.concatenate([np.arange(m + 1) for m in range(1, 61)])
    low, high = wilson(x, n)
    want = np.array([score_roots(int(a), int(b)) for a, b in zip(x, n, strict=True)])
    assert np.allclose(low, want[:, 0], atol=1e-9) and np.allclose(high, want[:, 1], atol=1e-9)
    assert ((low <= x / n) & (x / n <= high)).all() and (low >= 0).all() and (high <= 1).all()
    assert Z95 == 1.959964


def test_n_zero_gives_no_interval_and_one_extreme_is_exact() -> None:
    low, high = wilson(np.array([0, 0, 3]), np.array([0, 3, 3]))
    assert math.isnan(low[0]) and math.isnan(high[0])
    assert low[1] == 0.0 and high[2] == 1.0 and 0 < high[1] < 1 and 0 < low[2] < 1
    assert all(math.isnan(v) for v in wilson_one(0, 0))


def write_tenants(folder: Path) -> Path:
    """Tenant "perfect" at 5/5 in B (A 4/5), tenant "large" at 18/20 in B (A 18/20)."""
    rows_a, rows_b, labels, queries = [], [], [], []
    spec = [("perfect", 5, 4, 5), ("large", 20, 18, 18)]
    qn = 0
    for tenant, n, hits_a, hits_b in spec:
        for i in range(n):
            qn += 1
            q, gold = f"q{qn:03d}", f"{tenant}/gold{qn}"
            other = [f"{tenant}/other{qn}-{j}" for j in range(5)]
            rows_a.append({"query_id": q, "retrieved": [gold, *other[:4]] if i < hits_a else other})
            rows_b.append({"query_id": q, "retrieved": [gold, *other[:4]] if i < hits_b else other})
            labels.append({"query_id": q, "chunk_id": gold, "relevance": 1})
            queries.append({"query_id": q, "text": f"question {qn}", "tenant": tenant})
    return write_evaluation(folder, rows_a, rows_b, labels, queries)


def report_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_a_tenant_at_5_of_5_gets_an_interval_not_a_zero_band(tmp_path: Path, capsys) -> None:
    path = write_tenants(tmp_path)
    d = report_json(capsys, str(path))
    perfect = next(r for r in d["tenants"]["rows"] if r["tenant"] == "perfect")
    assert perfect["noise_band_b"] == 0.0  # kept, with its meaning: one standard error, 0 here
    assert round(perfect["wilson_low_b"], 3) == 0.566 and perfect["wilson_high_b"] == 1.0
    # Overall per arm: A 22/25, B 23/25; slices carry both arms.
    for side, hits in (("a", 22), ("b", 23)):
        arm = d["arms"][side]
        assert "noise_band" in arm
        assert (arm["wilson_low"], arm["wilson_high"]) == pytest.approx(score_roots(hits, 25), abs=1e-9)
    row = next(s for s in d["slices"]["tenant"] if s["value"] == "perfect")
    assert (row["a"]["wilson_low"], row["a"]["wilson_high"]) == pytest.approx(score_roots(4, 5), abs=1e-9)
    assert row["b"]["wilson_low"] == perfect["wilson_low_b"] and "noise_band" in row["b"]

    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "[0.566, 1.000]" in text and "±0.000" not in text
    assert main(["report", str(path), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert r"\[0.566, 1.000\]" in md and "±" not in md  # brackets escaped: Markdown shows them


def test_tenants_ordered_by_the_interval_low_end_put_the_small_sure_tenant_first(
    tmp_path: Path, capsys
) -> None:
    path = write_tenants(tmp_path)
    by_rate = report_json(capsys, str(path))["tenants"]
    assert by_rate["order"] == "hit_rate_b" and [r["tenant"] for r in by_rate["rows"]] == ["large", "perfect"]
    by_low = report_json(capsys, str(path), "--tenants-by", "lower")["tenants"]
    assert by_low["order"] == "wilson_low_b"
    assert [r["tenant"] for r in by_low["rows"]] == ["perfect", "large"]  # 0.566 < 0.699
    assert by_low["worst"][0]["tenant"] == "perfect" and by_low["below_floor"] == by_rate["below_floor"]
    assert main(["report", str(path), "--tenants-by", "lower"]) == 0
    assert "worst first by the low end of B's 95% interval" in capsys.readouterr().out


def test_the_core_tenants_carry_the_interval_of_their_own_counts(tmp_path: Path) -> None:
    t = tenants(frozen_evaluation(write_tenants(tmp_path)))
    assert t is not None
    got = {x.name: (x.slice.b.wilson_low, x.slice.b.wilson_high) for x in t.rows}
    assert got["large"] == pytest.approx(score_roots(18, 20), abs=1e-9)
    assert got["perfect"] == pytest.approx(score_roots(5, 5), abs=1e-9)


def test_the_gate_shows_b_s_interval_for_each_floor(tmp_path: Path, capsys) -> None:
    path = write_tenants(tmp_path)
    gate = tmp_path / "floors.toml"
    gate.write_text('[floors]\noverall = 0.95\n"tenant:perfect" = 0.9\n', "utf-8")
    d = report_json(capsys, str(path), "--gate", str(gate))
    floors = {f["name"]: f for f in d["gate"]["floors"]}
    assert (floors["overall"]["wilson_low"], floors["overall"]["wilson_high"]) == pytest.approx(
        score_roots(23, 25), abs=1e-9
    )
    assert round(floors["tenant:perfect"]["wilson_low"], 3) == 0.566
    assert main(["report", str(path), "--gate", str(gate)]) == 1
    out = capsys.readouterr().out
    assert cells.interval(*score_roots(23, 25)) in out


def test_cells_spell_an_interval_and_nothing_when_undefined() -> None:
    assert cells.interval(0.5381, 0.8324) == "[0.538, 0.832]"
    assert cells.rate_interval(0.7059, 0.5381, 0.8324) == "0.706 [0.538, 0.832]"
    assert cells.interval(None, None) == cells.NONE and cells.rate_interval(None, None, None) == cells.NONE


@pytest.mark.slow
async def test_l_on_the_tenants_screen_orders_by_the_interval_low_end() -> None:
    app = TriageApp()  # the bundled sample: harbor-clinic, 5 of 6 in B, is sure of the least
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("t")
        assert isinstance(app.screen, TenantsScreen)
        table = app.screen.query_one(VirtualTable)
        first = table.cells(0)
        assert first[1] == "acme-legal" and "[0.538, 0.832]" in first
        await pilot.press("l")
        assert table.cells(0)[1] == "harbor-clinic"
        interval = [c.title for c in table.columns].index("B 95%")
        lows = [float(table.cells(i)[interval][1:6]) for i in range(table.count)]
        assert lows == sorted(lows)
        await pilot.press("l")
        assert table.cells(0)[1] == "acme-legal"
