"""`triage truth --engine ray` on a local Ray cluster (two CPUs, one cluster for the module): the
labels and queries written byte for byte as the local engine writes them, from an empty cache and
from one holding all shards but one; a bad row on a worker is exit 2 naming its file and row; the
CLI reaches the cluster by `--address`; a task that fails there is named by its own error. Without
Ray installed, `--engine ray` says how to install it before reading anything, and nothing imports
Ray until it is asked for."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from triage.cli.main import main
from triage.core.errors import InputError
from triage.core.truth import engines, predicate, shards
from triage.core.truth.kernel import Job
from triage.workspace.truth import compute_truth

from truth_corpora import D, truth_bytes, write_corpus, write_queries, write_shard

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray cluster for the module; its address (for a second driver, the CLI)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "corpus": write_corpus(tmp_path / "corpus", shards=5),
        "queries": write_queries(tmp_path / "q.jsonl"),
    }


def local(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, metric: str = "cosine"
) -> Path:
    """The local engine's truth folder, from an empty cache of its own."""
    with monkeypatch.context() as m:
        m.setenv("TRIAGE_CACHE", str(tmp_path / f"cache-{name}"))
        compute_truth(files["corpus"], files["queries"], [3, 5], tmp_path / name, metric=metric)
    return tmp_path / name


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_ray_writes_the_local_engines_bytes(
    cluster: str, files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metric: str
) -> None:
    expected = local(files, tmp_path, monkeypatch, "local", metric)
    run = compute_truth(
        files["corpus"], files["queries"], [3, 5], tmp_path / "ray", metric=metric, engine="ray"
    )
    assert (run.computed, run.cached) == (5, 0)
    assert truth_bytes(tmp_path / "ray") == truth_bytes(expected)
    a, b = (json.loads((p / "truth.json").read_bytes()) for p in (expected, tmp_path / "ray"))
    assert {k for k in a if a[k] != b[k]} <= {"engine", "created_at"} and b["engine"] == "ray"
    rng = np.random.default_rng(4)
    write_shard(
        files["corpus"] / "part-3.parquet", rng.standard_normal((90, D)), [f"n{i}" for i in range(90)], 8
    )
    run = compute_truth(
        files["corpus"], files["queries"], [3, 5], tmp_path / "ray2", metric=metric, engine="ray"
    )
    assert (run.computed, run.cached) == (1, 4)  # the changed shard alone went to the cluster
    assert truth_bytes(tmp_path / "ray2") == truth_bytes(
        local(files, tmp_path, monkeypatch, "local2", metric)
    )


@pytest.mark.slow
def test_a_bad_row_on_a_worker_is_exit_2_naming_it(
    cluster: str, files: dict[str, Path], tmp_path: Path
) -> None:
    x = np.ones((20, D), np.float32)
    x[13, 2] = np.nan
    write_shard(files["corpus"] / "part-2.parquet", x, [f"bad-{i}" for i in range(20)], 1)
    out = tmp_path / "truth"
    code, _, err = run_cli(
        "truth", "--corpus", str(files["corpus"]), "--queries", str(files["queries"]), "--k", "5",
        "--out", str(out), "--engine", "ray",
    )  # fmt: skip
    assert code == 2 and not out.exists()
    assert err.strip() == (
        f"triage: error: {files['corpus'] / 'part-2.parquet'}: row 14: 'embedding' holds NaN or an infinite "
        "number (or one beyond float32's range)"
    )


@pytest.mark.slow
def test_a_task_that_fails_on_the_cluster_is_named(
    cluster: str, files: dict[str, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A shard gone from the path the driver listed (a folder there now, on the worker's side): the
    task's own error, once, not Ray Data's wrapper nor its log lines."""
    shard = dataclasses.replace(shards.corpus_shards(files["corpus"])[0], path=tmp_path)
    job = Job(np.ones((2, D), np.float32), np.zeros(2, np.int64), 1, "cosine", 3, 1e-6)
    work = engines.Work((engines.ShardTask(0, shard, 0),), ((job, (predicate.parse_filter(None, "", ""),)),))
    capfd.readouterr()
    with pytest.raises(InputError) as e:
        list(engines.scan_shards("ray", work))
    assert e.value.message == (
        "--engine ray: a task failed on the Ray cluster: OSError: Cannot open for reading: "
        f"path '{tmp_path}' is a directory"
    )
    assert capfd.readouterr().err == ""


@pytest.mark.slow
def test_the_command_reaches_the_cluster_by_its_address(
    cluster: str, files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second driver (the command, in its own process) on the module's cluster, shipping its own
    triage to the workers."""
    expected = local(files, tmp_path, monkeypatch, "local")
    out = tmp_path / "ray"
    argv = ["truth", "--corpus", str(files["corpus"]), "--queries", str(files["queries"]), "--k", "3,5"]
    done = subprocess.run(
        [sys.executable, "-m", "triage", *argv, "--out", str(out), "--engine", "ray", "--address", cluster],
        env={**os.environ, "PYTHONPATH": str(REPO), "TRIAGE_CACHE": str(tmp_path / "cache-cli")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "truth of 12 queries at k = 3, 5 (cosine) over 1,000 rows in 5 shards" in done.stdout
    assert truth_bytes(out) == truth_bytes(expected)


@pytest.mark.slow
def test_an_address_where_nothing_answers_is_refused_at_once(files: dict[str, Path], tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed again: nothing listens there
    code, _, err = run_cli(
        "truth", "--corpus", str(files["corpus"]), "--queries", str(files["queries"]), "--k", "5",
        "--out", str(tmp_path / "t"), "--engine", "ray", "--address", f"127.0.0.1:{port}",
    )  # fmt: skip
    assert (
        code == 2
        and err
        == f"triage: error: --address: 127.0.0.1:{port}: no Ray cluster answers there (Connection refused)\n"
    )
    assert not (tmp_path / "t").exists()


def test_without_ray_the_engine_says_how_to_install_it(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is not installed
    monkeypatch.setitem(sys.modules, "ray.data", None)
    out = tmp_path / "truth"
    code, stdout, err = run_cli(
        "truth", "--corpus", str(tmp_path / "no-such-corpus"), "--queries", str(files["queries"]), "--k", "5",
        "--out", str(out), "--engine", "ray",
    )  # fmt: skip
    assert (code, stdout) == (2, "") and not out.exists()
    assert err.startswith(
        "triage: error: --engine ray: needs Ray with its Data library, which is not installed"
    )
    assert err.rstrip().endswith(": pip install 'retrieval-triage[ray]'") and "no-such-corpus" not in err
    with pytest.raises(InputError, match=r"retrieval-triage\[ray\]"):
        compute_truth(files["corpus"], files["queries"], 5, out, engine="ray")
    assert not out.exists() and not (Path(os.environ["TRIAGE_CACHE"]) / "triage").exists()


def test_an_address_is_for_the_ray_engine_only(files: dict[str, Path], tmp_path: Path) -> None:
    code, _, err = run_cli(
        "truth", "--corpus", str(files["corpus"]), "--queries", str(files["queries"]), "--k", "5",
        "--out", str(tmp_path / "t"), "--address", "head:6379",
    )  # fmt: skip
    assert code == 2 and err == "triage: error: address: goes with the ray engine (--engine ray)\n"


@pytest.mark.slow
def test_nothing_imports_ray_until_it_is_asked_for() -> None:
    code = (
        "import sys, triage, triage.api, triage.cli.main, triage.cli.truth_cmd, triage.workspace.truth, "
        "triage.core.truth.engines, triage.workspace.cache\n"
        "assert not [m for m in sys.modules if m == 'ray' or m.startswith('ray.')], 'ray imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
