"""Parquet, read by `pyarrow.parquet`: one file, or the files of a folder or glob as one table
(`pyarrow.dataset`, each row placed by its file); the columns asked for, the file's own metadata,
every string checked to be UTF-8 (Parquet readers do not check), views and dictionaries made plain
(`readers.plain_table`), a corrupt file named."""

from __future__ import annotations

from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.errors import InputError
from triage.core.inputs.readers import (
    Parsed,
    arrow_source,
    arrow_takes,
    codec,
    decompress,
    plain_table,
    regular_file,
    schema_meta,
    sniff,
    valid_text,
    validate_text,
)

if TYPE_CHECKING:
    import pyarrow.dataset as ds

BATCH_ROWS = 16_384  # rows decoded at a time
BUFFER_BYTES = 8 << 20  # bytes read from the file at a time


def read_parquet(path: Path, columns: list[str] | None = None) -> Parsed:
    head = sniff(path)
    name = codec(path, head)
    data = None
    if name is not None:  # a compressed Parquet file is decompressed into memory
        data = decompress(path, name)
        head = data[:4]
    if not head.startswith(b"PAR1"):
        raise InputError(path, "not a Parquet file (no PAR1 magic bytes at the start)")
    try:
        with arrow_source(path) if data is None else nullcontext(pa.BufferReader(data)) as source:
            pf = pq.ParquetFile(source, pre_buffer=False, buffer_size=BUFFER_BYTES)
            names = pf.schema_arrow.names
            repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
            if repeated is not None:
                raise InputError(path, f"has the column {repeated!r} more than once; a column is named once")
            wanted = None if columns is None else list(dict.fromkeys(c for c in columns if c in names))
            table = _in_batches(pf, wanted)
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot read Parquet (truncated or corrupt?): {e}") from None
    valid_text(path, table)
    return Parsed(path, plain_table(path, table).replace_schema_metadata(None), schema_meta(table))


def _in_batches(pf: pq.ParquetFile, columns: list[str] | None) -> pa.Table:
    """The file's rows decoded `BATCH_ROWS` at a time through a small buffer, each batch copied onto
    the end of its columns and let go before the next is decoded. Decoding a whole column chunk at
    once holds its pages beside the arrays built from them, and joining batches afterwards holds
    each column twice: a 1M-row run of 20 ids a row (0.47 GB of arrays) peaks at 1.25 GiB read
    whole, at 0.8 GiB this way (docs/benchmarks.md "Memory at a million queries")."""
    whole = pf.schema_arrow
    schema = (
        whole if columns is None else pa.schema([whole.field(c) for c in columns], metadata=whole.metadata)
    )
    grown = [_Grown(f.type) for f in schema]
    for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=True):
        for g, col in zip(grown, batch.columns, strict=True):
            g.append(col)
        del batch
    return pa.table([g.array() for g in grown], schema=schema)


class _Grown:
    """One column built by appending arrays of its type: a string, a fixed-width column or a list of
    those, without nulls, is copied into growing byte buffers (one contiguous array at the end,
    never held twice); any other piece is kept as it is and the pieces joined at the end."""

    def __init__(self, t: pa.DataType) -> None:
        self.type = t
        self.child = _Grown(t.value_type) if pa.types.is_list(t) else None
        self.flat: bool = (
            pa.types.is_string(t)
            or (pa.types.is_primitive(t) and t.bit_width % 8 == 0)
            or (self.child is not None and self.child.flat)
        )
        self.length = 0  # values appended to the buffers
        self.offsets = bytearray(np.zeros(1, np.int32).tobytes()) if self._offsets else bytearray()
        self.data = bytearray()
        self.pieces: list[pa.Array] = []  # what could not be appended flat, in order

    @property
    def _offsets(self) -> bool:
        return pa.types.is_list(self.type) or pa.types.is_string(self.type)

    def append(self, col: pa.Array) -> None:
        if not self.pieces and self.flat and col.null_count == 0 and self._append(col):
            return
        if not self.pieces and self.length:
            self.pieces.append(self._flat())
        self.pieces.append(col)

    def _append(self, col: pa.Array) -> bool:
        n = len(col)
        if self._offsets:
            offsets = np.frombuffer(col.buffers()[1], np.int32, n + 1, col.offset * 4)
            start, end = int(offsets[0]), int(offsets[-1])
            base = self.child.length if self.child is not None else len(self.data)
            if base + end - start >= 2**31:  # beyond int32 offsets: kept as pieces
                return False
            if self.child is not None:
                values = col.values.slice(start, end - start)
                if values.null_count or not self.child._append(values):
                    return False
            else:
                self.data += memoryview(col.buffers()[2])[start:end] if end > start else b""
            self.offsets += (offsets[1:] - np.int32(start) + np.int32(base)).tobytes()
        else:
            width = self.type.bit_width // 8
            self.data += memoryview(col.buffers()[1])[col.offset * width : (col.offset + n) * width]
        self.length += n
        return True

    def _flat(self) -> pa.Array:
        buffers = [None, pa.py_buffer(self.offsets if self._offsets else self.data)]
        if pa.types.is_string(self.type):
            buffers.append(pa.py_buffer(self.data))
        children = [self.child._flat()] if self.child is not None else None
        return pa.Array.from_buffers(self.type, self.length, buffers, children=children)

    def array(self) -> pa.Array | pa.ChunkedArray:
        if not self.pieces:
            return self._flat() if self.flat else pa.array([], self.type)  # no rows
        try:
            return pa.concat_arrays(self.pieces) if len(self.pieces) > 1 else self.pieces[0]
        except pa.ArrowInvalid:  # past one array's int32 offsets: left in pieces, as pyarrow leaves it
            return pa.chunked_array(self.pieces, self.type)


@dataclass(frozen=True)
class Shards(Parsed):
    """Parquet files read as one table: `starts[i]` is the first row of `files[i]`."""

    files: tuple[Path, ...] = ()
    starts: np.ndarray | None = None

    def where(self, row: int) -> str:
        if self.starts is None:
            return super().where(row)
        i = int(np.searchsorted(self.starts, row, side="right")) - 1
        return f"{self.files[i].name} row {row - int(self.starts[i]) + 1}"


def _fragment(form: ds.ParquetFileFormat, path: Path, opened: ExitStack) -> ds.Fragment:
    """The Parquet file `path` opened here (Arrow cannot open its name), as a dataset's fragment;
    one that is not Parquet is named (Arrow knows it only as a buffer)."""
    try:
        fragment = form.make_fragment(pa.PythonFile(opened.enter_context(open(path, "rb"))))
        fragment.physical_schema  # noqa: B018 - its footer read here, where the file can be named
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot read Parquet (truncated or corrupt?): {e}") from None
    return fragment


def read_dataset(path: Path, files: list[Path], columns: list[str] | None = None) -> Shards:
    """The Parquet `files` a folder or glob (`path`) names as one table (pyarrow.dataset), in the
    order given; the metadata is the first file's."""
    for f in files:
        regular_file(f)
        if not sniff(f).startswith(b"PAR1"):
            raise InputError(f, "not a Parquet file; a folder or glob is read as Parquet files only")
    # imported here, not above: only a folder or glob needs it, and importing it costs 0.1-0.3 s
    # (more where pandas is installed: it imports pandas)
    import pyarrow.dataset as ds

    try:
        with ExitStack() as opened:
            if all(arrow_takes(str(f)) for f in files):
                dataset = ds.dataset([str(f) for f in files], format="parquet")
            else:  # a name Arrow cannot take: the files opened here, one dataset of the first's schema
                form = ds.ParquetFileFormat()
                frags = [_fragment(form, f, opened) for f in files]
                dataset = ds.FileSystemDataset(frags, frags[0].physical_schema, form)
            names = dataset.schema.names
            wanted = None if columns is None else [c for c in columns if c in names]
            parts = [frag.to_table(schema=dataset.schema, columns=wanted) for frag in dataset.get_fragments()]
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot read the Parquet files as one table: {e}") from None
    table = pa.concat_tables(parts) if parts else dataset.schema.empty_table()
    try:
        validate_text(table)
    except pa.ArrowInvalid as e:
        raise InputError(path, f"holds invalid data (text not UTF-8?): {e}") from None
    raw = dataset.schema.metadata or {}
    meta = {
        k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
        for k, v in raw.items()
        if not k.startswith(b"ARROW:") and k != b"pandas"
    }
    starts = np.cumsum([0] + [p.num_rows for p in parts[:-1]]).astype(np.int64)
    table = plain_table(path, table).replace_schema_metadata(None)
    return Shards(path, table, meta, files=tuple(files), starts=starts)
