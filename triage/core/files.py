"""Files triage writes: created without following links, and never landing on an input.

Every write goes through here (exports and their sidecars, the corpus cache, amendment files). A
new file is written to a fresh temporary name in the target folder (`O_CREAT | O_EXCL |
O_NOFOLLOW`: a planted link there fails the open), flushed, then renamed over the target — a rename
replaces a name, it never writes through a link. Before that, the target is refused when it is a
symbolic link, or when it is (same device and inode: a hard link counts) one of the files to
protect: the frozen label file and every other input of the evaluation.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from triage.core.errors import InputError

Identity = tuple[int, int]  # (st_dev, st_ino)


def identity(path: Path, follow: bool = True) -> Identity | None:
    """The file's (device, inode), or None when nothing is there."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Protected(frozenset[Identity]):
    """The identities of the files a write must never land on (by device and inode: a link of any
    kind counts), with the names it must never take (`names`: absolute, their folder's links
    resolved; whether a file is there or not, as an input's sidecar name) and the folders nothing
    is written into (`folders`: an amendments folder, a folder or glob given as an input)."""

    names: frozenset[str] = frozenset()
    folders: tuple[str, ...] = ()


def place(path: Path) -> str:
    """`path` as one spelling: its folder's links resolved, absolute, and the name kept as it is."""
    path = Path(path)
    return os.path.join(os.path.realpath(path.parent), path.name)


def protect(
    paths: Iterable[Path | None], names: Iterable[Path] = (), folders: Iterable[Path] = ()
) -> Protected:
    """What a write must never land on: the files `paths` (by identity and by name), the further
    `names`, and anything inside `folders`."""
    given = [p for p in paths if p is not None]
    out = Protected(i for p in given if (i := identity(p)) is not None)
    out.names = frozenset(place(p) for p in [*given, *names])
    out.folders = tuple(os.path.realpath(f) for f in folders)
    return out


def refuse_target(path: Path, protected: frozenset[Identity]) -> None:
    """InputError naming `path` when writing there would follow a link or land on an input, or on
    a name or in a folder the evaluation reads (`Protected`)."""
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        onto = (
            " to an input of this evaluation (the frozen labels or a run)"
            if identity(path) in protected
            else ""
        )
        raise InputError(path, f"is a symbolic link{onto}; triage never writes through links")
    if st is not None and (st.st_dev, st.st_ino) in protected:
        raise InputError(path, "is an input of this evaluation (the frozen labels or a run); never written")
    if isinstance(protected, Protected):
        at = place(path)
        inside = next((f for f in protected.folders if at.startswith(f.rstrip(os.sep) + os.sep)), None)
        if inside is not None:
            raise InputError(path, f"is inside {inside}, which is an input of this evaluation; never written")
        if at in protected.names:
            raise InputError(path, "is a name this evaluation reads (a sidecar, the manifest); never written")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(path, "exists and is not a regular file; not written")


def write_new(
    path: Path, fill: Callable[[BinaryIO], None], protected: frozenset[Identity], replace: bool = True
) -> None:
    """Write a file at `path` by `fill(file)`, atomically: a temporary file in the same folder,
    created exclusively without following links, fsynced, then renamed over `path`. With
    `replace=False` an existing `path` (of any kind, a link included) is refused, also one that
    appears meanwhile: the temporary file is hard-linked to the name, which fails when it is taken."""
    path = Path(path)
    refuse_target(path, protected)
    if not replace and os.path.lexists(path):
        raise InputError(path, "exists; not overwritten")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        refuse_target(path, protected)  # again: a link planted meanwhile is refused, not replaced
        if replace:
            os.replace(tmp, path)
        else:
            _link_new(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _link_new(tmp: Path, path: Path) -> None:
    """Give `tmp` the name `path` only if that name is free, then drop the name `tmp`."""
    try:
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        raise InputError(path, "exists; not overwritten") from None
    except OSError:  # a filesystem without hard links: the check above, then a rename
        if os.path.lexists(path):
            raise InputError(path, "exists; not overwritten") from None
        os.replace(tmp, path)
        return
    tmp.unlink()


def write_bytes(path: Path, data: bytes, protected: frozenset[Identity], replace: bool = True) -> None:
    def fill(f: BinaryIO) -> None:
        f.write(data)

    write_new(path, fill, protected, replace)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: some filesystems refuse a folder fsync)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def open_append(path: Path, protected: frozenset[Identity]) -> int:
    """A descriptor appending to `path` (created if absent), opened without following a link at its
    name; refused (OSError) when what it opened is a protected file."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) in protected or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(f"{path} is an input of this evaluation (or not a regular file); refusing to write")
    return fd
