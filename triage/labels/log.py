"""The amendment log: every session file of one folder, merged in file-name order (docs/labels.md "Label
amendments").

A record counts once however many files hold it: records are merged by `id`, so a copied session
file (`x (copy).jsonl`), a linked one or a record written twice (a retry after a short write) adds
nothing. One id with two different contents is reported, the first kept. Only regular files are
read: a FIFO or a device named `*.jsonl` is reported, never opened.

A log is read on from an earlier one (`read_log(..., since=log)`: the open app, every second): of
each file only the bytes appended since are read, their lines checked against the chain where it
left off, so the log is the one a whole read gives. A file that shrank, was replaced or whose last
line read differs is read whole again; records read before and gone now are reported (`GONE`). An
unterminated last line is left for the next look (a writer may be mid-append) and reported as torn
once it is still there then. Nothing else is read again: a rewrite before a file's last line that
keeps its length is seen by the next whole read (`labels verify`, the next start).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path

from triage.core.inputs.shapes import is_pattern
from triage.core.text.sanitize import counted
from triage.labels.records import EMPTY_SCAN, Problem, ProblemKind, Record, Scan, scan

CHECK = 64  # bytes read again before reading a file on: its last line read (which holds its hash) and these


@dataclass(frozen=True)
class FileRead:
    """One session file as read: which file, how far, and what it gives the log."""

    identity: tuple[int, int] | None  # (device, inode); None: not read (special, unreadable, removed)
    size: int  # its size when read
    mtime: int = 0  # its modification time when read (ns)
    scan: Scan = EMPTY_SCAN  # its lines through scan.end
    check: bytes = b""  # the bytes before scan.end: its last complete line and CHECK more
    kept: tuple[Record, ...] = ()  # its records the log counts: ids no file before it holds
    duplicates: tuple[Problem, ...] = ()  # ids read before (this file or one before it), other content
    bases: frozenset[str] = frozenset()  # the frozen-file digests its kept records name
    pending: bool = False  # an unterminated tail first seen at this look: reported if still there next
    special: Problem | None = None  # why it was not read
    lost: Lost | None = None  # records read from it at an earlier look that it no longer holds


@dataclass(frozen=True)
class Lost:
    """Records read from a file at an earlier look that it no longer holds, and what happened to it."""

    records: tuple[Record, ...]
    why: str
    at: int = 0  # the byte offset it shrank to

    def problem(self, name: str) -> Problem:
        n = len(self.records)
        seqs = ", ".join(str(r.seq) for r in self.records[:5]) + (", …" if n > 5 else "")
        return Problem(
            name,
            self.at,
            ProblemKind.GONE,
            f"{counted(n, 'record')} read from it earlier (seq {seqs}) {'is' if n == 1 else 'are'} "
            f"no longer in it: {self.why}",
        )


@dataclass(frozen=True)
class Reading:
    """How a log was read, to read on from it: each file by name, the record counted per id, and
    (read on from an earlier log) the records this log adds to that log's, when it only adds."""

    frozen_sha256: str
    apply_stale: bool
    files: dict[str, FileRead]
    seen: dict[str, Record]
    grown_from: tuple[Record, ...] | None = None  # the earlier log's records (None: not only added)
    added: tuple[Record, ...] = ()  # the records added to them, in merge order


@dataclass(frozen=True, repr=False)  # it holds every record: a repr counts them
class Log:
    """Every amendment file of a folder, merged in file-name order, as read. `problems` holds what
    was not applied and why; `damage` those that are damage (not a repaired tear, not a stale base)."""

    folder: Path
    records: tuple[Record, ...]
    problems: tuple[Problem, ...]
    stale: tuple[str, ...]  # files written against another frozen file (not applied unless asked)
    applied_stale: bool = False  # the stale files' records were applied anyway (--apply-stale)
    reading: Reading | None = field(default=None, compare=False, repr=False)  # to read on from it

    def __repr__(self) -> str:
        return f"Log({str(self.folder)!r}, {len(self.records)} records, {len(self.problems)} problems)"

    @property
    def damage(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.kind not in (ProblemKind.BASE, ProblemKind.REPAIRED))

    @property
    def apply_stale(self) -> bool:
        """Whether it was read to apply stale files (`--apply-stale`), whether or not there were any."""
        return self.reading.apply_stale if self.reading is not None else self.applied_stale

    def holds(self, record_id: str) -> bool:
        """Whether the record of this id is applied (read, and not from a stale file unless asked)."""
        if self.reading is None:
            return any(r.id == record_id for r in self.records)
        first = self.reading.seen.get(record_id)
        return first is not None and (self.applied_stale or first.file not in self.stale)

    def adds_to(self, earlier: Log) -> bool:
        """Whether this log is `earlier` with records added (`added`) and none taken away or moved."""
        return self.reading is not None and self.reading.grown_from is earlier.records

    @property
    def added(self) -> tuple[Record, ...]:
        """The records this log adds to the one it was read on from (see `adds_to`)."""
        return self.reading.added if self.reading is not None else ()


def read_log(
    folder: Path | None, frozen_sha256: str, apply_stale: bool = False, since: Log | None = None
) -> Log:
    """The log of `folder`; with `since` (a log of the same folder), read on from it: only what was
    appended since is read, and `since` itself is returned when nothing changed."""
    if folder is None:
        return Log(Path(), (), (), ())
    before = since.reading if since is not None and since.folder == folder else None
    if before is not None and (before.frozen_sha256, before.apply_stale) != (frozen_sha256, apply_stale):
        before = None
    names = _names(folder)
    if names is None:  # the folder cannot be listed now: read again at the next look
        return since if before is not None and since is not None else Log(folder, (), (), ())
    old = before.files if before is not None else {}
    files = {}
    for name in sorted({*names, *old}):
        if name in names:
            files[name] = _read(folder / name, name, old.get(name), live=before is not None)
        else:  # removed since the last look
            files[name] = _removed(old[name])
    if before is not None and since is not None and files.keys() == old.keys():
        if all(files[name] is old[name] for name in files):
            return since
    merged = _merged_on(files, old, before) if before is not None else None
    if merged is None:
        merged = _merged(files)
    files, seen, added = merged
    records, problems, stale = _assembled(files, frozen_sha256, apply_stale)
    grown_from = since.records if added is not None and since is not None else None
    reading = Reading(frozen_sha256, apply_stale, files, seen, grown_from, added or ())
    return Log(folder, records, problems, stale, apply_stale and bool(stale), reading)


def _names(folder: Path) -> set[str] | None:
    """The `*.jsonl` names in `folder` (none when it is not a folder); None: it cannot be listed."""
    if not folder.is_dir():
        return set()
    try:
        with os.scandir(folder) as entries:
            return {e.name for e in entries if e.name.endswith(".jsonl")}
    except OSError:
        return None


def _read(path: Path, name: str, old: FileRead | None, live: bool) -> FileRead:
    """`path` read on from `old` (its last read): unchanged, its new bytes, or whole again."""
    try:
        st = os.stat(path)
    except OSError as e:
        return _unread(old, Problem(name, 0, ProblemKind.SPECIAL, f"cannot be read: {e.strerror}"))
    if not stat.S_ISREG(st.st_mode):
        return _unread(old, Problem(name, 0, ProblemKind.SPECIAL, "not a regular file; not read"))
    if old is not None and (old.identity, old.size, old.mtime) == _stamp(st):
        return replace(old, pending=False) if old.pending else old  # a tail still torn is reported now
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO swapped in meanwhile: no wait
    except OSError as e:
        return _unread(old, Problem(name, 0, ProblemKind.SPECIAL, f"cannot be read: {e.strerror}"))
    try:
        st = os.fstat(fd)  # the file opened is the one read
        if not stat.S_ISREG(st.st_mode):
            return _unread(old, Problem(name, 0, ProblemKind.SPECIAL, "not a regular file; not read"))
        identity = (st.st_dev, st.st_ino)
        on = old if old is not None and _unchanged_before(fd, old, identity, st.st_size) else None
        start = on.scan.end if on is not None else 0
        data = _pread(fd, start, st.st_size)
    except OSError as e:
        return _unread(old, Problem(name, 0, ProblemKind.SPECIAL, f"cannot be read: {e.strerror}"))
    finally:
        os.close(fd)
    found = scan(data, name, on.scan if on is not None else None)
    need = len(found.last_line or b"") + CHECK
    check = ((on.check if on is not None else b"") + data[: found.end - start])[-need:]
    read = FileRead(*_stamp(st), found, check, pending=live and found.torn_at is not None)
    if old is None:
        return read
    if on is not None:  # read on: records lost before may have come back
        return replace(read, lost=_lost(replace(old, scan=EMPTY_SCAN), found.records, "", 0))
    why = (
        "another file now has its name"
        if old.identity != identity
        else f"it shrank to {st.st_size:,} bytes"
        if st.st_size < old.scan.end
        else "its bytes were rewritten"
    )
    return replace(read, lost=_lost(old, found.records, why, st.st_size if st.st_size < old.scan.end else 0))


def _stamp(st: os.stat_result) -> tuple[tuple[int, int], int, int]:
    """A file's identity, size and modification time: unchanged, it is not read again."""
    return (st.st_dev, st.st_ino), st.st_size, st.st_mtime_ns


def _unchanged_before(fd: int, old: FileRead, identity: tuple[int, int], size: int) -> bool:
    """Whether the file open at `fd` is the one `old` read, still holding the bytes read last."""
    end = old.scan.end
    if old.identity != identity or size < end:
        return False
    return _pread(fd, end - len(old.check), end) == old.check


def _pread(fd: int, start: int, end: int) -> bytes:
    parts = []
    while start < end:
        got = os.pread(fd, min(end - start, 1 << 24), start)
        if not got:
            break
        parts.append(got)
        start += len(got)
    return b"".join(parts)


def _unread(old: FileRead | None, why: Problem) -> FileRead:
    """A file not read (`why`): what was read from it before is gone."""
    if old is not None and old.special == why:
        return old  # as at the last look
    return FileRead(None, 0, special=why, lost=_lost(old, [], "it can no longer be read", 0))


def _removed(old: FileRead) -> FileRead:
    if old.identity is None:
        return old
    return FileRead(None, 0, lost=_lost(old, [], "the file was removed", 0))


def _lost(old: FileRead | None, now: list[Record], why: str, at: int) -> Lost | None:
    """The records `old` read, or had lost before, that `now` does not hold (None: none)."""
    if old is None or (old.lost is None and not old.scan.records):
        return None
    held = {r.id for r in now}
    before = old.lost.records if old.lost is not None else ()
    gone = {r.id: r for r in (*before, *old.scan.records) if r.id not in held}
    if not gone:
        return None
    fresh = any(r.id not in held for r in old.scan.records)  # lost now: say what happened now
    return (
        Lost(tuple(gone.values()), why, at)
        if fresh or old.lost is None
        else replace(old.lost, records=tuple(gone.values()))
    )


Merged = tuple[dict[str, FileRead], dict[str, Record], tuple[Record, ...] | None]


def _merged(files: dict[str, FileRead]) -> Merged:
    """Every file's records merged afresh, in name order: the first record of each id counts."""
    seen: dict[str, Record] = {}
    out = {}
    for name, read in files.items():
        kept, duplicates = _merge(read.scan.records, name, seen)
        out[name] = replace(read, kept=tuple(kept), duplicates=tuple(duplicates), bases=_bases(kept))
    return out, seen, None


def _merged_on(files: dict[str, FileRead], old: dict[str, FileRead], before: Reading) -> Merged | None:
    """The records appended since the last look merged onto it, and those the log gains; None when
    the log does not only gain records (one was taken away, a file turned stale, or an id now
    counts from a file before the one it counted from): then everything is merged afresh."""
    seen = dict(before.seen)
    out, added = {}, []
    for name, read in files.items():
        was = old.get(name, FileRead(None, 0))
        new = _appended(read, was)
        if new is None:
            return None
        if not new:
            out[name] = replace(read, kept=was.kept, duplicates=was.duplicates, bases=was.bases)
            continue
        if any(seen[r.id].file > name for r in new if r.id in seen):
            return None  # it counted from a later file: now from this one
        kept, duplicates = _merge(new, name, seen)
        bases = was.bases | _bases(kept)
        if was.kept and _stale(bases, before) != _stale(was.bases, before):
            return None  # the file turned stale: its records leave the log
        out[name] = replace(
            read, kept=was.kept + tuple(kept), duplicates=was.duplicates + tuple(duplicates), bases=bases
        )
        if not _stale(bases, before) or before.apply_stale:
            added += kept
    return out, seen, tuple(added)


def _appended(read: FileRead, was: FileRead) -> list[Record] | None:
    """The records `read` holds after those `was` held; None when it does not hold them all first."""
    old, now = was.scan.records, read.scan.records
    if len(now) < len(old) or (old and now[len(old) - 1] is not old[-1]):
        return None  # one was taken away (a chain broken at the last), or the file was read anew
    return now[len(old) :]


def _stale(bases: frozenset[str], reading: Reading) -> bool:
    return bool(bases - {reading.frozen_sha256})


def _merge(records: list[Record], name: str, seen: dict[str, Record]) -> tuple[list[Record], list[Problem]]:
    """`records` of file `name` not counted yet (`seen` grows by them), and the ids `seen` holds
    with other content."""
    kept, duplicates = [], []
    for r in records:
        first = seen.setdefault(r.id, r)
        if first is r:
            kept.append(r)
        elif _without_place(first) != _without_place(r):
            duplicates.append(
                Problem(
                    name,
                    0,
                    ProblemKind.DUPLICATE,
                    f"record id {r.id} holds other content than in {first.file}; the first is kept",
                    r.seq,
                )
            )
    return kept, duplicates


def _bases(records: list[Record]) -> frozenset[str]:
    return frozenset(r.base for r in records)


def _assembled(
    files: dict[str, FileRead], frozen_sha256: str, apply_stale: bool
) -> tuple[tuple[Record, ...], tuple[Problem, ...], tuple[str, ...]]:
    """The log's records, problems and stale files, file by file in name order."""
    applied, problems, stale = [], [], []
    for name, read in files.items():
        if read.special is not None:
            problems.append(read.special)
        problems += read.scan.problems[:-1] if read.pending else read.scan.problems  # the tail last
        problems += read.duplicates
        wrong = sorted(read.bases - {frozen_sha256})
        if wrong:
            stale.append(name)
            problems.append(
                Problem(
                    name,
                    0,
                    ProblemKind.BASE,
                    f"written against frozen labels {wrong[0][:12]}, not the current {frozen_sha256[:12]}"
                    + (
                        "; applied anyway as asked"
                        if apply_stale
                        else "; not applied (--apply-stale to apply)"
                    ),
                )
            )
        if read.lost is not None:
            problems.append(read.lost.problem(name))
        if not wrong or apply_stale:
            applied.append(read.kept)
    return tuple(chain.from_iterable(applied)), tuple(problems), tuple(stale)


def _without_place(r: Record) -> Record:
    """A record without what depends on where it was written (a retry lands at another seq)."""
    return replace(r, seq=0, prev=None, repairs=None, hash=None, file="")


def default_folder(labels: Path) -> Path:
    """`<labels stem>.amendments/` beside the frozen label file (or folder); for a glob, beside
    the folder that holds its matches (`labels/part-*.parquet` → `labels.amendments/`)."""
    while is_pattern(labels) and labels.parent != labels:
        labels = labels.parent
    return labels.with_name(labels.stem + ".amendments")
