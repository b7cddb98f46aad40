"""One call computes a report, the gate's verdicts included (workspace/results.py), for the CLI, the
Python API (`report(gate=…)`) and the app (`Session.results_of`): the three give the same numbers,
the gate is judged on the slices already computed, and report/build.py only maps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_slice_gate import write_ranks

import triage
from triage.cli.main import main
from triage.core.bundled import bundled, sample_spec
from triage.core.errors import InputError
from triage.core.gate import apply
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.manifest import from_manifest
from triage.core.views import slices as slices_module
from triage.report.build import report_of
from triage.report.model import dumps_report
from triage.workspace import results as results_module
from triage.workspace.results import compute
from triage.workspace.session import Session, open_session
from triage.workspace.snapshot import open_snapshot

SAMPLE = bundled("sample_runs")
# acme: 6 losses, 1 win (B 0.800 of 30); globex: no change (1.000 of 25); initech: B gains.
TENANTS = {"acme": (30, 6, 1), "globex": (25, 0, 0), "initech": (40, 1, 9)}


def _gate(folder: Path, text: str) -> Path:
    path = folder / "floors.toml"
    path.write_text(text, "utf-8")
    return path


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["report", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _no_paths(report: dict) -> dict:
    out = json.loads(json.dumps(report))
    for arm in ("a", "b"):
        del out["arms"][arm]["path"]
    del out["labels"]["path"]
    return out


@pytest.fixture
def ranked(tmp_path: Path) -> Path:
    return write_ranks(tmp_path, TENANTS)


def test_the_apis_gate_is_the_clis_and_fails_as_it_exits(ranked: Path, tmp_path: Path, capsys) -> None:
    # acme's B (0.800) is under its named floor; every other tenant clears "*"; RR must not drop.
    gate = _gate(
        tmp_path,
        '[floors]\noverall = 0.5\n"tenant:*" = 0.7\n"tenant:acme" = 0.9\n[measures."RR"]\nmax_drop = 0.2\n',
    )
    code, cli = _cli(capsys, str(ranked), "--gate", str(gate))
    report = triage.open(ranked).report(gate=gate)
    assert code == 1 and report.gate is not None and not report.gate.holds
    assert report.to_json() == json.loads(dumps_report(report)) and _no_paths(
        json.loads(dumps_report(report))
    ) == _no_paths(cli)
    # Broken first, then the rest in the file's order (a key's "*": its slices, largest first).
    assert [f.name for f in report.gate.broken] == ["tenant:acme"]
    assert [f.name for f in report.gate.floors][1:] == ["overall", "tenant:initech", "tenant:globex"]
    assert [m.name for m in report.gate.measures] == ["RR"] and report.gate.measures[0].holds
    assert report.gate.path == gate
    codes = [c.code for c in report.checks]
    assert "gate.noise" in codes and "gate.mde" in codes  # the gate's checks join the report's
    levels = [c.level.rank for c in report.checks]
    assert levels == sorted(levels)  # errors first, the gate's among them
    plain = triage.open(ranked).report()
    assert plain.gate is None and "gate.noise" not in {c.code for c in plain.checks}


def test_a_gate_that_holds_leaves_the_rest_of_the_report_as_it_was(ranked: Path, tmp_path: Path) -> None:
    gate = _gate(tmp_path, '[floors]\n"tenant:*" = 0.5\n')
    ev = triage.open(ranked)
    gated, plain = ev.report(gate=str(gate)), ev.report()
    assert gated.gate is not None and gated.gate.holds and gated.gate.evaluated
    a, b = gated.to_json(), plain.to_json()
    assert [c for c in a.pop("checks") if not c["code"].startswith("gate.")] == b.pop("checks")
    assert a.pop("gate") is not None and b.pop("gate") is None
    assert a == b


def test_the_apis_gate_is_refused_as_the_cli_refuses_it(ranked: Path, tmp_path: Path) -> None:
    ev = triage.open(ranked)
    with pytest.raises(TypeError, match="gate must be a path"):
        ev.report(gate=3)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="does not exist") as missing:
        ev.report(gate=tmp_path / "nowhere.toml")
    assert "nowhere.toml" in missing.value.message
    typo = _gate(tmp_path, '[floors]\n"tenant:acne" = 0.5\n')
    with pytest.raises(InputError, match="names no slice") as named:
        ev.report(gate=typo)
    assert "tenant:acne" in named.value.message and "acme" in named.value.message
    bad = _gate(tmp_path, '[measures."RR"]\nfloor = 2\n')
    with pytest.raises(InputError, match="out of reach"):
        ev.report(gate=bad)


def test_the_gate_is_judged_on_the_slices_already_computed(ranked: Path, tmp_path: Path, monkeypatch) -> None:
    """`triage report --gate` slices each key once (`all_slices`); the gate slices nothing again."""
    sliced: list[str] = []
    real = slices_module.slices
    monkeypatch.setattr(apply, "slices", lambda ev, key: (sliced.append(key), real(ev, key))[1])
    everything: list[int] = []
    real_all = results_module.all_slices
    monkeypatch.setattr(results_module, "all_slices", lambda ev: (everything.append(1), real_all(ev))[1])
    gate = _gate(tmp_path, '[floors]\n"tenant:*" = 0.5\n"tenant:acme" = 0.6\n')
    assert main(["report", str(ranked), "--gate", str(gate), "--format", "json"]) == 0
    assert everything == [1] and sliced == []
    # A key the evaluation has no column for is not among the computed slices: sliced there, refused.
    origin = _gate(tmp_path, '[floors]\n"origin:real" = 0.5\n')
    with pytest.raises(InputError, match="origin: no such column"):
        compute(open_snapshot(from_manifest(ranked)), gate=origin)
    assert sliced == ["origin"]


def test_the_apps_results_are_the_reports_but_for_the_flip_rows(ranked: Path) -> None:
    """Without a corpus the app's report is `triage report`'s but for the flip rows, which the
    app's screens list from the session."""
    session = open_session(from_manifest(ranked))
    app = report_of(session.results_of(session.snapshot, session.corpus))
    cli = report_of(compute(open_snapshot(from_manifest(ranked))))
    assert len(app.flips) == 0 and len(cli.flips) == 17  # 7 + 10 flips; the app lists them itself
    a, b = app.to_json(), cli.to_json()
    a.pop("flips"), b.pop("flips")
    assert a == b and a["overlap"]["reason"].startswith("no corpus")  # and the corpus check done


def test_the_apps_results_follow_its_floor_and_its_decisions(ranked: Path) -> None:
    session = Session(open_snapshot(from_manifest(ranked), corpus_check=False), floor=0.95)
    before = report_of(session.results_of(session.snapshot, None))
    assert before.tenants is not None and before.tenants.floor == 0.95
    # Under 0.95: A's initech (31 of 40), B's acme (24 of 30); B's initech is 39 of 40.
    assert (before.tenants.below_floor.a, before.tenants.below_floor.b) == (1, 1)
    session.add("q0001", "x1", 1)  # acme's first loss: B's first id, judged gold, makes B hit
    after = report_of(session.results_of(session.snapshot, None))
    assert after.paired.a_hit_b_miss == before.paired.a_hit_b_miss - 1
    assert after.labels.gold_added == 1 and before.labels.gold_added == 0
    assert after.tenants is not None and after.tenants.rows[0].hit_to_miss == 5  # acme, still worst


@pytest.mark.slow
@pytest.mark.parametrize("gate", [None, "FLOORS.toml"])
def test_the_samples_api_report_is_the_clis_gate_or_not(capsys, gate: str | None) -> None:
    args = () if gate is None else ("--gate", str(SAMPLE / gate))
    code, cli = _cli(capsys, str(SAMPLE), *args)
    api = triage.open(SAMPLE).report(gate=None if gate is None else SAMPLE / gate)
    assert code == 0 and (api.gate is None) == (gate is None)
    assert _no_paths(json.loads(dumps_report(api))) == _no_paths(cli)


@pytest.mark.slow
def test_the_samples_app_numbers_are_the_clis_once_its_corpus_is_in() -> None:
    """With the corpus loaded and checked, the app's report is `triage report`'s but for the flip
    rows, which the app's screens list from the session."""
    from triage.core.checks.suite import check_corpus

    session = open_session(sample_spec())
    early = report_of(session.results_of(session.snapshot, None))
    assert early.overlap is None and "corpus.checking" in {c.code for c in early.checks}
    spec = session.snapshot.spec
    assert spec.corpus is not None
    session.corpus = open_corpus(spec.corpus, fmt=spec.corpus_format)
    session.corpus_checked(check_corpus(session.ev.inputs))
    app = report_of(session.results_of(session.snapshot, session.corpus)).to_json()
    cli = report_of(compute(open_snapshot(sample_spec()))).to_json()
    assert app.pop("flips") == [] and len(cli.pop("flips")) == 46
    assert app["overlap"]["available"] and app == cli
