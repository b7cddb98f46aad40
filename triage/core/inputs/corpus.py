"""Chunk look-up by id, without loading a corpus of millions of chunks into Python objects.

A small corpus is read into one Arrow table. A large Parquet corpus is converted once into an
uncompressed Arrow IPC file in a cache folder and memory-mapped: a look-up is a binary search
over the sorted ids plus a zero-copy slice, so one detail screen's ~25 ids cost about a
millisecond and the resident memory is only the pages touched.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.ids.codes import fingerprint
from triage.core.ids.index import CorpusIds, IdIndex
from triage.core.inputs import corpus_cache as cache
from triage.core.inputs.contract import ALIASES, CORPUS, conform, single, unique_ids
from triage.core.inputs.readers import Parsed
from triage.core.inputs.shapes import Format, Role, detect, read_input
from triage.core.text.words import token_estimates

cache_dir = cache.cache_dir  # where the cache folders are

COLUMNS = cache.COLUMNS
SMALL = 64 << 20  # bytes: a corpus file under this size is simply read whole
FEW = 64  # ids: up to this many, `get` searches the sorted ids one by one


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    header: str | None
    text: str | None
    doc_id: str | None = None
    source_type: str | None = None


class Corpus:
    """Chunks by id. `ids` holds every chunk id (for the checks); `get` looks a few up.

    `index` is (ids sorted, their rows in `table`); computed here unless the cache has it."""

    def __init__(
        self,
        table: pa.Table,
        path: Path,
        index: pa.Table | None = None,
        tokens: np.ndarray | None = None,
        known: CorpusIds | None = None,
    ) -> None:
        self.path = path
        self.table = table  # may be memory-mapped
        self.ids = known.ids if known is not None else single(table.column("chunk_id"))
        if index is None:
            index = sorted_index(self.ids)
        self._tokens = tokens  # each row's header token estimate, when the cache holds them
        self._counted: np.ndarray | None = None  # else those counted so far (-1: not yet)
        self._known = known  # these ids, indexed by fingerprint (a mapped corpus's)
        self._lock = threading.Lock()  # the cost row's two threads count uncached headers once
        self._batches = table.select(COLUMNS).to_batches()  # zero-copy views, in row order
        self._sorted = single(index.column("chunk_id"))
        self._rows = single(index.column("row")).to_numpy()
        self.notice: str | None = None  # why the cache was not used, when it could not be

    def __len__(self) -> int:
        return len(self.ids)

    def _find(self, chunk_id: str) -> int:
        """Row of `chunk_id`, or -1: a binary search over the sorted ids."""
        lo, hi = 0, len(self._sorted)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._sorted[mid].as_py() < chunk_id:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self._sorted) and self._sorted[lo].as_py() == chunk_id:
            return int(self._rows[lo])
        return -1

    def get(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The chunks found among `chunk_ids` (absent ids are simply not in the result): up to FEW
        ids by binary search each, more (thousands of flips' chunks) in one batched look-up."""
        wanted = list(dict.fromkeys(chunk_ids))
        return self._one_by_one(wanted) if len(wanted) <= FEW else self._batched(wanted)

    def _one_by_one(self, wanted: list[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        for cid in wanted:
            row = self._find(cid)
            if row >= 0:
                values = self.table.slice(row, 1).to_pylist()[0]
                out[cid] = Chunk(**{k: values[k] for k in COLUMNS})
        return out

    def rows_of(self, chunk_ids: pa.Array) -> np.ndarray:
        """The table row of each id of `chunk_ids` (int64; -1: not in the corpus or null). By
        their fingerprints in the cache's index when the corpus is mapped, each row found
        confirmed by its id; else in one pass, the corpus ids probed against a hash set of the
        wanted ones (`pc.index_in`), so the cost is one scan of the ids however many are wanted."""
        if self._known is not None:
            chunk_ids = chunk_ids.cast(pa.string())
            found = self._known.find(fingerprint(chunk_ids))
            hit = np.flatnonzero(found >= 0)  # confirmed by their strings: a chunk is never another id's
            same = pc.equal(self.ids.take(pa.array(found[hit])), chunk_ids.take(pa.array(hit)))
            found[hit[~same.fill_null(False).to_numpy(zero_copy_only=False)]] = -1
            return found
        wanted = pc.unique(chunk_ids.cast(pa.string())).drop_null()
        out = np.full(len(wanted), -1, np.int64)
        where = pc.index_in(self.ids, value_set=wanted)  # per corpus row: its place in `wanted`
        found = pc.indices_nonzero(pc.is_valid(where)).to_numpy()
        out[where.filter(pc.is_valid(where)).to_numpy()] = found
        at = pc.index_in(chunk_ids.cast(pa.string()), value_set=wanted).fill_null(-1).to_numpy()
        return np.where(at >= 0, out[np.maximum(at, 0)], -1)

    def column_at(self, name: str, rows: np.ndarray) -> pa.Array:
        """Column `name` ("text", "header", …) at table rows `rows` (int64, each ≥ 0), in that
        order: one `take` per record batch holding some of them, never a join of the whole table."""
        index = COLUMNS.index(name)
        starts = np.cumsum([0] + [b.num_rows for b in self._batches])
        owner = np.searchsorted(starts, rows, side="right") - 1
        parts, places = [], []
        for b in np.unique(owner).tolist():
            mine = np.flatnonzero(owner == b)
            parts.append(self._batches[b].column(index).take(pa.array(rows[mine] - starts[b])))
            places.append(mine)
        if not parts:
            return pa.array([], pa.string())
        joined = pa.concat_arrays(parts)
        return joined.take(pa.array(np.argsort(np.concatenate(places), kind="stable")))

    def header_tokens(self, rows: np.ndarray) -> np.ndarray:
        """`words.token_estimate` of the header at each table row of `rows` (int64): from the
        cache, where every row's was counted when it was built, else each row's counted the first
        time it is asked for (-1 in `_counted`: not yet)."""
        if self._tokens is not None:
            return np.take(self._tokens, rows)
        with self._lock:
            if self._counted is None:
                self._counted = np.full(len(self), -1, np.int64)
            counted = self._counted
            new = np.unique(rows[counted[rows] < 0])
            if len(new):
                counted[new] = token_estimates(self.column_at("header", new))
        return np.take(counted, rows)

    def _batched(self, wanted: list[str]) -> dict[str, Chunk]:
        """One batched look-up (`rows_of`), then one `take` of the rows found per record batch."""
        rows = self.rows_of(pa.array(wanted, pa.string()))
        hit = np.flatnonzero(rows >= 0)
        out: dict[str, Chunk] = {}
        # Taken record batch by record batch: a take over the whole (mapped, chunked) table would
        # first join its chunks, copying every text of the corpus.
        starts = np.cumsum([0] + [b.num_rows for b in self._batches])
        owner = np.searchsorted(starts, rows[hit], side="right") - 1
        for b in np.unique(owner).tolist():
            mine = hit[owner == b]
            at = pa.array(rows[mine] - starts[b])
            # Column by column: a record batch's own take costs several times its columns' takes.
            values = zip(*(col.take(at).to_pylist() for col in self._batches[b].columns), strict=True)
            for j, row in zip(mine.tolist(), values, strict=True):
                out[wanted[j]] = Chunk(*row)
        return out


def sorted_index(ids: pa.Array) -> pa.Table:
    order = pc.sort_indices(ids)
    return pa.table({"chunk_id": ids.take(order), "row": pc.cast(order, pa.int64())})


def corpus_of(loaded: Parsed) -> Corpus:
    """A corpus given as a table (already in memory): checked as a corpus file is, one row per id."""
    table = conform(loaded, CORPUS, ALIASES)
    unique_ids(loaded, table, "chunk_id")
    return Corpus(cache.normalise(table), loaded.path)


def _mapped(path: Path, fmt: str | None, small: int) -> bool:
    """Whether the corpus at `path` is opened through the mapped cache: one Parquet file of at
    least `small` bytes."""
    one_file = path.is_file() and (Format(fmt) if fmt else detect(path, Role.CORPUS)) is Format.PARQUET
    return one_file and path.stat().st_size >= small


SPOT = 4096  # ids whose fingerprints are computed again when the cache's index is read


def cached_ids(path: Path, fmt: str | None = None) -> CorpusIds | None:
    """The chunk ids of a corpus whose cache is built and proves itself (`corpus_cache`: mapped,
    no decode), with their fingerprint index and each slot's row (repeats were refused when
    it was built); None when it has no such cache: the file is then read instead."""
    path = Path(path)
    if not _mapped(path, fmt, SMALL):
        return None
    tables = cache.open_verified(path)
    return None if tables is None else _known(tables)


def _known(tables: dict[str, pa.Table]) -> CorpusIds | None:
    """The cache's ids with their index, if its table and slot rows lay out one (`IdIndex.of`)
    that finds SPOT ids spread over them at their own rows."""
    chunks = tables["chunks.arrow"]
    chunk_ids = single(chunks.column("chunk_id"))
    table, rows = tables["table.arrow"], tables["slot_rows.arrow"]
    if table.column(0).null_count or rows.column(0).null_count:
        return None
    slot_rows = single(rows.column("row")).to_numpy()
    index = IdIndex.of(single(table.column("key")).to_numpy(), slot_rows, len(chunk_ids))
    if index is None:
        return None
    spread = np.arange(0, len(chunk_ids), max(1, len(chunk_ids) // SPOT))
    if not np.array_equal(slot_rows[index.ends(fingerprint(chunk_ids.take(pa.array(spread))))], spread):
        return None
    return CorpusIds(chunk_ids, index=index, slot_rows=slot_rows, source=chunks)


def open_corpus(
    path: Path,
    progress: Callable[[float], None] | None = None,
    small: int | None = None,
    fmt: str | None = None,
    known: CorpusIds | None = None,
) -> Corpus:
    """Open a corpus for look-ups: small ones in memory, a large Parquet file via the mapped cache.

    A file of fewer than `small` bytes (default `SMALL`) counts as small; a folder or glob of
    Parquet files, and every format but one Parquet file (`fmt`, or detected), is read into memory.
    `progress(fraction)` is called while a cache is built (once per corpus version). A cache that
    does not prove itself is built again; one that cannot be written means the corpus is read
    directly, the same chunks, with `notice` saying so. `known`: the corpus ids as the evaluation
    read them: when they are the cache's, row for row, their index serves the look-ups too."""
    path = Path(path)
    if not _mapped(path, fmt, SMALL if small is None else small):
        return _in_memory(path, fmt)
    tables = cache.open_verified(path)
    if tables is None:
        try:
            tables = cache.build_cache(path, progress)
        except cache.Unwritable as e:
            return _in_memory(
                path, fmt, f"the corpus cache cannot be used ({e}); the corpus is read directly"
            )
        except (pa.ArrowException, OSError) as e:  # the corpus file itself: named by the direct read
            raise InputError(path, f"cannot be read as a Parquet corpus: {e}") from None
    if known is None or not _same_ids(known, tables["chunks.arrow"]):
        known = _known(tables)
    if known is None:  # proved by its digests, yet not an index of its ids: never written by triage
        return _in_memory(
            path, fmt, f"the corpus cache for {path} is inconsistent; the corpus is read directly"
        )
    return Corpus(tables["chunks.arrow"], path, tables["index.arrow"], cache.header_tokens(tables), known)


def _same_ids(known: CorpusIds, chunks: pa.Table) -> bool:
    """Whether `known` are the ids of the cache table `chunks`, row for row: read from that very
    table (this process verified it once), else compared (one memory compare after joining the
    column's batches)."""
    return known.source is chunks or known.ids.equals(single(chunks.column("chunk_id")))


def _in_memory(path: Path, fmt: str | None, notice: str | None = None) -> Corpus:
    corpus = corpus_of(read_input(path, Role.CORPUS, fmt))
    corpus.notice = notice
    return corpus
