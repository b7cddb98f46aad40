"""Removing a folder triage made, without ever leaving it (`triage cache prune`).

`remove_tree(parent, name)` deletes the folder `name` in `parent` and everything in it, and no more:

- no link is followed: a link inside is unlinked, its target never touched; `name` itself must be a
  real folder (a link, a file there: NotADirectoryError);
- no mount is crossed: an entry whose own status (a link's, never its target's) names another
  device than `parent`'s, or that is a mount point listed in /proc/self/mountinfo when the removal
  starts (a bind mount of the same filesystem has its device), is left as it was, with the
  folders that hold it; its path is returned. (A bind mount of the same filesystem made while the
  removal runs, or where there is no /proc, is told only at its own removal, EBUSY: what is in it
  may be gone by then.)
- no recursion, no path that grows with the depth, three descriptors open at most: an explicit
  stack of names; the walk holds one folder open, relative to which each entry is read, opened and
  removed, and climbs back through `..`, which must be the folder it came down from (device and
  inode): a folder moved meanwhile stops the removal (OSError) rather than go on elsewhere.

What vanishes meanwhile (a second removal at once) is no error; what cannot be removed is an
OSError naming the entry.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["remove_tree", "mount_points"]

Identity = tuple[int, int]  # (st_dev, st_ino)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)  # a link: ELOOP
# what the walk needs of the system (every POSIX one has it; where one is missing, nothing is removed)
_ABLE = (
    hasattr(os, "O_DIRECTORY")
    and hasattr(os, "O_NOFOLLOW")
    and {os.open, os.stat, os.unlink, os.rmdir, os.utime} <= os.supports_dir_fd
    and os.listdir in os.supports_fd
)
_PASSES = 3  # walks from the top again when a folder on the way vanished (another removal)


def _status(name: str, dir_fd: int) -> os.stat_result:
    """An entry's own status, never its target's: its device says which filesystem holds it."""
    return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)


def mount_points(folder: str) -> frozenset[Identity]:
    """The (device, inode) of every mount point at or inside `folder` (absolute, links resolved),
    from /proc/self/mountinfo; none where the system has no such file."""
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return frozenset()
    base = os.fsencode(folder.rstrip("/"))
    out = set()
    for line in lines:
        fields = line.split(b" ")
        if len(fields) < 5:
            continue
        point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8) & 0xFF]), fields[4])  # \040: a space
        if point == base or point.startswith(base + b"/"):
            try:
                st = os.stat(point)
            except OSError:
                continue
            out.add((st.st_dev, st.st_ino))
    return frozenset(out)


@dataclass
class _Level:
    """A folder on the way down: its identity, its name in the folder above, its times (access and
    modification, ns) when entered, the folders in it still to remove (None: not read yet), and
    whether something in it is left (it stays then, its times put back)."""

    identity: Identity
    name: str
    times: tuple[int, int]
    pending: list[str] | None = None
    holds: bool = False

    @classmethod
    def of(cls, st: os.stat_result, name: str) -> _Level:
        return cls((st.st_dev, st.st_ino), name, (st.st_atime_ns, st.st_mtime_ns))


class _Removal:
    """One removal: the folder's path (for messages), the device it may not leave, the mounts."""

    def __init__(self, path: Path, device: int, mounts: frozenset[Identity]) -> None:
        self.path, self.device, self.mounts = path, device, mounts
        self.stack: list[_Level] = []
        self.left: list[Path] = []

    def foreign(self, st: os.stat_result) -> bool:
        return st.st_dev != self.device or (st.st_dev, st.st_ino) in self.mounts

    def where(self, name: str | None = None) -> Path:
        """The path of `name` in the folder at the stack's top (None: that folder)."""
        names = [lv.name for lv in self.stack] + ([name] if name is not None else [])
        return self.path.parent.joinpath(*names)

    def named(self, e: OSError, name: str | None = None) -> OSError:
        return OSError(e.errno, e.strerror or str(e), str(self.where(name)))

    def leave(self, name: str | None) -> None:
        self.left.append(self.where(name))
        if self.stack:
            self.stack[-1].holds = True

    def clear(self, fd: int) -> list[str]:
        """Unlink every entry of the folder open at `fd` but its folders, which are returned; an
        entry on another device is left."""
        folders = []
        try:
            names = os.listdir(fd)
        except FileNotFoundError:
            return []
        except OSError as e:
            raise self.named(e) from None
        for name in names:
            try:
                st = _status(name, fd)
                if self.foreign(st):
                    self.leave(name)
                elif stat.S_ISDIR(st.st_mode):
                    folders.append(name)
                else:
                    os.unlink(name, dir_fd=fd)  # a link: the link goes, its target stays
            except FileNotFoundError:
                continue
            except IsADirectoryError:  # a folder there now
                folders.append(name)
            except OSError as e:
                if e.errno != errno.EBUSY:  # a file mounted over (a bind mount): left as it is
                    raise self.named(e, name) from None
                self.leave(name)
        return folders

    def enter(self, fd: int, name: str) -> int | None:
        """The folder `name` in `fd`, opened; None when there is none to enter (gone, on another
        device, or a link or a file there now, which is then unlinked)."""
        try:
            child = os.open(name, _DIR, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise self.named(e, name) from None
            try:  # replaced by a link or a file since it was read: the name goes, nothing it names
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except OSError as e2:
                raise self.named(e2, name) from None
            return None
        st = os.fstat(child)
        if self.foreign(st):  # mounted on since it was read
            os.close(child)
            self.leave(name)
            return None
        self.stack.append(_Level.of(st, name))
        return child

    def climb(self, fd: int, above: Identity) -> int | None:
        """`..` of the folder open at `fd`, which must be `above`; None when it is gone."""
        try:
            up = os.open("..", _DIR, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise self.named(e) from None
        st = os.fstat(up)
        if (st.st_dev, st.st_ino) != above:
            os.close(up)
            raise OSError(errno.ESTALE, "moved while it was removed", str(self.where()))
        return up

    def run(self, fd: int, above: Identity) -> bool:
        """Remove the folder open at `fd` (the stack's one level), closing `fd`; False when a
        folder on the way vanished before the walk got back up."""
        try:
            while self.stack:
                level = self.stack[-1]
                if level.pending is None:
                    level.pending = self.clear(fd)
                if level.pending:
                    child = self.enter(fd, level.pending.pop())
                    if child is not None:
                        os.close(fd)
                        fd = child
                    continue
                up = self.climb(fd, self.stack[-2].identity if len(self.stack) > 1 else above)
                if up is None:
                    return False
                os.close(fd)
                fd = up
                self.stack.pop()
                self.rmdir(fd, level)
            return True
        finally:
            os.close(fd)

    def rmdir(self, fd: int, level: _Level) -> None:
        """Remove the emptied folder `level` from the folder open at `fd` (the stack's top now); one
        that holds what was left stays, with the modification time it had (it still reads stale,
        not being built)."""
        if level.holds:
            with contextlib.suppress(OSError):
                os.utime(level.name, ns=level.times, dir_fd=fd, follow_symlinks=False)
        else:
            try:
                os.rmdir(level.name, dir_fd=fd)
                return
            except FileNotFoundError:
                return
            except OSError as e:
                if e.errno != errno.EBUSY:  # a mount point mountinfo did not list (made meanwhile)
                    raise self.named(e, level.name) from None
                self.left.append(self.where(level.name))
        if self.stack:
            self.stack[-1].holds = True


def remove_tree(parent: Path, name: str) -> list[Path]:
    """Delete the folder `parent/name` and everything in it, never leaving it (the module's rules);
    the paths left as they were, on another device or mounted, with the folders holding them kept.
    OSError naming what cannot be removed."""
    path = Path(parent) / name
    if not _ABLE:  # pragma: no cover - every platform triage ships on
        raise OSError(errno.ENOTSUP, "this system cannot remove a folder without following links", str(path))
    try:
        top = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)  # the cache folder itself may be a link
    except FileNotFoundError:  # removed meanwhile, with all in it
        return []
    try:
        home = os.fstat(top)
        mounts = mount_points(os.path.join(os.path.realpath(parent), name))
        for _ in range(_PASSES):
            walk = _Removal(path, home.st_dev, mounts)
            fd = _open_top(walk, top, name)
            if fd is None:
                return walk.left
            if walk.run(fd, (home.st_dev, home.st_ino)):
                return walk.left
        raise OSError(errno.ESTALE, "changed while it was removed", str(path))
    finally:
        os.close(top)


def _open_top(walk: _Removal, top: int, name: str) -> int | None:
    """The folder `name` in `top`, opened as the walk's first level; None when there is nothing to
    walk: gone (another removal), or on another device (then in `walk.left`)."""
    not_a_folder = NotADirectoryError(errno.ENOTDIR, "not a real folder", str(walk.path))
    try:
        st = _status(name, top)
        if not stat.S_ISDIR(st.st_mode):
            raise not_a_folder
        if walk.foreign(st):
            walk.left.append(walk.path)
            return None
        fd = os.open(name, _DIR, dir_fd=top)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):  # a link or a file under the folder's name
            raise not_a_folder from None
        raise OSError(e.errno, e.strerror, str(walk.path)) from None
    st = os.fstat(fd)
    if walk.foreign(st):  # mounted on since it was read
        os.close(fd)
        walk.left.append(walk.path)
        return None
    walk.stack.append(_Level.of(st, name))
    return fd
