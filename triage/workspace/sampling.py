"""`triage sample LOG --corpus C --out Q`: a query log's queries worth running, stratified by filter
shape and exact selectivity band (the rule: core/truth/sampling.py), written as a queries file
`triage truth` reads, with its allocation beside it (docs/truth.md "Sampling the queries").

The log: Parquet or JSON Lines, a query a row, with `text` and/or `embedding` (a list of floats of
one length), an optional `filter` (SQL WHERE text over the corpus's metadata; null or empty:
unfiltered), the tenant (`tenant`, or the column named), optional `query_id` and `time`; other
columns are carried along. A query the log repeats (the same text, or vector when it has no text,
the same filter by its predicate's key, the same tenant) is one candidate, its first row. Its id
is `query_id` as text, else its place in the log (`row-12`, `line-7`). A plain Parquet log's
vectors are read a batch at a time, and only the taken ones kept (and checked); a log without
text has every vector read, checked and hashed.

The corpus: a Parquet file or a folder of them, found as `triage truth` finds its shards. Only the
columns the filters name are read; each distinct filter is evaluated once, over the distinct values
of its columns (core/truth/counts.py).

Q is Parquet: `query_id`, the log's `text`, `embedding`, `filter`, tenant and `time` columns as
they are, its other columns (one named like a column added here is kept as `log_<name>`), then
`shape`, `band`, `n_eligible` (int64) and `selectivity` (float64, n_eligible / corpus rows; 1.0
unfiltered). Its allocation is `<Q's stem>.allocation.json` beside it. Neither holds a time or
anything else that varies: the same log, corpus, flags and seed give the same bytes. Both are
written through core.files: never onto an input or into a corpus folder, never through a link, and
an existing file only with `force`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import xxhash

import triage
from triage.core.errors import InputError
from triage.core.files import Protected, make_folder, protect, refuse_target, write_bytes, write_new
from triage.core.inputs.jsonl import read_jsonl
from triage.core.inputs.parquet import read_parquet
from triage.core.inputs.readers import Parsed, arrow_source, codec, sniff
from triage.core.text.sanitize import bytes_shown
from triage.core.truth import predicate as predicates
from triage.core.truth.counts import eligible_counts
from triage.core.truth.queries import content_digest
from triage.core.truth.sampling import (
    UNFILTERED,
    Allocation,
    allocate,
    eligible_band,
    order_keys,
    predicate_shape,
)
from triage.core.truth.shards import Shard, corpus_digest, corpus_shards, corpus_snapshot

ALLOCATION_SUFFIX = ".allocation.json"
ADDED = ("shape", "band", "n_eligible", "selectivity")  # the columns Q gains
KNOWN = ("query_id", "text", "embedding", "filter")
BATCH_ROWS = 16_384  # vectors read at a time


def allocation_path(out: Path) -> Path:
    """Where Q's allocation is written: beside it, `queries.parquet` → `queries.allocation.json`."""
    return out.with_name(out.stem + ALLOCATION_SUFFIX)


@dataclass(frozen=True)
class SampledSet:
    """What `sample_query_log` wrote: Q, its allocation file, and the allocation as that file holds it."""

    out: Path
    allocation_file: Path
    allocation: dict


@dataclass(frozen=True)
class LogVectors:
    """The log's `embedding` column, read a batch at a time (a large log's vectors are never all
    held): from the Parquet file, or from the table a JSON Lines log was read into."""

    path: Path
    table: pa.Table | None  # JSON Lines: the column read with the rest; Parquet: None

    def batches(self) -> Iterator[tuple[int, pa.Array]]:
        """(first row, vectors) a batch at a time, in the log's order."""
        start = 0
        if self.table is not None:
            for chunk in self.table.column("embedding").chunks:
                yield start, chunk
                start += len(chunk)
            return
        try:
            with arrow_source(self.path) as source, pq.ParquetFile(source) as pf:
                for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=["embedding"]):
                    yield start, batch.column(0)
                    start += batch.num_rows
        except (pa.ArrowException, OSError) as e:
            raise InputError(self.path, f"cannot read Parquet (truncated or corrupt?): {e}") from None


def sample_query_log(
    log: Path,
    corpus: Path,
    out: Path,
    per_shape: int,
    control: int,
    seed: int,
    tenant_column: str | None = None,
    force: bool = False,
) -> SampledSet:
    """Read the log and the corpus's filtered columns, allocate (core/truth/sampling.py), write Q
    and its allocation (both record triage's version). `tenant_column` None: `tenant` when the log
    has it. InputError naming the file, row and problem for a bad input or a refused Q."""
    log, corpus, out = Path(log), Path(corpus), Path(out)
    shards = corpus_shards(corpus)
    protected = protect([log, *(s.path for s in shards)], folders=[corpus] if corpus.is_dir() else [])
    report_file = allocation_path(out)
    _check_out(out, report_file, protected, force)
    parsed, vectors = _read_log(log)
    table = parsed.table
    tenant = _tenant_column(log, table, tenant_column)
    preds, first_rows, key_of_row = _predicates(parsed)
    columns = sorted({c for p in preds.values() for c in p.columns})
    rows, counts, corpus_meta = _counted(corpus, shards, preds, columns, log, first_rows, parsed)
    texts = _texts(log, parsed, vectors is not None)
    digests = None
    if vectors is not None and None in texts:  # a query known by its vector alone
        digests = _vector_digests(log, vectors, parsed)
    tenants = _tenant_values(log, table, tenant)
    keep, identities = _distinct(texts, digests, key_of_row, tenants)
    ids = _query_ids(parsed, keep)
    keys = [key_of_row[r] for r in keep.tolist()]
    n_eligible = np.array([rows if preds[k].unfiltered else counts[k] for k in keys], dtype=np.int64)
    shapes = [predicate_shape(preds[k].columns, preds[k].unfiltered) for k in keys]
    bands = eligible_band(n_eligible, rows)
    bands[[s == UNFILTERED for s in shapes]] = UNFILTERED
    kept_tenants = [tenants[r] for r in keep.tolist()]
    got = allocate(
        shapes, bands.tolist(), kept_tenants, order_keys(seed, identities), per_shape, control, seed
    )
    chosen = keep[got.rows]
    added = {
        "shape": pa.array([shapes[i] for i in got.rows.tolist()], pa.string()),
        "band": pa.array(bands[got.rows].tolist(), pa.string()),
        "n_eligible": pa.array(n_eligible[got.rows], pa.int64()),
        "selectivity": pa.array(n_eligible[got.rows] / rows, pa.float64()),
    }
    embedding = _take_vectors(log, vectors, chosen, parsed) if vectors is not None else None
    q, renamed = _output_table(log, table, chosen, ids[got.rows], embedding, added)
    settings = {
        "triage": triage.__version__,
        "seed": seed,
        "per_shape": per_shape,
        "control": control,
        "tenant_column": tenant,
    }
    log_meta = {
        "path": bytes_shown(str(log)),
        "rows": table.num_rows,
        "distinct": len(keep),
        "repeats": table.num_rows - len(keep),
        "filters": sum(not p.unfiltered for p in preds.values()),
        "digest": content_digest(log),
        "time": _time_range(table),
        "renamed": renamed,
    }
    report = _allocation_report(settings, log_meta, corpus_meta, got)
    provenance = {k: report[k] for k in ("format", "version", *settings)}
    provenance |= {"log_digest": log_meta["digest"], "corpus_digest": corpus_meta["digest"]}
    meta = {b"triage_sample": json.dumps(provenance, sort_keys=True).encode()}
    q = q.replace_schema_metadata(meta)
    make_folder(out.parent)
    write_new(out, lambda f: pq.write_table(q, f), protected, replace=force)
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    write_bytes(report_file, text.encode("utf-8"), protected, replace=force)
    return SampledSet(out, report_file, report)


def _check_out(out: Path, report_file: Path, protected: Protected, force: bool) -> None:
    """Refuse Q (and its allocation's name) before anything is read: not Parquet by name, a
    folder, a link, an input or inside the corpus folder, in a folder that is not there, or
    existing without `force`. A folder that is not there yet is made when Q is written."""
    if out.suffix.lower() != ".parquet":
        raise InputError(out, "Q is written as Parquet: name it .parquet")
    if out.is_dir() and not out.is_symlink():
        raise InputError(out, "is a folder; Q names the queries file to write")
    if os.path.lexists(out.parent) and not out.parent.is_dir():
        raise InputError(out, f"cannot be written: {out.parent} is not a folder")
    for target in (out, report_file):
        refuse_target(target, protected)
        if not force and os.path.lexists(target):
            raise InputError(target, "exists; not overwritten (--force replaces it)")


def _read_log(log: Path) -> tuple[Parsed, LogVectors | None]:
    """The log's columns but `embedding`, and its vectors to read a batch at a time. A plain
    Parquet log's vectors stay in the file; a compressed or JSON Lines one is read whole."""
    head = sniff(log)
    plain = head.startswith(b"PAR1") and codec(log, head) is None
    names = _parquet_names(log) if plain else []
    if plain and set(names) - {"embedding"}:  # a table of vectors alone has its rows read with them
        parsed = read_parquet(log, [n for n in names if n != "embedding"])
        vectors = LogVectors(log, None) if "embedding" in names else None
    else:
        parquet = {".parquet", ".pq"} & {x.lower() for x in log.suffixes}
        whole = read_parquet(log) if parquet else read_jsonl(log)
        names = whole.table.column_names
        vectors = LogVectors(log, whole.table.select(["embedding"])) if "embedding" in names else None
        rest = whole.table.drop_columns(["embedding"]) if vectors else whole.table
        parsed = Parsed(log, rest, whole.meta, whole.lines)
    if parsed.table.num_rows == 0:
        raise InputError(log, "holds no queries")
    if "text" not in names and "embedding" not in names:
        raise InputError(
            log,
            "has neither a `text` nor an `embedding` column; a query needs one "
            f"(its columns: {_listed(names)})",
        )
    for name in ("text", "filter"):
        t = parsed.table.schema.field(name).type if name in names else pa.string()
        if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)):
            raise InputError(log, f"holds {t}, not text", f"column {name!r}")
    return parsed, vectors


def _parquet_names(log: Path) -> list[str]:
    try:
        with arrow_source(log) as source:
            return pq.read_schema(source).names
    except (pa.ArrowException, OSError) as e:
        raise InputError(log, f"cannot read Parquet (truncated or corrupt?): {e}") from None


def _listed(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names) or "none"


def _texts(log: Path, parsed: Parsed, vectors: bool) -> list[str | None]:
    """Each row's text; without vectors, a row without one is refused."""
    table = parsed.table
    if "text" not in table.column_names:
        return [None] * table.num_rows
    texts = table.column("text").to_pylist()
    if not vectors and None in texts:
        raise InputError(
            log, "has no text (null) and the log no `embedding`: not a query", parsed.where(texts.index(None))
        )
    return texts


def _tenant_column(log: Path, table: pa.Table, named: str | None) -> str | None:
    """The tenant-like column: the one named (refused when the log lacks it), else `tenant` if there."""
    if named is None:
        return "tenant" if "tenant" in table.column_names else None
    if named not in table.column_names or named in KNOWN:
        raise InputError(
            log,
            f"has no column {named!r} to spread tenants over (its columns: {_listed(table.column_names)})",
        )
    return named


def _tenant_values(log: Path, table: pa.Table, tenant: str | None) -> list[object]:
    """Each row's tenant (None when the log has no tenant column or the row none)."""
    if tenant is None:
        return [None] * table.num_rows
    column = table.column(tenant)
    t = column.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)):
        raise InputError(log, f"holds {t}; a tenant is text or a whole number", f"column {tenant!r}")
    return column.to_pylist()


def _predicates(parsed: Parsed) -> tuple[dict[str, predicates.Predicate], dict[str, int], list[str]]:
    """Each distinct filter parsed once: the predicates by key, the first row of each key, and
    each row's key. A filter the predicate module refuses names the log's row."""
    table = parsed.table
    n = table.num_rows
    if "filter" not in table.column_names or pa.types.is_null(table.schema.field("filter").type):
        unfiltered = predicates.parse_filter(None)
        return {unfiltered.key: unfiltered}, {unfiltered.key: 0}, [unfiltered.key] * n
    column = table.column("filter").combine_chunks()
    encoded = column.dictionary_encode()
    texts = encoded.dictionary.to_pylist()
    codes = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False)
    null = column.is_null().to_numpy(zero_copy_only=False)
    first = np.full(len(texts), n, dtype=np.int64)
    np.minimum.at(first, codes[~null], np.flatnonzero(~null))
    keys: list[str] = []
    preds: dict[str, predicates.Predicate] = {}
    firsts: dict[str, int] = {}
    for i, text in enumerate(texts):
        p = predicates.parse_filter(text, parsed.path, parsed.where(int(first[i])))
        keys.append(p.key)
        preds.setdefault(p.key, p)
        firsts[p.key] = min(firsts.get(p.key, n), int(first[i]))
    none = predicates.parse_filter(None)
    row_keys = [none.key if null[r] else keys[codes[r]] for r in range(n)]
    if null.any():
        preds.setdefault(none.key, none)
        firsts[none.key] = min(firsts.get(none.key, n), int(np.argmax(null)))
    return preds, firsts, row_keys


def _counted(
    corpus: Path,
    shards: list[Shard],
    preds: dict[str, predicates.Predicate],
    columns: list[str],
    log: Path,
    first_rows: dict[str, int],
    parsed: Parsed,
) -> tuple[int, dict[str, int], dict]:
    """The corpus's rows, each filtered predicate's exact eligible count (`counts.eligible_counts`;
    a refusal names the log's row of the filter) and what the allocation says of the corpus."""
    where = {k: parsed.where(r) for k, r in first_rows.items()}
    total, counts = eligible_counts(corpus, shards, preds, columns, log, where)
    about = {
        "path": bytes_shown(str(corpus)),
        "rows": total,
        "snapshot": corpus_snapshot(shards),
        "digest": corpus_digest(shards),
        "shards": [{"name": bytes_shown(s.name), "rows": s.rows, "digest": s.digest} for s in shards],
        "columns_read": columns,
    }
    return total, counts, about


def _checked(
    log: Path, array: pa.Array, rows: np.ndarray, parsed: Parsed, ref: tuple[int, int] | None
) -> np.ndarray:
    """Vectors (the log's rows `rows`) as one float array a row, refused naming the row: null, not a
    list of floats, empty, NaN or infinity, or of another length than `ref` (its length and its row;
    None: the first's)."""
    t = array.type
    listed = pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
    if not listed or not pa.types.is_floating(t.value_type):
        raise InputError(log, f"holds {t}; a vector is a list of floats", "column 'embedding'")
    if array.null_count:
        at = int(np.argmax(array.is_null().to_numpy(zero_copy_only=False)))
        raise InputError(log, "has no vector (null embedding)", parsed.where(int(rows[at])))
    lengths = pc.list_value_length(array).to_numpy(zero_copy_only=False).astype(np.int64)
    dim, first = ref if ref is not None else (int(lengths[0]), int(rows[0]))
    if not dim:
        raise InputError(log, "has an empty vector", parsed.where(first))
    if (lengths != dim).any():
        at = int(np.argmax(lengths != dim))
        raise InputError(
            log,
            f"has a vector of {lengths[at]} values, {parsed.where(first)} one of {dim}: a log's vectors "
            "are of one length",
            parsed.where(int(rows[at])),
        )
    values = pc.fill_null(array.flatten(), np.nan).to_numpy(zero_copy_only=False).reshape(len(array), dim)
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        at = int(np.argmax(bad))
        raise InputError(log, "has NaN, infinity or null in its vector", parsed.where(int(rows[at])))
    return values


def _vector_digests(log: Path, vectors: LogVectors, parsed: Parsed) -> list[bytes]:
    """Each row's vector digest (xxh3-64 of its values' bytes), every vector checked on the way."""
    out: list[bytes] = []
    ref = None
    for start, array in vectors.batches():
        if len(array):
            values = _checked(log, array, np.arange(start, start + len(array)), parsed, ref)
            ref = ref or (values.shape[1], start)
            out += [xxhash.xxh3_64_digest(r.tobytes()) for r in values]
    return out


def _framed(value: str | bytes | None) -> bytes:
    """`value` as bytes no other value frames the same: None, text and bytes apart."""
    if value is None:
        return b"\x00"
    tag, data = (
        (b"\x02", value) if isinstance(value, bytes) else (b"\x01", value.encode("utf-8", "surrogatepass"))
    )
    return tag + len(data).to_bytes(8, "little") + data


def _distinct(
    texts: list[str | None], digests: list[bytes] | None, keys: list[str], tenants: list[object]
) -> tuple[np.ndarray, list[bytes]]:
    """The first row of each distinct query — its text (its vector's digest when it has none), its
    predicate's key and its tenant — and that query's identity (the bytes its order key hashes)."""
    seen: dict[bytes, int] = {}
    for r, text in enumerate(texts):
        content = text if text is not None or digests is None else digests[r]
        tenant = None if tenants[r] is None else str(tenants[r])
        ident = b"".join(_framed(v) for v in (content, keys[r], tenant))
        seen.setdefault(xxhash.xxh3_128_digest(ident), r)
    return np.fromiter(seen.values(), dtype=np.int64, count=len(seen)), list(seen)


def _query_ids(parsed: Parsed, keep: np.ndarray) -> np.ndarray:
    """Each kept row's id: `query_id` as text (refused null, empty or given to two queries), else
    its place in the log."""
    table = parsed.table
    if "query_id" not in table.column_names:
        return np.array([parsed.where(r).replace(" ", "-") for r in keep.tolist()], dtype=object)
    column = table.column("query_id")
    try:
        text = pc.cast(column, pa.string()).to_pylist()
    except pa.ArrowException:
        raise InputError(
            parsed.path, f"holds {column.type}; an id is text or a whole number", "column 'query_id'"
        ) from None
    ids = np.array([text[r] for r in keep.tolist()], dtype=object)
    seen: dict[str, int] = {}
    for r, q in zip(keep.tolist(), ids.tolist(), strict=True):
        if q is None or not q.strip():
            raise InputError(parsed.path, "has no query_id (null or empty)", parsed.where(r))
        if q in seen:
            raise InputError(
                parsed.path,
                f"gives query_id {q!r} to another query than {parsed.where(seen[q])} (another text, vector, "
                "filter or tenant)",
                parsed.where(r),
            )
        seen[q] = r
    return ids


def _take_vectors(log: Path, vectors: LogVectors, chosen: np.ndarray, parsed: Parsed) -> pa.Array:
    """The chosen rows' vectors, as the log holds them, in `chosen`'s order; each checked
    (`_checked`: one length, finite floats)."""
    want = np.sort(chosen)
    pieces = []
    for start, array in vectors.batches():
        lo, hi = np.searchsorted(want, [start, start + len(array)])
        if hi > lo:
            pieces.append(array.take(pa.array(want[lo:hi] - start)))
    if not pieces:
        return pa.array([], pa.list_(pa.float32()))
    taken = pa.concat_arrays(pieces)
    _checked(log, taken, want, parsed, None)  # the first taken is the reference
    return taken.take(pa.array(np.searchsorted(want, chosen)))


def _output_table(
    log: Path,
    table: pa.Table,
    chosen: np.ndarray,
    ids: np.ndarray,
    embedding: pa.Array | None,
    added: dict[str, pa.Array],
) -> tuple[pa.Table, dict[str, str]]:
    """Q's columns: query_id, text, embedding, filter, the log's others (renamed when they take
    a name Q adds), then the added ones; and the renames."""
    rows = table.take(pa.array(chosen, pa.int64()))
    columns: dict[str, pa.Array | pa.ChunkedArray] = {"query_id": pa.array(ids.tolist(), pa.string())}
    if "text" in rows.column_names:
        columns["text"] = rows.column("text")
    if embedding is not None:
        columns["embedding"] = embedding
    if "filter" in rows.column_names:
        columns["filter"] = rows.column("filter")
    renamed = {}
    for name in rows.column_names:
        if name in KNOWN:
            continue
        as_named = name
        if name in ADDED:
            as_named = f"log_{name}"
            if as_named in rows.column_names:
                raise InputError(
                    log, f"has both {name!r} and {as_named!r}; the sample adds {name!r}", f"column {name!r}"
                )
            renamed[name] = as_named
        columns[as_named] = rows.column(name)
    columns |= added
    return pa.table(columns), renamed


def _time_range(table: pa.Table) -> dict | None:
    """The log's first and last `time`, as text (None without the column or a value)."""
    if "time" not in table.column_names:
        return None
    try:
        low, high = pc.min_max(table.column("time")).values()
    except pa.ArrowException:
        return None
    if not low.is_valid:
        return None
    return {"first": str(low.as_py()), "last": str(high.as_py())}


def _allocation_report(settings: dict, log: dict, corpus: dict, got: Allocation) -> dict:
    """What the allocation file holds: the settings, the inputs, each stratum's counts, the
    shapes' totals and the strata the log could not fill."""
    strata = [
        {
            "shape": s.shape,
            "band": s.band,
            "requested": s.requested,
            "available": s.available,
            "filled": s.filled,
            "short": s.short,
            "tenants": s.tenants,
            "tenants_filled": s.tenants_filled,
        }
        for s in got.strata
    ]
    shapes: dict[str, dict] = {}
    for s in got.strata:
        t = shapes.setdefault(s.shape, {"shape": s.shape, "requested": 0, "available": 0, "filled": 0})
        for k in ("requested", "available", "filled"):
            t[k] += getattr(s, k)
    return {
        "format": "triage-sample",
        "version": 1,
        **settings,
        "log": log,
        "corpus": corpus,
        "queries": {
            "requested": sum(s.requested for s in got.strata),
            "filled": sum(s.filled for s in got.strata),
        },
        "shapes": list(shapes.values()),
        "strata": strata,
        "unfilled": [s for s in strata if s["short"]],
    }
