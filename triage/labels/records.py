"""Review records (docs/labels.md "Label amendments"), one per JSON line: a judgement (`add`), the
retraction of one
(`retract`), or a verdict (`verdict`: a reader's cause and note for a query; it names no chunk
and no grade, and no label state reads it).

Each record proves itself and its place: `hash` is the sha256 of its own canonical content (every
stored field but `hash`), and `prev` the sha256 of the previous complete line of its file (without
its newline), so a session file is a chain. Reading keeps every good record and reports the rest:
an unterminated last line (a crash mid-write) is skipped; a complete line that does not parse, fails
the schema or whose `hash` does not match its content (an edit) is quarantined alone, with its file
and byte offset. Where a record's `prev` (or `seq`) does not follow the line before it, the chain
is broken there, and the record before the break is as suspect as the one after it (a line
rewritten with its own hash recomputed breaks the chain only at the next line): neither is applied,
and the break names both. The chain holds no secret: it shows that a file was changed between its
lines, never that a whole file was not rewritten (an append at its end, or a cut at a line's end,
is not detectable either). A fragment completed by a later writer's newline (`repairs` names its
offset) is reported as repaired, not as damage. Writing is `writer.py`; merging files is `log.py`.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import secrets
import socket
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from triage.labels import jsontext
from triage.labels.verdicts import Cause, Verdict

SCHEMA = 1


class Op(StrEnum):
    ADD = "add"  # a judgement: relevance ≥ 1 is gold, 0 is judged not relevant
    RETRACT = "retract"  # withdraws the add named by `retracts`
    VERDICT = "verdict"  # a reader's conclusion about a query (`cause`, `note`): never a label


ADD, RETRACT, VERDICT = Op.ADD, Op.RETRACT, Op.VERDICT
JUDGEMENT_OPS = (ADD, RETRACT)  # the records the label state reads
# A verdict names no chunk: it stores none of these (in memory: chunk_id "", relevance 0).
_NOT_IN_VERDICTS = ("chunk_id", "relevance", "retracts", "evidence", "resolves")
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
    "hash",
    "repairs",
    "resolves",
    "cause",
}
MAX_INT = 2**53  # integers in a record (seq, relevance, offsets) stay below this: exact in JSON


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
    repairs: int | None = None  # byte offset of a torn line this record's newline completed
    resolves: tuple[str, ...] | None = None  # ids of the conflicting judgements this one settles
    hash: str | None = None  # sha256 of the canonical content; None only in records of old writers
    cause: Cause | None = None  # a verdict's cause; set exactly when op is verdict
    file: str = field(default="", compare=False)  # where it was read from (not stored)
    file_offset: int = field(default=-1, compare=False)  # its line's byte offset there (not stored)

    def _body(self) -> dict[str, object]:
        body = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("file", "file_offset", "hash")
        }
        for optional in ("repairs", "resolves", "cause"):  # absent, not null: old records' hashes hold
            if body[optional] is None:
                del body[optional]
        if self.op == VERDICT:
            for absent in _NOT_IN_VERDICTS:
                body.pop(absent, None)
        if "resolves" in body:
            body["resolves"] = list(self.resolves or ())
        return body

    def as_verdict(self, saved: bool = True) -> Verdict | None:
        """This record as a verdict (None: a judgement)."""
        if self.cause is None:
            return None
        return Verdict(self.id, self.query_id, self.cause, self.note, self.reviewer, self.at, saved)

    def content_hash(self) -> str:
        """sha256 of the canonical JSON of every stored field but `hash`."""
        return canonical_hash(self._body())

    def sealed(self) -> Record:
        """This record with its `hash` set."""
        return replace(self, hash=self.content_hash())

    def line(self) -> bytes:
        """The record's line as written (no newline): its fields, keys sorted, `", "` and `": "`."""
        return jsontext.dumps({**self._body(), "hash": self.hash}, sort_keys=True, spaced=True)


class ProblemKind(StrEnum):
    TORN = "torn"  # an unterminated last line: a write cut short
    QUARANTINED = "quarantined"  # a complete line that is not a valid record
    CHAIN = "chain"  # a record whose prev or seq does not follow the line before it
    EDITED = "edited"  # a record whose content does not match its own hash: changed after writing
    REPAIRED = "repaired"  # a torn line a later writer completed with a newline: not damage
    DUPLICATE = "duplicate"  # one id with two different contents (copies with the same content merge)
    SPECIAL = "special"  # not a regular file (a FIFO, a device, a socket): not read
    BASE = "base"  # a file written against another frozen label file
    GONE = "gone"  # records read earlier (the open app reads on) that their file no longer holds


@dataclass(frozen=True)
class Problem:
    file: str
    offset: int  # byte offset of the line in its file
    kind: ProblemKind
    message: str
    seq: int | None = None
    before: int | None = None  # a broken chain: byte offset of the record before the break
    before_seq: int | None = None

    def __str__(self) -> str:
        seq = f" (seq {self.seq})" if self.seq is not None else ""
        return f"{self.file} at byte {self.offset}{seq}: {self.message}"


def _place(seq: int, offset: int) -> str:
    return f"seq {seq} (byte {offset})"


def canonical_hash(body: dict[str, object]) -> str:
    """sha256 of `body` as canonical JSON: keys sorted, no spaces, UTF-8 (`jsontext`: the text
    Python's `json.dumps` wrote when the first records were sealed)."""
    return hashlib.sha256(jsontext.dumps(body, sort_keys=True)).hexdigest()


class Edited(ValueError):
    """A record whose content does not match its own hash."""


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def reviewer_name(given: str | None = None) -> str:
    """--reviewer, else TRIAGE_REVIEWER, else the login name."""
    return reviewer_source(given)[0]


def reviewer_source(given: str | None = None) -> tuple[str, str]:
    """The reviewer's name and where it came from: "--reviewer" (`given`), else "TRIAGE_REVIEWER",
    else "the login name"."""
    if given:
        return given, "--reviewer"
    name = os.environ.get("TRIAGE_REVIEWER")
    if name:
        return name, "TRIAGE_REVIEWER"
    try:
        return getpass.getuser(), "the login name"
    except (KeyError, OSError):
        return "unknown", "the login name"


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", part).strip("-") or "x"


def session_file_name(reviewer: str) -> str:
    """`<reviewer>@<host>.<UTC time to the microsecond>-<random>.jsonl`. Files merge in name order,
    so one reviewer's sessions on one host merge in the order they began: the microseconds keep two
    sessions begun in one second (scripted `labels judge` calls) in order, and with them which of a
    reviewer's judgements is the later one."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{_safe(reviewer)}@{_safe(socket.gethostname())}.{stamp}-{secrets.token_hex(3)}.jsonl"


def parse_record(raw: bytes) -> Record:
    """One complete line to a Record, or ValueError naming what is wrong."""
    try:
        obj = json.loads(raw.decode("utf-8"))
    except RecursionError:  # a line of 3,000 `[`: damaged, like any other unreadable line
        raise ValueError("JSON nested too deeply to read") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    _check_fields(obj)
    cause = _cause(obj)
    verdict = cause is not None
    rel = _check_values(obj, verdict)
    resolves, repairs = obj.get("resolves"), obj.get("repairs")
    try:  # a lone surrogate (`"\\ud800"`) parses, then fails wherever the text is used
        jsontext.dumps(obj)
    except jsontext.NotJSON:
        raise ValueError("text that is not valid Unicode (a lone surrogate)") from None
    if (
        obj.get("hash") is not None
        and canonical_hash({k: v for k, v in obj.items() if k != "hash"}) != obj["hash"]
    ):
        raise Edited("its content does not match its hash")
    return Record(
        id=obj["id"],
        seq=obj["seq"],
        op=Op(obj["op"]),
        query_id=obj["query_id"],
        chunk_id="" if verdict else obj["chunk_id"],
        relevance=rel,
        reviewer=obj["reviewer"],
        at=obj["at"],
        base=obj["base"],
        prev=obj.get("prev"),
        note=obj.get("note") or "",
        retracts=obj.get("retracts"),
        evidence=obj.get("evidence"),
        repairs=repairs,
        resolves=tuple(resolves) if resolves is not None else None,
        hash=obj.get("hash"),
        cause=cause,
    )


def _check_fields(obj: dict[str, object]) -> None:
    """The fields a record must have and may have, its schema, and its op."""
    missing = {"schema", "id", "seq", "op", "query_id", "reviewer", "at", "base"} - set(obj)
    if obj.get("op") in JUDGEMENT_OPS and "chunk_id" not in obj:  # a verdict names no chunk
        missing.add("chunk_id")
    if missing:
        raise ValueError(f"missing {', '.join(sorted(missing))}")
    unknown = set(obj) - _FIELDS
    if unknown:
        raise ValueError(f"unknown field {sorted(unknown)[0]!r}")
    if obj["schema"] != SCHEMA:
        raise ValueError(f"schema {obj['schema']!r}, this triage reads {SCHEMA}")
    if obj["op"] not in (ADD, RETRACT, VERDICT):
        raise ValueError(f"op {_short(obj['op'])} is neither add, retract nor verdict")
    if obj["op"] == RETRACT and not isinstance(obj.get("retracts"), str):
        raise ValueError("a retract names no add (retracts)")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_values(obj: dict[str, object], verdict: bool) -> int:
    """Each field's type and range; the record's relevance (a verdict's: 0)."""
    for key in ("id", "query_id", "reviewer", "at", "base", *(() if verdict else ("chunk_id",))):
        if not isinstance(obj[key], str) or not obj[key]:
            raise ValueError(f"{key} must be a non-empty string")
    rel = 0 if verdict else obj.get("relevance", 1)  # 0: judged not relevant (a verdict: no grade)
    if not _whole(rel) or not 0 <= rel < MAX_INT:  # type: ignore[operator]
        raise ValueError(f"relevance {_short(rel)} must be an integer from 0 to 2^53")
    resolves = obj.get("resolves")
    if resolves is not None and (
        not isinstance(resolves, list) or not all(isinstance(r, str) and r for r in resolves)
    ):
        raise ValueError("resolves must be a list of record ids")
    if not _whole(obj["seq"]) or not 1 <= obj["seq"] < MAX_INT:  # type: ignore[operator]
        raise ValueError(f"seq {_short(obj['seq'])} must be a positive integer below 2^53")
    repairs = obj.get("repairs")
    if repairs is not None and (not _whole(repairs) or repairs < 0):  # type: ignore[operator]
        raise ValueError(f"repairs {_short(repairs)} must be a byte offset")
    typed = (("hash", str, "a string"), ("evidence", dict, "an object"), ("note", str, "a string"))
    for key, kind, what in typed:
        if obj.get(key) is not None and not isinstance(obj[key], kind):
            raise ValueError(f"{key} must be {what}")
    return rel  # type: ignore[return-value]


def _cause(obj: dict[str, object]) -> Cause | None:
    """A verdict's cause (None for a judgement), or ValueError: a verdict names a known cause and
    no chunk; a judgement names no cause."""
    if obj["op"] != VERDICT:
        if "cause" in obj:
            raise ValueError(f"a judgement ({obj['op']}) has no cause: only a verdict does")
        return None
    stray = [key for key in _NOT_IN_VERDICTS if key in obj]
    if stray:
        raise ValueError(f"a verdict names no chunk: {stray[0]} must be absent")
    cause = obj.get("cause")
    if not isinstance(cause, str) or cause not in {c.value for c in Cause}:
        raise ValueError(f"a verdict's cause {_short(cause)} is not one of {', '.join(Cause)}")
    return Cause(cause)


def _seq_of(raw: bytes) -> int | None:
    """The seq an edited line claims (for the report), if it says one."""
    try:
        seq = json.loads(raw).get("seq")
    except (ValueError, AttributeError, RecursionError):
        return None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _short(value: object) -> str:
    """A value for an error message, at most 40 characters (10**20 digits are not news)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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


@dataclass(frozen=True)
class Scan:
    """What a file holds: good records, problems, and where its chain ends for the next writer (or
    for a later scan of what is appended: `scan(..., after=)`).

    last_line: the last complete non-blank line; last_seq: the highest seq read (0: none);
    torn_at: the offset of an unterminated tail (None: the file ends with a newline); end: the
    bytes read through the last complete line (a torn tail is read again by the next scan);
    last_bad: the last complete line was not a good record; last_offset: the byte offset of the
    last record read that was not quarantined (-1: none); repaired: the offsets the records name
    in `repairs`; found: the problems as found, before a repair renamed any and without the tail."""

    records: list[Record]
    problems: list[Problem]
    last_line: bytes | None
    last_seq: int
    torn_at: int | None
    torn: bytes = b""
    end: int = 0
    last_bad: bool = False
    last_offset: int = -1
    repaired: tuple[int, ...] = ()
    found: tuple[Problem, ...] = ()


EMPTY_SCAN = Scan([], [], None, 0, None)  # the scan of no bytes


def scan(data: bytes, name: str, after: Scan | None = None) -> Scan:
    """Read one session file's bytes. The chain runs over every complete line: a line that is not a
    valid record (or is an edited one) is quarantined alone and the next record is checked against
    it; where a record's `prev` does not follow a good record, both are disowned (not applied) and
    the break is reported naming both.

    With `after` (the scan of the file's bytes before `data`, which starts at `after.end`), the
    chain goes on from there: the result is the scan of the whole file read at once."""
    after = after or EMPTY_SCAN
    start, records, problems = after.end, list(after.records), list(after.found)
    last, last_seq, repaired = after.last_line, after.last_seq, list(after.repaired)
    last_bad = after.last_bad  # the line before was quarantined: a mismatch at the next one is explained
    last_offset = after.last_offset  # byte offset of the last good record kept
    lines, torn_at = _lines(data)
    for at, raw in lines:
        offset = start + at
        want = line_hash(last) if last is not None else None
        last, was_bad, last_bad = raw, last_bad, True
        try:
            rec = parse_record(raw)
        except Edited:
            seq = _seq_of(raw)
            problems.append(
                Problem(
                    name,
                    offset,
                    ProblemKind.EDITED,
                    "edited after it was written (its content does not match its hash); quarantined",
                    seq,
                )
            )
            continue
        except (ValueError, UnicodeDecodeError) as e:
            problems.append(
                Problem(name, offset, ProblemKind.QUARANTINED, f"unreadable record, quarantined: {e}")
            )
            continue
        follows = rec.prev == want and rec.seq == last_seq + 1
        if not follows and not was_bad:
            what = (
                "prev is not the hash of the line before"
                if rec.prev != want
                else f"seq {rec.seq}, expected {last_seq + 1}"
            )
            # The line before is as suspect as this one (it may be the one rewritten, its own hash
            # recomputed): neither is applied; a reviewer re-affirms them with a new judgement.
            before = records.pop() if records and records[-1].file_offset == last_offset else None
            if before is not None and before.repairs is not None:
                repaired.remove(before.repairs)
            both = (
                f"between {_place(before.seq, last_offset)} and {_place(rec.seq, offset)}"
                if before is not None
                else f"at {_place(rec.seq, offset)}"
            )
            problems.append(
                Problem(
                    name,
                    offset,
                    ProblemKind.CHAIN,
                    f"chain broken {both}: {what} (a line was removed, inserted or rewritten); "
                    + ("neither record is applied" if before is not None else "not applied"),
                    rec.seq,
                    None if before is None else last_offset,
                    None if before is None else before.seq,
                )
            )
            last_seq = max(last_seq, rec.seq)
            last_offset = offset
            continue
        last_bad = False
        last_seq = max(last_seq, rec.seq)
        last_offset = offset
        records.append(replace(rec, file=name, file_offset=offset))
        if rec.repairs is not None:
            repaired.append(rec.repairs)
    found, fixed = tuple(problems), set(repaired)
    problems = [
        replace(
            p,
            kind=ProblemKind.REPAIRED,
            message="a write cut short (a crash or a full disk), completed by the next writer's newline: "
            "never acknowledged, nothing lost",
        )
        if p.kind is ProblemKind.QUARANTINED and p.offset in fixed
        else p
        for p in found
    ]
    torn = b""
    if torn_at is not None:
        torn = data[torn_at:]
        problems.append(
            Problem(
                name,
                start + torn_at,
                ProblemKind.TORN,
                "unterminated last line (a write cut short); skipped",
            )
        )
    end = start + (torn_at if torn_at is not None else len(data))
    torn_offset = start + torn_at if torn_at is not None else None
    return Scan(
        records,
        problems,
        last,
        last_seq,
        torn_offset,
        torn,
        end,
        last_bad,
        last_offset,
        tuple(repaired),
        found,
    )


def read_file(path: Path) -> tuple[list[Record], list[Problem]]:
    """Every good record of one file, and what was wrong with the rest."""
    found = scan(path.read_bytes(), path.name)
    return found.records, found.problems
