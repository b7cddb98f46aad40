"""The truth cache keeps each shard's partial top-k per (query, vector, predicate, metric, K,
tolerance) × shard version: a rerun reads it alone; a changed, added or removed shard, an added or
changed query, costs only what changed; whatever is done to its files, the truth is the one a run
without a cache writes; a cache that cannot be written costs the run nothing but one notice; and
`triage cache list | prune` tell its folders' states and remove only the stale ones."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from triage.cli.main import main
from triage.core.files import protect
from triage.core.inputs.corpus_cache import State
from triage.core.truth import cache, shards
from triage.workspace.truth import compute_truth

from truth_corpora import D, truth_bytes, write_corpus, write_queries, write_shard


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "triage"


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every shard scan of a run (the engines' per-shard step): the shard and its job's queries."""
    calls: list[tuple[str, int]] = []
    real = shards.scan_shard

    def counted(shard, job, predicates, progress=None):  # type: ignore[no-untyped-def]
        calls.append((shard.name, len(job.vectors)))
        return real(shard, job, predicates, progress)

    monkeypatch.setattr(shards, "scan_shard", counted)
    return calls


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {"corpus": write_corpus(tmp_path / "corpus"), "queries": write_queries(tmp_path / "queries.jsonl")}


def truth(files: dict[str, Path], out: Path, k: int = 5, **kw: object) -> tuple[bytes, bytes]:
    compute_truth(files["corpus"], files["queries"], k, out, **kw)  # type: ignore[arg-type]
    return truth_bytes(out)


def fresh(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kw: object
) -> tuple[bytes, bytes]:
    """The truth a run with an empty cache of its own writes."""
    with monkeypatch.context() as m:
        m.setenv("TRIAGE_CACHE", str(tmp_path / f"fresh-{len(list(tmp_path.iterdir()))}"))
        return truth(files, tmp_path / f"fresh-out-{len(list(tmp_path.iterdir()))}", **kw)


def test_a_rerun_reads_the_cache_alone_and_writes_the_same_truth(
    root: Path, files: dict[str, Path], tmp_path: Path, scans: list
) -> None:
    first = truth(files, tmp_path / "t1")
    assert sorted(s for s, _ in scans) == [
        "part-0.parquet",
        "part-1.parquet",
        "part-2.parquet",
        "part-3.parquet",
    ]
    assert {n for _, n in scans} == {12}
    assert len(cache.truth_folders(root)) == 4
    scans.clear()
    run = compute_truth(files["corpus"], files["queries"], 5, tmp_path / "t2")
    assert scans == [] and (run.computed, run.cached) == (0, 4)
    assert truth_bytes(tmp_path / "t2") == first


def test_a_changed_added_or_removed_shard_costs_only_itself(
    root: Path, files: dict[str, Path], tmp_path: Path, scans: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    truth(files, tmp_path / "t1")
    rng = np.random.default_rng(9)
    corpus = files["corpus"]
    write_shard(corpus / "part-1.parquet", rng.standard_normal((150, D)), [f"new-{i}" for i in range(150)], 1)
    scans.clear()
    changed = truth(files, tmp_path / "t2")
    assert scans == [("part-1.parquet", 12)]
    assert changed == fresh(files, tmp_path, monkeypatch)
    write_shard(corpus / "part-9.parquet", rng.standard_normal((80, D)), [f"add-{i}" for i in range(80)], 2)
    scans.clear()
    added = truth(files, tmp_path / "t3")
    assert scans == [("part-9.parquet", 12)]
    assert added == fresh(files, tmp_path, monkeypatch)
    (corpus / "part-0.parquet").unlink()
    scans.clear()
    removed = truth(files, tmp_path / "t4")
    assert scans == []
    assert removed == fresh(files, tmp_path, monkeypatch)
    assert removed != added


def test_an_added_or_changed_query_is_computed_alone(
    root: Path, files: dict[str, Path], tmp_path: Path, scans: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    truth(files, tmp_path / "t1")
    lines = files["queries"].read_text().splitlines()
    added = json.loads(lines[1])
    added["query_id"] = "q-new"
    added["embedding"] = [0.5] * D
    files["queries"].write_text("\n".join([*lines, json.dumps(added)]) + "\n")
    expected = fresh(files, tmp_path, monkeypatch)
    scans.clear()
    assert truth(files, tmp_path / "t2") == expected
    assert sorted(scans) == [(f"part-{s}.parquet", 1) for s in range(4)]  # the new query only
    moved = json.loads(lines[2])
    moved["embedding"] = [-1.0] * D  # the same id, another vector: its key changed
    files["queries"].write_text("\n".join([lines[0], json.dumps(moved), *lines[3:]]) + "\n")  # q001 gone
    expected = fresh(files, tmp_path, monkeypatch)
    scans.clear()
    assert truth(files, tmp_path / "t3") == expected
    assert sorted(scans) == [(f"part-{s}.parquet", 1) for s in range(4)]
    scans.clear()
    truth(files, tmp_path / "t4")
    assert scans == []


@pytest.mark.parametrize("change", [{"k": 6}, {"metric": "l2"}, {"metric": "ip"}, {"tolerance": 1e-3}])
def test_another_k_metric_or_tolerance_is_another_entry(
    root: Path,
    files: dict[str, Path],
    tmp_path: Path,
    scans: list,
    change: dict,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    truth(files, tmp_path / "t1")
    scans.clear()
    assert truth(files, tmp_path / "t2", **change) != truth_bytes(tmp_path / "t1")
    assert len(scans) == 4
    assert truth_bytes(tmp_path / "t2") == fresh(files, tmp_path, monkeypatch, **change)


def test_another_triage_version_computes_afresh(
    root: Path, files: dict[str, Path], tmp_path: Path, scans: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = truth(files, tmp_path / "t1")
    monkeypatch.setattr(cache, "__version__", "0.0.9")  # the version the running triage records
    scans.clear()
    assert truth(files, tmp_path / "t2") == first and len(scans) == 4


def entry_files(root: Path) -> list[Path]:
    return sorted(p for f in cache.truth_folders(root) for p in f.path.iterdir())


DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "truncated": lambda p, other: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "emptied": lambda p, other: p.write_bytes(b""),
    "a byte flipped": lambda p, other: p.write_bytes(
        p.read_bytes()[:200] + bytes([p.read_bytes()[200] ^ 1]) + p.read_bytes()[201:]
    ),
    "removed": lambda p, other: p.unlink(),
    "a folder there": lambda p, other: (p.unlink(), p.mkdir()),
    "a link to another's": lambda p, other: (p.unlink(), p.symlink_to(other)),
    "another's planted": lambda p, other: shutil.copyfile(other, p),
    "a FIFO": lambda p, other: (p.unlink(), os.mkfifo(p)),
}


@pytest.mark.parametrize("how", list(DAMAGE))
@pytest.mark.parametrize("which", [".arrow", ".json"])
def test_a_damaged_entry_is_computed_again_never_used(
    root: Path, files: dict[str, Path], tmp_path: Path, scans: list, how: str, which: str
) -> None:
    first = truth(files, tmp_path / "t1")
    folder = cache.truth_folder(shards.corpus_shards(files["corpus"])[2].digest)
    other = cache.truth_folder(shards.corpus_shards(files["corpus"])[1].digest)
    name = cache.Question(shards.corpus_shards(files["corpus"])[2].digest, "", "cosine", 5, 1e-6).name
    target = folder / f"{name}{which}"
    theirs = other / next(p.name for p in other.iterdir() if p.suffix == which and p.stem != cache.PRINTS)
    DAMAGE[how](target, theirs)
    scans.clear()
    assert truth(files, tmp_path / "t2") == first
    assert scans == [("part-2.parquet", 3)]  # the unfiltered group's queries, of that shard alone
    scans.clear()
    assert truth(files, tmp_path / "t3") == first and (scans == [] or how == "a folder there")


def test_a_damaged_fingerprint_file_rescans_its_shard_and_still_finds_a_repeated_id(
    root: Path, files: dict[str, Path], tmp_path: Path, scans: list
) -> None:
    first = truth(files, tmp_path / "t1")
    folder = cache.truth_folder(shards.corpus_shards(files["corpus"])[0].digest)
    (folder / f"{cache.PRINTS}.arrow").write_bytes(b"0" * 64)
    scans.clear()
    assert truth(files, tmp_path / "t2") == first and scans == [("part-0.parquet", 0)]
    rng = np.random.default_rng(1)
    write_shard(files["corpus"] / "part-7.parquet", rng.standard_normal((3, D)), ["a", "doc-00042", "b"], 4)
    out = io.StringIO()
    with contextlib.redirect_stderr(out):
        code = main(
            [
                "truth",
                "--corpus",
                str(files["corpus"]),
                "--queries",
                str(files["queries"]),
                "--k",
                "5",
                "--out",
                str(tmp_path / "t3"),
            ]
        )
    assert (
        code == 2
        and "duplicate chunk_id 'doc-00042'" in out.getvalue()
        and "part-7.parquet" in out.getvalue()
    )
    assert not (tmp_path / "t3").exists()


def test_an_entry_proved_by_its_digests_yet_no_candidate_list_is_not_used(
    root: Path, files: dict[str, Path], tmp_path: Path, scans: list
) -> None:
    """A manifest rewritten with the file's digest (someone else's writing, or a bug) still does not
    make a short list a truth: each row must hold min(K, eligible) candidates or more."""
    first = truth(files, tmp_path / "t1")
    digest = shards.corpus_shards(files["corpus"])[3].digest
    question = cache.Question(digest, "", "cosine", 5, 1e-6)
    rows = cache.read_entry(question)
    assert rows is not None and rows.num_rows == 3
    short = rows.set_column(
        3,
        "chunk_id",
        pa.array([ids[:4] for ids in rows.column("chunk_id").to_pylist()], pa.list_(pa.string())),
    ).set_column(
        4, "gain", pa.array([g[:4] for g in rows.column("gain").to_pylist()], pa.list_(pa.float64()))
    )
    cache.write_entry(question, short, "x", protect([]))  # its manifest proves its bytes
    assert cache.read_entry(question) is None
    scans.clear()
    assert truth(files, tmp_path / "t2") == first and scans == [("part-3.parquet", 3)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
@pytest.mark.slow
def test_any_single_corruption_of_any_cache_file_leaves_the_truth_as_it_is(
    root: Path, files: dict[str, Path], tmp_path: Path, data: st.DataObject
) -> None:
    out = tmp_path / "t1"
    if not out.exists():
        truth(files, out)
    first = truth_bytes(out)
    shutil.rmtree(root, ignore_errors=True)
    truth(files, tmp_path / "again", force=True)
    path = data.draw(st.sampled_from(entry_files(root)))
    body = bytearray(path.read_bytes())
    at = data.draw(st.integers(0, len(body) - 1))
    body[at] ^= data.draw(st.integers(1, 255))
    path.write_bytes(bytes(body))
    assert truth(files, tmp_path / "again", force=True) == first


def test_a_cache_that_cannot_be_written_costs_one_notice(
    root: Path, files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = fresh(files, tmp_path, monkeypatch)
    root.parent.mkdir(parents=True)
    root.write_text("a file where the cache folder goes")
    argv = ["truth", "--corpus", str(files["corpus"]), "--queries", str(files["queries"]), "--k", "5"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv, "--out", str(tmp_path / "t1")]) == 0
    assert truth_bytes(tmp_path / "t1") == expected
    notices = [line for line in err.getvalue().splitlines() if "notice" in line]
    assert len(notices) == 1 and "the truth cache cannot be written" in notices[0] and str(root) in notices[0]
    root.unlink()
    tries: list[Path] = []

    def full(path, fill, protected, replace=True):  # type: ignore[no-untyped-def]
        tries.append(path)
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(cache, "write_new", full)
    run = compute_truth(files["corpus"], files["queries"], 5, tmp_path / "t2")
    assert truth_bytes(tmp_path / "t2") == expected
    assert len(tries) == 1 and run.notice is not None and "No space left on device" in run.notice


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


def test_cache_list_and_prune_know_the_truth_folders(
    root: Path, files: dict[str, Path], tmp_path: Path
) -> None:
    truth(files, tmp_path / "t1")
    parts = {s.name: cache.truth_folder(s.digest).name for s in shards.corpus_shards(files["corpus"])}
    rng = np.random.default_rng(2)
    write_shard(
        files["corpus"] / "part-1.parquet", rng.standard_normal((10, D)), [f"n{i}" for i in range(10)], 1
    )
    (files["corpus"] / "part-2.parquet").unlink()
    stopped = root / f"truth-{'c' * 32}"
    stopped.mkdir()
    (stopped / f"{'d' * 32}.arrow").write_bytes(b"half")
    os.utime(stopped / f"{'d' * 32}.arrow", (0, 0))
    os.utime(stopped, (0, 0))
    older = root / f"truth-{'e' * 32}"
    older.mkdir()
    (older / f"{'f' * 32}.json").write_text(json.dumps({"format": cache.FORMAT + 1}))
    states = {f.path.name: f.state for f in cache.truth_folders(root)}
    assert states == {
        parts["part-0.parquet"]: State.CURRENT,
        parts["part-3.parquet"]: State.CURRENT,
        parts["part-1.parquet"]: State.CHANGED,
        parts["part-2.parquet"]: State.GONE,
        stopped.name: State.INCOMPLETE,
        older.name: State.OTHER_FORMAT,
    }
    code, out = cli("cache", "list")
    assert code == 0 and "(0 corpus caches and 6 truth folders, " in out.splitlines()[0]
    assert f"top-k of 12 queries in {files['corpus'] / 'part-0.parquet'}" in out
    assert "4 stale (" in out
    code, out = cli("cache", "prune")
    assert code == 0 and "removed 4 of 0 corpus caches and 6 truth folders" in out and "kept 2" in out
    assert sorted(p.name for p in root.iterdir()) == sorted(
        [parts["part-0.parquet"], parts["part-3.parquet"]]
    )
