"""The queries a truth answers: Parquet or JSON Lines with `query_id`, `embedding` and an optional
`filter` (a SQL WHERE clause over the corpus's metadata columns; empty or null: unfiltered).
Every other column is kept as it is and written beside the truth.

Embeddings are taken as float32, as the corpus's are: a list of numbers of one length throughout;
a null, a null number, NaN or an infinity, another length, or (under cosine) a zero vector is
refused, naming the file and the row or line. Each query's vector digest is xxh3-64 of its
float32 bytes: the truth cache's key holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from triage.core.errors import InputError
from triage.core.inputs.contract import ID, STR, conform, single, unique_ids
from triage.core.inputs.readers import Parsed
from triage.core.inputs.shapes import read_table

SPEC = {"query_id": (ID, True), "filter": (STR, False)}
READ_BYTES = 1 << 20


@dataclass(frozen=True)
class QuerySet:
    path: Path
    table: pa.Table  # every column but the embedding; `query_id` as text
    vectors: np.ndarray  # float32 (queries, d)
    filters: list[str | None]  # as given; None where absent, null or only spaces
    digests: list[str]  # per query: xxh3-64 of its float32 bytes (hex)
    digest: str  # xxh3-128 of the file's bytes
    vectors_digest: str  # xxh3-128 of every query's float32 bytes, in order

    @property
    def ids(self) -> list[str]:
        return self.table.column("query_id").to_pylist()


def read_queries(path: Path, cosine: bool) -> QuerySet:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "does not exist")
    if path.is_dir():
        raise InputError(path, "is a folder: the queries are one Parquet or JSON Lines file")
    loaded = read_table(path)
    table = conform(loaded, SPEC)
    unique_ids(loaded, table)
    if "embedding" not in table.column_names:
        have = ", ".join(table.column_names)
        raise InputError(path, f"missing required column 'embedding' (columns: {have})")
    vectors = _vectors(loaded, single(table.column("embedding")), cosine)
    rest = table.drop_columns(["embedding"])
    filters = [f if f is not None and f.strip() else None for f in _filters(rest)]
    digests = [xxhash.xxh3_64_hexdigest(v.tobytes()) for v in vectors]
    whole = xxhash.xxh3_128(f"{vectors.shape[1]}|".encode())
    whole.update(np.ascontiguousarray(vectors).tobytes())
    return QuerySet(path, rest, vectors, filters, digests, content_digest(path), whole.hexdigest())


def _filters(table: pa.Table) -> list[str | None]:
    if "filter" not in table.column_names:
        return [None] * table.num_rows
    return table.column("filter").to_pylist()


def _vectors(loaded: Parsed, emb: pa.Array, cosine: bool) -> np.ndarray:
    path = loaded.path
    t = emb.type
    listed = pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
    if not listed or not (pa.types.is_floating(t.value_type) or pa.types.is_integer(t.value_type)):
        raise InputError(path, f"'embedding' is {t}: expected a list of numbers")
    if emb.null_count:
        row = int(np.flatnonzero(emb.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(path, "'embedding' is empty (null)", loaded.where(row))
    lengths = pc.list_value_length(emb).to_numpy(zero_copy_only=False)
    dim = int(lengths[0])
    if dim == 0:
        raise InputError(path, "'embedding' is an empty list", loaded.where(0))
    other = np.flatnonzero(lengths != dim)
    if len(other):
        row = int(other[0])
        raise InputError(
            path,
            f"'embedding' holds {int(lengths[row])} numbers; the first query's holds {dim}",
            loaded.where(row),
        )
    values = emb.flatten()
    if values.null_count:
        at = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(path, "'embedding' holds a null number", loaded.where(at // dim))
    with np.errstate(over="ignore"):
        x = values.to_numpy(zero_copy_only=False).astype(np.float32).reshape(len(emb), dim)
    bad = np.flatnonzero(~np.isfinite(x).all(axis=1))
    if len(bad):
        raise InputError(
            path,
            "'embedding' holds NaN or an infinite number (or one beyond float32's range)",
            loaded.where(int(bad[0])),
        )
    norms = np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float64))
    if cosine and (norms == 0).any():
        row = int(np.flatnonzero(norms == 0)[0])
        raise InputError(path, "'embedding' is all zeros: its cosine is undefined", loaded.where(row))
    return np.ascontiguousarray(x)


def content_digest(path: Path) -> str:
    """xxh3-128 of the file's bytes (hex): truth.json's `queries.digest`, a sampled set's log digest."""
    h = xxhash.xxh3_128()
    with open(path, "rb") as f:
        while chunk := f.read(READ_BYTES):
            h.update(chunk)
    return h.hexdigest()
