"""The corpus check reads only the inputs, so a report runs it beside the judging and the build
(`workspace.snapshot._corpus_run`): the snapshot is returned while it runs, and reading its
checks waits for it. Nothing is lost on the way: its result, or its error, is what the reader gets."""

from __future__ import annotations

import threading

import pytest

from triage.core.bundled import sample_spec
from triage.core.checks.model import WARNING, Check
from triage.core.checks.suite import PENDING_CORPUS
from triage.report.build import build
from triage.workspace import snapshot as snapshot_mod
from triage.workspace.snapshot import open_snapshot

HELD = 10.0  # seconds a held check waits for its release before giving up


def test_the_snapshot_is_ready_while_the_corpus_check_runs_and_its_checks_wait_for_it(monkeypatch) -> None:
    release, finished = threading.Event(), threading.Event()
    seen: list[str] = []

    def held_check(inputs):  # type: ignore[no-untyped-def]
        seen.append(inputs.spec.a.name)
        release.wait(HELD)
        finished.set()
        return [Check(WARNING, "corpus.retrieved", "held until the snapshot was built")]

    monkeypatch.setattr(snapshot_mod, "check_corpus", held_check)
    snap = open_snapshot(sample_spec())
    assert not finished.is_set()  # judged while the check was still held
    assert snap.version.endswith("|corpus")  # under way counts as run: no stale results later
    release.set()
    assert [c.code for c in build(snap).checks if c.code.startswith("corpus")] == ["corpus.retrieved"]
    assert finished.is_set() and seen == [sample_spec().a.name]


def test_an_error_of_the_corpus_check_reaches_whoever_reads_the_checks(monkeypatch) -> None:
    def failing(inputs):  # type: ignore[no-untyped-def]
        raise OSError("the corpus index could not be read")

    monkeypatch.setattr(snapshot_mod, "check_corpus", failing)
    snap = open_snapshot(sample_spec())
    with pytest.raises(OSError, match="could not be read"):
        snap.checks  # noqa: B018


def test_without_the_corpus_check_it_is_pending_and_never_started(monkeypatch) -> None:
    monkeypatch.setattr(snapshot_mod, "check_corpus", lambda inputs: pytest.fail("started"))
    snap = open_snapshot(sample_spec(), corpus_check=False)
    assert snap.corpus_checks is None and snap.version.endswith("|pending")
    assert PENDING_CORPUS in {c.code for c in snap.checks}


@pytest.mark.slow  # a Python process of its own: 0.7-4 s
def test_a_process_that_stops_early_does_not_wait_for_the_check(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The check's thread is a daemon: a command that fails after opening (or is interrupted)
    exits at once, not after a check nobody will read."""
    import os
    import subprocess
    import sys
    import time

    script = tmp_path / "early.py"
    script.write_text(
        "import time, sys\n"
        "from triage.core.bundled import sample_spec\n"
        "from triage.workspace import snapshot\n"
        "snapshot.check_corpus = lambda inputs: time.sleep(60) or []\n"
        "snapshot.open_snapshot(sample_spec())\n"
        "sys.exit(3)\n"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(script)], env=os.environ, timeout=50, check=False)
    assert done.returncode == 3 and time.perf_counter() - started < 30


@pytest.mark.parametrize(
    "argv",
    [["labels", "verify"], ["labels", "log"], ["report", "--suggest-floors"]],
    ids=["labels verify", "labels log", "report --suggest-floors"],
)
def test_verbs_that_never_show_the_corpus_checks_never_start_them(monkeypatch, capsys, argv) -> None:  # type: ignore[no-untyped-def]
    from triage.cli.main import main

    started: list[str] = []
    monkeypatch.setattr(snapshot_mod, "check_corpus", lambda inputs: started.append("check") or [])
    assert main(argv) == 0
    assert started == []
