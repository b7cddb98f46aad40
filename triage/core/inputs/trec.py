"""TREC text, read by `pyarrow.csv`: runs (`qid Q0 docid rank score tag`, or the same without the
tag: a file's first line says which) and qrels
(`qid iter docid rel`), one record a line, fields split at whitespace.

As trec_eval reads them: a line whose first character other than a space or tab is `#` is a
comment, and a run line's text after its sixth field is ignored (`get_trec_results.c`; not in a
file holding a Unicode space, where a field too many may be an id split in two: refused); a qrels
grade may be negative (trec_eval's "pooled, unjudged"; TREC Web's −2 for junk): never relevant.

Fields are split where Python's `str.split()` splits a line: at runs of spaces, tabs and the other
whitespace characters (the Unicode spaces too), leading and trailing ones ignored; blank lines are
skipped and CRLF endings tolerated. The usual file (one space or one tab between fields, nothing
else) goes to Arrow as it is; any other spacing is first rewritten to single spaces (`_spaced`:
vectorised, and every line keeps its number). When Arrow refuses a file, the error path finds the
first line at fault and names it with the problem (`_refusal`); the happy path scans nothing twice.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv

from triage.core.errors import InputError
from triage.core.inputs.readers import Parsed, text_bytes, utf8_error

MAX_REL = 2**53  # the contract's bound (contract.MAX_INT); Arrow's int64 ends at 2^63
_BLOCK = 1 << 22  # bytes per parse block (4 MiB)

# Whitespace `str.split()` splits at, besides the line break: ASCII (a byte each) and the rest of
# Unicode (its UTF-8 bytes, rewritten to as many spaces: every byte keeps its place).
_ASCII_SPACES = bytes(c for c in range(128) if chr(c).isspace() and c != 10)
_UNICODE_SPACES = tuple(chr(c).encode() for c in range(128, 0x3001) if chr(c).isspace())
_OTHER_ASCII_SPACES = tuple(bytes([c]) for c in _ASCII_SPACES if c not in b" \t\r")  # memchr each
_IS_SPACE = np.zeros(256, bool)
_IS_SPACE[list(_ASCII_SPACES)] = True

_RUN = {"qid": pa.string(), "q0": pa.string(), "docid": pa.string(), "rank": pa.int64()}
_RUN |= {"score": pa.float64(), "tag": pa.string()}
_QRELS = {"qid": pa.string(), "iter": pa.string(), "docid": pa.string(), "rel": pa.int64()}
_RUN_FIELDS = "qid Q0 docid rank score tag"
_UNTAGGED = {k: v for k, v in _RUN.items() if k != "tag"}  # 5 fields: what some tools write
_UNTAGGED_FIELDS = "qid Q0 docid rank score"
_QRELS_FIELDS = "qid 0 docid rel"


_COMMENT = re.compile(rb"(?m)^[ \t]*#[^\n]*")


def _uncommented(data: bytes) -> bytes:
    """`data` with each comment line's text taken out (its line break kept: lines keep their
    numbers)."""
    return _COMMENT.sub(b"", data) if b"#" in data else data


def read_trec_run(path: Path) -> Parsed:
    """`qid Q0 docid rank score tag`, one retrieved id per line; one row per query (in order of
    first appearance), its ids ordered by rank (ties keep the file's order); the tag as the run's
    `name` when every line has the same one; each row placed at its query's first line. A file
    whose first line has 5 fields has no tags: every line has 5."""
    data = _uncommented(text_bytes(path))
    untagged = _first_fields(data) == 5
    types, fields = (_UNTAGGED, _UNTAGGED_FIELDS) if untagged else (_RUN, _RUN_FIELDS)
    raw, lines = _read(path, data, types, fields)
    if raw.num_rows == 0:
        empty = pa.table({"query_id": pa.array([], pa.string())})
        empty = empty.append_column("retrieved", pa.array([], pa.list_(pa.string())))
        return Parsed(path, empty.append_column("scores", pa.array([], pa.list_(pa.float64()))), {}, lines)
    try:
        return _grouped(path, raw, lines)
    except pa.ArrowException as e:  # e.g. more than 2 GiB of ids in one list array
        raise InputError(path, f"cannot hold this run in memory as one table: {e}") from None


def _first_fields(data: bytes) -> int:
    """Fields on the first non-blank line of `data` (split as `str.split()` splits); 0: none."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        n = len(data[start:end].decode("utf-8", "replace").split())
        if n:
            return n
        start = end + 1
    return 0


def read_trec_qrels(path: Path) -> Parsed:
    """`qid iter docid rel`, one judgement per line, as (query_id, chunk_id, relevance) rows."""
    raw, lines = _read(path, _uncommented(text_bytes(path)), _QRELS, _QRELS_FIELDS)
    table = pa.table(
        {
            "query_id": raw.column("qid").combine_chunks(),
            "chunk_id": raw.column("docid").combine_chunks(),
            "relevance": raw.column("rel").combine_chunks(),
        }
    )
    return Parsed(path, table, {}, lines)


def _grouped(path: Path, raw: pa.Table, lines: np.ndarray) -> Parsed:
    scores = raw.column("score").to_numpy()
    encoded = pc.dictionary_encode(raw.column("qid").combine_chunks())
    codes = encoded.indices.to_numpy()
    ranks = raw.column("rank").to_numpy()
    docs = raw.column("docid").combine_chunks()
    change = codes[1:] != codes[:-1]
    if (codes[1:] >= codes[:-1]).all() and ((ranks[1:] >= ranks[:-1]) | change).all():
        # the usual file: each query's lines together, in rank order
        first = np.concatenate(([0], np.flatnonzero(change) + 1))
        offsets = np.append(first, len(codes)).astype(np.int32)
        ordered = scores
    else:
        # Dictionary codes number queries in order of first appearance: a row is its query's
        # first where the running maximum of the codes rises.
        first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
        order = np.lexsort((ranks, codes))  # stable: equal ranks keep file order
        docs, ordered = docs.take(pa.array(order)), scores[order]
        offsets = np.zeros(len(encoded.dictionary) + 1, dtype=np.int32)
        np.cumsum(np.bincount(codes, minlength=len(encoded.dictionary)), out=offsets[1:])
    table = pa.table(
        {
            "query_id": encoded.dictionary,
            "retrieved": pa.ListArray.from_arrays(pa.array(offsets), docs),
            "scores": pa.ListArray.from_arrays(pa.array(offsets), pa.array(ordered, pa.float64())),
        }
    )
    tags = pc.unique(raw.column("tag")) if "tag" in raw.column_names else []
    meta = {"name": tags[0].as_py()} if len(tags) == 1 else {}
    return Parsed(path, table, meta, lines[first])


def _read(path: Path, data: bytes, types: dict[str, pa.DataType], fields: str) -> tuple[pa.Table, np.ndarray]:
    """The columns `types` of every non-blank line, and each row's 1-based line; a line at fault
    (a field too many or too few, a value that is not a number, not UTF-8, a score not finite, a
    relevance past 2^53) is named with its problem."""
    sep, text = _separator(data), data
    table = None if sep is None else _plain(text, sep, types)
    if sep is None or table is None:  # other spacing (or a line at fault): single spaces
        sep, text = " ", _spaced(data)
        if "tag" in types and not _unicode_spaced(data):  # split as trec_eval splits: cut
            text = _first_fields_only(text, len(types))
        try:
            table = _parse(text, sep, types) if text else _empty(types)
        except (pa.ArrowInvalid, UnicodeError) as e:
            raise _refusal(path, data, text, sep, types, fields, str(e)) from None
    if "score" in types and not np.isfinite(table.column("score").to_numpy()).all():
        raise _refusal(path, data, text, sep, types, fields, "a score that is not finite")
    if "rel" in types and table.num_rows and pc.max(table.column("rel")).as_py() >= MAX_REL:
        raise _refusal(path, data, text, sep, types, fields, "a relevance too large")
    return table, _row_lines(text, table.num_rows)


def _plain(data: bytes, sep: str, types: dict[str, pa.DataType]) -> pa.Table | None:
    """The file read as it is, split at `sep`; None when it is not that simple: a line Arrow
    refuses, or an empty text field (two separators in a row, or one at a line's end)."""
    try:
        table = _parse(data, sep, types)
    except (pa.ArrowInvalid, UnicodeError):
        return None
    for name, kind in types.items():
        if (
            kind == pa.string()
            and table.num_rows
            and pc.min(pc.binary_length(table.column(name))).as_py() == 0
        ):
            return None
    return table


def _empty(types: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({n: pa.array([], t) for n, t in types.items()})


def _parse(text: bytes, sep: str, types: dict[str, pa.DataType]) -> pa.Table:
    return csv.read_csv(
        pa.BufferReader(text),
        read_options=csv.ReadOptions(column_names=list(types), block_size=_BLOCK),
        parse_options=csv.ParseOptions(
            delimiter=sep,
            quote_char=False,
            double_quote=False,
            escape_char=False,
            ignore_empty_lines=True,
        ),
        convert_options=csv.ConvertOptions(
            column_types=types, null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False
        ),
    )


def _separator(data: bytes) -> str | None:
    """The one character that can split the fields of `data` as `str.split()` would, when there is
    one: tab when the first line holds one, else space, and no other whitespace in the file but
    CRLF line ends. (Two separators in a row, or one at a line's end, give an empty field or a
    field too many: `_plain` sees either.) Single-byte searches only, nothing copied."""
    sep = b"\t" if b"\t" in data[: max(data.find(b"\n"), 0)] else b" "
    if (b" " if sep == b"\t" else b"\t") in data:
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):  # a CR inside a line
        return None
    if any(c in data for c in _OTHER_ASCII_SPACES):
        return None
    if _unicode_spaced(data):
        return None
    return sep.decode()


def _spaced(data: bytes) -> bytes:
    """`data` with the fields of every line joined by one space: each run of whitespace between
    two fields becomes one space, whitespace at a line's ends goes; line breaks stay."""
    if not data.isascii():
        for u in _UNICODE_SPACES:
            if u in data:
                data = data.replace(u, b" " * len(u))  # as long: byte offsets stay
    arr = np.frombuffer(data, np.uint8)
    space = _IS_SPACE[arr]
    field = ~space & (arr != 10)
    # the last byte before each one that is not whitespace: a field's, or a line break
    at = np.where(space, -1, np.arange(len(arr)))
    before = np.maximum.accumulate(at)
    after_field = np.zeros(len(arr), bool)
    has = before >= 0
    after_field[has] = field[before[has]]
    next_field = np.append(field[1:], False)
    keep = ~space | (after_field & next_field)  # the last space of a run between two fields
    return np.where(space, np.uint8(32), arr)[keep].tobytes()


def _unicode_spaced(data: bytes) -> bool:
    """Whether `data` holds a space trec_eval would not split at (a Unicode one): there, a field
    too many may be an id split in two, and is refused rather than cut."""
    return not data.isascii() and any(u in data for u in _UNICODE_SPACES)


def _first_fields_only(text: bytes, n: int) -> bytes:
    """`text` (fields split by single spaces) with each line cut after its `n`th field."""
    arr = np.frombuffer(text, np.uint8)
    nl = arr == 10
    spaces = np.cumsum(arr == 32)
    in_line = spaces - np.maximum.accumulate(np.where(nl, spaces, 0))  # spaces so far on its line
    if not len(arr) or in_line.max() < n:
        return text
    return arr[nl | (in_line < n)].tobytes()


def _row_lines(text: bytes, rows: int) -> np.ndarray:
    """1-based numbers of the `rows` non-blank lines of `text` (the rows Arrow reads: it skips
    empty lines; a line ending in CR alone is empty)."""
    arr = np.frombuffer(text, np.uint8)
    is_nl = arr == 10
    if int(np.count_nonzero(is_nl)) + (0 if text.endswith(b"\n") else 1) == rows:  # no blank line
        return np.arange(1, rows + 1, dtype=np.int64)
    nl = np.flatnonzero(is_nl)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(arr)]))
    cr = (ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13)
    return (np.flatnonzero(ends - cr > starts) + 1).astype(np.int64)


def _refusal(
    path: Path, data: bytes, text: bytes, sep: str, types: dict[str, pa.DataType], fields: str, arrow: str
) -> InputError:
    """The error path: the first line at fault, named with its problem, in the order a line is
    read (its bytes, then its fields, then its values). `data` is the file's text, `text` the same
    with single spaces between fields (or `data` itself, its fields split at `sep`), `arrow` what
    Arrow said."""
    undecoded = utf8_error(path, data)
    counts = _field_counts(text)
    wrong = np.flatnonzero((counts != 0) & (counts != len(types)))
    if len(wrong) and (undecoded is None or int(wrong[0]) + 1 < undecoded[0]):
        line = int(wrong[0]) + 1
        found = f"expected {len(types)} fields ({fields}), found {counts[line - 1]}"
        return InputError(path, found, f"line {line}")
    if undecoded is not None:
        return undecoded[1]
    strings = _parse(text, sep, {n: pa.string() for n in types})
    value = _value_error(strings, types)
    if value is not None:
        return InputError(path, value[1], f"line {int(_row_lines(text, strings.num_rows)[value[0]])}")
    return InputError(path, f"cannot be read as TREC text ({fields}): {arrow}")


def _field_counts(text: bytes) -> np.ndarray:
    """Fields on each line of `text` (fields split by single spaces, as `_spaced` leaves them; a
    file read as it is holds one separator, made a space here); 0 for a blank line."""
    arr = np.frombuffer(text, np.uint8)
    nl = arr == 10
    line = np.cumsum(nl) - nl  # 0-based line of every byte
    n = int(line[-1]) + 1 if len(arr) else 0
    sep = (arr == 32) | (arr == 9)
    content = ~nl & ~sep & (arr != 13)
    counts = np.bincount(line[sep], minlength=n) + 1
    counts[np.bincount(line[content], minlength=n) == 0] = 0
    return counts


_INTEGER = re.compile(r"[+-]?\d+")


def _value_error(strings: pa.Table, types: dict[str, pa.DataType]) -> tuple[int, str] | None:
    """The first row whose numbers are at fault, and the problem in words: a rank and score, or a
    relevance, Arrow cannot read as numbers; a score not finite; a relevance past 2^53."""
    if "score" in types:
        rank, score = strings.column("rank").combine_chunks(), strings.column("score").combine_chunks()
        bad = min(_first_unread(rank, pa.int64()), _first_unread(score, pa.float64()))
        odd = np.flatnonzero(~np.isfinite(pc.cast(score[:bad], pa.float64()).to_numpy()))
        if len(odd):
            return int(odd[0]), f"score {score[int(odd[0])].as_py()!r} is not finite"
        if bad < len(rank):
            return bad, f"rank {rank[bad].as_py()!r} / score {score[bad].as_py()!r} are not numbers"
        return None
    rel = strings.column("rel").combine_chunks()
    bad = _first_unread(rel, pa.int64())
    past = np.flatnonzero(pc.cast(rel[:bad], pa.int64()).to_numpy() >= MAX_REL)
    bad = int(past[0]) if len(past) else bad
    if bad == len(rel):
        return None
    text = rel[bad].as_py()
    if _INTEGER.fullmatch(text) and int(text) >= MAX_REL:
        return bad, f"relevance {int(text):.3g} is too large, expected an integer below 2^53"
    return bad, f"relevance {text!r} is not an integer"


def _first_unread(values: pa.Array, to: pa.DataType) -> int:
    """The first index of `values` (text) that Arrow cannot cast to `to`; len(values) when none:
    halves the range while the cast fails (error path only)."""
    lo, hi = 0, len(values)
    if _casts(values, to):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _casts(values[lo:mid], to):
            lo = mid
        else:
            hi = mid
    return lo


def _casts(values: pa.Array, to: pa.DataType) -> bool:
    try:
        pc.cast(values, to)
    except pa.ArrowInvalid:
        return False
    return True
