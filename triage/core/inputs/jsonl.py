"""JSON Lines, read by `pyarrow.json`: one JSON object a line, each row remembering its line.

Arrow reads the file. What Arrow accepts but JSON Lines does not (NaN, two objects on one line,
one object across lines, text that is not UTF-8), and every file Arrow refuses, goes to the error
path (`_scan`): Python's `json` reads the lines to name the first one at fault and its problem (a
key given twice, a lone surrogate, nesting too deep, a value whose kind differs from the column's).
Two things the contract allows that Arrow's reader cannot take are repaired there, a line at a
time, and the file read by Arrow again: a list mixing text and integer ids (ids are strings
whatever their type), an integer beyond int64 (its column kept as text, the value noted in
`Parsed.oversize` for the contract to name if it wanted a number; inside an object, its column kept
as JSON text), and objects or lists of objects unlike each other (kept as JSON text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from triage.core.errors import InputError
from triage.core.inputs.readers import (
    Parsed,
    check_str,
    no_duplicate_keys,
    reject_constant,
    text_bytes,
    utf8_error,
)

_TOO_BIG = 2.0**63  # a JSON integer beyond int64 reaches Arrow as a float at least this large
_DEEP = 2000  # arrays and objects opened on one line that Arrow is given (bounds the nesting)
_BLOCK = 1 << 22  # bytes per parse block (4 MiB); a longer line is read in one larger block
_INT64 = (-(2**63), 2**63)


def read_jsonl(path: Path) -> Parsed:
    data = text_bytes(path)
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        _scan(path, data)  # a CR inside a line: whitespace between values, or named there
        data = _lone_cr(data)
    bounds = _line_bounds(data)
    deep = _deep_line(data, bounds[0])
    if deep:  # a line Arrow might not survive: Python's json names it
        _scan(path, data)
        raise InputError(
            path, f"opens more than {_DEEP} arrays or objects (in strings too); not read", f"line {deep}"
        )
    try:
        table = _read_json(data)
    except (pa.ArrowException, UnicodeError) as e:
        fixed = _repaired(path, data, str(e))
        if fixed is None:  # never: with Arrow's refusal, `_repaired` names the line or repairs it
            raise InputError(path, f"cannot be read as JSON Lines: {e}") from None
        return fixed
    if table.num_rows == 0:
        raise InputError(path, "holds no records")
    if not data.isascii():  # Arrow's JSON reader does not check that its strings are UTF-8
        try:
            table.validate(full=True)
        except pa.ArrowInvalid:
            _scan(path, data)
            raise InputError(path, "holds text that is not UTF-8") from None
    lines = _row_lines(data, table.num_rows, bounds)
    numbers = _numbers(table)
    if lines is None or numbers == "not finite":  # NaN, or not one object a line: named there
        _scan(path, data)
        raise InputError(path, "does not hold one JSON object a line")
    if numbers == "large":  # an integer beyond int64, or a float that large: which one, there
        return _repaired(path, data, None) or Parsed(path, table, {}, lines)
    return Parsed(path, table, {}, lines)


def _lone_cr(data: bytes) -> bytes:
    """`data` with every CR that does not end a line made a space (Arrow would end a line there;
    between values JSON reads it as whitespace, and `_scan` has refused one anywhere else); CRLF
    endings stay."""
    arr = np.frombuffer(data, np.uint8).copy()
    cr = np.flatnonzero(arr == 13)
    lone = cr[(cr + 1 >= len(arr)) | (arr[np.minimum(cr + 1, len(arr) - 1)] != 10)]
    arr[lone] = 32
    return arr.tobytes()


def _line_bounds(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive, before any CR) byte offsets of every line of `data`."""
    arr = np.frombuffer(data, np.uint8)
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(arr)]))
    if data.endswith(b"\n"):
        starts, ends = starts[:-1], ends[:-1]
    cr = (ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13)
    return starts, ends - cr


def _row_lines(
    data: bytes, rows: int, bounds: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray | None:
    """The 1-based line of each of `rows` rows, when every non-blank line holds one object (it
    starts with `{` and ends with `}`: inside valid JSON a `}` and a `{` with only whitespace
    between never meet, so such a line break always falls between two records, and as many
    records as lines means one a line); None otherwise."""
    starts, ends = _line_bounds(data) if bounds is None else bounds
    arr = np.frombuffer(data, np.uint8)
    full = ends > starts
    s, e = starts[full], ends[full]
    objects = (arr[s] == ord("{")) & (arr[e - 1] == ord("}"))
    keep = np.flatnonzero(full)
    if not objects.all():  # a blank line of spaces, or an object with spaces around it
        for i in np.flatnonzero(~objects):
            line = data[s[i] : e[i]].strip()
            if line and not (line.startswith(b"{") and line.endswith(b"}")):
                return None
            objects[i] = bool(line)
        keep = keep[objects]
    return keep + 1 if len(keep) == rows else None


def _deep_line(data: bytes, starts: np.ndarray) -> int:
    """The 1-based line of the first line opening more than `_DEEP` arrays or objects (those in
    strings counted too: a bound on the nesting); 0 when none does. Arrow's JSON parser recurses
    per level and crashes the process some 10,000 levels down: such a line is not given to it
    (Python's `json` stops near 1,000 levels, and names the line)."""
    if data.count(b"[") + data.count(b"{") <= _DEEP:
        return 0
    arr = np.frombuffer(data, np.uint8)
    at = np.flatnonzero((arr | 0x20) == ord("{"))  # "[" is 0x5B, "{" 0x7B: nothing else maps there
    per_line = np.bincount(np.searchsorted(starts, at, side="right"))  # index: the 1-based line
    over = np.flatnonzero(per_line > _DEEP)
    return int(over[0]) if len(over) else 0


def _read_json(data: bytes) -> pa.Table:
    """The table Arrow reads; dates stay text (Arrow would read ISO dates as timestamps). Arrow's
    reader builds lists whose first values are null too short (`[null]` then `[1]`: fewer values
    than the offsets count, an invalid array a later kernel reads out of bounds): such a file is
    read again with the types Arrow found, and a list of nulls alone rebuilt (`_rebuilt`)."""
    table = _read_blocks(data)
    if _has(table.schema, pa.types.is_temporal) or not _valid(table):
        text = pa.schema([f.with_type(_untimed(f.type)) for f in table.schema])
        table = _read_blocks(data, pj.ParseOptions(explicit_schema=text))
    if not _valid(table):
        for i, f in enumerate(table.schema):
            if _has(pa.schema([f]), _of_nulls):
                chunks = [_rebuilt(c) for c in table.column(i).chunks]
                table = table.set_column(i, f, pa.chunked_array(chunks, f.type))
        table.validate()  # raises (the error path names the line) if anything else is amiss
    return table


def _valid(table: pa.Table) -> bool:
    """Whether `table`'s arrays hold together (offsets within their values; not the values)."""
    try:
        table.validate()
    except pa.ArrowInvalid:
        return False
    return True


def _of_nulls(t: pa.DataType) -> bool:
    return pa.types.is_list(t) and pa.types.is_null(t.value_type)


def _rebuilt(arr: pa.Array) -> pa.Array:
    """`arr` with each list of nulls in it (`[null, null]`, at any depth) rebuilt: Arrow's JSON
    reader gives such a list fewer nulls than its offsets count (an invalid array, which a later
    kernel reads out of bounds)."""
    t = arr.type
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        fields = [_rebuilt(arr.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(fields, fields=list(t), mask=mask)
    if not pa.types.is_list(t):
        return arr
    offsets = pa.array(arr.offsets.to_numpy())  # a fresh copy: Arrow takes no sliced offsets with a mask
    values = pa.nulls(offsets[-1].as_py()) if _of_nulls(t) else _rebuilt(arr.values)
    return pa.ListArray.from_arrays(offsets, values, type=t, mask=mask)


def _untimed(t: pa.DataType) -> pa.DataType:
    """`t` with every date or time in it (nested ones too) made text."""
    if pa.types.is_temporal(t):
        return pa.string()
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_untimed(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_untimed(t.field(i).type)) for i in range(t.num_fields)])
    return t


def _read_blocks(data: bytes, options: pj.ParseOptions | None = None) -> pa.Table:
    try:
        return pj.read_json(pa.BufferReader(data), pj.ReadOptions(block_size=_BLOCK), options)
    except pa.ArrowInvalid as e:
        if "straddl" not in str(e) or len(data) <= _BLOCK:
            raise
    return pj.read_json(pa.BufferReader(data), pj.ReadOptions(block_size=len(data) + 1), options)


def _has(schema: pa.Schema, test: Callable[[pa.DataType], bool]) -> bool:
    """Whether `test` holds for any type in `schema`, nested ones included."""
    todo = [f.type for f in schema]
    while todo:
        t = todo.pop()
        if test(t):
            return True
        todo.extend(t.field(i).type for i in range(t.num_fields))
    return False


def _numbers(table: pa.Table) -> str:
    """ "not finite" when a float anywhere (nested ones included) is NaN or infinite (JSON has
    neither; Arrow reads `NaN`); "large" when one is so large that it may be an integer beyond
    int64; "" otherwise."""
    todo = [c.combine_chunks() for c in table.columns]
    large = False
    while todo:
        arr = todo.pop()
        t = arr.type
        if pa.types.is_floating(t):
            valid = arr.drop_null()
            if len(valid) and not pc.all(pc.is_finite(valid)).as_py():
                return "not finite"
            large = large or bool(len(valid) and pc.max(pc.abs(valid)).as_py() >= _TOO_BIG)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            todo.append(arr.flatten())
        elif pa.types.is_struct(t):
            todo.extend(arr.field(i) for i in range(t.num_fields))
    return "large" if large else ""


# == the error path ===============================================================================


def _scan(path: Path, data: bytes) -> tuple[list[dict[str, object]], list[int]]:
    """Every record and its line, read by Python's `json` with the rules of a JSON Lines line;
    the first line at fault is named with its problem (the error path: Arrow names no line)."""
    records: list[dict[str, object]] = []
    lines: list[int] = []
    for n, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            found = utf8_error(path, raw)
            assert found is not None
            raise InputError(path, found[1].problem, f"line {n}") from None
        try:
            obj = json.loads(text, object_pairs_hook=no_duplicate_keys, parse_constant=reject_constant)
            if "\\u" in text:
                check_str(obj)
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
    for name in names:
        kinds = [_kind(r.get(name)) for r in records]
        seen = {k for k in kinds if k != "null"}
        if len(seen) > 1 and not seen <= {"int", "float"}:
            first = next(k for k in kinds if k != "null")
            bad = next(i for i, k in enumerate(kinds) if k not in ("null", first))
            raise InputError(
                path,
                f"column {name!r} holds {a_kind(kinds[bad])} here but {a_kind(first)} on earlier lines",
                f"line {lines[bad]}",
            )
    return records, lines


def a_kind(kind: str) -> str:
    """A JSON value's kind (`_kind`'s word) as a message reads it: "an integer", "a string"."""
    word = {"int": "integer", "float": "number", "bool": "boolean"}.get(kind, kind)
    return ("an " if word[0] in "aeiou" else "a ") + word


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


_COLUMN = re.compile(r"Column\(/((?:[^/)]|~[01])*)")


def _repaired(path: Path, data: bytes, arrow: str | None) -> Parsed | None:
    """The error path of a file Arrow refused (`arrow`: its words), or read with a float of 2^63
    or more (`arrow` None): the first line at fault named (`_scan`); else the lines holding a list
    of mixed text and integer ids, or an integer beyond int64, rewritten (ids as text; such an
    integer's column as JSON text) and the file read by Arrow again. None: nothing to repair."""
    records, lines = _scan(path, data)
    fixes, oversize = _fixes(path, records, lines)
    named = _COLUMN.search(arrow or "")
    if named and named[1].replace("~1", "/").replace("~0", "~") not in fixes:
        name = named[1].replace("~1", "/").replace("~0", "~")
        if any(isinstance(r.get(name), dict | list) for r in records):  # objects unlike each other
            fixes[name] = _as_json
    if not fixes:
        if arrow is None:
            return None
        raise InputError(path, f"cannot be read as JSON Lines: {arrow}")
    rows = data.split(b"\n")
    for r, n in zip(records, lines, strict=True):
        changed = {k: fix(r[k]) for k, fix in fixes.items() if r.get(k) is not None}
        if any(changed[k] != r[k] for k in changed):
            rows[n - 1] = json.dumps({**r, **changed}, ensure_ascii=False).encode()
    again = b"\n".join(rows)
    try:
        table = _read_json(again)
    except (pa.ArrowException, UnicodeError) as e:
        raise InputError(path, f"cannot be read as JSON Lines: {e}") from None
    rows_at = _row_lines(again, table.num_rows)
    if rows_at is None:
        raise InputError(path, "does not hold one JSON object a line")
    return Parsed(path, table, {}, rows_at, oversize)


def _fixes(
    path: Path, records: list[dict[str, object]], lines: list[int]
) -> tuple[dict[str, Callable[[object], object]], dict[str, tuple[int, int]]]:
    """For each column Arrow's reader cannot take as it is, how its values are rewritten; and the
    first integer beyond int64 of each column holding one at the top."""
    fixes: dict[str, Callable[[object], object]] = {}
    oversize: dict[str, tuple[int, int]] = {}
    names: dict[str, None] = {}
    for r in records:
        names.update(dict.fromkeys(r))
    for name in names:
        values = [r.get(name) for r in records]
        huge = [(i, v) for i, v in enumerate(values) if isinstance(v, int) and not _fits(v)]
        if huge:
            oversize[name] = huge[0]
            fixes[name] = _as_json
            continue
        lists = [(i, v) for i, v in enumerate(values) if isinstance(v, list)]
        inner = {_kind(x) for _, v in lists for x in v} - {"null"}
        big = any(isinstance(x, int) and not _fits(x) for _, v in lists for x in v)
        if (len(inner) > 1 or big) and inner <= {"string", "int"}:
            fixes[name] = _as_ids  # ids are strings whatever their type
        elif len(inner) > 1 and not inner <= {"int", "float"}:
            row = next((i for i, v in lists if len({_kind(x) for x in v} - {"null"}) > 1), lists[0][0])
            shown = " and ".join(sorted(inner))
            raise InputError(path, f"column {name!r} holds lists mixing {shown}", f"line {lines[row]}")
        elif any(_holds_huge(v) for v in values):  # Arrow would read it as a float, rounded
            fixes[name] = _as_json  # kept as text, as an integer beyond int64 at the top
    return fixes, oversize


def _holds_huge(v: object) -> bool:
    """Whether an integer beyond int64 is inside `v`, an object or a list of objects or lists, at
    any depth. (A list of numbers is not looked into: Arrow reads it as floats, as `scores` are.)"""
    if isinstance(v, list) and not any(isinstance(x, dict | list) for x in v):
        return False
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
        elif isinstance(x, int) and not _fits(x):
            return True
    return False


def _fits(v: int) -> bool:
    return _INT64[0] <= v < _INT64[1]


def _as_ids(v: object) -> object:
    return [None if x is None else str(x) for x in v] if isinstance(v, list) else v


def _as_json(v: object) -> object:
    return json.dumps(v)
