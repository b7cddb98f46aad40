"""Gate floors that fire on noise (`gate.noise`) and `triage report --suggest-floors`."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.gate.propose import toml_key
from triage.core.measures.intervals import wilson_one

import sample_story as story
from conftest import write_evaluation

# tenant -> (scored queries, hits in B); A hits every query. "big" is the done-when's 118 queries.
TENANTS = {"big": (118, 94), "mid": (40, 30), "perfect": (31, 31), "small": (12, 6)}


def write_eval(folder: Path, tenants: dict[str, tuple[int, int]] = TENANTS) -> Path:
    rows_a, rows_b, labels, queries = [], [], [], []
    qn = 0
    for tenant, (n, hits_b) in tenants.items():
        for i in range(n):
            qn += 1
            q, gold = f"q{qn:04d}", f"gold{qn}"
            rows_a.append({"query_id": q, "retrieved": [gold, f"x{qn}"]})
            rows_b.append({"query_id": q, "retrieved": [gold, f"x{qn}"] if i < hits_b else [f"x{qn}"]})
            labels.append({"query_id": q, "chunk_id": gold, "relevance": 1})
            queries.append({"query_id": q, "text": f"question {qn}", "tenant": tenant})
    return write_evaluation(folder, rows_a, rows_b, labels, queries)


def se(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


def report(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def gate(folder: Path, text: str) -> Path:
    path = folder / "floors.toml"
    path.write_text(text, "utf-8")
    return path


def noise(d: dict) -> list[dict]:
    return [c for c in d["checks"] if c["code"] == "gate.noise"]


@pytest.mark.slow
def test_a_floor_001_under_a_slice_of_118_queries_fires_on_noise(tmp_path: Path, capsys) -> None:
    path = write_eval(tmp_path)
    p, n = 94 / 118, 118
    floors = gate(tmp_path, f'[floors]\n"tenant:big" = {p - 0.01:.4f}\n')
    d = report(capsys, str(path), "--gate", str(floors))
    (row,) = d["gate"]["floors"]
    assert row["n"] == n and row["holds"] and row["noisy"]
    assert row["distance_se"] == pytest.approx((p - round(p - 0.01, 4)) / se(p, n))
    (check,) = noise(d)
    assert (
        check["level"] == "warning"
        and check["facts"]["slice"] == "tenant:big"
        and check["facts"]["floor"] == round(p - 0.01, 4)
    )
    assert f"{row['distance_se']:.1f} standard errors below" in check["message"]
    assert "fires on noise" in check["message"] and "n = 118" in check["message"]
    # The text and Markdown gates mark it too.
    assert main(["report", str(path), "--gate", str(floors)]) == 0
    text = capsys.readouterr().out
    assert "fires on noise" in text and f"+{row['distance_se']:.1f} SE" in text
    assert main(["report", str(path), "--gate", str(floors), "--format", "markdown"]) == 0
    assert "holds, fires on noise" in capsys.readouterr().out


def test_floors_two_standard_errors_away_do_not_warn(tmp_path: Path, capsys) -> None:
    path = write_eval(tmp_path)
    p, n = 94 / 118, 118
    far = p - 2.05 * se(p, n)  # just beyond 2 SE below; and one broken by more than 2 SE above
    above = p + 2.05 * se(p, n)
    floors = gate(tmp_path, f'[floors]\n"tenant:big" = {far:.6f}\n"tenant:mid" = 0.5\n')
    d = report(capsys, str(path), "--gate", str(floors))
    assert [c["level"] for c in noise(d)] == ["ok"] and not any(f["noisy"] for f in d["gate"]["floors"])
    floors = gate(tmp_path, f'[floors]\n"tenant:big" = {above:.6f}\n')
    d = report(capsys, str(path), "--gate", str(floors))
    (row,) = d["gate"]["floors"]
    assert not row["holds"] and not row["noisy"] and row["distance_se"] < -2
    # A floor broken by less than 2 SE is noise too, and says B is below it.
    floors = gate(tmp_path, f'[floors]\n"tenant:big" = {p + 0.01:.6f}\n')
    (check,) = noise(report(capsys, str(path), "--gate", str(floors)))
    assert check["level"] == "warning" and "standard errors above" in check["message"]


def test_a_slice_at_100_percent_has_no_distance_and_no_noise(tmp_path: Path, capsys) -> None:
    path = write_eval(tmp_path)
    floors = gate(tmp_path, '[floors]\n"tenant:perfect" = 0.99\n')
    d = report(capsys, str(path), "--gate", str(floors))
    (row,) = d["gate"]["floors"]
    assert row["noise_band"] == 0 and row["distance_se"] is None and not row["noisy"]
    assert [c["level"] for c in noise(d)] == ["ok"]


def test_suggested_floors_round_trip_through_the_gate(tmp_path: Path, capsys) -> None:
    path = write_eval(tmp_path)
    assert main(["report", str(path), "--suggest-floors"]) == 0
    text = capsys.readouterr().out
    floors = tomllib.loads(text)["floors"]
    # Independently: p − 3·SE (the Wilson low end where SE is 0), rounded down to 0.01, for n ≥ 30.
    expected = {}
    total, hits = sum(n for n, _ in TENANTS.values()), sum(h for _, h in TENANTS.values())
    for name, n, h in [("overall", total, hits), *((f"tenant:{t}", n, h) for t, (n, h) in TENANTS.items())]:
        if n >= 30:
            p = h / n
            below = p - 3 * se(p, n) if 0 < h < n else wilson_one(h, n)[0]
            expected[name] = math.floor(below * 100) / 100
    assert floors == pytest.approx(expected, abs=1e-12)
    assert floors["tenant:perfect"] < 1.0  # the Wilson term: SE is 0 at 31 of 31
    assert "tenant:small" not in floors and '#   "tenant:small": n 12' in text
    written = tmp_path / "FLOORS.toml"
    written.write_text(text, "utf-8")
    d = report(capsys, str(path), "--gate", str(written))
    assert d["gate"]["holds"] and {f["name"] for f in d["gate"]["floors"]} == set(expected)
    assert [c["level"] for c in noise(d)] == ["ok"]
    assert all(f["distance_se"] is None or f["distance_se"] >= 3 for f in d["gate"]["floors"])


def test_floor_se_and_min_n_change_the_proposal(tmp_path: Path, capsys) -> None:
    path = write_eval(tmp_path)
    assert main(["report", str(path), "--suggest-floors", "--floor-se", "1", "--floor-min-n", "10"]) == 0
    floors = tomllib.loads(capsys.readouterr().out)["floors"]
    p = 6 / 12
    assert floors["tenant:small"] == math.floor((p - se(p, 12)) * 100) / 100
    p = 94 / 118
    assert floors["tenant:big"] == math.floor((p - se(p, 118)) * 100) / 100
    with pytest.raises(SystemExit) as refused:
        main(["report", str(path), "--suggest-floors", "--floor-se", "0"])
    assert refused.value.code == 2 and "--floor-se: 0 is not a positive number" in capsys.readouterr().err


def test_slice_names_that_need_quoting_read_back(tmp_path: Path, capsys) -> None:
    odd = {'a"b\\c': (30, 20), "line\nbreak\u202e": (30, 25), "*": (30, 30), "plain-name": (30, 15)}
    path = write_eval(tmp_path, odd)
    assert main(["report", str(path), "--suggest-floors"]) == 0
    text = capsys.readouterr().out
    assert "\u202e" not in text and "\\u202E" in text
    floors = tomllib.loads(text)["floors"]
    assert {'tenant:a"b\\c', "tenant:line\nbreak\u202e", "tenant:plain-name"} <= set(floors)
    assert "tenant:*" not in floors and "reads as every slice" in text
    written = tmp_path / "FLOORS.toml"
    written.write_text(text, "utf-8")
    assert report(capsys, str(path), "--gate", str(written))["gate"]["holds"]
    assert toml_key("overall") == "overall" and tomllib.loads(f"{toml_key('x:y')} = 1")["x:y"] == 1


def test_too_few_queries_leave_the_floors_table_empty(tmp_path: Path, capsys) -> None:
    path = write_eval(tmp_path, {"small": (12, 6)})
    assert main(["report", str(path), "--suggest-floors"]) == 0
    text = capsys.readouterr().out
    assert tomllib.loads(text)["floors"] == {} and "no slice has enough queries" in text


def test_the_sample_floors_file_warns_for_its_one_noisy_floor(capsys) -> None:
    floors = bundled("sample_runs") / "FLOORS.toml"
    d = report(capsys, "--gate", str(floors))
    assert d["gate"]["holds"]
    assert [f["name"] for f in d["gate"]["floors"] if f["noisy"]] == [story.NOISY_FLOOR]
    (check,) = noise(d)
    assert check["level"] == "warning" and check["facts"]["slice"] == story.NOISY_FLOOR
    assert main(["report", "--suggest-floors"]) == 0
    proposed = tomllib.loads(capsys.readouterr().out)["floors"]
    assert proposed["overall"] < story.HIT_RATE_B - 2 * se(story.HIT_RATE_B, story.N_QUERIES)
