"""Files triage writes: created without following links, and never landing on an input.

Every write goes through here (exports and their sidecars, the corpus cache, amendment files). A
new file is written to a fresh temporary name in the target folder (`O_CREAT | O_EXCL |
O_NOFOLLOW`: a planted link there fails the open), flushed, then renamed over the target — a rename
replaces a name, it never writes through a link. Before that, the target is refused when it is a
symbolic link, or when it is (same device and inode: a hard link counts) one of the files to
protect: the frozen label file and every other input of the evaluation; or when it lies inside an
input folder, spelled through links or reached by a bind mount (its folders' device and inode).
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
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
    is written into (`folders`: an amendments folder, a folder, glob or BEIR folder given as an
    input). For messages, `inputs` says what each file is (identity → its path and role); and for a
    path that reaches a name or a folder another way (a bind mount), `places` holds each name as
    (its folder's identity, name) and `folder_ids` each folder's identity → its path."""

    names: frozenset[str] = frozenset()
    folders: tuple[str, ...] = ()
    inputs: Mapping[Identity, tuple[Path, str]] = MappingProxyType({})
    places: Mapping[tuple[Identity, str], str] = MappingProxyType({})
    folder_ids: Mapping[Identity, str] = MappingProxyType({})


def place(path: Path) -> str:
    """`path` as one spelling: its folder's links resolved, absolute, and the name kept as it is."""
    path = Path(path)
    return os.path.join(os.path.realpath(path.parent), path.name)


def protect(
    paths: Iterable[Path | None],
    names: Iterable[Path] = (),
    folders: Iterable[Path] = (),
    roles: Mapping[Path, str] = MappingProxyType({}),
) -> Protected:
    """What a write must never land on: the files `paths` (by identity and by name), the further
    `names`, and anything inside `folders` (by name and by identity). `roles` says what some of
    the paths are, for messages ("the frozen labels")."""
    given = [p for p in paths if p is not None]
    files = {i: (p, roles.get(p, "")) for p in reversed(given) if (i := identity(p)) is not None}
    out = Protected(files)
    out.inputs = MappingProxyType(files)
    out.names = frozenset(place(p) for p in [*given, *names])
    out.places = MappingProxyType(
        {
            (i, os.path.basename(n)): n
            for n in out.names
            if (i := identity(Path(os.path.dirname(n)))) is not None
        }
    )
    folders = list(folders)
    out.folders = tuple(os.path.realpath(f) for f in folders)
    out.folder_ids = MappingProxyType({i: sub for f in reversed(folders) for i, sub in _folders_in(f)})
    return out


def _folders_in(folder: Path) -> list[tuple[Identity, str]]:
    """The identity and path of `folder` and of every folder under it (links under it not followed)."""
    top = identity(folder)
    subs = (os.path.join(at, d) for at, dirs, _ in os.walk(folder) for d in dirs)
    found = [(top, str(folder)), *((identity(Path(sub), follow=False), sub) for sub in subs)]
    return [(i, sub) for i, sub in found if i is not None]


def inside(at: str, protected: Protected) -> str | None:
    """The protected folder `at` (a `place`) is inside, as a message names it; None when none. By
    name, then by identity up its folders (a bind mount of an input folder is the same folder)."""
    for f in protected.folders:
        if at.startswith(f.rstrip(os.sep) + os.sep):
            return f
    if not protected.folder_ids:
        return None
    folder = os.path.dirname(at)
    while True:
        i = identity(Path(folder))
        if i is not None and i in protected.folder_ids:
            return f"{folder} (the same folder as {protected.folder_ids[i]})"
        up = os.path.dirname(folder)
        if up == folder:
            return None
        folder = up


def _which(path: Path, i: Identity, protected: frozenset[Identity]) -> str:
    """Which input `path` (identity `i`) is, for a message: " (the frozen labels)", or with the
    input's path when `path` spells it otherwise (a hard link, a bind mount)."""
    orig, role = protected.inputs.get(i, (None, "")) if isinstance(protected, Protected) else (None, "")
    if orig is None:
        return ""
    said = [role] if role else []
    if os.path.abspath(orig) != os.path.abspath(path):
        said.append(f"{orig}, by another path")
    return f" ({', '.join(said)})" if said else ""


def refuse_target(path: Path, protected: frozenset[Identity]) -> None:
    """InputError naming `path` when writing there would follow a link or land on an input, or on
    a name or in a folder the evaluation reads (`Protected`); the message names the input."""
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        to, real = identity(path), Path(os.path.realpath(path))
        onto = ""
        if to is not None and to in protected:
            onto = f" to {real}, an input of this evaluation{_which(real, to, protected)}"
        raise InputError(path, f"is a symbolic link{onto}; triage never writes through links")
    if st is not None and (st.st_dev, st.st_ino) in protected:
        named = _which(path, (st.st_dev, st.st_ino), protected)
        raise InputError(path, f"is an input of this evaluation{named}; never written")
    if isinstance(protected, Protected):
        _refuse_place(path, protected)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(path, "exists and is not a regular file; not written")


def _refuse_place(path: Path, protected: Protected) -> None:
    """InputError when `path` is inside a protected folder or takes a protected name, spelled as
    given or reached another way (its folders' identities)."""
    at = place(path)
    folder = inside(at, protected)
    if folder is not None:
        raise InputError(path, f"is inside {folder}, which is an input of this evaluation; never written")
    parent = identity(Path(os.path.dirname(at)))
    name = at if at in protected.names else ""
    if not name and parent is not None:
        name = protected.places.get((parent, os.path.basename(at)), "")
    if name:
        other = f" ({name}, by another path)" if name != at else ""
        raise InputError(
            path, f"is a name this evaluation reads (a sidecar, the manifest){other}; never written"
        )


def make_folder(folder: Path) -> None:
    """`folder` and any parents missing (a run's own output folder), or InputError naming it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(folder, f"cannot be made: {e.strerror or e}") from None


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
