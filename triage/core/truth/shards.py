"""The corpus a truth is computed over: a Parquet file, or a folder of Parquet files, each a shard.

A shard holds `chunk_id` (text, or integers read as text), `embedding` (a fixed-size or variable
list of floats, one length throughout; float64 and float16 values are rounded to float32, the
precision every score is computed from) and any metadata columns the queries' filters name. It is
read block by block (`blocks`): a block's rows are decoded, checked and handed over, and let go
before the next, so memory does not grow with the shard. A bad row is named by its file and its
1-based row: a null or missing id, an embedding that is null, holds a null, NaN or an infinity, is
of another length than the rest or the queries', is zero under cosine, or is too large to score.

A shard's digest is the corpus cache's key of the file (`corpus_key`: its size, mtime and Parquet
footer), read without reading the file.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from triage.core.errors import InputError
from triage.core.ids.codes import fingerprint
from triage.core.inputs.contract import single
from triage.core.inputs.corpus_cache import corpus_key
from triage.core.inputs.readers import PARQUET_EXT, arrow_source, regular_file, validate_text
from triage.core.truth.kernel import Block, Job, partial_topk
from triage.core.truth.merge import Partial
from triage.core.truth.predicate import Predicate

BLOCK_BYTES = 32 << 20  # float32 embedding bytes decoded at a time
BUFFER_BYTES = 8 << 20  # bytes read from the file at a time
MAX_NORM = 1e18  # an embedding longer than this overflows float32 products
SNAPSHOT_KEY = b"corpus_snapshot"  # the Parquet key-value metadata naming the corpus's version


@dataclass(frozen=True)
class Shard:
    path: Path
    name: str  # its path under the corpus folder (the file's name for a single file)
    rows: int
    digest: str
    dim: int | None  # a fixed-size list's length; None: a variable list (checked as read)
    columns: tuple[str, ...]
    schema: pa.Schema
    snapshot: str | None  # its `corpus_snapshot` metadata, if any


def corpus_shards(corpus: Path) -> list[Shard]:
    """The shards of `corpus`: the file, or every Parquet file under the folder (names starting
    with a dot left out), ordered by their path under it."""
    corpus = Path(corpus)
    if corpus.is_dir():
        files = sorted(
            (p for p in corpus.rglob("*") if p.suffix.lower() in PARQUET_EXT and _visible(p, corpus)),
            key=lambda p: p.relative_to(corpus).as_posix(),
        )
        if not files:
            raise InputError(corpus, "holds no Parquet files (.parquet, .pq, .parq): no corpus shard")
        return [_shard(p, p.relative_to(corpus).as_posix()) for p in files]
    if not corpus.exists():
        raise InputError(corpus, "does not exist")
    return [_shard(corpus, corpus.name)]


def _visible(path: Path, top: Path) -> bool:
    return path.is_file() and not any(part.startswith(".") for part in path.relative_to(top).parts)


def _shard(path: Path, name: str) -> Shard:
    regular_file(path)
    try:
        with arrow_source(path) as source:
            pf = pq.ParquetFile(source)
            schema, rows = pf.schema_arrow, pf.metadata.num_rows
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot read Parquet (truncated or corrupt?): {e}") from None
    names = schema.names
    for need in ("chunk_id", "embedding"):
        if need not in names:
            raise InputError(path, f"missing required column {need!r} (columns: {', '.join(names)})")
    repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if repeated is not None:
        raise InputError(path, f"has the column {repeated!r} more than once; a column is named once")
    meta = schema.metadata or {}
    snapshot = meta[SNAPSHOT_KEY].decode("utf-8", "replace") if SNAPSHOT_KEY in meta else None
    return Shard(
        path,
        name,
        rows,
        corpus_key(path),
        _dim(path, schema.field("embedding").type),
        tuple(names),
        schema,
        snapshot,
    )


def _dim(path: Path, t: pa.DataType) -> int | None:
    listed = pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
    if not listed or not pa.types.is_floating(t.value_type):
        raise InputError(path, f"'embedding' is {t}: expected a list of floats (float32)")
    return t.list_size if pa.types.is_fixed_size_list(t) else None


def check_dim(shard: Shard, dim: int) -> None:
    """The shard's fixed embedding length is the queries' (a variable list is checked as read)."""
    if shard.dim is not None and shard.dim != dim:
        raise InputError(
            shard.path, f"'embedding' has {shard.dim} dimensions; the queries' embeddings have {dim}"
        )


@dataclass(frozen=True)
class ShardResult:
    """One shard's partial top-k for a job, with its ids' fingerprints in row order (for ids
    repeated across shards)."""

    partial: Partial
    fingerprints: np.ndarray  # uint64 per row


def scan_shard(
    shard: Shard, job: Job, predicates: Sequence[Predicate], progress: Callable[[int], None] | None = None
) -> ShardResult:
    """The pure per-shard step every engine runs: the shard read once, block by block, every
    query's candidates kept (`kernel.partial_topk`); an id twice in the shard is refused."""
    prints: list[np.ndarray] = []

    def read() -> Iterator[Block]:
        dim = job.vectors.shape[1]
        for block in prefetched(blocks(shard, predicates, dim, job.metric == "cosine")):
            prints.append(fingerprint(block.ids))
            yield block

    partial = partial_topk(job, read(), progress)
    fp = np.concatenate(prints) if prints else np.zeros(0, np.uint64)
    _unique(shard, fp)
    return ShardResult(partial, fp)


def prefetched(source: Iterator[Block]) -> Iterator[Block]:
    """`source`'s blocks, the next one read and decoded in a thread while this one is scanned
    (reading a file and decoding Parquet mostly release the GIL). Its error is raised here; when
    the consumer stops (an error, ctrl+c), the thread stops after the block in hand."""
    ahead: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def offer(kind: str, item: object) -> bool:
        while not stop.is_set():
            try:
                ahead.put((kind, item), timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for block in source:
                if not offer("block", block):
                    return
            offer("end", None)
        except BaseException as e:  # handed to the consumer, raised there
            offer("error", e)
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()  # the file let go in this thread, which read it

    thread = threading.Thread(target=run, name="triage-truth-reader", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = ahead.get()
            if kind == "end":
                return
            if kind == "error":
                raise item  # type: ignore[misc]
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        thread.join()


def _unique(shard: Shard, fp: np.ndarray) -> None:
    """InputError naming two rows of `shard` with one chunk id (fingerprints equal, ids read back
    and compared)."""
    order = np.argsort(fp, kind="stable")
    same = np.flatnonzero(fp[order][1:] == fp[order][:-1])
    for i in same:
        rows = sorted((int(order[i]), int(order[i + 1])))
        ids = read_ids(shard, rows)
        if ids[0] == ids[1]:
            raise InputError(
                shard.path,
                f"duplicate chunk_id {ids[0]!r} (row {rows[0] + 1} and row {rows[1] + 1})",
                f"row {rows[1] + 1}",
            )


def read_ids(shard: Shard, rows: Sequence[int]) -> list[str]:
    """The chunk ids at `rows` (0-based) of a shard, as text."""
    with arrow_source(shard.path) as source:
        table = pq.ParquetFile(source).read(columns=["chunk_id"])
    ids = single(table.column("chunk_id"))
    return [str(ids[r].as_py()) for r in rows]


def block_rows(dim: int) -> int:
    return max(256, BLOCK_BYTES // (4 * max(dim, 1)))


def blocks(
    shard: Shard, predicates: Sequence[Predicate], dim: int, cosine: bool, rows: int | None = None
) -> Iterator[Block]:
    """The shard's rows `rows` at a time (default `block_rows`), checked, with the rows each
    predicate admits (`Predicate.mask`; None for the unfiltered)."""
    columns = sorted({c for p in predicates for c in p.columns})
    missing = [c for c in columns if c not in shard.columns]
    if missing:
        have = ", ".join(c for c in shard.columns if c != "embedding")
        raise InputError(shard.path, f"has no column {missing[0]!r}, which a filter names (columns: {have})")
    start = 0
    try:
        with arrow_source(shard.path) as source:
            pf = pq.ParquetFile(source, pre_buffer=False, buffer_size=BUFFER_BYTES)
            wanted = ["chunk_id", "embedding", *(c for c in columns if c not in ("chunk_id", "embedding"))]
            for batch in pf.iter_batches(batch_size=rows or block_rows(dim), columns=wanted):
                table = pa.Table.from_batches([batch])
                ids = _ids(shard, single(table.column("chunk_id")), start)
                vectors = _vectors(shard, single(table.column("embedding")), start, dim, cosine)
                eligible = tuple(None if p.unfiltered else _mask(shard, p, table, start) for p in predicates)
                yield Block(start, ids, vectors, eligible)
                start += batch.num_rows
    except pa.ArrowException as e:
        raise InputError(
            shard.path, f"cannot read Parquet (truncated or corrupt?): {e}", f"near row {start + 1}"
        ) from None


def _mask(shard: Shard, p: Predicate, table: pa.Table, start: int) -> np.ndarray:
    return p.mask(table, shard.path, f"rows {start + 1}-{start + table.num_rows}")


def _where(start: int, i: int) -> str:
    return f"row {start + i + 1}"


def _ids(shard: Shard, ids: pa.Array, start: int) -> pa.Array:
    t = ids.type
    if pa.types.is_integer(t):
        ids = pc.cast(ids, pa.string())
    elif pa.types.is_large_string(t) or pa.types.is_string_view(t) or pa.types.is_dictionary(t):
        ids = pc.cast(ids, pa.string())
    elif not pa.types.is_string(t):
        raise InputError(shard.path, f"'chunk_id' is {t}: expected text or integers")
    if ids.null_count:
        row = int(np.flatnonzero(ids.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(shard.path, "'chunk_id' is empty (null)", _where(start, row))
    try:
        validate_text(pa.table({"chunk_id": ids}))
    except pa.ArrowInvalid:
        for i in range(len(ids)):
            try:
                ids[i].as_py()
            except UnicodeDecodeError:
                raise InputError(
                    shard.path, "'chunk_id' holds text that is not UTF-8", _where(start, i)
                ) from None
    return ids


def _vectors(shard: Shard, emb: pa.Array, start: int, dim: int, cosine: bool) -> np.ndarray:
    """The embeddings as float32 (rows, dim): a view of Arrow's buffer when they are float32."""
    if emb.null_count:
        row = int(np.flatnonzero(emb.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(shard.path, "'embedding' is empty (null)", _where(start, row))
    if not pa.types.is_fixed_size_list(emb.type):
        offsets = emb.offsets.to_numpy()
        lengths = np.diff(offsets)
        bad = np.flatnonzero(lengths != dim)
        if len(bad):
            n = int(lengths[bad[0]])
            raise InputError(
                shard.path,
                f"'embedding' holds {n} numbers; the queries' embeddings hold {dim}",
                _where(start, int(bad[0])),
            )
    values = emb.flatten()
    if values.null_count:
        at = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(shard.path, "'embedding' holds a null number", _where(start, at // dim))
    flat = values.to_numpy(zero_copy_only=False)
    if flat.dtype != np.float32:
        with np.errstate(over="ignore"):
            flat = flat.astype(np.float32)
    x = flat.reshape(len(emb), dim)
    _finite(shard, x, start, cosine)
    return x


def _finite(shard: Shard, x: np.ndarray, start: int, cosine: bool) -> None:
    """Refuse NaN, infinities (float64 values beyond float32's range too), a zero vector under
    cosine and a vector too long for float32 products."""
    norms = np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float64))  # NaN or inf where a value is
    bad = np.flatnonzero(~np.isfinite(norms))
    if len(bad):
        raise InputError(
            shard.path,
            "'embedding' holds NaN or an infinite number (or one beyond float32's range)",
            _where(start, int(bad[0])),
        )
    if cosine and (norms == 0).any():
        row = int(np.flatnonzero(norms == 0)[0])
        raise InputError(shard.path, "'embedding' is all zeros: its cosine is undefined", _where(start, row))
    if (norms > MAX_NORM).any():
        row = int(np.flatnonzero(norms > MAX_NORM)[0])
        raise InputError(
            shard.path, f"'embedding' is longer than {MAX_NORM:g}: too large to score", _where(start, row)
        )
