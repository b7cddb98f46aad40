"""`triage cache list | prune` (docs/app.md "The corpus cache"): every folder's state told from its
manifest and its corpus file, only stale folders removed, nothing outside them ever touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.inputs import corpus_cache as cache
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.corpus_cache import State, folders


def write_corpus(path: Path, n: int, word: str = "text") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    ids = [f"c{i}" for i in range(n)]
    pq.write_table(
        pa.table(
            {
                "chunk_id": ids,
                "header": [f"h{i}" for i in range(n)],
                "text": [f"{word} {i}" for i in range(n)],
            }
        ),
        path,
    )
    return path


def built(path: Path) -> Path:
    """`path`'s cache folder, built as a run builds it."""
    open_corpus(path, small=0)
    folder = cache.folder_of(cache.corpus_key(path))
    assert (folder / cache.MANIFEST).is_file()
    return folder


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def state_of(root: Path) -> dict[str, State]:
    return {f.path.name: f.state for f in folders(root)}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "triage"


def a_folder_like(folder: Path, key: str, **manifest: object) -> Path:
    """A copy of `folder` under another key, its manifest changed (a value of None: left out)."""
    other = folder.with_name(f"corpus-{key}")
    other.mkdir()
    for f in folder.iterdir():
        (other / f.name).write_bytes(f.read_bytes())
    body = json.loads((folder / cache.MANIFEST).read_bytes())
    body.update(manifest)
    body = {k: v for k, v in body.items() if v is not None}
    (other / cache.MANIFEST).write_text(json.dumps(body))
    return other


def test_each_state_is_told_and_prune_removes_only_the_stale(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    kept_corpus = write_corpus(data / "kept.parquet", 50)
    in_use = built(kept_corpus)
    edited = write_corpus(data / "edited.parquet", 40)
    before_edit = built(edited)
    write_corpus(edited, 39)  # a new version at the same path
    after_edit = built(edited)
    gone_corpus = write_corpus(data / "gone.parquet", 30)
    gone = built(gone_corpus)
    gone_corpus.unlink()
    older = a_folder_like(in_use, "a" * 32, format=cache.FORMAT - 1)
    unknown = a_folder_like(in_use, "b" * 32, source=None)
    stopped = root / f"corpus-{'c' * 32}"
    stopped.mkdir()
    (stopped / "chunks.arrow").write_bytes(b"half")
    hour_ago = time.time() - 3600
    os.utime(stopped / "chunks.arrow", (hour_ago, hour_ago))
    os.utime(stopped, (hour_ago, hour_ago))  # nothing written to it for an hour
    building = root / f"corpus-{'d' * 32}"
    building.mkdir()
    (building / "chunks.arrow").write_bytes(b"now")
    # what is no cache folder: never listed, never touched
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (root / f"corpus-{'e' * 32}").symlink_to(outside, target_is_directory=True)
    (root / f"corpus-{'f' * 32}").write_text("a file, not a folder")
    (root / "notes").mkdir()
    (gone / "link-out").symlink_to(outside / "keep.txt")  # a link inside a stale folder

    assert state_of(root) == {
        in_use.name: State.CURRENT,
        after_edit.name: State.CURRENT,
        before_edit.name: State.CHANGED,
        gone.name: State.GONE,
        older.name: State.OTHER_FORMAT,
        unknown.name: State.UNKNOWN,
        stopped.name: State.INCOMPLETE,
        building.name: State.BUILDING,
    }
    rc, out, _ = cli(capsys, "cache", "list")
    assert rc == 0 and "(8 corpus caches, " in out.splitlines()[0]
    assert f"other format ({cache.FORMAT - 1})" in out and f"50 chunks of {kept_corpus}" in out
    assert "4 stale (" in out and max(map(len, out.splitlines()[1:])) <= 80 + len(str(data))

    stale = {before_edit, gone, older, stopped}
    rc, out, _ = cli(capsys, "cache", "prune", "--dry-run")
    assert rc == 0 and all(f"would remove {f.name}" in out for f in stale)
    assert all(f.is_dir() for f in stale)  # a dry run removes nothing

    rc, out, _ = cli(capsys, "cache", "prune")
    assert rc == 0 and "removed 4 of 8 corpus caches" in out and "kept 4" in out
    assert not any(f.exists() for f in stale)
    assert set(state_of(root)) == {in_use.name, after_edit.name, unknown.name, building.name}
    assert (outside / "keep.txt").read_text() == "mine"  # neither the link inside nor the one beside
    assert (root / f"corpus-{'e' * 32}").is_symlink() and (root / f"corpus-{'f' * 32}").is_file()
    assert (root / "notes").is_dir()
    assert cache.open_verified(kept_corpus) is not None  # the folder in use still proves itself

    rc, out, _ = cli(capsys, "cache", "prune", "--all")
    assert rc == 0 and "removed 3 of 4" in out
    assert state_of(root) == {building.name: State.BUILDING}  # perhaps another process's build
    assert cache.open_verified(kept_corpus) is None
    assert open_corpus(kept_corpus, small=0) is not None and cache.open_verified(kept_corpus) is not None


def test_a_corpus_path_that_is_now_a_fifo_is_gone_and_never_opened(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", 20)
    folder = built(corpus)
    corpus.unlink()
    os.mkfifo(corpus)  # opening it for reading would wait for a writer forever
    assert state_of(root) == {folder.name: State.GONE}
    rc, out, _ = cli(capsys, "cache", "list")
    assert rc == 0 and "(1 corpus cache, " in out and "1 stale (" in out and out.endswith("removes it\n")


def test_no_cache_folder_at_all_lists_nothing(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "cache", "list")
    assert rc == 0 and out.splitlines() == [f"cache folder: {root}  (0 corpus caches, 0 B)"]
    assert cli(capsys, "cache", "prune")[0] == 0 and not root.exists()


def test_a_removal_refused_is_named_and_exits_2(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", 20)
    folder = built(corpus)
    corpus.unlink()

    def refuse(f: cache.Folder) -> None:
        raise PermissionError(13, "Permission denied", str(f.path))

    monkeypatch.setattr("triage.workspace.cache.remove", refuse)
    rc, out, err = cli(capsys, "cache", "prune")
    assert rc == 2 and f"cannot remove {folder}: Permission denied" in err
    assert "removed 0 of 1" in out and folder.is_dir()


def test_a_path_with_control_characters_is_shown_visible(root: Path, tmp_path: Path, capsys) -> None:
    corpus = write_corpus(tmp_path / "evil\x1b[2Jdir" / "c.parquet", 20)
    built(corpus)
    rc, out, _ = cli(capsys, "cache", "list")
    assert rc == 0 and "\x1b" not in out and "evil␛[2Jdir" in out


def test_a_fifo_in_place_of_a_manifest_or_a_cache_file_is_never_waited_on(root: Path, tmp_path: Path) -> None:
    """Opening a FIFO for reading waits for a writer: every open here is non-blocking, so the list
    and a run both go on (in a child process, so that a hang fails the test instead of stalling it)."""
    corpus = write_corpus(tmp_path / "c.parquet", 20)
    folder = built(corpus)
    (folder / cache.MANIFEST).unlink()
    os.mkfifo(folder / cache.MANIFEST)
    other = built(write_corpus(tmp_path / "d.parquet", 30))
    (other / "chunks.arrow").unlink()
    os.mkfifo(other / "chunks.arrow")
    probe = (
        "import sys; from pathlib import Path; from triage.core.inputs import corpus_cache as c; "
        "print(c.open_verified(Path(sys.argv[1])) is None, sorted(f.state.name for f in c.folders()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "d.parquet")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TRIAGE_CACHE": str(root.parent)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(maxsplit=1) == ["True", "['BUILDING', 'CURRENT']\n"]


@pytest.mark.parametrize("source", ["/tmp/x\x00y", "/tmp/x\ud800y", "", "relative/c.parquet"])
def test_a_source_that_names_no_file_is_gone_not_a_crash(root: Path, tmp_path: Path, source: str) -> None:
    folder = built(write_corpus(tmp_path / "c.parquet", 20))
    odd = a_folder_like(folder, "a" * 32, source=source)
    assert state_of(root)[odd.name] is State.GONE


def test_a_corpus_that_cannot_be_read_is_kept_not_called_gone(
    root: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = built(write_corpus(tmp_path / "c.parquet", 20))

    def refused(path: Path) -> str:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cache, "corpus_key", refused)  # as a corpus of mode 000 would, for a user
    assert state_of(root) == {folder.name: State.UNREADABLE}
    rc, out, _ = cli(capsys, "cache", "prune")
    assert rc == 0 and "removed 0 of 1 corpus cache, 0 B; kept 1" in out and folder.is_dir()


def test_a_second_prune_at_once_is_no_error(root: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c.parquet", 20)
    built(corpus)
    corpus.unlink()
    (seen,) = folders(root)  # both prunes listed it; the first removes it
    cache.remove(seen)
    cache.remove(seen)  # the second finds it gone: done, not failed
    assert folders(root) == []


def test_a_folder_just_made_is_being_built_and_an_old_empty_one_stopped(root: Path) -> None:
    root.mkdir(parents=True)
    fresh, old = root / f"corpus-{'1' * 32}", root / f"corpus-{'2' * 32}"
    fresh.mkdir()
    old.mkdir()
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    assert state_of(root) == {fresh.name: State.BUILDING, old.name: State.INCOMPLETE}


def test_a_cache_folder_that_cannot_be_read_is_named(root: Path, capsys, monkeypatch) -> None:
    root.mkdir(parents=True)
    real = os.scandir

    def refused(path):
        if Path(path) == root:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", refused)
    rc, out, err = cli(capsys, "cache", "list")
    assert rc == 2 and out == "" and f"{root}: cannot be read: Permission denied" in err


def test_sizes_and_a_line_break_in_a_path() -> None:
    from triage.cli.cache_cmd import shown, size

    assert [size(n) for n in (0, 999, 1_500, 999_999, 912_345_678, 2_600_000_000)] == [
        "0 B",
        "999 B",
        "1.5 kB",
        "1.0 MB",
        "912.3 MB",
        "2.6 GB",
    ]
    assert shown("/data/a\nb/c.parquet") == "/data/a␊b/c.parquet"
