"""A report naming no measure lets the runs' scores go once they are checked (core/inputs/load.py
`run_of`), and with no corpus the ids' fingerprints once the arms are judged (workspace/snapshot.py
`open_snapshot`); one naming a measure, on the command line or in its gate, keeps them, since the
measures read each list in score order (and the ids judged not relevant by fingerprint)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.cli.main import main
from triage.core.bundled import sample_spec
from triage.core.ids import codes
from triage.core.inputs.load import Prints
from triage.core.inputs.manifest import from_manifest
from triage.report.build import build
from triage.report.model import dumps_report
from triage.workspace.snapshot import open_snapshot

from conftest import write_evaluation


def _evaluation(folder: Path) -> Path:
    # Stored order and score order disagree in A: read by score, q1's gold moves from rank 3 to 1.
    rows_a = [
        {"query_id": "q1", "retrieved": ["x", "y", "g1"], "scores": [0.2, 0.5, 0.9]},
        {"query_id": "q2", "retrieved": ["g2", "z"], "scores": [0.8, 0.1]},
    ]
    rows_b = [
        {"query_id": "q1", "retrieved": ["g1", "x"], "scores": [0.9, 0.1]},
        {"query_id": "q2", "retrieved": ["z", "g2"], "scores": [0.8, 0.3]},
    ]
    labels = [
        {"query_id": "q1", "chunk_id": "g1", "relevance": 1},
        {"query_id": "q2", "chunk_id": "g2", "relevance": 1},
    ]
    return write_evaluation(folder, rows_a, rows_b, labels)


def _checks(snapshot) -> dict[str, str]:
    return {c.code + c.message: c.level.name for c in snapshot.input_checks}


def test_the_scores_are_checked_then_let_go(tmp_path: Path) -> None:
    spec = from_manifest(_evaluation(tmp_path))
    kept, gone = open_snapshot(spec), open_snapshot(spec, scores=False)
    assert "scores" in kept.ev.a.run.table.column_names
    assert "scores" not in gone.ev.a.run.table.column_names
    assert "scores" not in gone.ev.a.run.loaded.table.column_names  # not held through the file either
    assert gone.ev.a.run.facts.scored and gone.ev.a.run.facts.score_rises.tolist() == [0]
    assert _checks(gone) == _checks(kept)
    assert any(c.code == "run.scores_order" for c in gone.input_checks)
    assert gone.ev.means(gone.ev.a) == kept.ev.means(kept.ev.a)


def _report(capsys, *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("how", ["--measures", "--gate"])
def test_a_measure_by_name_still_reads_the_score_order(tmp_path: Path, capsys, how: str) -> None:
    manifest = _evaluation(tmp_path)
    if how == "--measures":
        d = _report(capsys, str(manifest), "--order", "trec_eval", "--measures", "RR")
        delta = d["compare"]["RR"]["delta"]
    else:
        gate = tmp_path / "floors.toml"
        gate.write_text('[measures."RR"]\nfloor = 0.1\n', "utf-8")
        d = _report(capsys, str(manifest), "--order", "trec_eval", "--gate", str(gate))
        (measure,) = d["gate"]["measures"]
        assert (measure["mean_a"], measure["mean_b"]) == (1.0, 0.75)
        delta = measure["delta"]
    # By score A ranks both golds first (RR 1, 1), B q1's first and q2's second (1, 1/2): Δ -0.25.
    # As stored, A's q1 gold is third: a report that had let the scores go would say Δ +1/12.
    assert delta == pytest.approx(-0.25)
    assert d["arms"]["a"]["mrr"] == pytest.approx((1 / 3 + 1) / 2)  # the four metrics read the stored order


def test_the_fingerprints_are_let_go_once_judged_and_computed_again_if_read(tmp_path: Path) -> None:
    spec = from_manifest(_evaluation(tmp_path))
    kept, gone = open_snapshot(spec), open_snapshot(spec, fingerprints=False)
    assert kept.ev.a.run.prints.held and kept.ev.b.run.prints.held
    assert not gone.ev.a.run.prints.held and not gone.ev.b.run.prints.held
    assert dumps_report(build(gone)) == dumps_report(build(kept))  # the report never needed them
    again = gone.ev.b.run.fingerprints  # read anyway: computed again, the same
    assert gone.ev.b.run.prints.held
    assert again.tolist() == kept.ev.b.run.fingerprints.tolist()
    assert again.tolist() == codes.list_fingerprints(gone.ev.b.run.retrieved).tolist()


def test_with_a_corpus_the_fingerprints_stay_for_its_check_and_cost_rows() -> None:
    snap = open_snapshot(sample_spec(), fingerprints=False)
    assert snap.inputs.corpus is not None
    assert snap.ev.a.run.prints.held and snap.ev.b.run.prints.held


@pytest.mark.parametrize(("args", "dropped"), [((), 2), (("--measures", "RR"), 0)])
def test_only_a_report_naming_no_measure_lets_them_go(
    tmp_path: Path, capsys, monkeypatch, args, dropped
) -> None:
    calls: list[Prints] = []
    real = Prints.drop
    monkeypatch.setattr(Prints, "drop", lambda self: (calls.append(self), real(self))[1])
    _report(capsys, str(_evaluation(tmp_path)), *args)
    assert len(calls) == dropped
