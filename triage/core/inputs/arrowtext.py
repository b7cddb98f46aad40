"""The fast path of the text readers: TREC files through `pyarrow.csv`, JSON Lines through
`pyarrow.json`.

Each function returns what the line reader in `readers.py` would return for the same bytes, or
None whenever it cannot be sure of that: a parse error, or bytes on which Arrow's rules and the
line reader's differ (a value Arrow reads but the contract refuses, such as NaN, two records on
one line, a field split by a whitespace character other than the separator). The caller then runs
the line reader, which names the file, the line and the problem, or reads the odd-but-valid file.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv
import pyarrow.json as pj

# Characters Python's str.split() splits at besides space and tab (the line reader's rule): the
# ASCII controls, then the UTF-8 prefixes of the Unicode spaces (U+0085, U+00A0, U+1680,
# U+2000-U+202F, U+205F, U+3000; the U+20xx prefix also matches a few other punctuation marks,
# which only sends such a file to the line reader).
_ASCII_SPACES = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_UNICODE_SPACES = (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f", b"\xe3\x80\x80")
_TOO_BIG = 2.0**63  # a JSON integer beyond int64 reaches Arrow as a float at least this large
_DEEP = 2000  # arrays and objects opened on one line that the fast path takes (bounds the nesting)
_BLOCK = 1 << 22  # bytes per parse block (4 MiB); a longer JSON line is read in one larger block


def _crlf_only(data: bytes) -> bool:
    """Every carriage return ends a line: Arrow ends lines at a lone CR, the line reader does not."""
    return b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")


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


def _csv_lines(data: bytes, rows: int) -> np.ndarray | None:
    """1-based numbers of the non-empty lines, when there are `rows` of them (Arrow's CSV reader
    skips empty lines and refuses lines of spaces, so a row is a non-empty line)."""
    n = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10)) + (0 if data.endswith(b"\n") else 1)
    if n == rows:
        return np.arange(1, rows + 1, dtype=np.int64)
    starts, ends = _line_bounds(data)
    full = np.flatnonzero(ends > starts) + 1
    return full if len(full) == rows else None


def _fields(data: bytes) -> str | None:
    """The separator of a TREC file (tab when its first line holds one, else space), or None when
    a line reader's whitespace split could differ from splitting at that one character."""
    sep = "\t" if b"\t" in data[: data.find(b"\n")] else " "
    other = b" " if sep == "\t" else b"\t"
    if other in data or not _crlf_only(data):
        return None
    if any(c in data for c in _ASCII_SPACES):
        return None
    if not data.isascii() and any(c in data for c in _UNICODE_SPACES):
        return None
    return sep


def _read_csv(data: bytes, types: dict[str, pa.DataType]) -> pa.Table | None:
    """The columns `types` (in order), every value present and no text empty (an empty field is
    two separators in a row, which the line reader would not see as a field); None otherwise."""
    sep = _fields(data)
    if sep is None:
        return None
    try:
        table = csv.read_csv(
            pa.BufferReader(data),
            read_options=csv.ReadOptions(column_names=list(types), block_size=_BLOCK),
            parse_options=csv.ParseOptions(
                delimiter=sep,
                quote_char=False,
                double_quote=False,
                escape_char=False,
                ignore_empty_lines=True,
            ),
            convert_options=csv.ConvertOptions(
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, UnicodeError):
        return None
    if table.num_rows == 0:
        return None
    for name, kind in types.items():
        col = table.column(name)
        if col.null_count:
            return None
        if kind == pa.string() and pc.min(pc.binary_length(col)).as_py() == 0:
            return None
    return table


_RUN = {"qid": pa.string(), "q0": pa.string(), "docid": pa.string(), "rank": pa.int64()}
_RUN |= {"score": pa.float64(), "tag": pa.string()}


def trec_run(data: bytes) -> tuple[pa.Table, dict[str, str], np.ndarray] | None:
    """`qid Q0 docid rank score tag` lines as one row per query (first-appearance order), its ids
    ordered by rank (ties keep file order); the tag as `name` when it is one; each query's first
    line."""
    try:
        return _trec_run(data)
    except pa.ArrowException:  # e.g. more than 2 GiB of ids in one array: the line reader's turn
        return None


def _trec_run(data: bytes) -> tuple[pa.Table, dict[str, str], np.ndarray] | None:
    raw = _read_csv(data, _RUN)
    if raw is None:
        return None
    scores = raw.column("score").to_numpy()
    if not np.isfinite(scores).all():
        return None
    lines = _csv_lines(data, raw.num_rows)
    if lines is None:
        return None
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
    tags = pc.unique(raw.column("tag"))
    meta = {"name": tags[0].as_py()} if len(tags) == 1 else {}
    return table, meta, lines[first]


_QRELS = {"qid": pa.string(), "iter": pa.string(), "docid": pa.string(), "rel": pa.int64()}


def trec_qrels(data: bytes, max_rel: int) -> tuple[pa.Table, np.ndarray] | None:
    """`qid iter docid rel` lines as (query_id, chunk_id, relevance) rows, each with its line."""
    raw = _read_csv(data, _QRELS)
    if raw is None or pc.max(raw.column("rel")).as_py() >= max_rel:
        return None
    lines = _csv_lines(data, raw.num_rows)
    if lines is None:
        return None
    table = pa.table(
        {
            "query_id": raw.column("qid").combine_chunks(),
            "chunk_id": raw.column("docid").combine_chunks(),
            "relevance": raw.column("rel").combine_chunks(),
        }
    )
    return table, lines


def jsonl(data: bytes) -> tuple[pa.Table, np.ndarray] | None:
    """One JSON object per line as a table, with each row's line; None unless every non-blank line
    is one object (it starts with `{` and ends with `}`: inside valid JSON a `}` and a `{` with only
    whitespace between never meet, so such a line break always falls between two records, and as
    many records as lines means one a line) and every value reads as the line reader reads it."""
    if not _crlf_only(data):
        return None
    starts, ends = _line_bounds(data)
    if not _shallow(data, starts):
        return None
    try:
        table = _read_json(data)
        if _has(table.schema, pa.types.is_temporal):  # Arrow reads ISO dates as timestamps
            text = pa.schema(
                [pa.field(f.name, pa.string()) if pa.types.is_temporal(f.type) else f for f in table.schema]
            )
            table = _read_json(data, pj.ParseOptions(explicit_schema=text))
    except (pa.ArrowException, UnicodeError):
        return None
    if table.num_rows == 0 or _has(table.schema, pa.types.is_temporal):
        return None
    if not data.isascii():  # Arrow's JSON reader does not check that its strings are UTF-8
        try:
            table.validate(full=True)
        except pa.ArrowInvalid:
            return None
    if not all(_plain_numbers(c) for c in table.columns):
        return None
    arr = np.frombuffer(data, np.uint8)
    full = ends > starts
    s, e = starts[full], ends[full]
    objects = (arr[s] == ord("{")) & (arr[e - 1] == ord("}"))
    if not objects.all():  # blank lines of spaces are skipped; anything else: the line reader
        odd = np.flatnonzero(~objects)
        if len(odd) > 10_000 or any(data[s[i] : e[i]].strip() for i in odd):
            return None
        keep = np.flatnonzero(full)[objects]
    else:
        keep = np.flatnonzero(full)
    if len(keep) != table.num_rows:
        return None
    return table, keep + 1


def _shallow(data: bytes, starts: np.ndarray) -> bool:
    """No line opens more than `_DEEP` arrays or objects (those in strings counted too: a bound on
    the nesting). Arrow's JSON parser recurses per level and crashes the process some 10,000
    levels down: a line that might be that deep goes to the line reader, which reads it or names
    it (Python's `json` stops near 1,000 levels)."""
    if data.count(b"[") + data.count(b"{") <= _DEEP:
        return True
    arr = np.frombuffer(data, np.uint8)
    at = np.flatnonzero((arr | 0x20) == ord("{"))  # "[" is 0x5B, "{" 0x7B: nothing else maps there
    per_line = np.bincount(np.searchsorted(starts, at, side="right"))
    return int(per_line.max()) <= _DEEP


def _read_json(data: bytes, options: pj.ParseOptions | None = None) -> pa.Table:
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


def _plain_numbers(col: pa.ChunkedArray) -> bool:
    """No float anywhere in `col` (nested ones included) is NaN or infinite (JSON has neither;
    Arrow reads `NaN`), or so large that it may be an integer beyond int64 (which the line reader
    keeps as text)."""
    todo = [col.combine_chunks()]
    while todo:
        arr = todo.pop()
        t = arr.type
        if pa.types.is_floating(t):
            valid = arr.drop_null()
            if len(valid) and not (
                pc.all(pc.is_finite(valid)).as_py() and pc.max(pc.abs(valid)).as_py() < _TOO_BIG
            ):
                return False
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            todo.append(arr.flatten())
        elif pa.types.is_struct(t):
            todo.extend(arr.field(i) for i in range(t.num_fields))
    return True
