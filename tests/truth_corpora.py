"""Small sharded corpora and query files for `triage truth`'s cache, resume and Ray tests, written as
a user's files are: Parquet shards with chunk_id, embedding (fixed-size float32 lists) and metadata
columns; queries as JSON Lines with query_id, embedding and a filter."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

D = 8
FILTERS = [None, "tenant = 'acme'", "tenant IN ('globex', 'tiny') AND year >= 2021", "tenant = 'nobody'"]


def write_shard(path: Path, x: np.ndarray, ids: Sequence[str], seed: int, row_group: int = 64) -> Path:
    """A shard of the rows `x` with ids `ids`, a tenant and a year per row drawn from `seed`."""
    rng = np.random.default_rng(seed)
    n = len(ids)
    table = pa.table(
        {
            "chunk_id": pa.array(list(ids), pa.string()),
            "embedding": pa.FixedSizeListArray.from_arrays(
                pa.array(x.astype(np.float32).ravel()), x.shape[1]
            ),
            "tenant": rng.choice(np.array(["acme", "globex", "tiny"]), n, p=[0.6, 0.37, 0.03]),
            "year": rng.integers(2019, 2025, n),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group)
    return path


def write_corpus(folder: Path, shards: int = 4, rows: int = 200, seed: int = 3) -> Path:
    """`shards` Parquet files of `rows` rows each, part-0.parquet …, with an exact tie planted."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((shards * rows, D)).astype(np.float32)
    x[rows + 5] = x[2]  # the same vector in two shards: a tie across the merge
    for s in range(shards):
        part = slice(s * rows, (s + 1) * rows)
        write_shard(
            folder / f"part-{s}.parquet",
            x[part],
            [f"doc-{i:05d}" for i in range(part.start, part.stop)],
            seed + s,
        )
    return folder


def write_queries(path: Path, n: int = 12, seed: int = 5, filters: Sequence[str | None] = FILTERS) -> Path:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, D)).astype(np.float32)
    with open(path, "w") as f:
        for i in range(n):
            row = {"query_id": f"q{i:03d}", "embedding": q[i].tolist(), "filter": filters[i % len(filters)]}
            f.write(json.dumps(row) + "\n")
    return path


def truth_bytes(folder: Path) -> tuple[bytes, bytes]:
    """The truth folder's labels and queries, as bytes (truth.json differs by its time)."""
    return (folder / "labels.parquet").read_bytes(), (folder / "queries.parquet").read_bytes()
