"""The truth cache: each corpus shard's partial top-k, kept per (query, predicate, metric, K,
tolerance) × shard version, so that a rerun computes only what changed (docs/truth.md "Kept by
corpus version").

Folder: `<cache_dir>/truth-<32 hex>`, one per shard *version* (the hex: xxh3-128 of the shard's
digest, `shards`: its size, mtime and Parquet footer, never its path; a copy of a shard kept with
its mtime shares it). In it, one entry per (predicate key, metric, K, tolerance): `<name>.arrow`, a
row per query — its id, its vector's digest, the shard's eligible count and the shard's candidates
(chunk ids and float64 gains, best first: the kernel's `Partial`) — and `<name>.json`, the entry's
manifest, written last: the format, everything the entry answers, its row count, the Arrow file's
size and xxh3-64 digest, and the shard's path (`source`: only `triage cache list` reads it; no
proof rests on it). Beside them, `fingerprints.arrow` (the shard's ids as fingerprints, in row
order) and its manifest: a run that reads every partial from the cache still finds a chunk id that
two shards hold, without reading a shard.

A query is found in an entry by its id *and* its vector's digest: a query added to the set, or one
whose vector changed, is computed alone (one scan of the shard for those queries only) and the
entry written again with it; the rows of queries no longer asked are kept (another query set over
the same shard finds them). A changed or added shard has a new folder, so only its partials are
computed; a removed shard is not read.

Reading proves everything before anything is used, as the corpus cache does
(`core.inputs.corpus_cache`): the manifest must be this format's, written by this triage version
(another's kernel may have chosen or scored otherwise), and answer exactly this question; the
file, opened without following a link, must be a regular file of the recorded size whose bytes
hash to the recorded digest, of this schema, and each row a candidate list the kernel could have
made (ids and gains of one length, finite, as many as min(K, eligible rows) or more, no more than
the eligible rows). An entry damaged, truncated, half-written, of another shard or planted there is
computed again, never used. A cache that cannot be written (read-only, full, its root a file) is
`Unwritable`: the run goes on without it, and `Kept.unwritable` says why.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from triage import __version__
from triage.core.errors import InputError
from triage.core.files import Protected, protect, write_bytes, write_new
from triage.core.inputs.contract import single
from triage.core.inputs.corpus_cache import (
    BUILDING_SECONDS,
    CacheFolder,
    State,
    Unwritable,
    cache_dir,
    corpus_key,
    file_digest,
    manifest_at,
    named_folders,
    verified_table,
)
from triage.core.truth.kernel import Job
from triage.core.truth.merge import Partial
from triage.core.truth.predicate import Predicate
from triage.core.truth.shards import Shard, ShardResult

FORMAT = 1  # the entries' layout; an entry of another format is never read
NAME = re.compile(r"truth-[0-9a-f]{32}")  # a shard version's folder
ENTRY = re.compile(r"[0-9a-f]{32}|fingerprints")  # an entry's name: `<name>.arrow` and `<name>.json`
PRINTS = "fingerprints"
PARTIALS = pa.schema(
    [
        ("query_id", pa.string()),
        ("vector", pa.string()),  # the query vector's digest (`queries`)
        ("n_eligible", pa.int64()),  # the shard's rows the predicate admits
        ("chunk_id", pa.list_(pa.string())),  # the shard's candidates, best first
        ("gain", pa.list_(pa.float64())),  # their gains (higher is better: `kernel`)
    ]
)
FINGERPRINTS = pa.schema([("fingerprint", pa.uint64())])


def truth_folder(shard_digest: str) -> Path:
    """The folder of one shard version."""
    key = xxhash.xxh3_128(f"triage-truth-shard|{shard_digest}".encode()).hexdigest()
    return cache_dir() / f"truth-{key}"


@dataclass(frozen=True)
class Question:
    """What an entry answers, apart from its queries: one predicate over one shard version."""

    shard: str  # the shard's digest
    predicate: str  # `Predicate.key`
    metric: str
    k: int
    tolerance: float

    @property
    def name(self) -> str:
        h = xxhash.xxh3_128(
            f"triage-truth|{FORMAT}|{__version__}|{self.metric}|{self.k}|{self.tolerance!r}|".encode()
        )
        h.update(f"{len(self.shard)}|{self.shard}|{self.predicate}".encode())
        return h.hexdigest()

    def fields(self) -> dict:
        return {
            "format": FORMAT,
            "triage": __version__,
            "shard": self.shard,
            "predicate": self.predicate,
            "metric": self.metric,
            "k": self.k,
            "tolerance": self.tolerance,
        }


# -- entries -------------------------------------------------------------------------------------


def read_entry(question: Question) -> pa.Table | None:
    """The entry's rows, each proved (the module's rules); None when there is no sound entry."""
    table = _read(truth_folder(question.shard), question.name, question.fields(), PARTIALS)
    return table if table is not None and _sound(table, question.k) else None


def _read(folder: Path, name: str, fields: dict, schema: pa.Schema) -> pa.Table | None:
    """The table `name` in `folder` if its manifest holds `fields` and proves its bytes."""
    got = manifest_at(folder / f"{name}.json")
    if got is None:
        return None
    manifest = got[0]
    if any(type(manifest.get(k)) is not type(v) or manifest.get(k) != v for k, v in fields.items()):
        return None
    table = verified_table(folder / f"{name}.arrow", manifest.get("file"), schema)
    rows = manifest.get("rows")
    return table if table is not None and type(rows) is int and table.num_rows == rows else None


def _sound(table: pa.Table, k: int) -> bool:
    """Every row a candidate list the kernel could have made (the module's rules)."""
    if any(table.column(c).null_count for c in PARTIALS.names):
        return False
    ids, gains = (table.column(c).combine_chunks() for c in ("chunk_id", "gain"))
    n = pc.list_value_length(ids).to_numpy(zero_copy_only=False)
    eligible = table.column("n_eligible").to_numpy()
    if not np.array_equal(n, pc.list_value_length(gains).to_numpy(zero_copy_only=False)):
        return False
    if ids.values.null_count or gains.values.null_count:
        return False
    if not np.isfinite(gains.values.to_numpy(zero_copy_only=False)).all():
        return False
    return bool(((n <= eligible) & (n >= np.minimum(k, eligible))).all())


def write_entry(question: Question, rows: pa.Table, source: str, protected: Protected) -> None:
    """Keep `rows` (of `PARTIALS`) as the entry answering `question`. `Unwritable` when the cache
    cannot be written."""
    folder = truth_folder(question.shard)
    _write(folder, question.name, rows.cast(PARTIALS), question.fields(), source, protected)


def read_fingerprints(shard: str, rows: int) -> np.ndarray | None:
    """The shard's ids as fingerprints in row order, proved; None when not kept."""
    fields = {"format": FORMAT, "triage": __version__, "shard": shard, "kind": PRINTS, "rows": rows}
    table = _read(truth_folder(shard), PRINTS, fields, FINGERPRINTS)
    return None if table is None else single(table.column("fingerprint")).to_numpy(zero_copy_only=False)


def write_fingerprints(shard: str, prints: np.ndarray, source: str, protected: Protected) -> None:
    table = pa.table({"fingerprint": pa.array(prints, pa.uint64())}, schema=FINGERPRINTS)
    fields = {"format": FORMAT, "triage": __version__, "shard": shard, "kind": PRINTS}
    _write(truth_folder(shard), PRINTS, table, fields, source, protected)


def _write(folder: Path, name: str, table: pa.Table, fields: dict, source: str, protected: Protected) -> None:
    """The Arrow file `name`, then its manifest. What was at their names is removed first (the
    manifest first: nothing old is proved meanwhile; a link is removed, never followed; a folder
    there makes the cache unwritable)."""
    data, manifest = folder / f"{name}.arrow", folder / f"{name}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in (manifest, data):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(old)
        write_new(data, _filler(table), protected)
        size, digest = file_digest(data)
        body = {
            **fields,
            "rows": table.num_rows,
            "file": {"bytes": size, "xxh3_64": digest},
            "source": source,  # for `triage cache list` (the folders, below): no proof
        }
        write_bytes(manifest, json.dumps(body, indent=1).encode(), protected)
    except InputError as e:  # a link or an input at a cache file's name
        raise Unwritable(e.message) from None
    except OSError as e:
        raise Unwritable(f"{e.filename or folder}: {e.strerror or e}") from None


def _filler(table: pa.Table) -> Callable[[BinaryIO], None]:
    def fill(f: BinaryIO) -> None:
        with pa.ipc.new_file(f, table.schema) as writer:
            writer.write_table(table)

    return fill


# -- a run's use of it -------------------------------------------------------------------------


@dataclass
class Kept:
    """One run's use of the truth cache: proved rows read, new rows written; once the cache cannot
    be written nothing more is tried, and `unwritable` says why (the run goes on)."""

    protected: Protected = field(default_factory=lambda: protect([]))
    unwritable: str | None = None

    def look_up(self, question: Question, wanted: Sequence[tuple[str, str]]) -> tuple[pa.Table, list[int]]:
        """The kept rows of the `wanted` (query id, vector digest) pairs, in their order, and the
        positions in `wanted` of those not kept."""
        table = read_entry(question)
        if table is None:
            return PARTIALS.empty_table(), list(range(len(wanted)))
        at = {pair: i for i, pair in enumerate(_pairs(table))}
        found = [at.get(pair) for pair in wanted]
        rows = [i for i in found if i is not None]
        return table.take(pa.array(rows, pa.int64())), [j for j, i in enumerate(found) if i is None]

    def keep(self, question: Question, rows: pa.Table, source: str) -> None:
        """Add `rows` to the entry answering `question` (replacing rows of the same query and vector)."""
        if self.unwritable is not None or rows.num_rows == 0:
            return
        old = read_entry(question)
        if old is not None:
            new = set(_pairs(rows))
            stays = [i for i, pair in enumerate(_pairs(old)) if pair not in new]
            rows = pa.concat_tables([old.take(pa.array(stays, pa.int64())), rows.cast(PARTIALS)])
        self._attempt(lambda: write_entry(question, rows, source, self.protected))

    def keep_fingerprints(self, shard: str, prints: np.ndarray, source: str) -> None:
        self._attempt(lambda: write_fingerprints(shard, prints, source, self.protected))

    def _attempt(self, write: Callable[[], None]) -> None:
        if self.unwritable is not None:
            return
        try:
            write()
        except Unwritable as e:
            self.unwritable = str(e)


def _pairs(table: pa.Table) -> list[tuple[str, str]]:
    return list(zip(table.column("query_id").to_pylist(), table.column("vector").to_pylist(), strict=True))


@dataclass(frozen=True)
class Reuse:
    """One shard's part of a job found in the cache: per predicate group, the rows found with the
    job's queries they answer; the job's queries still to compute (ascending); the shard's id
    fingerprints (None: not kept, the shard is to be scanned for them)."""

    shard: Shard
    found: list[tuple[np.ndarray, pa.Table]]
    todo: np.ndarray
    fingerprints: np.ndarray | None

    @property
    def complete(self) -> bool:
        return len(self.todo) == 0 and self.fingerprints is not None


def question(shard: Shard, job: Job, p: Predicate) -> Question:
    return Question(shard.digest, p.key, job.metric, job.k, float(job.tolerance))


def reuse(
    kept: Kept, shard: Shard, job: Job, predicates: Sequence[Predicate], keys: Sequence[tuple[str, str]]
) -> Reuse:
    """What the cache holds of `job` over `shard`; `keys`: each query's (id, vector digest)."""
    found, todo = [], []
    for g, p in enumerate(predicates):
        members = np.flatnonzero(job.groups == g)
        if len(members) == 0:
            continue
        rows, missing = kept.look_up(question(shard, job, p), [keys[int(i)] for i in members])
        missed = np.zeros(len(members), bool)
        missed[missing] = True
        if rows.num_rows:
            found.append((members[~missed], rows))
        todo.append(members[missed])
    todo_all = np.sort(np.concatenate(todo)) if todo else np.zeros(0, np.int64)
    return Reuse(shard, found, todo_all, read_fingerprints(shard.digest, shard.rows))


def sub_job(job: Job, predicates: Sequence[Predicate], todo: np.ndarray) -> tuple[Job, tuple[Predicate, ...]]:
    """The job of the queries `todo` alone, with only the predicates their groups need."""
    gs = np.unique(job.groups[todo])
    sub = Job(
        np.ascontiguousarray(job.vectors[todo]),
        np.searchsorted(gs, job.groups[todo]).astype(np.int64),
        len(gs),
        job.metric,
        job.k,
        job.tolerance,
    )
    return sub, tuple(predicates[g] for g in gs)


def combined(found: Reuse, computed: ShardResult | None, job: Job) -> ShardResult:
    """The shard's partial for the whole job: the rows found and those computed (for `todo`)."""
    n_eligible = np.zeros(len(job.groups), np.int64)
    query, ids, gains = [], [], []
    for members, rows in found.found:
        lengths = pc.list_value_length(rows.column("chunk_id")).to_numpy(zero_copy_only=False)
        query.append(np.repeat(members, lengths))
        ids.append(single(pc.list_flatten(rows.column("chunk_id"))))
        gains.append(single(pc.list_flatten(rows.column("gain"))).to_numpy(zero_copy_only=False))
        n_eligible[members] = rows.column("n_eligible").to_numpy()
    if computed is not None:
        part = computed.partial
        query.append(found.todo[part.query])
        ids.append(part.ids.cast(pa.string()))
        gains.append(part.gains)
        n_eligible[found.todo] = part.n_eligible
    prints = computed.fingerprints if computed is not None else found.fingerprints
    assert prints is not None  # a shard without them is computed
    if not query:
        return ShardResult(
            Partial.of(np.zeros(0, np.int32), pa.array([], pa.string()), np.zeros(0), n_eligible), prints
        )
    return ShardResult(
        Partial.of(
            np.concatenate(query).astype(np.int32), pa.concat_arrays(ids), np.concatenate(gains), n_eligible
        ),
        prints,
    )


def keep_computed(
    kept: Kept,
    found: Reuse,
    computed: ShardResult,
    job: Job,
    predicates: Sequence[Predicate],
    keys: Sequence[tuple[str, str]],
) -> None:
    """Keep what was computed for the shard: each group's new rows, and its fingerprints."""
    shard, todo, part = found.shard, found.todo, computed.partial
    source = str(Path(shard.path).absolute())
    counts = np.bincount(part.query, minlength=len(todo))
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    for g in np.unique(job.groups[todo]) if len(todo) else ():
        members = np.flatnonzero(job.groups[todo] == g)  # positions in `todo`: the sub-job's queries
        take = np.concatenate([np.arange(starts[m], starts[m + 1]) for m in members]).astype(np.int64)
        offsets = pa.array(np.concatenate([[0], np.cumsum(counts[members])]).astype(np.int32))
        rows = pa.table(
            [
                pa.array([keys[todo[m]][0] for m in members], pa.string()),
                pa.array([keys[todo[m]][1] for m in members], pa.string()),
                pa.array(part.n_eligible[members], pa.int64()),
                pa.ListArray.from_arrays(offsets, part.ids.cast(pa.string()).take(pa.array(take))),
                pa.ListArray.from_arrays(offsets, pa.array(part.gains[take], pa.float64())),
            ],
            schema=PARTIALS,
        )
        kept.keep(question(shard, job, predicates[int(g)]), rows, source)
    if found.fingerprints is None:
        kept.keep_fingerprints(shard.digest, computed.fingerprints, source)


# -- the folders on disk, for `triage cache list | prune` ------------------------------------------
#
# A folder is `<cache_dir>/truth-<32 hex digits>`, a real folder, not a link; its state, from its
# manifests (read without following a link) and the shard file they name (the newest manifest's
# `source`), in the corpus caches' words (`corpus_cache.State`):
#
# - `CURRENT`: the shard at `source` is still this version: a run reads the folder;
# - `CHANGED` / `GONE`: the file at `source` is another version now, or no regular file is there;
# - `UNREADABLE`: the shard or the folder cannot be read: kept, as nothing says it is stale;
# - `OTHER_FORMAT`: its manifests are all of another format: never read by this triage;
# - `INCOMPLETE` / `BUILDING`: no manifest (the run stopped before one was written), and nothing in
#   it written within `BUILDING_SECONDS` (else: a run may be writing it now).
#
# An entry of a predicate, K or tolerance no run asks again stays with its folder: an entry is small
# (a row per query of K ids and gains), and the folder goes when its shard changes or goes.


def truth_folders(root: Path) -> list[CacheFolder]:
    """Every truth folder under `root` (no order); InputError when `root` cannot be read."""
    return named_folders(root, NAME, _folder)


def _folder(path: Path) -> CacheFolder | None:
    size, manifests = 0, []
    try:
        newest = os.lstat(path).st_mtime
        for e in os.scandir(path):
            st = e.stat(follow_symlinks=False)
            newest = max(newest, st.st_mtime)
            if stat.S_ISREG(st.st_mode):
                size += st.st_size
                if e.name.endswith(".json") and ENTRY.fullmatch(e.name[:-5]):
                    manifests.append(Path(e.path))
    except FileNotFoundError:  # removed meanwhile (a prune elsewhere): not listed
        return None
    except OSError:
        return CacheFolder(path, size, State.UNREADABLE, None, None, None, kind="truth")
    read = [m for m in (manifest_at(p) for p in manifests) if m is not None]
    ours = [
        (obj, st)
        for obj, st in read
        if obj.get("format") == FORMAT
        and isinstance(obj.get("shard"), str)
        and truth_folder(obj["shard"]).name == path.name
    ]
    if not ours:
        formats = [
            obj["format"] for obj, _ in read if type(obj.get("format")) is int and obj["format"] != FORMAT
        ]
        if formats:
            return CacheFolder(path, size, State.OTHER_FORMAT, None, None, max(formats), kind="truth")
        state = State.BUILDING if time.time() - newest < BUILDING_SECONDS else State.INCOMPLETE
        return CacheFolder(path, size, state, None, None, None, kind="truth")
    obj = max(ours, key=lambda m: m[1].st_mtime_ns)[0]
    queries = sum(o["rows"] for o, _ in ours if o.get("kind") != PRINTS and type(o.get("rows")) is int)
    source = obj.get("source") if isinstance(obj.get("source"), str) else None
    state = State.UNKNOWN if source is None else _state_of(obj["shard"], Path(source))
    return CacheFolder(path, size, state, source, queries, FORMAT, kind="truth")


def _state_of(shard: str, source: Path) -> State:
    """CURRENT when the regular file at `source` is this shard version now (`shards`' digest)."""
    try:
        if not stat.S_ISREG(os.stat(source).st_mode):  # a FIFO or a device is never opened
            return State.GONE
        now = corpus_key(source)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return State.GONE
    except OSError:
        return State.UNREADABLE
    return State.CURRENT if now == shard else State.CHANGED
