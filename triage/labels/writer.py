"""Appending records to this session's file: one `write` of the whole line under an exclusive
`flock`, then `fsync`. One file per review session, so every file has one writer; nothing ever
truncates or rewrites a file; a writer that finds an unterminated last line first writes a newline.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import replace
from pathlib import Path

from triage.core.errors import InputError
from triage.core.files import Protected, open_append, protect, refuse_target
from triage.core.inputs.frozen import sha256_file
from triage.labels.records import VERDICT, Op, Record, line_hash, now, parse_record, scan, session_file_name
from triage.labels.verdicts import Cause


class FrozenFileChanged(Exception):
    """The frozen label file's bytes changed under a running session."""


class LabelsNotAFile(FrozenFileChanged):
    """The frozen labels were given as a table (the Python API): no file to check a write against."""


class Writer:
    """Appends records to this session's file; one record per call, durable when it returns."""

    def __init__(
        self,
        folder: Path,
        frozen: Path | None,
        base: str,
        reviewer: str,
        file_name: str | None = None,
        inputs: list[Path] | None = None,
        forbidden: Protected | None = None,
    ):
        """`inputs`: the evaluation's files, never to be written (the frozen file always is one);
        `forbidden` (`Spec.forbidden`, without the amendments folder) also every input folder: the
        session file is never written inside one. `frozen` None: the labels were given as a table,
        and every `append` is refused. Nothing is checked or created until the first `append`."""
        self.folder = folder
        self.frozen = frozen
        self.base = base
        self.reviewer = reviewer
        self.path = folder / (file_name or session_file_name(reviewer))
        self.protected = protect([frozen, *(inputs or [])])
        self.forbidden = forbidden
        self._tail: tuple[int, int, str | None] | None = None  # (file size, last seq, its line hash)

    def new_record(
        self,
        op: Op,
        query_id: str,
        chunk_id: str,
        relevance: int = 1,
        note: str = "",
        retracts: str | None = None,
        evidence: dict[str, object] | None = None,
        resolves: tuple[str, ...] | None = None,
        cause: Cause | None = None,
    ) -> Record:
        """A record not yet written (seq and prev are set when it is). A verdict (`op` verdict)
        needs a `cause` and names no chunk (`new_verdict`); a judgement has no cause."""
        if (op == VERDICT) != (cause is not None):
            raise ValueError("a verdict, and only a verdict, has a cause")
        return Record(
            id=secrets.token_hex(8),
            seq=0,
            op=op,
            query_id=query_id,
            chunk_id=chunk_id,
            relevance=relevance,
            reviewer=self.reviewer,
            at=now(),
            base=self.base,
            prev=None,
            note=note,
            retracts=retracts,
            evidence=evidence,
            resolves=resolves,
            cause=cause,
        )

    def new_verdict(self, query_id: str, cause: Cause, note: str = "") -> Record:
        """A verdict not yet written: no chunk, no grade (spelled "" and 0 in memory, absent on disk)."""
        return self.new_record(VERDICT, query_id, "", 0, note, cause=cause)

    def append(self, record: Record) -> Record:
        """Write `record` as the next line of the chain; OSError if the disk refuses."""
        if self.frozen is None:
            raise LabelsNotAFile(
                "the labels were given as a table or taken from the runs: judgements are saved only for "
                "labels given as a file (triage labels export writes one)"
            )
        if sha256_file(self.frozen) != self.base:
            raise FrozenFileChanged(f"{self.frozen} changed since triage started; refusing to write")
        refuse_frozen_path(self.folder, self.path, self.frozen)
        record.content_hash()  # text JSON cannot hold (jsontext.NotJSON) is refused before any file is made
        for never in (self.protected, self.forbidden):
            if never is not None:
                try:  # before the folder is made: nothing is created inside an input
                    refuse_target(self.path, never)
                except InputError as e:
                    raise OSError(e.message) from None
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = open_append(self.path, self.protected | (self.forbidden or frozenset()))  # no link, no input
        try:
            import fcntl  # POSIX only: imported here so `triage report` runs where it is missing

            fcntl.flock(fd, fcntl.LOCK_EX)  # another process appending to this file waits here
            size = os.fstat(fd).st_size
            if self._tail is not None and self._tail[0] == size:
                # Nobody wrote since our last record: the chain's end is known without a re-read.
                _, last_seq, prev = self._tail
                seq, torn, repairs = last_seq + 1, False, None
            else:
                found = scan(_read_all(fd), self.path.name)
                seq = found.last_seq + 1
                torn = found.torn_at is not None
                # A torn tail becomes a complete line when our newline lands: the chain runs through it.
                end = found.torn if torn else found.last_line
                prev = line_hash(end) if end is not None else None
                repairs = found.torn_at
                if torn:  # all of a record but its newline may have landed: count its seq
                    try:
                        seq = max(seq, parse_record(found.torn).seq + 1)
                    except (ValueError, UnicodeDecodeError):
                        pass
            done = replace(record, seq=seq, prev=prev, repairs=repairs, file=self.path.name).sealed()
            line = done.line()
            payload = (b"\n" if torn else b"") + line + b"\n"  # one write: the whole line
            written = os.write(fd, payload)
            if written != len(payload):
                raise OSError(f"short write: {written} of {len(payload)} bytes")
            os.fsync(fd)
            self._tail = (size + len(payload), seq, line_hash(line))
            return done
        finally:
            os.close(fd)  # closing releases the lock


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0) if size else b""


def refuse_frozen_path(folder: Path, path: Path, frozen: Path) -> None:
    """An amendments folder or file that is (or links to) the frozen file is refused."""
    target = frozen.resolve()
    for p in (folder, path):
        if p.exists() or p.is_symlink():
            if p.resolve() == target or (p.exists() and os.path.samefile(p, frozen)):
                raise FrozenFileChanged(f"{p} resolves to the frozen label file {frozen}; refusing to write")
    if folder.resolve() == target:
        raise FrozenFileChanged(f"{folder} resolves to the frozen label file {frozen}; refusing to write")
