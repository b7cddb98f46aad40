"""The amendment log (DESIGN §6): added or retracted gold ids, kept apart from the frozen file.

One folder of JSON Lines files, one file per review session (`<reviewer>@<host>.<session>.jsonl`),
so every file has one writer. A record is appended as one `write` of the whole line under an
exclusive `flock`, then `fsync`; each record carries `prev`, the sha256 of the previous line of its
file (without its newline), so the file is a chain. Nothing ever truncates or rewrites a file.

Reading keeps every good record and reports the rest: an unterminated last line (a crash mid-write)
is skipped; a complete line that fails parsing, the schema or the chain is quarantined with its
file and byte offset.
"""

from __future__ import annotations

import fcntl
import getpass
import hashlib
import json
import os
import re
import secrets
import socket
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

SCHEMA = 1
ADD, RETRACT = "add", "retract"
_FIELDS = {
    "schema",
    "id",
    "seq",
    "op",
    "query_id",
    "chunk_id",
    "relevance",
    "retracts",
    "reviewer",
    "at",
    "note",
    "base",
    "evidence",
    "prev",
}


@dataclass(frozen=True)
class Record:
    id: str
    seq: int
    op: str
    query_id: str
    chunk_id: str
    relevance: int
    reviewer: str
    at: str
    base: str
    prev: str | None
    note: str = ""
    retracts: str | None = None
    evidence: dict[str, object] | None = None
    schema: int = SCHEMA
    file: str = field(default="", compare=False)  # where it was read from (not stored)

    def line(self) -> bytes:
        body = {k: v for k, v in asdict(self).items() if k != "file"}
        return json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")


@dataclass(frozen=True)
class Problem:
    file: str
    offset: int  # byte offset of the line in its file
    kind: str  # "torn" | "quarantined" | "chain" | "base"
    message: str
    seq: int | None = None

    def __str__(self) -> str:
        seq = f" (seq {self.seq})" if self.seq is not None else ""
        return f"{self.file} at byte {self.offset}{seq}: {self.message}"


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def reviewer_name(given: str | None = None) -> str:
    """--reviewer, else TRIAGE_REVIEWER, else the login name."""
    name = given or os.environ.get("TRIAGE_REVIEWER")
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = "unknown"
    return name


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", part).strip("-") or "x"


def session_file_name(reviewer: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{_safe(reviewer)}@{_safe(socket.gethostname())}.{stamp}-{secrets.token_hex(3)}.jsonl"


# -- reading ------------------------------------------------------------------------------------


def _parse(raw: bytes) -> Record:
    """One complete line to a Record, or ValueError naming what is wrong."""
    obj = json.loads(raw.decode("utf-8"))
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    missing = {"schema", "id", "seq", "op", "query_id", "chunk_id", "reviewer", "at", "base"} - set(obj)
    if missing:
        raise ValueError(f"missing {', '.join(sorted(missing))}")
    unknown = set(obj) - _FIELDS
    if unknown:
        raise ValueError(f"unknown field {sorted(unknown)[0]!r}")
    if obj["schema"] != SCHEMA:
        raise ValueError(f"schema {obj['schema']!r}, this triage reads {SCHEMA}")
    if obj["op"] not in (ADD, RETRACT):
        raise ValueError(f"op {obj['op']!r} is neither add nor retract")
    if obj["op"] == RETRACT and not isinstance(obj.get("retracts"), str):
        raise ValueError("a retract names no add (retracts)")
    for key in ("id", "query_id", "chunk_id", "reviewer", "at", "base"):
        if not isinstance(obj[key], str) or not obj[key]:
            raise ValueError(f"{key} must be a non-empty string")
    rel = obj.get("relevance", 1)
    if isinstance(rel, bool) or not isinstance(rel, int) or rel < 1:
        raise ValueError(f"relevance {rel!r} must be an integer ≥ 1")
    if isinstance(obj["seq"], bool) or not isinstance(obj["seq"], int) or obj["seq"] < 1:
        raise ValueError(f"seq {obj['seq']!r} must be a positive integer")
    if obj.get("evidence") is not None and not isinstance(obj["evidence"], dict):
        raise ValueError("evidence must be an object")
    if obj.get("note") is not None and not isinstance(obj["note"], str):
        raise ValueError("note must be a string")
    try:  # a lone surrogate (`"\\ud800"`) parses, then fails wherever the text is used
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text that is not valid Unicode (a lone surrogate)") from None
    return Record(
        id=obj["id"],
        seq=obj["seq"],
        op=obj["op"],
        query_id=obj["query_id"],
        chunk_id=obj["chunk_id"],
        relevance=rel,
        reviewer=obj["reviewer"],
        at=obj["at"],
        base=obj["base"],
        prev=obj.get("prev"),
        note=obj.get("note") or "",
        retracts=obj.get("retracts"),
        evidence=obj.get("evidence"),
    )


def _lines(data: bytes) -> tuple[list[tuple[int, bytes]], int | None]:
    """Complete non-blank lines with their byte offsets, and the offset of an unterminated tail."""
    out: list[tuple[int, bytes]] = []
    offset = 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            return out, offset
        if data[offset:end].strip():
            out.append((offset, data[offset:end]))
        offset = end + 1
    return out, None


def scan(data: bytes, name: str) -> tuple[list[Record], list[Problem], bytes | None]:
    """Good records, problems, and the last line that parsed as a record (the chain's end).

    The chain runs over lines that parse as records: an unreadable line is quarantined and
    skipped by the chain; a readable one whose `prev` or `seq` does not follow is quarantined as
    a chain break, and the chain goes on from it, so one lost line costs one record."""
    records: list[Record] = []
    problems: list[Problem] = []
    last: bytes | None = None
    expected_seq = 1
    lines, torn_at = _lines(data)
    for offset, raw in lines:
        try:
            rec = _parse(raw)
        except (ValueError, UnicodeDecodeError) as e:
            problems.append(Problem(name, offset, "quarantined", f"unreadable record, quarantined: {e}"))
            continue
        want = line_hash(last) if last is not None else None
        if rec.prev != want:
            problems.append(
                Problem(
                    name,
                    offset,
                    "chain",
                    "chain broken: prev is not the hash of the record before; quarantined",
                    rec.seq,
                )
            )
        elif rec.seq != expected_seq:
            problems.append(
                Problem(
                    name,
                    offset,
                    "chain",
                    f"chain broken: seq {rec.seq}, expected {expected_seq}; quarantined",
                    rec.seq,
                )
            )
        else:
            records.append(Record(**{**asdict(rec), "file": name}))
        expected_seq = rec.seq + 1
        last = raw
    if torn_at is not None:
        problems.append(Problem(name, torn_at, "torn", "unterminated last line (a write cut short); skipped"))
    return records, problems, last


def read_file(path: Path) -> tuple[list[Record], list[Problem]]:
    """Every good record of one file, and what was wrong with the rest."""
    records, problems, _ = scan(path.read_bytes(), path.name)
    return records, problems


@dataclass
class Log:
    """Every amendment file of a folder, merged in file-name order."""

    folder: Path
    records: list[Record]
    problems: list[Problem]
    stale: list[str]  # files written against another frozen file (not applied unless asked)


def read_log(folder: Path | None, frozen_sha256: str, apply_stale: bool = False) -> Log:
    records: list[Record] = []
    problems: list[Problem] = []
    stale: list[str] = []
    if folder is None or not folder.is_dir():
        return Log(folder or Path(), records, problems, stale)
    for path in sorted(folder.glob("*.jsonl")):
        got, bad = read_file(path)
        problems += bad
        wrong = sorted({r.base for r in got if r.base != frozen_sha256})
        if wrong:
            stale.append(path.name)
            problems.append(
                Problem(
                    path.name,
                    0,
                    "base",
                    f"written against frozen labels {wrong[0][:12]}, not the current {frozen_sha256[:12]}"
                    + (
                        "; applied anyway as asked"
                        if apply_stale
                        else "; not applied (--apply-stale to apply)"
                    ),
                )
            )
            if not apply_stale:
                continue
        records += got
    return Log(folder, records, problems, stale)


# -- writing ------------------------------------------------------------------------------------


class FrozenFileChanged(Exception):
    """The frozen label file's bytes changed under a running session."""


class Writer:
    """Appends records to this session's file; one record per call, durable when it returns."""

    def __init__(self, folder: Path, frozen: Path, base: str, reviewer: str, file_name: str | None = None):
        self.folder = folder
        self.frozen = frozen
        self.base = base
        self.reviewer = reviewer
        self.path = folder / (file_name or session_file_name(reviewer))
        refuse_frozen_path(self.folder, self.path, frozen)
        self._tail: tuple[int, int, str | None] | None = None  # (file size, last seq, its line hash)

    def new_record(
        self,
        op: str,
        query_id: str,
        chunk_id: str,
        relevance: int = 1,
        note: str = "",
        retracts: str | None = None,
        evidence: dict[str, object] | None = None,
    ) -> Record:
        """A record not yet written (seq and prev are set when it is)."""
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
        )

    def append(self, record: Record) -> Record:
        """Write `record` as the next line of the chain; OSError if the disk refuses."""
        from triage.labels.frozen import sha256_file

        if sha256_file(self.frozen) != self.base:
            raise FrozenFileChanged(f"{self.frozen} changed since triage started; refusing to write")
        self.folder.mkdir(parents=True, exist_ok=True)
        refuse_frozen_path(self.folder, self.path, self.frozen)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # another process appending to this file waits here
            size = os.fstat(fd).st_size
            if self._tail is not None and self._tail[0] == size:
                # Nobody wrote since our last record: the chain's end is known without a re-read.
                _, last_seq, prev = self._tail
                seq, torn = last_seq + 1, False
            else:
                data = _read_all(fd)
                _, _, last = scan(data, self.path.name)
                seq, prev = 1, None
                if last is not None:
                    prev = line_hash(last)
                    seq = int(json.loads(last)["seq"]) + 1
                torn = bool(data) and not data.endswith(b"\n")
            done = Record(**{**asdict(record), "seq": seq, "prev": prev, "file": self.path.name})
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


def default_folder(labels: Path) -> Path:
    return labels.with_name(labels.stem + ".amendments")
