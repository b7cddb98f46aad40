"""An open session sees what other processes write to the review folder: the CLI's judgements, a
second app's verdicts, applied as a new snapshot without a restart (and in the app within 3 s)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.labels.verdicts import Cause
from triage.ui.app import TriageApp
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from app_helpers import wait_loaded
from sample_story import NEAR_DUP_CHUNK as CHUNK
from sample_story import NEAR_DUP_QUERY as QUERY


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def session(copy: Path, reviewer: str) -> Session:
    return Session(open_snapshot(from_manifest(copy)), reviewer=reviewer)


def judge_in_another_process(copy: Path, grade: int, reviewer: str = "bo") -> None:
    env = {**os.environ, "TRIAGE_REVIEWER": reviewer}
    args = ["labels", "judge", str(copy), "--query", QUERY, "--chunk", CHUNK, "--grade", str(grade)]
    done = subprocess.run([sys.executable, "-m", "triage", *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_judgement_written_by_another_process_is_applied_by_sync(copy: Path) -> None:
    ana = session(copy, "ana")
    q = ana.ev.query_index(QUERY)
    assert ana.sync() == 0  # nothing new: nothing read, nothing changed
    before = ana.version
    assert ana.ev.paired().a_hit_b_miss == 6
    judge_in_another_process(copy, 1)
    assert ana.sync() == 1
    assert (QUERY, CHUNK) in ana.labels.added and CHUNK in dict(ana.ev.gold_of(q))
    assert ana.ev.paired().a_hit_b_miss == 5 and ana.version != before
    assert ana.sync() == 0  # read once


def test_own_writes_are_not_counted_again_and_unsaved_decisions_are_kept(copy: Path) -> None:
    ana = session(copy, "ana")
    assert ana.add(QUERY, CHUNK, 1).saved
    assert ana.sync() == 0 and (QUERY, CHUNK) in ana.labels.added


def test_a_verdict_from_another_session_arrives_without_judging_anything_again(copy: Path) -> None:
    ana, bo = session(copy, "ana"), session(copy, "bo")
    ev = ana.ev
    assert bo.verdict(QUERY, Cause.LIKELY_UNLABELLED, "the 2023 copy").saved
    assert ana.sync() == 1
    assert ana.ev is ev and ana.verdicts.for_query(QUERY)


def test_a_retraction_elsewhere_takes_the_gold_back(copy: Path) -> None:
    ana, bo = session(copy, "ana"), session(copy, "bo")
    assert bo.add(QUERY, CHUNK, 1).saved
    assert ana.sync() == 1 and ana.ev.paired().a_hit_b_miss == 5
    assert bo.undo() is not None
    assert ana.sync() == 1 and ana.ev.paired().a_hit_b_miss == 6


@pytest.mark.slow  # a whole-app Pilot run
async def test_the_open_app_sees_the_clis_judgement_within_3_seconds(copy: Path) -> None:
    app = TriageApp(copy)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        assert app.session is not None and app.session.ev.paired().a_hit_b_miss == 6
        judge_in_another_process(copy, 1)
        start = time.monotonic()
        while app.session.ev.paired().a_hit_b_miss != 5 and time.monotonic() - start < 3:
            await pilot.pause(0.1)
        assert app.session.ev.paired().a_hit_b_miss == 5, "not seen within 3 s"
        assert any("from another session" in str(n.message) for n in app._notifications)
