"""`triage cache list | prune` (docs/app.md "The corpus cache"): every folder's state told from its
manifest and its corpus file, only stale folders removed, nothing outside them ever touched."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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

    def refuse(f: cache.CacheFolder) -> None:
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
    root.rmdir()  # the cache folder itself gone too
    assert cache.remove(seen) == []


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
    from triage.cli.cache_cmd import byte_size, printable

    assert [byte_size(n) for n in (0, 999, 1_500, 999_999, 912_345_678, 2_600_000_000)] == [
        "0 B",
        "999 B",
        "1.5 kB",
        "1.0 MB",
        "912.3 MB",
        "2.6 GB",
    ]
    assert printable("/data/a\nb/c.parquet") == "/data/a␊b/c.parquet"


# -- never leaving the folder: links, mounts, depth (core/removal.py) ------------------------------

HOUR_AGO = time.time() - 3600


def stale(root: Path, key: str) -> Path:
    """A stale folder (a build that stopped an hour ago) to fill; `aged` then dates it."""
    folder = root / f"corpus-{key * 32}"
    folder.mkdir(parents=True)
    return folder


def aged(folder: Path) -> Path:
    """`folder` and its entries dated an hour ago, so that it reads `build stopped`."""
    for e in os.scandir(folder):
        os.utime(e.path, (HOUR_AGO, HOUR_AGO), follow_symlinks=False)
    os.utime(folder, (HOUR_AGO, HOUR_AGO))
    return folder


def nest(
    folder: Path, depth: int, name: str = "dddd", at_each: Callable[[int, int], None] | None = None
) -> None:
    """`depth` folders, each in the one before, made relative to a descriptor (the path outgrows
    PATH_MAX); `at_each(fd, level)` adds entries to each."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(depth):
            os.mkdir(name, dir_fd=fd)
            if at_each is not None:
                at_each(fd, level)
            below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
    finally:
        os.close(fd)


def snapshot(top: Path) -> dict[str, tuple]:
    """Every entry under `top` (itself included), read without following a link: its kind, inode,
    mode, modification time and content (a file's bytes, a link's target)."""
    out: dict[str, tuple] = {}
    todo = [top]
    while todo:
        p = todo.pop()
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            body: object = os.readlink(p)
        elif stat.S_ISREG(st.st_mode):
            body = p.read_bytes()
        else:
            body = None
        out[os.fsdecode(p.relative_to(top.parent))] = (
            stat.S_IFMT(st.st_mode),
            st.st_ino,
            st.st_mode,
            st.st_mtime_ns,
            body,
        )
        if stat.S_ISDIR(st.st_mode):
            todo.extend(Path(e.path) for e in os.scandir(p))
    return out


def outside_tree(base: Path) -> Path:
    """What a user keeps beside the cache: a file, a folder with a file, a link."""
    out = base / "mine"
    (out / "docs").mkdir(parents=True)
    (out / "keep.txt").write_text("mine")
    (out / "docs" / "deep.txt").write_text("also mine")
    (out / "link").symlink_to("keep.txt")
    return out


@pytest.fixture
def memory(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder for the cache and its neighbours in memory (/dev/shm) where there is one, else on
    disk: thousands of folders made and removed in a fraction of a second, whatever the disk is
    doing. Emptied after by the removal under test (shutil.rmtree cannot: too deep)."""
    from triage.core.removal import remove_tree

    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    monkeypatch.setenv("TRIAGE_CACHE", str(base / "cache"))
    try:
        yield base
    finally:
        remove_tree(base.parent, base.name)


def test_a_folder_nested_deeper_than_recursion_and_path_max_is_removed(
    memory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """1,100 folders deep: past Python's recursion limit, 1,000 (shutil.rmtree raised
    RecursionError), and the deepest path is 5,500 characters, past PATH_MAX (4,096)."""
    root, mine = memory / "cache" / "triage", outside_tree(memory)
    before = snapshot(mine)
    folder = stale(root, "a")

    def links(fd: int, level: int) -> None:
        if level % 100 == 0:
            os.symlink(mine, "to-mine", dir_fd=fd)
            os.symlink(mine / "keep.txt", "to-file", dir_fd=fd)

    nest(folder, 1_100, at_each=links)
    aged(folder)
    rc, out, err = cli(capsys, "cache", "prune")
    assert (rc, err) == (0, "") and f"removed {folder.name}" in out and "removed 1 of 1 corpus cache" in out
    assert not folder.exists() and snapshot(mine) == before


@pytest.mark.slow
def test_a_folder_nested_twenty_thousand_deep_is_removed(memory: Path, capsys) -> None:
    root, mine = memory / "cache" / "triage", outside_tree(memory)
    before = snapshot(mine)
    folder = stale(root, "a")

    def beside(fd: int, level: int) -> None:
        if level % 1000 == 0:
            os.symlink(mine, "to-mine", dir_fd=fd)
            os.mkdir("side", dir_fd=fd)
            os.close(os.open("side/f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))  # a short relative path

    nest(folder, 20_000, name="d", at_each=beside)
    aged(folder)
    rc, out, err = cli(capsys, "cache", "prune")
    assert (rc, err) == (0, "") and "removed 1 of 1 corpus cache" in out
    assert not folder.exists() and snapshot(mine) == before


def test_links_and_special_files_inside_are_removed_and_what_they_name_kept(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = outside_tree(tmp_path)
    building = stale(root, "b")  # written to just now: kept, as another process's build
    (building / "chunks.arrow").write_bytes(b"now")
    folder = stale(root, "a")
    inner = folder / "inner"
    inner.mkdir()
    for name, target in {
        "to-dir": mine,
        "to-file": mine / "keep.txt",
        "to-root": root,
        "to-building": building,
        "to-itself": folder,
        "up": Path("../.."),
        "dot": Path("."),
        "dangling": tmp_path / "nothing",
    }.items():
        (inner / name).symlink_to(target)
        (folder / name).symlink_to(target)
    os.link(mine / "docs" / "deep.txt", inner / "hard")  # a hard link: only this name goes
    os.mkfifo(inner / "fifo")  # never opened: unlinked
    (inner / os.fsdecode(b"bytes-\xff-not-utf8")).write_bytes(b"x")
    (inner / "locked").mkdir(mode=0)
    (inner / "locked" / "f").write_text("x")
    (inner / "locked").chmod(0)
    aged(folder)
    before = {**snapshot(mine), **snapshot(building)}
    assert os.stat(mine / "docs" / "deep.txt").st_nlink == 2
    rc, out, err = cli(capsys, "cache", "prune")
    assert (rc, err) == (0, "") and "removed 1 of 2 corpus caches" in out and "kept 1" in out
    assert not folder.exists()
    assert {**snapshot(mine), **snapshot(building)} == before
    assert os.stat(mine / "docs" / "deep.txt").st_nlink == 1  # the hard link's name went, not the file


def test_a_cache_folder_that_became_a_link_is_never_entered(root: Path, tmp_path: Path) -> None:
    mine = outside_tree(tmp_path)
    before = snapshot(mine)
    folder = aged(stale(root, "a"))
    (seen,) = folders(root)  # listed as a real folder; replaced by a link to the user's folder since
    folder.rmdir()
    folder.symlink_to(mine, target_is_directory=True)
    with pytest.raises(OSError, match="not a cache folder"):
        cache.remove(seen)
    assert folder.is_symlink() and snapshot(mine) == before


def test_a_folder_replaced_by_a_link_during_the_walk_is_unlinked_not_followed(
    root: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between reading an entry (a folder) and opening it, it becomes a link to the user's folder
    (then to a file): the open refuses the link, and only the link is removed."""
    from triage.core import removal

    mine = outside_tree(tmp_path)
    before = snapshot(mine)
    folder = stale(root, "a")
    (folder / "sub").mkdir()
    (folder / "sub2").mkdir()
    aged(folder)
    real = removal._status
    swapped = []

    def swap_after_reading(name: str, dir_fd: int) -> os.stat_result:
        st = real(name, dir_fd)
        if name in ("sub", "sub2") and stat.S_ISDIR(st.st_mode):
            os.rmdir(name, dir_fd=dir_fd)
            os.symlink(mine if name == "sub" else mine / "keep.txt", name, dir_fd=dir_fd)
            swapped.append(name)
        return st

    monkeypatch.setattr(removal, "_status", swap_after_reading)
    rc, out, err = cli(capsys, "cache", "prune")
    assert sorted(swapped) == ["sub", "sub2"]
    assert (rc, err) == (0, "") and "removed 1 of 1" in out and not folder.exists()
    assert snapshot(mine) == before


def another_device(monkeypatch: pytest.MonkeyPatch, *paths: Path) -> None:
    """The removal reads `paths` (by inode) as on another device, as a mount is: the simulation of
    a mount that runs anywhere."""
    from triage.core import removal

    marked = {os.lstat(p).st_ino for p in paths}
    real = removal._status

    def status(name: str, dir_fd: int) -> os.stat_result:
        st = real(name, dir_fd)
        if st.st_ino not in marked:
            return st
        fields = list(st[:10])
        fields[2] = st.st_dev + 1  # st_dev
        return os.stat_result(fields)

    monkeypatch.setattr(removal, "_status", status)


def test_what_is_on_another_device_is_left_named_and_exits_2(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = stale(root, "a")
    mount = folder / "x" / "mnt"
    (mount / "in").mkdir(parents=True)
    (mount / "in" / "data").write_text("on the mount")
    (mount / "link").symlink_to(tmp_path)
    (folder / "x" / "beside").write_text("goes")
    (folder / "y" / "z").mkdir(parents=True)
    (folder / "mounted-file").write_text("a file mounted over")
    whole = stale(root, "b")  # the whole folder on another device
    (whole / "f").write_text("kept")
    plain = stale(root, "c")
    (plain / "f").write_text("goes")
    for f in (folder, whole, plain):
        aged(f)
    kept = {**snapshot(mount), **snapshot(whole)}
    another_device(monkeypatch, mount, folder / "mounted-file", whole)
    rc, out, err = cli(capsys, "cache", "prune")
    assert rc == 2
    assert f"removed {plain.name}" in out and "removed 1 of 3 corpus caches" in out and "not removed 2" in out
    lines = sorted(err.splitlines())
    assert lines == sorted(
        [
            f"triage: error: cannot remove {folder}: left as it was, on another device (a mount): "
            + ", ".join(lines[0].split("(a mount): ")[1].split(", ")),
            f"triage: error: cannot remove {whole}: left as it was, on another device (a mount): {whole}",
        ]
    )
    (line,) = [x for x in lines if f"remove {folder}:" in x]
    assert set(line.split("(a mount): ")[1].split(", ")) == {str(mount), str(folder / "mounted-file")}
    assert {**snapshot(mount), **snapshot(whole)} == kept and not plain.exists()
    # a folder kept in part keeps its time: still stale (not `being built`), pruned once unmounted
    assert state_of(root) == {folder.name: State.INCOMPLETE, whole.name: State.INCOMPLETE}
    # of the folder, only the way to what was left remains
    assert sorted(
        os.fsdecode(p.relative_to(folder)) for p in folder.rglob("*") if not p.parent.is_relative_to(mount)
    ) == [
        "mounted-file",
        "x",
        "x/mnt",
    ]


def test_an_entry_that_cannot_be_removed_is_named_by_its_own_path(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = stale(root, "a")
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "locked").write_text("x")
    aged(folder)
    real = os.unlink

    def refuse(path, *, dir_fd=None):
        if path == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", refuse)
    rc, out, err = cli(capsys, "cache", "prune")
    assert rc == 2 and "removed 0 of 1 corpus cache, 0 B; kept 0; not removed 1" in out
    assert err == f"triage: error: cannot remove {folder}: {folder}/a/b/locked: Permission denied\n"


def test_two_removals_of_one_folder_at_once_both_succeed(memory: Path) -> None:
    """Two prunes at once walk the same folders: what the other removed first is no error."""
    from concurrent.futures import ThreadPoolExecutor

    root = memory / "cache" / "triage"
    for _ in range(3):
        folder = stale(root, "a")
        for i in range(8):
            (folder / f"w{i}").mkdir()
            nest(folder / f"w{i}", 25, at_each=a_file)
        aged(folder)
        (seen,) = folders(root)
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(cache.remove, [seen, seen])) == [[], []]  # an error would raise here
        assert not folder.exists()


def a_file(fd: int, level: int) -> None:
    os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))


def mount_or_skip(*argv: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    try:
        subprocess.run(["mount", *argv], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"mount {' '.join(argv)} is not permitted here: {e}")


def test_a_real_mount_inside_a_stale_folder_is_left_as_it_was(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tmpfs (another device), a bind mount of the user's folder (the same device: told by
    /proc/self/mountinfo), a whole cache folder that is a mount point, and a tmpfs mounted between
    reading a folder and opening it: each left as it was, named, exit 2."""
    from triage.core import removal

    mine = outside_tree(tmp_path)
    before = snapshot(mine)
    folder = stale(root, "a")
    tmpfs, bind, late = folder / "a" / "tmpfs", folder / "b" / "bind of mine", folder / "c" / "late"
    for p in (tmpfs, bind, late):
        p.mkdir(parents=True)
    (folder / "a" / "goes").write_text("x")
    whole = aged(stale(root, "b"))  # as it is under the mount
    mounted: list[Path] = []
    try:
        mount_or_skip("-t", "tmpfs", "triage-test", str(tmpfs))
        mounted.append(tmpfs)
        (tmpfs / "on-tmpfs").write_text("kept")
        mount_or_skip("--bind", str(mine), str(bind))
        mounted.append(bind)
        mount_or_skip("-t", "tmpfs", "triage-test", str(whole))
        mounted.append(whole)
        (whole / "chunks.arrow").write_text("kept")
        for f in (folder, whole):
            aged(f)
        on_tmpfs = snapshot(tmpfs)
        real = removal._status

        def mount_after_reading(name: str, dir_fd: int) -> os.stat_result:
            st = real(name, dir_fd)
            if name == "late" and late not in mounted:
                mount_or_skip("-t", "tmpfs", "triage-test", str(late))
                mounted.append(late)
            return st

        monkeypatch.setattr(removal, "_status", mount_after_reading)
        rc, out, err = cli(capsys, "cache", "prune")
        assert rc == 2 and "removed 0 of 2 corpus caches" in out and "not removed 2" in out
        assert f"cannot remove {whole}: left as it was, on another device (a mount): {whole}\n" in err
        (line,) = [x for x in err.splitlines() if f"remove {folder}:" in x]
        assert set(line.split("(a mount): ")[1].split(", ")) == {str(tmpfs), str(bind), str(late)}
        assert snapshot(mine) == before and snapshot(tmpfs) == on_tmpfs
        assert (whole / "chunks.arrow").read_text() == "kept" and not (folder / "a" / "goes").exists()
    finally:
        for p in reversed(mounted):
            subprocess.run(["umount", str(p)], check=False, capture_output=True, timeout=30)
            if os.path.ismount(p):
                subprocess.run(["umount", "-l", str(p)], check=False, capture_output=True, timeout=30)
    assert not any(os.path.ismount(p) for p in mounted)
    assert state_of(root) == {folder.name: State.INCOMPLETE, whole.name: State.INCOMPLETE}
    rc, out, err = cli(capsys, "cache", "prune")  # unmounted: removed now
    assert (rc, err) == (0, "") and "removed 2 of 2" in out and not folder.exists() and not whole.exists()


# -- the property: over generated trees, nothing outside the stale folders changes ----------------

NAMES = st.sampled_from(["a", "b", "c", "é", " ", "-x", os.fsdecode(b"\xff")])  # \xff: not UTF-8
TARGETS = ["mine", "mine/keep.txt", "mine/none", "root", "kept", "folder", ".", "..", "../..", "a"]
rarely = st.integers(0, 4).map(lambda n: n == 4)  # a mark on about one entry in five; shrinks to none
leaves = st.one_of(
    st.tuples(st.just("file"), st.binary(max_size=4), rarely),
    st.tuples(st.just("link"), st.sampled_from(TARGETS)),
    st.tuples(st.just("fifo")),
)
trees = st.recursive(
    leaves,
    lambda kids: st.one_of(
        st.tuples(st.just("dir"), st.dictionaries(NAMES, kids, max_size=4), rarely),
        st.tuples(st.just("chain"), st.integers(1, 40), kids),  # folders in folders, then `kids`
    ),
    max_leaves=16,
)
stale_folders = st.lists(
    st.tuples(st.just("dir"), st.dictionaries(NAMES, trees, max_size=4), rarely), min_size=1, max_size=3
)


def make(path: Path, node: tuple, targets: dict[str, Path], foreign: list[Path]) -> None:
    """`node` written at `path`; the entries marked to be on another device added to `foreign`."""
    kind = node[0]
    if kind == "file":
        path.write_bytes(node[1])
    elif kind == "link":
        path.symlink_to(targets.get(node[1], Path(node[1])))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
        for name, kid in node[1].items():
            make(path / name, kid, targets, foreign)
    else:  # a chain
        path.mkdir()
        nest(path, node[1], name="c")
        make(path.joinpath(*["c"] * node[1], "end"), node[2], targets, foreign)
    if kind in ("file", "dir") and node[-1]:
        foreign.append(path)


def outermost(paths: list[Path]) -> set[Path]:
    """The paths not inside another of them: what the removal meets first, and never enters."""
    return {p for p in paths if not any(p != q and p.is_relative_to(q) for q in paths)}


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stale_folders)
def test_prune_over_generated_trees_changes_nothing_but_the_stale_folders(specs: list[tuple]) -> None:
    """Files, FIFOs, folders and chains of them, links to the user's files and folders, to the cache,
    to a kept folder, to the folder itself, up and dangling, names not in UTF-8; some entries on
    another device (simulated: `another_device`). After a prune: the user's folder and the folder
    being built are as they were, byte for byte and time for time; every stale folder is gone
    but for what is on another device, which is intact, named, and kept with the folders holding it."""
    from triage.core.removal import remove_tree
    from triage.workspace import cache as workspace

    base = Path(tempfile.mkdtemp(dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    try:
        root = base / "cache" / "triage"
        mine = outside_tree(base)
        kept = stale(root, "f")
        (kept / "chunks.arrow").write_bytes(b"being written")  # just now: being built
        (kept / "to-mine").symlink_to(mine)
        made: list[tuple[Path, set[Path]]] = []
        for i, spec in enumerate(specs):
            folder = root / f"corpus-{str(i) * 32}"
            targets = {
                "mine": mine,
                "mine/keep.txt": mine / "keep.txt",
                "mine/none": mine / "none",
                "root": root,
                "kept": kept,
                "folder": folder,
            }
            foreign: list[Path] = []
            make(folder, spec, targets, foreign)
            aged(folder)
            made.append((folder, outermost(foreign)))
        before = {**snapshot(mine), **snapshot(kept)}
        left_before = {p: snapshot(p) for _, left in made for p in left}
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TRIAGE_CACHE", str(base / "cache"))
            another_device(mp, *(p for _, left in made for p in left))
            done = workspace.prune()

        assert {**snapshot(mine), **snapshot(kept)} == before
        assert [f.path for f in done.kept] == [kept]
        assert {f.path for f in done.removed} == {folder for folder, left in made if not left}
        failed = {f.path: why for f, why in done.failed}
        assert set(failed) == {folder for folder, left in made if left}
        for folder, left in made:
            if not left:
                assert not os.path.lexists(folder)
                continue
            said = failed[folder].removeprefix(f"{workspace.MOUNTED}: ")
            assert said != failed[folder] and sorted(said.split(", ")) == sorted(map(str, left))
            assert all(snapshot(p) == left_before[p] for p in left)
            assert state_of(root)[folder.name] is State.INCOMPLETE  # still stale, not being built
            # what remains of the folder: what was left, in it, and the folders on the way to it
            ways = {a for p in left for a in [p, *p.parents] if a.is_relative_to(folder)}
            remains = set(snapshot(folder))
            assert {
                k
                for k in remains
                if not any(Path(base, "cache", "triage", k).is_relative_to(p) for p in left)
            } == {os.fsdecode(a.relative_to(root)) for a in ways if a not in left}
    finally:
        remove_tree(base.parent, base.name)
