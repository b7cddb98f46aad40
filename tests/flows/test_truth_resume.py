"""A long `triage truth` stopped by ctrl+c (SIGINT to the process, as a terminal sends it) leaves no
DIR, keeps every shard it finished in the truth cache, and the next run scans only the others,
writing the truth a run never stopped writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triage.core.truth import cache, shards
from triage.workspace.truth import compute_truth

from truth_corpora import truth_bytes, write_corpus, write_queries

REPO = Path(__file__).resolve().parents[2]
SHARDS = 6
# the CLI, each shard's scan slowed to half a second so that a signal lands mid-run
SLOWED = """
import sys, time
from triage.core.truth import shards
real = shards.scan_shard
def slowed(*args, **kwargs):
    time.sleep(0.5)
    return real(*args, **kwargs)
shards.scan_shard = slowed
from triage.cli.main import main
sys.exit(main())
"""


def finished(corpus: Path) -> list[str]:
    """The shards whose partials are kept: the last file a shard's keeping writes is proved."""
    return [
        s.name for s in shards.corpus_shards(corpus) if cache.read_fingerprints(s.digest, s.rows) is not None
    ]


@pytest.mark.slow
def test_ctrl_c_leaves_no_dir_and_the_next_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = write_corpus(tmp_path / "corpus", shards=SHARDS, rows=150)
    queries = write_queries(tmp_path / "queries.jsonl")
    out = tmp_path / "out" / "truth"
    out.parent.mkdir()
    argv = ["truth", "--corpus", str(corpus), "--queries", str(queries), "--k", "5", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", SLOWED, *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(finished(corpus)) < 2 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130 and "triage: interrupted" in err and "Traceback" not in err
    assert not out.exists() and list(out.parent.iterdir()) == []  # no DIR, no temporary folder beside it
    done = finished(corpus)
    assert 2 <= len(done) < SHARDS

    scanned: list[str] = []
    real = shards.scan_shard

    def counted(shard, job, predicates, progress=None):  # type: ignore[no-untyped-def]
        scanned.append(shard.name)
        return real(shard, job, predicates, progress)

    monkeypatch.setattr(shards, "scan_shard", counted)
    run = compute_truth(corpus, queries, 5, out)
    assert sorted(scanned) == sorted(set(s.name for s in shards.corpus_shards(corpus)) - set(done))
    assert (run.computed, run.cached) == (SHARDS - len(done), len(done))
    resumed = truth_bytes(out)
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "empty-cache"))
    compute_truth(corpus, queries, 5, tmp_path / "whole")
    assert resumed == truth_bytes(tmp_path / "whole")
