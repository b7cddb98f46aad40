"""Parquet, read by `pyarrow.parquet`: one file, or the files of a folder or glob as one table
(`pyarrow.dataset`, each row placed by its file); the columns asked for, the file's own metadata,
every string checked to be UTF-8 (Parquet readers do not check), a corrupt file named."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.errors import InputError
from triage.core.inputs.readers import (
    Parsed,
    codec,
    decompress,
    regular_file,
    schema_meta,
    sniff,
    valid_text,
    validate_text,
)

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
    valid_text(path, table)
    return Parsed(path, table.replace_schema_metadata(None), schema_meta(table))


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
        dataset = ds.dataset([str(f) for f in files], format="parquet")
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
    return Shards(path, table.replace_schema_metadata(None), meta, files=tuple(files), starts=starts)
