"""The corpus's shards: found in a folder in path order, read block by block in any embedding
layout as the same float32 rows, and read ahead in a thread that hands over its error and stops
when the reader does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.core.errors import InputError
from triage.core.truth.kernel import Block
from triage.core.truth.predicate import parse_filter
from triage.core.truth.shards import blocks, corpus_shards, prefetched


def write(path: Path, x: np.ndarray, layout: str) -> None:
    if layout == "fixed32":
        emb = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel(), pa.float32()), x.shape[1])
    elif layout == "list64":
        emb = pa.array(x.astype(np.float64).tolist(), pa.list_(pa.float64()))
    else:
        emb = pa.array(x.astype(np.float16).tolist(), pa.large_list(pa.float16()))
    n = len(x)
    tenant = pa.array(["a" if i % 3 else "b" for i in range(n)])
    pq.write_table(
        pa.table({"chunk_id": pa.array(range(n)), "embedding": emb, "tenant": tenant}),
        path,
        row_group_size=70,
    )


@pytest.mark.parametrize("layout", ["fixed32", "list64", "list16"])
def test_every_layout_reads_as_the_same_float32_rows(tmp_path: Path, layout: str) -> None:
    x = np.random.default_rng(0).standard_normal((250, 6)).astype(np.float16).astype(np.float32)
    write(tmp_path / "c.parquet", x, layout)
    (shard,) = corpus_shards(tmp_path / "c.parquet")
    preds = [parse_filter(None), parse_filter("tenant = 'b'")]
    got = list(blocks(shard, preds, 6, cosine=True, rows=64))
    assert [b.start for b in got] == [0, 64, 128, 192]
    assert np.array_equal(np.concatenate([b.vectors for b in got]), x)
    assert sum((b.ids.to_pylist() for b in got), []) == [str(i) for i in range(250)]
    assert got[0].eligible[0] is None and got[0].eligible[1].tolist()[:4] == [True, False, False, True]


def test_a_folder_s_shards_in_path_order_hidden_files_left_out(tmp_path: Path) -> None:
    x = np.ones((3, 4), np.float32)
    for name in ("b/2.parquet", "a.parquet", "b/10.parquet", ".hidden.parquet", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        write(tmp_path / name, x, "fixed32")
    assert [s.name for s in corpus_shards(tmp_path)] == ["a.parquet", "b/10.parquet", "b/2.parquet"]
    with pytest.raises(InputError, match="holds no Parquet files"):
        corpus_shards(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def block(i: int) -> Block:
    return Block(i, pa.array([str(i)]), np.zeros((1, 2), np.float32), (None,))


def test_read_ahead_hands_over_every_block_then_the_error() -> None:
    def source() -> Iterator[Block]:
        yield block(0)
        yield block(1)
        raise InputError("c.parquet", "broken", "row 2")

    seen = []
    with pytest.raises(InputError, match="row 2: broken"):
        for b in prefetched(source()):
            seen.append(b.start)
    assert seen == [0, 1]


def test_read_ahead_stops_and_closes_when_the_reader_stops() -> None:
    closed = threading.Event()

    def source() -> Iterator[Block]:
        try:
            for i in range(1000):
                yield block(i)
        finally:
            closed.set()

    before = threading.active_count()
    for b in prefetched(source()):
        if b.start == 3:
            break
    assert closed.wait(5) and threading.active_count() == before
