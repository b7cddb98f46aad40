"""Guards against silently wrong numbers and crashes found by trying to break triage:
each test failed before its fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from test_app_review import SIZE, open_q150, text_of

import triage.workspace.snapshot as snapshot_mod
from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.text.sanitize import visible
from triage.ui.app import TriageApp

from conftest import RUN_SCHEMA, manifest, write_parquet


def test_an_n_eligible_below_the_gold_found_is_an_error_and_recall_stays_at_most_one(
    tmp_path: Path, capsys
) -> None:
    # q1: two gold ids, both in the top 2, but the run says its filter matched only 1 document.
    rows = [{"query_id": "q1", "retrieved": ["g1", "g2", "x"], "scores": [3.0, 2.0, 1.0], "plan": "ann"}]
    a = [dict(r, n_eligible=1) for r in rows]
    schema = RUN_SCHEMA.append(pa.field("n_eligible", pa.int64()))
    write_parquet(tmp_path / "a.parquet", a, {"k": "2"}, schema)
    write_parquet(tmp_path / "b.parquet", rows, {"k": "2"}, RUN_SCHEMA)
    write_parquet(
        tmp_path / "labels.parquet",
        [{"query_id": "q1", "chunk_id": "g1"}, {"query_id": "q1", "chunk_id": "g2"}],
    )
    assert (
        main(
            [
                "report",
                str(manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=None)),
                "--format",
                "json",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["arms"]["a"]["recall"] == 1.0 == d["arms"]["b"]["recall"]  # not 2.0
    check = next(c for c in d["checks"] if c["code"] == "run.n_eligible")
    assert check["level"] == "error" and "q1" in check["message"] and "a.parquet" in check["message"]


def test_ctrl_c_while_loading_exits_130_without_a_traceback(monkeypatch, capsys) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(snapshot_mod, "load_inputs", interrupted)
    assert main(["report"]) == 130
    captured = capsys.readouterr()
    assert captured.out == "" and "interrupted" in captured.err and "Traceback" not in captured.err


@pytest.mark.parametrize(
    "ch", ["\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\ufeff", "\u2060", "\U000e0041"]
)
def test_invisible_characters_are_made_visible(ch: str) -> None:
    shown = visible(f"q1{ch}")
    assert shown == f"q1<U+{ord(ch):04X}>" and ch not in shown


@pytest.mark.slow
async def test_g_with_the_amendments_folder_linked_to_the_frozen_file_says_not_saved(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))
    frozen = copy / "labels.parquet"
    before = frozen.read_bytes()
    (copy / "labels.amendments").symlink_to(frozen)
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_q150(pilot)
        await pilot.press("g")
        assert "NOT SAVED" in text_of(screen, "#status") and app.is_running
        assert app.session is not None and app.session.unsaved == 1
    assert frozen.read_bytes() == before
