"""CSV and TSV with a header row, read by `pyarrow.csv`: id columns (under any of the names in
`contract.ID_COLUMNS`) stay text ("007" is not 7); TSV has no quoting (BEIR writes none). Each
row remembers its line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from triage.core.errors import InputError
from triage.core.inputs.contract import ID_COLUMNS
from triage.core.inputs.readers import Parsed, text_bytes


def _nonblank_lines(data: bytes) -> np.ndarray:
    """1-based numbers of the lines holding anything but a CR (the lines pyarrow.csv reads)."""
    raw = np.frombuffer(data, np.uint8)
    nl = np.flatnonzero(raw == 10)
    starts = np.concatenate([[0], nl + 1])
    ends = np.concatenate([nl, [len(raw)]])
    length = ends - starts
    cr = np.zeros(len(starts), bool)
    has = length > 0
    cr[has] = raw[ends[has] - 1] == 13
    return np.flatnonzero(length - cr > 0) + 1


def read_delimited(path: Path, delimiter: str) -> Parsed:
    """CSV or TSV with a header row (pyarrow.csv). Id columns stay text ("007" is not 7); TSV has
    no quoting (BEIR writes none). Each row remembers its line."""
    data = text_bytes(path)
    if not data.strip():
        raise InputError(path, "holds no records")
    header = data.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace").split(delimiter)
    names = [h.strip().strip('"') for h in header]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise InputError(path, f"the header names column {dup!r} twice", "line 1")
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            parse_options=pcsv.ParseOptions(  # a quoted CSV cell may hold line breaks (a context's text)
                delimiter=delimiter,
                quote_char='"' if delimiter == "," else False,
                newlines_in_values=delimiter == ",",
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.string() for n in names if n in ID_COLUMNS}
            ),
        )
    except pa.ArrowInvalid as e:
        raise InputError(path, f"not valid {'TSV' if delimiter == chr(9) else 'CSV'}: {e}") from None
    if table.column_names != names and len(table.column_names) == len(names):
        table = table.rename_columns(names)  # a quoted header of TSV (read unquoted): its names
    lines = _nonblank_lines(data)[1:]
    if table.num_rows == 0:
        raise InputError(path, "holds a header and no rows")
    if len(lines) != table.num_rows:  # quoted line breaks: rows no longer map onto lines
        return Parsed(path, table)
    return Parsed(path, table, {}, lines)
