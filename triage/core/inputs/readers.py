"""Read one tabular input file (Parquet, JSON Lines, TREC run or qrels) into an Arrow table.

Readers only parse; `contract.py` checks columns and types. Every failure is an `InputError`
naming the file, the row or line, and the problem. Text formats remember each record's line
number so later checks can name it. Text is parsed by Arrow (`arrowtext.py`); whenever that fast
path refuses a file, the line reader here reads it again, to name the line and the problem (or to
read a valid file whose spacing Arrow's parsers do not follow). gzip, zstd and bzip2 files are
decompressed first (`compressed.py`).
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.errors import InputError
from triage.core.ids import codes as ids
from triage.core.inputs import arrowtext
from triage.core.inputs.compressed import codec, decompress, inner_suffix

PARQUET_EXT = {".parquet", ".pq", ".parq"}
JSONL_EXT = {".jsonl", ".ndjson", ".json"}

_LFS = b"version https://git-lfs"


@dataclass(frozen=True)
class Parsed:
    """A parsed file: its table, its key/value metadata, and where each row came from."""

    path: Path
    table: pa.Table
    meta: dict[str, str] = field(default_factory=dict)
    lines: np.ndarray | None = None  # 1-based line number per row (text formats), else None
    # column -> (row, value) of its first integer too large for Arrow (JSON Lines): such a column
    # is kept as text (an id stays an id) and the contract names the row if it wanted a number
    oversize: dict[str, tuple[int, int]] = field(default_factory=dict)

    def where(self, row: int) -> str:
        """Human place of 0-based row `row`: "line N" for text files, "row N" for Parquet."""
        if self.lines is not None:
            return f"line {int(self.lines[row])}"
        return f"row {row + 1}"


def regular_file(path: Path) -> None:
    """Refuse, at once, what is not a regular file: a reader would block on a FIFO or a socket, and
    read a device such as /dev/zero until memory runs out."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(path, "file does not exist") from None
    except OSError as e:
        raise InputError(path, f"cannot be read: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise InputError(path, "is a folder, expected a file")
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device"
        )
        raise InputError(path, f"is {kind}, not a regular file; triage reads only regular files")


def sniff(path: Path) -> bytes:
    """Refuse missing, special, empty and LFS-pointer files before any parser sees them; the
    file's first bytes (as stored, compressed or not)."""
    regular_file(path)
    with path.open("rb") as f:
        head = f.read(64)
    if not head:
        raise InputError(path, "file is empty (0 bytes)")
    if head.startswith(_LFS):
        raise InputError(path, "is a Git LFS pointer, not the data; fetch it with `git lfs pull`")
    return head


STREAM_BYTES = 512 << 20  # Parquet files larger than this (bytes) are read through a buffer
BUFFER_BYTES = 8 << 20


def read_parquet(path: Path, columns: list[str] | None = None) -> Parsed:
    head = sniff(path)
    name = codec(path, head)
    source: Path | pa.BufferReader = path
    if name is not None:  # a compressed Parquet file is decompressed into memory
        data = decompress(path, name)
        head, source = data[:4], pa.BufferReader(data)
    if not head.startswith(b"PAR1"):
        raise InputError(path, "not a Parquet file (no PAR1 magic bytes at the start)")
    big = isinstance(source, Path) and source.stat().st_size > STREAM_BYTES
    try:
        # A large file is read through a small buffer, not a whole column chunk at a time: two 1.2 GB
        # runs decoded at once then peak at 6.4 GB instead of 7.6 GB, in the same time.
        pf = pq.ParquetFile(source, pre_buffer=not big, buffer_size=BUFFER_BYTES if big else 0)
        names = pf.schema_arrow.names
        repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if repeated is not None:
            raise InputError(path, f"has the column {repeated!r} more than once; a column is named once")
        wanted = None if columns is None else [c for c in columns if c in names]
        table = pf.read(columns=wanted, use_threads=True)
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot read Parquet (truncated or corrupt?): {e}") from None
    _valid_text(path, table)
    return Parsed(path, table.replace_schema_metadata(None), schema_meta(table))


def schema_meta(table: pa.Table) -> dict[str, str]:
    """A table's own key/value metadata, as text; Arrow's and pandas' bookkeeping keys left out."""
    raw = table.schema.metadata or {}
    return {
        k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
        for k, v in raw.items()
        if not k.startswith(b"ARROW:") and k != b"pandas"
    }


def from_table(name: str, table: pa.Table) -> Parsed:
    """An in-memory table parsed as a file named `name` would be: errors name it, and a row by
    its 1-based number ("run a: row 3: …"); its schema metadata is its run metadata."""
    where = Path(name)
    _valid_text(where, table)
    return Parsed(where, table.replace_schema_metadata(None), schema_meta(table))


def validate_text(table: pa.Table) -> None:
    """`table.validate(full=True)` (raises pa.ArrowInvalid), but a column of text or lists of text
    whose bytes are all ASCII and whose offsets never fall is not decoded again: ASCII is UTF-8."""
    table.validate()
    for i, col in enumerate(table.columns):
        if not all(_ascii(chunk) for chunk in col.chunks):
            try:
                col.validate(full=True)
            except pa.ArrowInvalid as e:  # worded as the table's own check words it
                raise pa.ArrowInvalid(f"Column {i}: {e}") from None


def _ascii(values: pa.Array) -> bool:
    """Whether `values` is text (or a list of text) and every byte of it is below 0x80: for a
    list, every byte of its whole child array, as the full check reads it (past a slice, under a
    null list too)."""
    if pa.types.is_list(values.type):
        if _falls(values.offsets.to_numpy()):
            return False
        values = values.values
    if not pa.types.is_string(values.type):
        return False
    offsets, raw = ids.string_bytes(values)
    return not _falls(offsets) and (len(raw) == 0 or int(raw.max()) < 0x80)


def _falls(offsets: np.ndarray) -> bool:
    """Whether an offset is below the one before it (an array built by hand: the full check
    names it)."""
    return len(offsets) > 1 and bool((offsets[1:] < offsets[:-1]).any())


def _valid_text(path: Path, table: pa.Table) -> None:
    """Parquet readers do not check that strings are UTF-8: a bad byte would surface later as a
    traceback wherever the value is first turned into text. Refuse it here, naming the row."""
    try:
        validate_text(table)
        return
    except pa.ArrowInvalid as e:
        problem = str(e)
    for name in table.column_names:
        col = table.column(name)
        try:
            col.validate(full=True)
        except pa.ArrowInvalid as e:
            # Not the text but the array (offsets that fall): reading its rows could crash.
            if "UTF8" not in str(e):
                raise InputError(path, f"column {name!r} is corrupt: {problem}") from None
        else:
            continue
        row = 0
        for chunk in col.chunks:
            for i in range(len(chunk)):
                try:
                    chunk[i].as_py()
                except UnicodeDecodeError as e:
                    raise InputError(
                        path,
                        f"column {name!r} holds text that is not UTF-8 ({e.reason})",
                        f"row {row + i + 1}",
                    ) from None
            row += len(chunk)
        raise InputError(path, f"column {name!r} is corrupt: {problem}")
    raise InputError(path, f"corrupt data: {problem}")


def text_bytes(path: Path) -> bytes:
    """The bytes of a text file, decompressed, without a leading UTF-8 byte-order mark."""
    head = sniff(path)
    name = codec(path, head)
    data = path.read_bytes() if name is None else decompress(path, name)
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def _text_lines(path: Path, data: bytes) -> list[tuple[int, str]]:
    """Decoded non-blank lines of `data` (from `text_bytes`) with 1-based numbers; CRLF endings
    tolerated."""
    out = []
    for n, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            out.append((n, raw.decode("utf-8")))
        except UnicodeDecodeError as e:
            raise InputError(
                path, f"not UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1})", f"line {n}"
            ) from None
    return out


def no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """`json.loads` object hook: a key given twice in one object is an error, not a silent overwrite."""
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"key {dup!r} appears twice in one object")
    return dict(pairs)


def reject_constant(name: str) -> float:
    """`json.loads` constant hook: NaN and Infinity are refused."""
    raise ValueError(f"{name} is not a number JSON allows")


def _check_str(value: object) -> None:
    """Lone surrogates load from JSON but cannot be written back: refuse them at the door."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, list):
        for v in value:
            _check_str(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_str(k)
            _check_str(v)


def read_jsonl(path: Path) -> Parsed:
    data = text_bytes(path)
    fast = arrowtext.jsonl(data)
    if fast is not None:
        return Parsed(path, fast[0], {}, fast[1])
    return _jsonl_lines(path, data)


def _jsonl_lines(path: Path, data: bytes) -> Parsed:
    """The line reader for JSON Lines: Python's `json`, one line at a time."""
    records: list[dict[str, object]] = []
    lines: list[int] = []
    for n, text in _text_lines(path, data):
        try:
            obj = json.loads(text, object_pairs_hook=no_duplicate_keys, parse_constant=reject_constant)
            if "\\u" in text:
                _check_str(obj)
        except UnicodeEncodeError:
            raise InputError(path, "holds a lone surrogate escape (invalid text)", f"line {n}") from None
        except RecursionError:
            raise InputError(path, "holds JSON nested too deeply to read", f"line {n}") from None
        except ValueError as e:
            raise InputError(path, f"not valid JSON: {e}", f"line {n}") from None
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object, found {type(obj).__name__}", f"line {n}")
        records.append(obj)
        lines.append(n)
    if not records:
        raise InputError(path, "holds no records")
    names: dict[str, None] = {}
    for r in records:
        names.update(dict.fromkeys(r))
    line_arr = np.asarray(lines, dtype=np.int64)
    oversize: dict[str, tuple[int, int]] = {}
    columns = {
        name: _column(path, name, [r.get(name) for r in records], line_arr, oversize) for name in names
    }
    return Parsed(path, pa.table(columns), {}, line_arr, oversize)


def _column(
    path: Path, name: str, values: list[object], lines: np.ndarray, oversize: dict[str, tuple[int, int]]
) -> pa.Array:
    """One JSON column as Arrow; a value whose kind differs from the rest is named by line. A column
    of integers too large for Arrow is kept as text (an id stays an id) and its first such value
    noted in `oversize`, for the contract to name if the column is a number."""
    kinds = [_kind(v) for v in values]
    seen = {k for k in kinds if k != "null"}
    if len(seen) > 1 and not seen <= {"int", "float"}:
        first = next(k for k in kinds if k != "null")
        bad = next(i for i, k in enumerate(kinds) if k not in ("null", first))
        raise InputError(
            path,
            f"column {name!r} holds a {kinds[bad]} here but a {first} on earlier lines",
            f"line {lines[bad]}",
        )
    try:
        return pa.array(values)
    except (pa.ArrowException, OverflowError) as e:
        lists: list[list[object]] = [v for v in values if isinstance(v, list)]
        if lists and all(_kind(x) in ("string", "int") for v in lists for x in v):
            # A list mixing string and integer ids: ids are strings whatever their type.
            as_text = [[str(x) for x in v] if isinstance(v, list) else None for v in values]
            return pa.array(as_text, pa.list_(pa.string()))
        if lists:
            bad = next(
                (i for i, v in enumerate(values) if isinstance(v, list) and len({_kind(x) for x in v}) > 1), 0
            )
            raise InputError(path, f"column {name!r}: {e}", f"line {lines[bad]}") from None
        huge = [(i, v) for i, v in enumerate(values) if isinstance(v, int) and not -(2**63) <= v < 2**63]
        if huge:
            oversize[name] = huge[0]
        # Objects and the like in an extra column: kept as JSON text, never dropped.
        return pa.array([None if v is None else json.dumps(v) for v in values], pa.string())


def _kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    return "object"


def read_trec_run(path: Path) -> Parsed:
    """`qid Q0 docid rank score tag`, one retrieved id per line, fields separated by spaces or
    tabs; one row per query (in order of first appearance), its ids ordered by rank (ties keep the
    file's order); the tag as the run's `name` when every line has the same one."""
    data = text_bytes(path)
    fast = arrowtext.trec_run(data)
    if fast is not None:
        return Parsed(path, *fast)
    return _trec_run_lines(path, data)


def _trec_run_lines(path: Path, data: bytes) -> Parsed:
    qids: list[str] = []
    docs: list[str] = []
    ranks: list[int] = []
    scores: list[float] = []
    first_line: dict[str, int] = {}
    tags: set[str] = set()
    for n, text in _text_lines(path, data):
        f = text.split()
        if len(f) != 6:
            raise InputError(
                path, f"expected 6 fields (qid Q0 docid rank score tag), found {len(f)}", f"line {n}"
            )
        try:
            rank, score = int(f[3]), float(f[4])
        except ValueError:
            raise InputError(path, f"rank {f[3]!r} / score {f[4]!r} are not numbers", f"line {n}") from None
        if not math.isfinite(score):
            raise InputError(path, f"score {f[4]!r} is not finite", f"line {n}")
        qids.append(f[0])
        docs.append(f[2])
        ranks.append(rank)
        scores.append(score)
        first_line.setdefault(f[0], n)
        tags.add(f[5])
    order = sorted(range(len(qids)), key=lambda i: (first_line[qids[i]], ranks[i], i))
    grouped: dict[str, tuple[list[str], list[float]]] = {}
    for i in order:
        ids, sc = grouped.setdefault(qids[i], ([], []))
        ids.append(docs[i])
        sc.append(scores[i])
    table = pa.table(
        {
            "query_id": pa.array(list(grouped), pa.string()),
            "retrieved": pa.array([v[0] for v in grouped.values()], pa.list_(pa.string())),
            "scores": pa.array([v[1] for v in grouped.values()], pa.list_(pa.float64())),
        }
    )
    meta = {"name": next(iter(tags))} if len(tags) == 1 else {}
    lines = np.asarray([first_line[q] for q in grouped], dtype=np.int64)
    return Parsed(path, table, meta, lines)


def read_trec_qrels(path: Path) -> Parsed:
    """`qid iter docid rel`, one judgement per line, fields separated by spaces or tabs."""
    data = text_bytes(path)
    fast = arrowtext.trec_qrels(data, MAX_REL)
    if fast is not None:
        return Parsed(path, fast[0], {}, fast[1])
    return _trec_qrels_lines(path, data)


MAX_REL = 2**53  # the contract's bound (contract.MAX_INT); Arrow's int64 ends at 2^63


def _trec_qrels_lines(path: Path, data: bytes) -> Parsed:
    cols: dict[str, list[object]] = {"query_id": [], "chunk_id": [], "relevance": []}
    lines: list[int] = []
    for n, text in _text_lines(path, data):
        f = text.split()
        if len(f) != 4:
            raise InputError(path, f"expected 4 fields (qid 0 docid rel), found {len(f)}", f"line {n}")
        try:
            rel = int(f[3])
        except ValueError:
            raise InputError(path, f"relevance {f[3]!r} is not an integer", f"line {n}") from None
        if rel >= MAX_REL:
            raise InputError(
                path, f"relevance {rel:.3g} is too large, expected an integer from 0 to 2^53", f"line {n}"
            )
        cols["query_id"].append(f[0])
        cols["chunk_id"].append(f[2])
        cols["relevance"].append(rel)
        lines.append(n)
    table = pa.table(
        {
            "query_id": pa.array(cols["query_id"], pa.string()),
            "chunk_id": pa.array(cols["chunk_id"], pa.string()),
            "relevance": pa.array(cols["relevance"], pa.int64()),
        }
    )
    return Parsed(path, table, {}, np.asarray(lines, dtype=np.int64))


def read_table(path: Path, trec: str | None = None, columns: list[str] | None = None) -> Parsed:
    """Read `path` by its extension (sniffing Parquet magic; under `.gz`, `.zst` or `.bz2` the
    extension before it); `trec` ("run" | "qrels") says how a plain-text file is read. A
    `<file>.meta.json` sidecar adds to (and wins over) the metadata."""
    path = Path(path)
    head = sniff(path)
    name = codec(path, head)
    ext = inner_suffix(path) if name is not None else path.suffix.lower()
    if name is not None and ext not in PARQUET_EXT:
        head = _peek(path, name)
    if ext in PARQUET_EXT or head.startswith(b"PAR1"):
        loaded = read_parquet(path, columns)
    elif ext in JSONL_EXT:
        loaded = read_jsonl(path)
    elif trec == "run":
        loaded = read_trec_run(path)
    elif trec == "qrels":
        loaded = read_trec_qrels(path)
    else:
        raise InputError(path, f"unknown format {ext or '(no extension)'!r}; use .parquet or .jsonl")
    sidecar = path.with_name(path.name + ".meta.json")
    if sidecar.exists():
        loaded.meta.update(read_sidecar(sidecar))
    return loaded


def _peek(path: Path, name: str) -> bytes:
    """The first decompressed bytes of `path` (to recognise compressed Parquet)."""
    try:
        with pa.input_stream(str(path), compression=name) as stream:
            return bytes(stream.read(4))
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot decompress ({name}; truncated or corrupt?): {e}") from None


def read_sidecar(path: Path) -> dict[str, str]:
    regular_file(path)
    try:  # a BOM is tolerated, NaN and a key twice are not: the rules of a JSON Lines line
        text = path.read_text("utf-8-sig")
        obj = json.loads(text, object_pairs_hook=no_duplicate_keys, parse_constant=reject_constant)
        _check_str(obj)
    except UnicodeEncodeError:
        raise InputError(path, "holds a lone surrogate escape (invalid text)") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(path, f"not a valid JSON object: {e}") from None
    except RecursionError:
        raise InputError(path, "holds JSON nested too deeply to read") from None
    if not isinstance(obj, dict):
        raise InputError(path, "expected one JSON object of run metadata")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in obj.items()}
