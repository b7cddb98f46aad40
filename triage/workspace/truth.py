"""`triage truth`: the exact top-k of every query within the corpus rows its filter admits, written
as a truth folder (docs/truth.md).

The run: the queries are read and grouped by their predicate (one group per distinct filter), every
filter is checked against every shard's columns before anything is scanned; then, per shard, its
partial top-k is taken from the truth cache when proved there, else computed (`shard_results`: the
seam where the cache and the engines meet, each shard's partial a pure function of the shard and
the job); the partials are merged, ranked and written at once (`output.write_truth`: a temporary
folder renamed, so Ctrl-C leaves no DIR). Progress is reported as rows scanned, with the rate and
the time left.

The truth cache (`core.truth.cache`) is read before any shard is scanned: a shard whose every
query's partial is kept is not read at all; a shard missing some is scanned for those queries only
(`engines`: here, or on Ray), and each shard's new partials are kept as soon as it is done, so a
run stopped by Ctrl-C resumes from the shards it finished. A cache that cannot be written is said
once (`TruthRun.notice`), and the run goes on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

import triage
from triage.core.defaults import TRUTH_TOLERANCE
from triage.core.errors import InputError
from triage.core.files import protect
from triage.core.text.sanitize import bytes_shown
from triage.core.truth import engines, predicate
from triage.core.truth.cache import Kept, Reuse, combined, keep_computed, reuse, sub_job
from triage.core.truth.kernel import METRICS, Job
from triage.core.truth.merge import merge_partials, truth_lists
from triage.core.truth.output import FORMAT, VERSION, refuse_out, truth_labels, truth_queries, write_truth
from triage.core.truth.queries import QuerySet, read_queries
from triage.core.truth.shards import (
    Shard,
    ShardResult,
    check_dim,
    corpus_digest,
    corpus_shards,
    corpus_snapshot,
    read_ids,
)

DEFAULT_TOLERANCE = TRUTH_TOLERANCE
ENGINES = engines.ENGINES
ORDER = {
    "cosine": "score descending, then chunk_id ascending",
    "ip": "score descending, then chunk_id ascending",
    "l2": "score (distance) ascending, then chunk_id ascending",
}


@dataclass(frozen=True)
class TruthProgress:
    """How far a run is: corpus rows scanned (a shard read from the cache counts as scanned) of
    all, rows per second over the scanning so far, and the seconds left at that rate (None before
    a rate is known)."""

    done: int
    total: int
    rate: float
    eta: float | None
    shard: str  # the shard being scanned


@dataclass(frozen=True)
class TruthRun:
    """What a run did: the folder written and its provenance (truth.json), with the count of
    shards computed and read from the cache, and the seconds it took."""

    out: Path
    provenance: dict
    computed: int
    cached: int
    seconds: float
    notice: str | None = None  # why the truth cache could not be written, when it could not


class _Meter:
    def __init__(self, total: int, report: Callable[[TruthProgress], None] | None) -> None:
        self.total, self.report = total, report
        self.done = 0
        self.scanned = 0  # rows actually scanned (the rate's)
        self.start = time.monotonic()
        self.shard = ""
        self.last = 0.0

    def skip(self, rows: int) -> None:
        self.done += rows
        self._tell(force=True)

    def advance(self, rows: int) -> None:
        self.done += rows
        self.scanned += rows
        self._tell()

    def _tell(self, force: bool = False) -> None:
        if self.report is None:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.1 and self.done < self.total:
            return
        self.last = now
        spent = now - self.start
        rate = self.scanned / spent if spent > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else None
        self.report(TruthProgress(self.done, self.total, rate, eta, self.shard))


def compute_truth(
    corpus: Path,
    queries: Path,
    k: int | Sequence[int],
    out: Path,
    metric: str = "cosine",
    tolerance: float = DEFAULT_TOLERANCE,
    engine: str = "local",
    address: str | None = None,
    force: bool = False,
    progress: Callable[[TruthProgress], None] | None = None,
) -> TruthRun:
    """Compute the truth of `queries` over `corpus` at max(k) and write it to `out`."""
    began = time.monotonic()
    ks = _ks(k)
    _check_options(metric, tolerance, engine, address)
    engines.require(engine)
    shards = corpus_shards(Path(corpus))
    qs = read_queries(Path(queries), metric == "cosine")
    for shard in shards:
        check_dim(shard, qs.vectors.shape[1])
    corpus_folder = [Path(corpus)] if Path(corpus).is_dir() else []
    protected = protect([Path(queries), *(s.path for s in shards)], folders=corpus_folder)
    refuse_out(Path(out), protected, force)
    predicates, groups = _groups(qs, shards)
    job = Job(qs.vectors, groups, len(predicates), metric, max(ks), tolerance)
    meter = _Meter(sum(s.rows for s in shards), progress)
    kept = Kept(protected)
    keys = list(zip(qs.ids, qs.digests, strict=True))
    results, cached = shard_results(shards, job, predicates, engine, address, meter, kept, keys)
    _unique_across(shards, results)
    merged = merge_partials([r.partial for r in results], job.k, tolerance)
    rows = sum(s.rows for s in shards)
    labels = truth_labels(truth_lists(merged, job.k), qs.ids, metric)
    table = truth_queries(qs.table, qs.filters, merged.n_eligible, rows)
    provenance = _provenance(Path(corpus), shards, qs, metric, ks, tolerance, engine)
    write_truth(Path(out), labels, table, provenance, protected, force)
    notice = (
        None
        if kept.unwritable is None
        else f"the truth cache cannot be written ({kept.unwritable}): this run's partials are not kept"
    )
    return TruthRun(Path(out), provenance, len(shards) - cached, cached, time.monotonic() - began, notice)


def shard_results(
    shards: Sequence[Shard],
    job: Job,
    predicates: Sequence[predicate.Predicate],
    engine: str,
    address: str | None,
    meter: _Meter,
    kept: Kept,
    keys: Sequence[tuple[str, str]],
) -> tuple[list[ShardResult], int]:
    """Each shard's partial top-k for `job`, in the shards' order, and how many shards came from
    the cache alone. `keys`: each query's (id, vector digest), the cache's key of it. A shard's
    partials are read from the truth cache where proved there; the rest is computed by the engine
    (`shards.scan_shard`, a pure function of the shard and the job: for the queries not kept only)
    and kept as each shard is done."""
    found = [reuse(kept, s, job, predicates, keys) for s in shards]
    results: dict[int, ShardResult] = {}
    for i, f in enumerate(found):
        if f.complete:
            results[i] = combined(f, None, job)
            meter.skip(shards[i].rows)
    cached = len(results)
    work = _work(shards, job, predicates, found)

    def shown(name: str) -> None:
        meter.shard = name

    for i, result in engines.scan_shards(engine, work, address, meter.advance, shown):
        keep_computed(kept, found[i], result, job, predicates, keys)
        results[i] = combined(found[i], result, job)
    return [results[i] for i in range(len(shards))], cached


def _work(
    shards: Sequence[Shard], job: Job, predicates: Sequence[predicate.Predicate], found: Sequence[Reuse]
) -> engines.Work:
    """The shards left to scan, each with the job of its queries not kept (shards missing the same
    queries share one job)."""
    numbered: dict[bytes, int] = {}
    jobs: list[tuple[Job, tuple[predicate.Predicate, ...]]] = []
    tasks: list[engines.ShardTask] = []
    for i, f in enumerate(found):
        if f.complete:
            continue
        key = f.todo.tobytes()
        if key not in numbered:
            numbered[key] = len(jobs)
            jobs.append(sub_job(job, predicates, f.todo))
        tasks.append(engines.ShardTask(i, shards[i], numbered[key]))
    return engines.Work(tuple(tasks), tuple(jobs))


def _ks(k: int | Sequence[int]) -> list[int]:
    ks = [k] if isinstance(k, int | np.integer) else list(k)
    if not ks or any(isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1 for v in ks):
        raise InputError("k", f"{k!r}: give one or more positive whole numbers")
    return sorted({int(v) for v in ks})


def _check_options(metric: str, tolerance: float, engine: str, address: str | None) -> None:
    if metric not in METRICS:
        raise InputError("metric", f"{metric!r} is not one of {', '.join(METRICS)}")
    if not (isinstance(tolerance, int | float) and 0 <= tolerance < 1 and math.isfinite(tolerance)):
        raise InputError("tolerance", f"{tolerance!r} is not a number from 0 up to (not including) 1")
    if engine not in ENGINES:
        raise InputError("engine", f"{engine!r} is not one of {', '.join(ENGINES)}")
    if address is not None and engine != "ray":
        raise InputError("address", "goes with the ray engine (--engine ray)")


def _groups(qs: QuerySet, shards: Sequence[Shard]) -> tuple[list[predicate.Predicate], np.ndarray]:
    """One predicate per distinct filter (by its canonical key) and each query's group; a filter
    that cannot be read, or names a column a shard lacks, is refused at its query's row."""
    keyed: dict[str, int] = {}
    predicates: list[predicate.Predicate] = []
    groups = np.zeros(len(qs.filters), np.int64)
    parsed: dict[str | None, predicate.Predicate] = {}
    for row, text in enumerate(qs.filters):
        if text not in parsed:
            parsed[text] = _parsed(qs, row, text, shards)
        p = parsed[text]
        if p.key not in keyed:
            keyed[p.key] = len(predicates)
            predicates.append(p)
        groups[row] = keyed[p.key]
    return predicates, groups


def _parsed(qs: QuerySet, row: int, text: str | None, shards: Sequence[Shard]) -> predicate.Predicate:
    where = (
        f"line {row + 1}" if qs.path.suffix.lower() in (".jsonl", ".ndjson", ".json") else f"row {row + 1}"
    )
    p = predicate.parse_filter(text, qs.path, where)
    for shard in shards:
        lacking = sorted(p.columns - set(shard.columns) - {"embedding"})
        if lacking or "embedding" in p.columns:
            have = ", ".join(c for c in shard.columns if c != "embedding")
            name = lacking[0] if lacking else "embedding"
            raise InputError(
                qs.path,
                f"filter {text!r} names the column {name!r}, which the corpus shard {shard.name} "
                f"does not hold as metadata (columns: {have})",
                where,
            )
        predicate.check(p, shard.schema, qs.path, where)
    return p


def _unique_across(shards: Sequence[Shard], results: Sequence[ShardResult]) -> None:
    """InputError naming a chunk id that two shards both hold."""
    if len(shards) < 2:
        return
    fp = np.concatenate([r.fingerprints for r in results])
    shard_of = np.repeat(np.arange(len(shards)), [len(r.fingerprints) for r in results])
    starts = np.concatenate([[0], np.cumsum([len(r.fingerprints) for r in results])[:-1]])
    order = np.argsort(fp, kind="stable")
    for i in np.flatnonzero(fp[order][1:] == fp[order][:-1]):
        a, b = int(order[i]), int(order[i + 1])
        sa, sb = int(shard_of[a]), int(shard_of[b])
        if sa == sb:
            continue
        ra, rb = a - int(starts[sa]), b - int(starts[sb])
        ida, idb = read_ids(shards[sa], [ra])[0], read_ids(shards[sb], [rb])[0]
        if ida == idb:
            raise InputError(
                shards[sb].path,
                f"duplicate chunk_id {ida!r}: also in {shards[sa].path} (row {ra + 1})",
                f"row {rb + 1}",
            )


def _provenance(
    corpus: Path,
    shards: Sequence[Shard],
    qs: QuerySet,
    metric: str,
    ks: list[int],
    tolerance: float,
    engine: str,
) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "triage": triage.__version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "metric": metric,
        "order": ORDER[metric],
        "k": ks,
        "tolerance": tolerance,
        "engine": engine,
        "kernel": "numpy",
        "corpus": {
            "path": bytes_shown(str(corpus)),
            "rows": sum(s.rows for s in shards),
            "snapshot": corpus_snapshot(shards),
            "digest": corpus_digest(shards),
            "shards": [{"name": bytes_shown(s.name), "rows": s.rows, "digest": s.digest} for s in shards],
        },
        "queries": {
            "path": bytes_shown(str(qs.path)),
            "rows": len(qs.filters),
            "digest": qs.digest,
            "vectors_digest": qs.vectors_digest,
        },
    }
