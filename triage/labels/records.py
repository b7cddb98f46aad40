"""Amendment records (DESIGN §6): one judgement, or the retraction of one, per JSON line.

A session file is a chain: each record carries `prev`, the sha256 of the previous line of its file
(without its newline). Reading keeps every good record and reports the rest: an unterminated last
line (a crash mid-write) is skipped; a complete line that fails parsing, the schema or the chain is
quarantined with its file and byte offset. Writing is `writer.py`; merging files is `log.py`.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import secrets
import socket
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

SCHEMA = 1


class Op(StrEnum):
    ADD = "add"  # a judgement: relevance ≥ 1 is gold
    RETRACT = "retract"  # withdraws the add named by `retracts`


ADD, RETRACT = Op.ADD, Op.RETRACT
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
    op: Op
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


class ProblemKind(StrEnum):
    TORN = "torn"  # an unterminated last line: a write cut short
    QUARANTINED = "quarantined"  # a complete line that is not a valid record
    CHAIN = "chain"  # a valid record whose prev or seq does not follow the record before it
    BASE = "base"  # a file written against another frozen label file


@dataclass(frozen=True)
class Problem:
    file: str
    offset: int  # byte offset of the line in its file
    kind: ProblemKind
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
        op=Op(obj["op"]),
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
            problems.append(
                Problem(name, offset, ProblemKind.QUARANTINED, f"unreadable record, quarantined: {e}")
            )
            continue
        want = line_hash(last) if last is not None else None
        if rec.prev != want:
            problems.append(
                Problem(
                    name,
                    offset,
                    ProblemKind.CHAIN,
                    "chain broken: prev is not the hash of the record before; quarantined",
                    rec.seq,
                )
            )
        elif rec.seq != expected_seq:
            problems.append(
                Problem(
                    name,
                    offset,
                    ProblemKind.CHAIN,
                    f"chain broken: seq {rec.seq}, expected {expected_seq}; quarantined",
                    rec.seq,
                )
            )
        else:
            records.append(Record(**{**asdict(rec), "file": name}))
        expected_seq = rec.seq + 1
        last = raw
    if torn_at is not None:
        problems.append(
            Problem(name, torn_at, ProblemKind.TORN, "unterminated last line (a write cut short); skipped")
        )
    return records, problems, last


def read_file(path: Path) -> tuple[list[Record], list[Problem]]:
    """Every good record of one file, and what was wrong with the rest."""
    records, problems, _ = scan(path.read_bytes(), path.name)
    return records, problems
