"""What every input reader shares: the file checks before any parser sees a file, a file's bytes
(decompressed: see below), the parsed result (`Parsed`), the text check of an Arrow table,
the JSON rules of a metadata sidecar, and the one reader of TOML files (a manifest, a gate file:
`read_toml`, at the end).

Every table is made plain (`plain_table`: views, dictionaries and run-end encodings decoded).

One module reads each format, with Arrow's parsers only: `trec` (pyarrow.csv), `jsonl`
(pyarrow.json), `parquet`; `shapes` detects which a file is and dispatches. Every failure is an
`InputError` naming the file, the row or line, and the problem. Text formats remember each
record's line number so later checks can name it.

Compressed inputs: which codec a file holds (by its first bytes and its name), and its bytes.

gzip, zstd and bzip2 are read transparently through Arrow's own decompressors. A name ending in
`.gz`, `.zst`/`.zstd` or `.bz2` must hold those bytes; a file holding them under another name is
read as well (the bytes decide). xz and zip are named and refused.
"""

from __future__ import annotations

import json
import math
import os
import re
import reprlib
import stat
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.ids import codes as ids

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


def kind(mode: int) -> str:
    """What a file of `st_mode` `mode` is, as a message says it: "a folder", "a FIFO (named pipe)", …"""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"


def linked(path: Path) -> str:
    """ "a symbolic link to X, " when `path` itself is one (X its final target), else ""."""
    return f"a symbolic link to {os.path.realpath(path)}, " if os.path.islink(path) else ""


def regular_file(path: Path) -> None:
    """Refuse, at once (a `stat`, nothing opened), what is not a regular file: a reader would block
    on a FIFO or a socket, and read a device such as /dev/zero until memory runs out. A link is
    followed, and named when what it reaches is refused."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(
                path, f"is a symbolic link to {os.readlink(path)}, which does not exist"
            ) from None
        raise InputError(path, "file does not exist") from None
    except OSError as e:
        raise InputError(path, f"cannot be read: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise InputError(path, f"is {linked(path)}a folder, expected a file")
    if not stat.S_ISREG(mode):
        raise InputError(
            path, f"is {linked(path)}{kind(mode)}, not a regular file; triage reads only regular files"
        )


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
    its 1-based number ("run a: row 3: …"); its schema metadata is its run metadata; views and
    dictionaries (polars' `Categorical`, pandas' `category`) made plain (`plain_table`)."""
    where = Path(name)
    valid_text(where, table)
    return Parsed(where, plain_table(where, table).replace_schema_metadata(None), schema_meta(table))


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


FALLS_STEP = 1 << 20  # offsets compared per numpy pass: small temporaries, reused from the cache


def _falls(offsets: np.ndarray) -> bool:
    """Whether an offset is below the one before it (an array built by hand: the full check
    names it). A million at a time: a whole column's temporaries cost more than the compare."""
    steps = (offsets[i : i + FALLS_STEP + 1] for i in range(0, len(offsets) - 1, FALLS_STEP))
    return any(bool((o[1:] < o[:-1]).any()) for o in steps)


def valid_text(path: Path, table: pa.Table) -> None:
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
    """The bytes of a text file, decompressed (bounded: `compressed.limit`), without a leading
    UTF-8 byte-order mark."""
    head = sniff(path)
    name = codec(path, head)
    try:
        data = path.read_bytes() if name is None else decompress(path, name)
    except OSError as e:
        raise InputError(path, f"cannot be read: {e}") from None
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def line_at(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column of byte `offset` of `data`."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - start + 1


def utf8_error(path: Path, data: bytes) -> tuple[int, InputError] | None:
    """The line of the first byte of `data` that is not UTF-8, and the error naming it by line and
    column; None when all is UTF-8. (The error path of a text reader: Arrow names no line.)"""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line, column = line_at(data, e.start)
        problem = f"not UTF-8 (byte 0x{data[e.start]:02x} at column {column})"
        return line, InputError(path, problem, f"line {line}")
    return None


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


def check_str(value: object) -> None:
    """Lone surrogates load from JSON but cannot be written back: refuse them at the door."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, list):
        for v in value:
            check_str(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            check_str(k)
            check_str(v)


def read_json_object(path: Path, what: str) -> dict[str, object]:
    """One JSON object from a regular file (`what` names what it should hold, for the error): a BOM
    is tolerated, NaN, a key twice and a lone surrogate are not (the rules of a JSON Lines line)."""
    regular_file(path)
    try:
        text = path.read_text("utf-8-sig")
        obj = json.loads(text, object_pairs_hook=no_duplicate_keys, parse_constant=reject_constant)
        check_str(obj)
    except UnicodeEncodeError:
        raise InputError(path, "holds a lone surrogate escape (invalid text)") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(path, f"not a valid JSON object: {e}") from None
    except RecursionError:
        raise InputError(path, "holds JSON nested too deeply to read") from None
    if not isinstance(obj, dict):
        raise InputError(path, f"expected one JSON object of {what}")
    return obj


def read_sidecar(path: Path) -> dict[str, str]:
    obj = read_json_object(path, "run metadata")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in obj.items()}


# -- plain types ---------------------------------------------------------------------------------
# Every table is made plain at the door (Parquet files, the Python API's tables): a string or binary
# view a string or binary, a list view a list, a dictionary (polars' `Categorical` and `Enum`,
# pandas' `category`) and a run-end encoding decoded to their values, at any depth. Arrow's `take`,
# `filter` and hashing kernels take no view or run-end encoding, and none a dictionary of views.


def plain_type(t: pa.DataType) -> pa.DataType:
    """`t` with every view, dictionary and run-end encoding in it (nested ones too) made plain."""
    if pa.types.is_dictionary(t) or pa.types.is_run_end_encoded(t):
        return plain_type(t.value_type)
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_list_view(t):
        t = pa.list_(t.value_field)
    elif pa.types.is_large_list_view(t):
        t = pa.large_list(t.value_field)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        field = t.value_field.with_type(plain_type(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(field, t.list_size)
        return pa.list_(field) if pa.types.is_list(t) else pa.large_list(field)
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(plain_type(t.key_type)), t.item_field.with_type(plain_type(t.item_type))
        )
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(plain_type(t.field(i).type)) for i in range(t.num_fields)])
    return t


def plain_table(path: Path | str, table: pa.Table) -> pa.Table:
    """`table` (read from `path`) with each column whose type is not plain (`plain_type`) made plain."""
    for i, f in enumerate(table.schema):
        want = plain_type(f.type)
        if want != f.type:
            try:
                col = pa.chunked_array([plain_array(c) for c in table.column(i).chunks], want)
            except pa.ArrowException as e:  # a view of more text than one string array holds
                raise InputError(
                    path, f"column {f.name!r} of type {f.type} cannot be read as {want}: {e}"
                ) from None
            table = table.set_column(i, f.with_type(want), col)
    return table


def plain_array(arr: pa.Array) -> pa.Array:
    """`arr` in its plain type (`plain_type`), every value and null kept."""
    t = arr.type
    want = plain_type(t)
    if want == t:
        return arr
    if pa.types.is_dictionary(t):  # the dictionary made plain first: Arrow cannot take from views
        values = pa.DictionaryArray.from_arrays(arr.indices, plain_array(arr.dictionary))
        return values.dictionary_decode()
    if pa.types.is_run_end_encoded(t):
        return plain_array(pc.run_end_decode(arr))
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return _listed(arr, want)
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return pc.cast(arr, want)
    # nested types rebuilt, not cast: Arrow's cast decodes no dictionary inside them, casts a list
    # view holding a null to an invalid list, and a fixed-size list of nulls in a struct too
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_fixed_size_list(t):
        values = arr.values.slice(arr.offset * t.list_size, len(arr) * t.list_size)
        return pa.FixedSizeListArray.from_arrays(plain_array(values), type=want, mask=mask)
    if pa.types.is_struct(t):  # `field` is the child under this slice
        children = [plain_array(arr.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(want), mask=mask)
    offsets = pa.array(arr.offsets.to_numpy())  # a fresh copy: Arrow takes no sliced offsets with a mask
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(
            offsets, plain_array(arr.keys), plain_array(arr.items), type=want, mask=mask
        )
    cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
    return cls.from_arrays(offsets, plain_array(arr.values), type=want, mask=mask)


def _listed(arr: pa.Array, want: pa.DataType) -> pa.Array:
    """A list view as the list it reads as, its values made plain."""
    large = pa.types.is_large_list_view(arr.type)
    mask = arr.is_null() if arr.null_count else None
    sizes = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)
    fresh = (pa.array(arr.offsets.to_numpy()), pa.array(arr.sizes.to_numpy()))  # unsliced, as a mask needs
    cls = pa.LargeListViewArray if large else pa.ListViewArray
    values = pc.list_flatten(cls.from_arrays(*fresh, plain_array(arr.values), mask=mask))
    offsets = pa.array(np.concatenate([[0], np.cumsum(sizes)]), pa.int64() if large else pa.int32())
    return (pa.LargeListArray if large else pa.ListArray).from_arrays(offsets, values, type=want, mask=mask)


# -- compressed inputs ---------------------------------------------------------------------------

# First bytes of compressed files, the codec's name, and Arrow's name for it (None: not read).
MAGIC: dict[bytes, tuple[str, str | None]] = {
    b"\x1f\x8b": ("gzip", "gzip"),
    b"\x28\xb5\x2f\xfd": ("zstd", "zstd"),
    b"BZh": ("bzip2", "bz2"),
    b"\xfd7zXZ\x00": ("xz", None),
    b"PK\x03\x04": ("zip", None),
}
SUFFIX = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bzip2"}


def codec(path: Path, head: bytes) -> str | None:
    """Arrow's codec name for the file whose first bytes are `head`, or None for plain bytes."""
    found = next((kind for magic, kind in MAGIC.items() if head.startswith(magic)), None)
    named = SUFFIX.get(path.suffix.lower())
    if named is not None and (found is None or found[0] != named):
        holds = f"{found[0]}-compressed bytes" if found else "bytes that are not compressed"
        raise InputError(path, f"is named {path.suffix} but holds {holds}")
    if found is None:
        return None
    if found[1] is None:
        raise InputError(path, f"holds {found[0]}-compressed bytes; triage reads gzip, zstd and bzip2")
    return found[1]


def inner_suffix(path: Path) -> str:
    """The format's suffix, under a compression suffix: `run.jsonl.gz` -> `.jsonl`."""
    if path.suffix.lower() in SUFFIX:
        return Path(path.stem).suffix.lower()
    return path.suffix.lower()


RATIO = 200  # decompressed bytes allowed per compressed byte (text inputs compress 5-50x)
FLOOR = 256 << 20  # bytes: always allowed, however small the compressed file
CEILING = 16 << 30  # bytes: never more, unless TRIAGE_MAX_DECOMPRESSED says so
CHUNK = 16 << 20  # bytes read at a time


def limit(path: Path) -> int:
    """The most bytes `path` may decompress to: RATIO times its size, at least FLOOR and at most
    CEILING; `TRIAGE_MAX_DECOMPRESSED` (bytes, or with a K, M, G or T suffix) replaces both."""
    given = os.environ.get("TRIAGE_MAX_DECOMPRESSED", "").strip()
    if given:
        match = re.fullmatch(r"(\d+)\s*([KMGT]?)i?B?", given, re.IGNORECASE)
        if match is None:
            raise InputError("TRIAGE_MAX_DECOMPRESSED", f"{given!r} is not a size (as 4G or 500000000)")
        return int(match[1]) << (10 * " KMGT".index(match[2].upper() or " "))
    return min(CEILING, max(FLOOR, RATIO * path.stat().st_size))


def decompress(path: Path, name: str) -> bytes:
    """The whole decompressed content of `path` (Arrow codec `name`), refused past `limit(path)`:
    a small file that inflates to gigabytes (a decompression bomb) is named, never read whole."""
    cap = limit(path)
    parts, total = [], 0
    try:
        with arrow_source(path) as source, pa.input_stream(source, compression=name) as stream:
            while chunk := stream.read(CHUNK):
                total += len(chunk)
                if total > cap:
                    raise InputError(
                        path,
                        f"decompresses to more than {cap:,} bytes ({RATIO}x its size, at most "
                        f"{CEILING >> 30} GiB); set TRIAGE_MAX_DECOMPRESSED to read it",
                    )
                parts.append(chunk)
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot decompress ({name}; truncated or corrupt?): {e}") from None
    if not total:
        raise InputError(path, "is empty once decompressed")
    return b"".join(parts)


# -- names Arrow cannot take ---------------------------------------------------------------------

# The codec Arrow's `compression="detect"` takes from a name's ending (pyarrow's own rule).
_ARROW_DETECTS = {".bz2": "bz2", ".gz": "gzip", ".lz4": "lz4", ".zst": "zstd"}


def detected(path: Path) -> str | None:
    """What `pa.input_stream(path, compression="detect")` decompresses `path` with: the same for a
    file handed over open (`arrow_source`), which has no name to detect it from."""
    return next((codec for end, codec in _ARROW_DETECTS.items() if str(path).endswith(end)), None)


def arrow_takes(name: str) -> bool:
    """Whether Arrow can open a file by `name`: it encodes names as UTF-8, and a name holding a byte
    that is not UTF-8 (a lone surrogate in Python's text of it, `os.fsdecode`) cannot be."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@contextmanager
def arrow_source(path: Path) -> Iterator[str | pa.NativeFile]:
    """`path` as Arrow's readers take it: its name, or, for a name Arrow cannot take, the file
    opened here (Python passes the name's own bytes to the system) and handed over open."""
    name = str(path)
    if arrow_takes(name):
        yield name
        return
    with open(path, "rb") as f, pa.PythonFile(f, mode="r") as native:
        yield native


# -- TOML files: a manifest `triage.toml`, a gate file --------------------------------------------
#
# `read_toml` is the one reader of both: their document, or InputError naming the file and why,
# never another exception. Before tomllib sees the text, what it would choke on is refused: anything
# but a regular file (`regular_file`; the open does not wait on a FIFO swapped in meanwhile), more
# than MAX_TOML_BYTES, bytes that are not UTF-8 (a leading byte-order mark is read: Windows editors
# write one), and dotted keys heavier than MAX_KEY_WEIGHT. tomllib keeps each leading part of a
# dotted key apart (`a`, `a.b`, `a.b.c`, …), so a key of p parts costs p(p−1)/2 of them, its
# weight: one line of 10,000 parts took 400 MB, and 100,000 would take 40 GB. What tomllib refuses
# — bad syntax, a duplicate key, a control character, an integer of more than 4,300 digits, nesting
# deeper than Python recurses — is "not valid TOML: …". `shown` quotes a value in a message.

MAX_TOML_BYTES = 4 << 20  # a manifest holds a few lines, a gate file one per floor: 60,000 floors fit
# Σ p(p−1)/2 over the dotted keys of p parts: a few MB of tomllib's bookkeeping at most (triage's
# own keys have at most 3 parts; the budget still takes 1,000,000 keys of two)
MAX_KEY_WEIGHT = 1 << 20
_MAX_DIGITS = 4300  # Python's limit on an integer's digits (sys.get_int_max_str_digits)

# A dotted key where TOML allows one: at a line's start (a key/value pair, or a [table] or
# [[array]] header) or after `{` or `,` (an inline table); a key is followed by `=` or `]`.
_PART = r"""(?:[A-Za-z0-9_-]++|"(?:[^"\\\n]|\\.)*+"|'[^'\n]*+')"""
_DOTTED = re.compile(
    rf"(?:^|[{{,])[ \t]*+(?:\[\[?[ \t]*+)?({_PART}(?:[ \t]*+\.[ \t]*+{_PART})++)(?=[ \t]*+[=\]])",
    re.M,
)
_PARTS = re.compile(_PART)


class _Shown(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        # Python refuses to print an integer of more than 4,300 digits (a hexadecimal or octal
        # TOML integer is read whatever its length): its size is shown instead
        if x.bit_length() > 14_000:
            return f"<an integer of about {int(x.bit_length() * math.log10(2)):,} digits>"
        return super().repr_int(x, level)


_shown = _Shown()
_shown.maxstring, _shown.maxother, _shown.maxlist, _shown.maxdict, _shown.maxlevel = 60, 60, 6, 6, 3
_shown.maxlong = 40


def quoted(value: object) -> str:
    """A value read from a file as an error message quotes it: its repr, cut short (a long list or
    string, a deep nest, a long integer) with `...`."""
    return _shown.repr(value)


def read_toml(path: Path) -> dict[str, object]:
    """`path`'s TOML document; InputError naming `path` when it is not a regular file, is larger
    than MAX_TOML_BYTES, is not UTF-8, is too heavy in dotted keys, or is not valid TOML."""
    text = _toml_text(Path(path))
    _weigh_keys(path, text)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise InputError(path, "not valid TOML: nested too deeply (arrays or inline tables)") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(path, f"not valid TOML: {e}") from None
    except ValueError as e:  # an integer too long to convert (Python's limit), or another value
        raise InputError(path, f"not valid TOML: {_value_problem(text, e)}") from None
    except MemoryError:
        raise InputError(path, "not valid TOML: out of memory while parsing it") from None


def _toml_text(path: Path) -> str:
    regular_file(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO swapped in since: no wait for a writer
    except OSError as e:
        raise InputError(path, f"cannot be read: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise InputError(path, "is not a regular file (it changed while being opened); not read")
        data = f.read(MAX_TOML_BYTES + 1)
    if len(data) > MAX_TOML_BYTES:
        raise InputError(
            path, f"is larger than {MAX_TOML_BYTES >> 20} MiB, more than a TOML file of triage's holds"
        )
    bad = utf8_error(path, data)
    if bad is not None:
        raise InputError(path, f"not valid TOML: {bad[1].problem}", bad[1].where)
    return data.decode("utf-8-sig")


def _weigh_keys(path: Path, text: str) -> None:
    """Refuse the text when its dotted keys weigh more than MAX_KEY_WEIGHT, naming the longest."""
    total, longest, at = 0, 0, 0
    for m in _DOTTED.finditer(text):
        p = len(_PARTS.findall(m[1]))
        total += p * (p - 1) // 2
        if p > longest:
            longest, at = p, m.start(1)
    if total > MAX_KEY_WEIGHT:
        raise InputError(
            path,
            f"not read as TOML: its dotted keys are too long (the longest has {longest:,} parts; triage's "
            "have at most 3, and a parser's work grows with the square of a key's parts)",
            f"line {text.count(chr(10), 0, at) + 1}",
        )


def _value_problem(text: str, e: ValueError) -> str:
    """What tomllib's ValueError means: Python's refusal of an integer of more than 4,300 digits
    (named with its line), or its own words."""
    long = re.search(rf"(?<![0-9_])[0-9][0-9_]{{{_MAX_DIGITS},}}", text)
    if long is not None and "digits" in str(e):
        line = text.count("\n", 0, long.start()) + 1
        return f"an integer of more than {_MAX_DIGITS:,} digits (line {line})"
    return str(e)
