"""The corpus cache: a large Parquet corpus converted once into uncompressed Arrow IPC files, which
later runs memory-map, and a manifest that proves them.

Folder: `<cache_dir>/corpus-<key>`. The key is what the corpus *is*, read without reading the whole
file: xxh3-128 of the cache format (`FORMAT`), the file's size and mtime (ns), and its Parquet
footer (schema, row groups, their offsets and statistics). The path is not in it: a copy of the
corpus shares the cache, and an edit that changes the footer gets a new folder.

Files: `chunks.arrow` (the five contract columns), `index.arrow` (ids sorted, with their rows),
`tokens.arrow` (each row's header token estimate), `table.arrow` and `slot_rows.arrow` (the ids'
fingerprint index, `ids.index.IdIndex`: each slot's key, and each slot's row, so that a look-up
reads its row without building one); then `manifest.json`, written last: the format, the key, the
row count, each file's size and xxh3-64 digest, and the corpus's path (`source`: only the
folders' listing at the end reads it, to tell a folder whose corpus changed or went; no proof
rests on it).

Opening checks everything before anything is used: the manifest must name this format and key;
each file is opened without following a link, must be a regular file of the recorded size, and
its mapped bytes must hash to the recorded digest (about 0.1 s for the 0.9 GB of a 2M-chunk
corpus, hashed in windows whose pages are dropped again, so the check adds no resident memory).
The tables are then mapped from the same descriptor that was hashed. A file damaged, truncated,
partial, of another corpus or planted there fails, and the cache is built again; a cache that
cannot be written (its root a file, read-only, full, no permission) is `Unwritable`, and the
caller reads the corpus directly. Nothing unverified is ever read.
"""

from __future__ import annotations

import contextlib
import enum
import json
import mmap
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import xxhash

from triage.core.errors import InputError
from triage.core.files import Identity, protect, write_bytes, write_new
from triage.core.ids.codes import fingerprint
from triage.core.ids.index import IdIndex, by_slot
from triage.core.inputs.contract import ALIASES, CORPUS, conform, single, unique_ids
from triage.core.inputs.readers import Parsed, arrow_source
from triage.core.removal import remove_tree
from triage.core.text.words import token_estimates

FORMAT = 4  # the cache's layout; a folder of another format is never read
COLUMNS = ["chunk_id", "header", "text", "doc_id", "source_type"]
CHUNKS = pa.schema([(c, pa.string()) for c in COLUMNS])
INDEX = pa.schema([("chunk_id", pa.string()), ("row", pa.int64())])
TOKENS = pa.schema([("header_tokens", pa.int64())])
TABLE = pa.schema([("key", pa.uint64())])  # `ids.index.IdIndex.table`: each slot's key (0: free)
ROWS = pa.schema([("row", pa.int32())])  # each slot's row in chunks.arrow (-1: a free slot)
SCHEMAS = {
    "chunks.arrow": CHUNKS,
    "index.arrow": INDEX,
    "tokens.arrow": TOKENS,
    "table.arrow": TABLE,
    "slot_rows.arrow": ROWS,
}
MANIFEST = "manifest.json"
OLDER_FILES = ("ids.arrow", "slots.arrow")  # what an older triage kept there, never read
MAX_MANIFEST = 1 << 16  # bytes: a manifest is a few hundred
WINDOW = 16 << 20  # bytes hashed at a time, their mapped pages then dropped


class Unwritable(Exception):
    """The cache folder cannot be written: the corpus is to be read directly."""


def cache_dir() -> Path:
    """`$TRIAGE_CACHE/triage` when set, else the platform's user cache folder for triage
    (`platformdirs`: `$XDG_CACHE_HOME/triage` or ~/.cache/triage on Linux, ~/Library/Caches/triage on
    macOS, %LOCALAPPDATA%\\triage\\Cache on Windows)."""
    base = os.environ.get("TRIAGE_CACHE")
    if base:
        return Path(base) / "triage"
    from platformdirs import user_cache_dir  # installed with Textual; loaded only when needed

    return Path(user_cache_dir("triage", appauthor=False))


def corpus_key(path: Path) -> str:
    """What the corpus file is, from its size, mtime and Parquet footer (never the whole file)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        footer = b""
        if st.st_size >= 12:
            f.seek(st.st_size - 8)
            tail = f.read(8)
            n = int.from_bytes(tail[:4], "little")
            if tail[4:] == b"PAR1" and n <= st.st_size - 12:
                f.seek(st.st_size - 8 - n)
                footer = f.read(n)
    h = xxhash.xxh3_128(f"triage-corpus|{FORMAT}|{st.st_size}|{st.st_mtime_ns}|".encode())
    h.update(footer)
    return h.hexdigest()


def folder_of(key: str) -> Path:
    return cache_dir() / f"corpus-{key[:32]}"


# -- opening -------------------------------------------------------------------------------------

# Each cache verified once per process, while its manifest and files are the same files.
_opened: dict[tuple[str, Identity, int, tuple], dict[str, pa.Table]] = {}
_lock = threading.Lock()


def open_verified(path: Path) -> dict[str, pa.Table] | None:
    """The cache's tables for the corpus at `path`, each proved by the manifest; None when there is
    no complete cache of this corpus (absent, partial, damaged, foreign: never used)."""
    key = corpus_key(path)
    folder = folder_of(key)
    manifest = _manifest(folder, key)
    if manifest is None:
        return None
    memo = (str(folder), manifest[0], manifest[1], _identities(folder))
    with _lock:
        if memo in _opened:
            return _opened[memo]
        tables: dict[str, pa.Table] = {}
        for name, schema in SCHEMAS.items():
            table = verified_table(folder / name, manifest[2].get(name), schema)
            if table is None:
                return None
            tables[name] = table
        per_slot = ("table.arrow", "slot_rows.arrow")
        if any(t.num_rows != manifest[3] for n, t in tables.items() if n not in per_slot):
            return None
        if tables["slot_rows.arrow"].num_rows != tables["table.arrow"].num_rows:
            return None
        if len(_opened) >= 4:
            _opened.clear()
        _opened[memo] = tables
        return tables


def _identities(folder: Path) -> tuple:
    """Each cache file's (inode, size, mtime): a file replaced or written meanwhile is checked again."""
    out = []
    for name in SCHEMAS:
        try:
            st = os.lstat(folder / name)
        except OSError:
            return ()
        out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _manifest_object(folder: Path) -> tuple[dict, os.stat_result] | None:
    return manifest_at(folder / MANIFEST)


def manifest_at(path: Path) -> tuple[dict, os.stat_result] | None:
    """The manifest at `path` as a JSON object, with its stat: read without following a link or
    waiting on a FIFO (`_map`), at most `MAX_MANIFEST` bytes; None when there is no such object."""
    got = _map(path)
    if got is None or got[1].st_size > MAX_MANIFEST:
        return None
    with got[0] as mapped:
        data = mapped[:]
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):  # not a manifest this cache wrote
        return None
    return (obj, got[1]) if isinstance(obj, dict) else None


def _manifest(folder: Path, key: str) -> tuple[Identity, int, dict[str, dict], int] | None:
    """(identity, mtime, files, rows) of the folder's manifest, if it is one for `key`."""
    got = _manifest_object(folder)
    if got is None:
        return None
    obj, st = got
    if (
        obj.get("format") != FORMAT
        or obj.get("corpus") != key
        or not isinstance(obj.get("files"), dict)
        or set(obj["files"]) != set(SCHEMAS)
        or type(obj.get("rows")) is not int
    ):
        return None
    return (st.st_dev, st.st_ino), st.st_mtime_ns, obj["files"], obj["rows"]


def _map(path: Path) -> tuple[mmap.mmap, os.stat_result] | None:
    """`path` mapped read-only with its stat, if it is a non-empty regular file reached without
    following a link (the descriptor is closed; the mapping keeps the file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO: no wait for a writer
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return None
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ), st
    except OSError:
        return None
    finally:
        os.close(fd)


def verified_table(path: Path, entry: object, schema: pa.Schema) -> pa.Table | None:
    """The table in `path` if its bytes are those the manifest's `entry` records."""
    got = _map(path)
    if got is None or not isinstance(entry, dict) or got[1].st_size != entry.get("bytes"):
        return None
    mapped = got[0]
    if _digest(mapped) != entry.get("xxh3_64"):
        mapped.close()
        return None
    try:
        table = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
    except (pa.ArrowException, OSError):
        return None
    return table if table.schema == schema else None


def _digest(mapped: mmap.mmap) -> str:
    """xxh3-64 of the mapped bytes, a window at a time, each window's pages dropped after it."""
    h = xxhash.xxh3_64()
    view = memoryview(mapped)
    try:
        for start in range(0, len(mapped), WINDOW):
            h.update(view[start : start + WINDOW])
            if hasattr(mapped, "madvise"):
                mapped.madvise(mmap.MADV_DONTNEED, start, min(WINDOW, len(mapped) - start))
    finally:
        view.release()
    return h.hexdigest()


def file_digest(path: Path) -> tuple[int, str]:
    got = _map(path)
    if got is None:
        raise OSError(f"{path}: not the regular file just written")
    with got[0] as mapped:
        return got[1].st_size, _digest(mapped)


# -- building ------------------------------------------------------------------------------------


def build_cache(path: Path, progress: Callable[[float], None] | None = None) -> dict[str, pa.Table]:
    """Build the cache of the Parquet corpus at `path` and open it (verified, as a later run would).
    A problem of the corpus itself is an InputError naming it; one of the cache folder is
    `Unwritable`. Peak memory: one row group plus the ids."""
    key = corpus_key(path)
    folder = folder_of(key)
    protected = protect([path])
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in (MANIFEST, *SCHEMAS):  # the manifest first: nothing old is proved
            _remove(folder / name)
        for name in OLDER_FILES:  # best effort: what is left there is never read
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
    except OSError as e:
        raise Unwritable(_why(e)) from None
    with arrow_source(path) as source:
        _write(folder / "chunks.arrow", _chunks(path, pq.ParquetFile(source), progress), CHUNKS, protected)
    got = _map(folder / "chunks.arrow")  # mapped by Python: Arrow maps files by UTF-8 names alone
    if got is None:
        raise Unwritable(f"{folder / 'chunks.arrow'}: not the regular file just written")
    chunks = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(got[0]))).read_all()
    ids = single(chunks.column("chunk_id"))
    fp = fingerprint(ids)
    placed = by_slot(fp)
    unique_ids(Parsed(path, chunks), chunks, "chunk_id", adjacent=placed)  # rows as the file's
    index = IdIndex.build(fp, placed)
    order = pc.sort_indices(ids)
    _write(
        folder / "index.arrow",
        [pa.table([ids.take(order), order.cast(pa.int64())], schema=INDEX)],
        INDEX,
        protected,
    )
    tokens = pa.table({"header_tokens": token_estimates(chunks.column("header"))})
    _write(folder / "tokens.arrow", [tokens], TOKENS, protected)
    _write(folder / "table.arrow", [pa.table({"key": index.table})], TABLE, protected)
    _write(folder / "slot_rows.arrow", [pa.table({"row": index.rows_at(index.ends(fp))})], ROWS, protected)
    try:
        files = {}
        for name in SCHEMAS:
            size, digest = file_digest(folder / name)
            files[name] = {"bytes": size, "xxh3_64": digest}
        manifest = {
            "format": FORMAT,
            "corpus": key,
            "rows": chunks.num_rows,
            "files": files,
            "source": os.path.abspath(path),  # for `triage cache` (the folders, below): no proof
        }
        write_bytes(folder / MANIFEST, json.dumps(manifest, indent=1).encode(), protected)
    except (OSError, InputError) as e:
        raise Unwritable(_why(e)) from None
    opened = open_verified(path)
    if opened is None:  # changed under us (another writer): read the corpus directly this time
        raise Unwritable(f"{folder} changed while it was written")
    return opened


def _chunks(path: Path, pf: pq.ParquetFile, progress: Callable[[float], None] | None) -> Iterable[pa.Table]:
    """The corpus's row groups, one at a time when read, as the cache's chunks (the contract's
    columns); a column named twice is refused at once."""
    names = pf.schema_arrow.names
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(path, f"has the column {repeated[0]!r} more than once")
    aliases = {k: v for k, v in ALIASES.items() if k in names and v not in names}
    wanted = [c for c in names if c in COLUMNS or c in aliases]

    def parts() -> Iterable[pa.Table]:
        for i in range(pf.num_row_groups):
            part = pf.read_row_group(i, columns=wanted)
            part = part.rename_columns([aliases.get(c, c) for c in part.column_names])
            yield normalise(conform(Parsed(path, part), {"chunk_id": CORPUS["chunk_id"]}))
            if progress:
                progress((i + 1) / pf.num_row_groups)

    return parts()


def normalise(table: pa.Table) -> pa.Table:
    """The five contract columns, in order, as strings (null where the corpus lacks one)."""
    cols = [
        single(table.column(n)) if n in table.column_names else pa.nulls(table.num_rows, pa.string())
        for n in COLUMNS
    ]
    return pa.table(cols, names=COLUMNS)


def _write(
    target: Path, tables: Iterable[pa.Table], schema: pa.Schema, protected: frozenset[Identity]
) -> None:
    """Record batches to `target`, atomically, never through a link nor onto `protected`."""

    def fill(f: BinaryIO) -> None:
        with pa.ipc.new_file(f, schema) as writer:
            for t in tables:
                writer.write_table(t.cast(schema))

    try:
        write_new(target, fill, protected)
    except InputError as e:
        if e.path == str(target):  # the target was refused (a link or an input under its name)
            raise Unwritable(e.message) from None
        raise
    except OSError as e:
        raise Unwritable(_why(e)) from None


def _remove(path: Path) -> None:
    """Unlink `path` (a link is removed, never followed); a folder there makes the cache unwritable."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise OSError(21, "a folder holds a cache file's name", str(path)) from None


def _why(e: BaseException) -> str:
    if isinstance(e, OSError):
        return f"{e.filename or ''}{': ' if e.filename else ''}{e.strerror or e}"
    return str(e)


def header_tokens(tables: dict[str, pa.Table]) -> np.ndarray:
    return single(tables["tokens.arrow"].column("header_tokens")).to_numpy()


# -- the folders on disk, for `triage cache list | prune` ------------------------------------------
#
# A folder is `<cache_dir>/corpus-<32 hex digits>` (`folder_of`), a real folder, not a
# link; nothing else in the cache folder is ever listed or touched. Its state, from its manifest
# (read without following a link) and the corpus file it names:
#
# - `CURRENT`: the corpus it was built from is still that file (same key): a run reads it;
# - `CHANGED`: the corpus file at its `source` is another version now (edited, replaced, touched);
# - `GONE`: no regular file is at its `source` any more (nothing there, or a folder, a FIFO, a device);
# - `UNREADABLE`: its corpus or the folder itself cannot be read (permissions, an I/O error, a mount
#   gone): kept, as nothing says it is stale;
# - `OTHER_FORMAT`: written by a triage of another cache format: never read by this one;
# - `UNKNOWN`: built before manifests named their corpus: current or not cannot be told;
# - `INCOMPLETE`: no readable manifest, the build stopped (killed, disk full) — or, when the folder or
#   a file in it changed within `BUILDING_SECONDS`, `BUILDING`: another process may be writing it now.
#
# A copy of the corpus kept with its modification time (`cp -p`) has the same key and shares the
# folder; the folder's `source` names the path that built it, so it reads `CHANGED` or `GONE` when
# only that path moved on. Removing it then costs the copy one rebuild, never a wrong number: a
# folder is only ever read after its manifest proves it (`open_verified`).

NAME = re.compile(r"corpus-[0-9a-f]{32}")
BUILDING_SECONDS = 600  # a folder without a manifest, written to this recently: a build under way


class State(enum.Enum):
    """What a folder is still good for; the value is how `triage cache` says it (16 cells at most)."""

    CURRENT = "in use"
    CHANGED = "corpus changed"
    GONE = "corpus gone"
    UNREADABLE = "unreadable"
    OTHER_FORMAT = "other format"
    UNKNOWN = "corpus unknown"
    INCOMPLETE = "build stopped"
    BUILDING = "being built"


@dataclass(frozen=True)
class CacheFolder:
    path: Path
    bytes: int  # the regular files directly in it
    state: State
    source: str | None  # the corpus file it was built from, as its manifest names it
    rows: int | None  # chunks, from its manifest
    format: int | None  # the cache format its manifest names
    kind: str = "corpus"  # or "truth": a shard's partial top-k (`core.truth.cache`), `rows` its queries


def folders(root: Path | None = None) -> list[CacheFolder]:
    """Every cache folder under `root` (default: `cache_dir()`), largest first; none when there is
    no such folder. InputError when it cannot be read."""
    found = named_folders(cache_dir() if root is None else root, NAME, _folder)
    return sorted(found, key=lambda f: (-f.bytes, f.path.name))


def named_folders(
    root: Path, name: re.Pattern[str], read: Callable[[Path], CacheFolder | None]
) -> list[CacheFolder]:
    """Each real folder (not a link) in `root` whose name is `name`, as `read` finds it (None: gone
    meanwhile, left out), in no order; none when there is no `root`. InputError when it cannot be
    read."""
    try:
        entries = list(os.scandir(root))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as e:
        raise InputError(root, f"cannot be read: {e.strerror or e}") from None
    mine = [Path(e.path) for e in entries if name.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    return [f for f in map(read, mine) if f is not None]


def remove(folder: CacheFolder) -> list[Path]:
    """Delete `folder` and everything in it, never leaving it (`core.removal`: no link followed, a
    link inside removed and never its target; no mount crossed; no recursion, at any depth); it
    must still be a real folder of the cache's name. The paths left as they were, on another
    device or mounted (the folders holding them kept); what another process removed meanwhile (a
    second prune) is no error. OSError when it cannot be removed. Its name must be its kind's:
    `corpus-<32 hex>`, or `truth-<32 hex>` (`core.truth.cache`)."""
    if not re.fullmatch(rf"{re.escape(folder.kind)}-[0-9a-f]{{32}}", folder.path.name):
        raise OSError(f"{folder.path}: not a cache folder")
    try:
        return remove_tree(folder.path.parent, folder.path.name)
    except NotADirectoryError as e:
        if e.filename != str(folder.path):
            raise
        raise OSError(f"{folder.path}: not a cache folder") from None


def _folder(path: Path) -> CacheFolder | None:
    size = 0
    try:
        newest = os.lstat(path).st_mtime  # a folder just made, nothing in it yet
        for e in os.scandir(path):
            st = e.stat(follow_symlinks=False)
            newest = max(newest, st.st_mtime)
            if stat.S_ISREG(st.st_mode):
                size += st.st_size
    except FileNotFoundError:  # removed meanwhile (a prune elsewhere): not listed
        return None
    except OSError:
        return CacheFolder(path, size, State.UNREADABLE, None, None, None)
    got = _manifest_object(path)
    if got is None:
        recent = time.time() - newest < BUILDING_SECONDS
        return CacheFolder(path, size, State.BUILDING if recent else State.INCOMPLETE, None, None, None)
    manifest = got[0]
    fmt, rows, source = manifest.get("format"), manifest.get("rows"), manifest.get("source")
    fmt = fmt if type(fmt) is int else None
    rows = rows if type(rows) is int else None
    source = source if isinstance(source, str) else None
    if fmt != FORMAT:
        state = State.OTHER_FORMAT
    elif source is None:
        state = State.UNKNOWN
    else:
        state = _state_of(path, Path(source))
    return CacheFolder(path, size, state, source, rows, fmt)


def _state_of(path: Path, source: Path) -> State:
    """CURRENT when the regular file at `source` has this folder's key now; GONE only when no
    regular file is there (a path that cannot name a file, with a NUL, included)."""
    try:
        if not stat.S_ISREG(os.stat(source).st_mode):  # a FIFO or a device is never opened
            return State.GONE
        key = corpus_key(source)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return State.GONE
    except OSError:  # no permission, an I/O error, a mount gone: the corpus may well be there
        return State.UNREADABLE
    return State.CURRENT if folder_of(key).name == path.name else State.CHANGED
