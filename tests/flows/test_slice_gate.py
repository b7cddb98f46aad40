"""Slices and tenants compared on the decision measure (Δ, p, BH q per slice) and the gate on
measures by name (`[measures."NAME"]`: floor, max_drop with a Holm-corrected paired t, the MDE warning)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from triage.cli.main import main
from triage.core.measures.corrections import Correction, adjust
from triage.core.measures.paired import mcnemar_exact

from conftest import write_evaluation

# tenant -> (queries, losses: A's gold at rank 1, B's at rank 2; wins: A's at rank 2, B's at 1)
SMALL_NOISY = {"t": (20, 3, 2)}  # RR: Δ = (−1.5 + 1.0) / 20 = −0.025, one loss more than wins
LARGE_CONSISTENT = {"t": (400, 30, 10)}  # RR: Δ = (−15 + 5) / 400 = −0.025 again


def write_ranks(folder: Path, tenants: dict[str, tuple[int, int, int]]) -> Path:
    """Every query has one gold id; A and B put it at rank 1 or 2 (a miss at k = 1: hit rate at 1
    and RR move together)."""
    rows_a, rows_b, labels, queries = [], [], [], []
    qn = 0
    for tenant, (n, losses, wins) in tenants.items():
        for i in range(n):
            qn += 1
            q, gold, other = f"q{qn:04d}", f"gold{qn}", f"x{qn}"
            first, second = [gold, other], [other, gold]
            a, b = (first, second) if i < losses else (second, first) if i < losses + wins else (first, first)
            rows_a.append({"query_id": q, "retrieved": a})
            rows_b.append({"query_id": q, "retrieved": b})
            labels.append({"query_id": q, "chunk_id": gold, "relevance": 1})
            queries.append({"query_id": q, "text": f"question {qn}", "tenant": tenant})
    return write_evaluation(folder, rows_a, rows_b, labels, queries, run_k=1, k=1)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["report", *args, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def gate_file(folder: Path, text: str) -> Path:
    path = folder / "gate.toml"
    path.write_text(text, "utf-8")
    return path


TENANTS = {"acme": (30, 6, 1), "globex": (25, 0, 0), "initech": (40, 1, 9), "solo": (1, 1, 0)}


@pytest.mark.slow
def test_each_tenant_and_slice_has_the_hit_rate_delta_mcnemar_p_and_bh_q(tmp_path: Path, capsys) -> None:
    code, d = run(capsys, str(write_ranks(tmp_path, TENANTS)))
    assert code == 0
    rows = {r["tenant"]: r for r in d["tenants"]["rows"]}
    by_slice = {s["value"]: s for s in d["slices"]["tenant"]}
    ps = {}
    for name, (n, losses, wins) in TENANTS.items():
        c = rows[name]["compare"]["hit_rate@1"]
        assert by_slice[name]["compare"] == rows[name]["compare"]  # one comparison, two places
        assert c["n"] == n and c["delta"] == pytest.approx((wins - losses) / n)
        if name == "solo":
            assert c["p"] is None and c["q_bh"] is None and c["reason"] == "fewer_than_2_scored_queries"
        elif losses == wins == 0:
            assert c["p"] is None and c["reason"] == "all_differences_zero"
        else:
            assert c["test"] == "mcnemar" and c["p"] == pytest.approx(mcnemar_exact(losses, wins))
            ps[name] = c["p"]
    names = list(ps)
    q = adjust(np.array([ps[x] for x in names]), Correction.BH)  # BH over the tested tenants only
    for x, want in zip(names, q, strict=True):
        assert rows[x]["compare"]["hit_rate@1"]["q_bh"] == pytest.approx(want)
    assert q[names.index("acme")] > q[names.index("initech")]  # 6:1 moves less surely than 1:9


@pytest.mark.slow
def test_a_named_measure_is_the_decision_measure_with_a_paired_t(tmp_path: Path, capsys) -> None:
    code, d = run(capsys, str(write_ranks(tmp_path, TENANTS)), "--measures", "RR,P@1")
    assert code == 0
    row = next(r for r in d["tenants"]["rows"] if r["tenant"] == "acme")
    assert list(row["compare"]) == ["RR"]
    n, losses, wins = TENANTS["acme"]
    diff = np.array([-0.5] * losses + [0.5] * wins + [0.0] * (n - losses - wins))
    assert row["compare"]["RR"]["test"] == "t"
    assert row["compare"]["RR"]["p"] == pytest.approx(stats.ttest_1samp(diff, 0).pvalue)


@pytest.mark.slow
def test_the_markdown_tenant_table_shows_delta_and_q_marked_beyond_noise(tmp_path: Path, capsys) -> None:
    assert (
        main(
            [
                "report",
                str(write_ranks(tmp_path, {"big": (200, 0, 40), "calm": (50, 1, 1)})),
                "--format",
                "markdown",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    big = next(
        line for line in text.splitlines() if line.startswith("| 2 | big") or line.startswith("| 1 | big")
    )
    calm = next(line for line in text.splitlines() if "| calm |" in line)
    assert "+0.20 q \\<.01\\*" in big and "\\*" not in calm.split("|")[-3]
    assert "Δ q compares B with A on hit\\_rate@1" in text


GATE = """[measures.RR]
max_drop = {max_drop}
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tenants", "max_drop", "holds", "blind"),
    [
        (LARGE_CONSISTENT, 0.01, False, True),  # Δ −0.025, p ≈ 0.002: a significant drop fails
        (SMALL_NOISY, 0.01, True, True),  # the same Δ on 20 noisy queries: not significant, holds
        (LARGE_CONSISTENT, 0.05, True, False),  # within max_drop; max_drop above the MDE: no warning
    ],
)
def test_a_drop_fails_only_when_significant(tmp_path, capsys, tenants, max_drop, holds, blind) -> None:
    path = write_ranks(tmp_path, tenants)
    code, d = run(capsys, str(path), "--gate", str(gate_file(tmp_path, GATE.format(max_drop=max_drop))))
    (m,) = d["gate"]["measures"]
    assert m["delta"] == pytest.approx(-0.025)
    n = tenants["t"][0]
    a = np.ones(n)
    b = a.copy()
    _, losses, wins = tenants["t"]
    b[:losses], a[losses : losses + wins] = 0.5, 0.5
    assert m["p"] == pytest.approx(stats.ttest_rel(b, a).pvalue)
    assert m["drop_holds"] is holds and d["gate"]["holds"] is holds and code == (0 if holds else 1)
    assert (m["p_holm"] < 0.05) is (not holds or max_drop == 0.05)
    assert m["blind"] is blind and m["blind"] is (max_drop < m["mde80"])
    warned = [c for c in d["checks"] if c["code"] == "gate.mde" and c["level"] == "warning"]
    assert bool(warned) is blind
    if blind:
        assert "cannot see what it promises to stop" in warned[0]["message"]


@pytest.mark.slow
def test_holm_across_the_gated_measures_and_the_floor(tmp_path: Path, capsys) -> None:
    path = write_ranks(tmp_path, LARGE_CONSISTENT)
    text = (
        '[measures.RR]\nmax_drop = 0.01\n[measures."P@1"]\nmax_drop = 0.01\n'
        '[measures."nDCG@1"]\nfloor = 0.99\n'
    )
    code, d = run(capsys, str(path), "--gate", str(gate_file(tmp_path, text)))
    assert code == 1
    got = {m["name"]: m for m in d["gate"]["measures"]}
    assert set(got) == {"RR", "P@1", "nDCG@1"}  # computed though --measures names none
    raw = np.array([got["RR"]["p"], got["P@1"]["p"]])
    assert [got["RR"]["p_holm"], got["P@1"]["p_holm"]] == pytest.approx(adjust(raw, Correction.HOLM))
    assert got["nDCG@1"]["p_holm"] is None and got["nDCG@1"]["floor_holds"] is False
    assert got["nDCG@1"]["mean_b"] == pytest.approx(1 - 30 / 400)
    assert not d["arms"]["a"].get("measures")  # the gate's measures stay out of the arms' means


@pytest.mark.slow
def test_a_floor_on_a_measure_holds_and_floors_keep_working(tmp_path: Path, capsys) -> None:
    path = write_ranks(tmp_path, LARGE_CONSISTENT)
    text = "[floors]\noverall = 0.5\n[measures.RR]\nfloor = 0.9\n"
    code, d = run(capsys, str(path), "--gate", str(gate_file(tmp_path, text)))
    assert code == 0 and d["gate"]["holds"] and d["gate"]["floors"][0]["name"] == "overall"
    assert d["gate"]["measures"][0]["floor_holds"] and d["gate"]["measures"][0]["max_drop"] is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[measures.RR]\nflor = 0.5\n", "[measures.RR]: unknown key 'flor'"),
        ("[measures.RR]\nfloor = 'high'\n", "[measures.RR]: floor = 'high' must be a number"),
        ("[measures.RR]\nmax_drop = -0.1\n", "[measures.RR]: max_drop = -0.1 must not be negative"),
        ('[measures."nDGC@10"]\nfloor = 0.5\n', "unknown measure 'nDGC@10'"),
        ("[measures.RR]\n", "[measures.RR]: 'RR' needs a table with floor and/or max_drop"),
        ("measures = 3\n", "[measures]: measures must be tables"),
        ("[floors]\noverall = 0.5\n[floor]\nx = 1\n", "unknown table or key 'floor'"),
        ("[measures.RR]\nfloor = 0.5\n[measures.recip_rank]\nfloor = 0.5\n", "another table names too"),
    ],
)
def test_a_malformed_gate_file_exits_2_naming_the_file_and_key(tmp_path: Path, capsys, text, says) -> None:
    path = gate_file(tmp_path, text)
    assert main(["report", "--gate", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and says in err and "Traceback" not in err
