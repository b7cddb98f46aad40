"""A truth folder read back as labels, with the data contract's refusals (docs/data.md "Exact truth
as labels").

`open_truth_folder` checks what `output.read_truth` reads of a folder `triage truth` wrote:
truth.json (the provenance: metric, k, tolerance, the corpus's and the queries' digests),
labels.parquet (one row per (query, true neighbour): rank, score, tied) and queries.parquet (every
query with its exact `n_eligible`). Anything broken is refused naming the file, the row or the key,
and the problem.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.ids import codes
from triage.core.inputs.contract import BOOL, FLOAT, ID, INT, QUERIES, STR, conform, single, unique_ids
from triage.core.inputs.manifest import TRUTH_JSON, TRUTH_LABELS, TRUTH_QUERIES
from triage.core.inputs.readers import Parsed, plain_table, quoted
from triage.core.truth.kernel import METRICS  # best first: the score descending, but for l2's distance
from triage.core.truth.output import VERSION, read_truth  # VERSION: the truth.json version written

TRUTH_ROWS = {
    "query_id": (ID, True),
    "chunk_id": (ID, True),
    "rank": (INT, True),
    "score": (FLOAT, True),
    "tied": (BOOL, True),
}
TRUTH_QUERY_ROWS = {
    **QUERIES,
    "n_eligible": (INT, True),
    "selectivity": (FLOAT, False),
    "filter": (STR, False),
}


@dataclass(frozen=True)
class TruthFolder:
    """One truth folder as read. `labels`: query_id, chunk_id, rank, score, tied (and any other
    column), each query's rows together, rank 1, 2, … in the truth's order; `queries`: every query
    with its exact `n_eligible`."""

    path: Path
    provenance: Mapping[str, object]  # truth.json as read
    metric: str  # cosine | ip | l2
    descending: bool  # scores best first descend (cosine, ip) or ascend (l2's distance)
    ks: tuple[int, ...]  # the cut-offs it was computed for; the truth at max(ks) serves every k ≤ it
    tolerance: float  # tied with the k-th: |s − s_k| ≤ tolerance × max(1, |s_k|)
    labels: Parsed
    queries: Parsed

    @property
    def k(self) -> int:
        return max(self.ks)

    @property
    def json_path(self) -> Path:
        return self.path / TRUTH_JSON

    def section(self, name: str) -> Mapping[str, object]:
        """truth.json's `corpus` or `queries` object ({} when absent)."""
        value = self.provenance.get(name)
        return value if isinstance(value, Mapping) else {}


def open_truth_folder(folder: Path) -> TruthFolder:
    """Read (`read_truth`) and check the truth folder `folder`."""
    folder = Path(folder)
    read = read_truth(folder)
    doc = read.provenance
    where = folder / TRUTH_JSON
    metric, descending = _metric(where, doc)
    labels = _conformed(folder / TRUTH_LABELS, read.labels, TRUTH_ROWS)
    queries = _conformed(folder / TRUTH_QUERIES, read.queries, TRUTH_QUERY_ROWS)
    unique_ids(queries, queries.table)
    _check_rows(labels, queries, descending)
    return TruthFolder(
        folder, doc, metric, descending, _ks(where, doc), _tolerance(where, doc), labels, queries
    )


def _conformed(path: Path, table: pa.Table, spec: dict[str, tuple[str, bool]]) -> Parsed:
    """A truth file's table in the contract's kinds (refusals name the file and the row)."""
    loaded = Parsed(path, plain_table(path, table))
    return Parsed(path, conform(loaded, spec))


def _metric(where: Path, doc: Mapping[str, object]) -> tuple[str, bool]:
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InputError(where, f"version is {quoted(version)}, expected a whole number ≥ 1")
    if version > VERSION:
        raise InputError(
            where, f"version {version} is newer than this triage reads ({VERSION}): upgrade triage"
        )
    metric = doc.get("metric")
    if metric not in METRICS:
        raise InputError(where, f"metric is {quoted(metric)}, expected one of {', '.join(METRICS)}")
    return str(metric), metric != "l2"


def _ks(where: Path, doc: Mapping[str, object]) -> tuple[int, ...]:
    k = doc.get("k")
    values = k if isinstance(k, list) else [k]
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise InputError(where, f"k is {quoted(k)}, expected a positive whole number or a list of them")
    return tuple(int(v) for v in values)  # type: ignore[arg-type]


def _tolerance(where: Path, doc: Mapping[str, object]) -> float:
    t = doc.get("tolerance")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise InputError(where, f"tolerance is {quoted(t)}, expected a number ≥ 0")
    return float(t)


def _check_rows(labels: Parsed, queries: Parsed, descending: bool) -> None:
    """Each truth row names a query of queries.parquet; a query's rows are together, ranked 1, 2,
    … in order, its scores in the truth's order, its tied extras last, no chunk twice."""
    t, path = labels.table, labels.path
    if not t.num_rows:
        return
    qids = single(t.column("query_id"))
    known = codes.encode(qids, single(queries.table.column("query_id"))).astype(np.int64)
    if (known < 0).any():
        r = int(np.flatnonzero(known < 0)[0])
        raise InputError(path, f"query {qids[r].as_py()!r} is not in {TRUTH_QUERIES}", labels.where(r))
    starts = np.flatnonzero(np.r_[True, known[1:] != known[:-1]])
    first = np.sort(known[starts])
    if (first[1:] == first[:-1]).any():
        seen: dict[int, int] = {}
        for s in starts.tolist():  # the first query met again after others
            if int(known[s]) in seen:
                raise InputError(path, f"query {qids[s].as_py()!r}'s rows are not together", labels.where(s))
            seen[int(known[s])] = s
    lengths = np.diff(np.r_[starts, len(known)])
    position = np.arange(len(known)) - np.repeat(starts, lengths) + 1
    rank = single(t.column("rank")).to_numpy()
    _first_bad(
        labels, rank != position, lambda r: f"rank {rank[r]}, expected {position[r]} (1, 2, … per query)"
    )
    score = single(t.column("score")).to_numpy()
    same = np.r_[False, known[1:] == known[:-1]]
    worse = (score[1:] > score[:-1]) if descending else (score[1:] < score[:-1])
    order = "descending" if descending else "ascending"
    _first_bad(labels, same & np.r_[False, worse], lambda r: f"score {score[r]} breaks the {order} order")
    tied = single(t.column("tied")).to_numpy(zero_copy_only=False)
    _first_bad(labels, same & np.r_[False, tied[:-1] & ~tied[1:]], lambda r: "an untied row after a tied one")
    _no_pair_twice(labels, known)


def _no_pair_twice(labels: Parsed, known: np.ndarray) -> None:
    """No chunk listed twice for one query: by the pairs' fingerprints (no string hashed), a
    repeated fingerprint confirmed by the ids themselves."""
    chunks = single(labels.table.column("chunk_id"))
    pair = codes.fingerprint(chunks) ^ (known.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    order = np.argsort(pair, kind="stable")
    same = np.flatnonzero(pair[order][1:] == pair[order][:-1])
    if not len(same):
        return
    _, code = codes.coded_distinct(chunks)
    pairs = known * (int(code.max(initial=0)) + 1) + code
    order = np.argsort(pairs, kind="stable")
    twice = order[1:][pairs[order][1:] == pairs[order][:-1]]
    if len(twice):
        r = int(twice.min())
        raise InputError(
            labels.path, f"chunk {chunks[r].as_py()!r} listed twice for its query", labels.where(r)
        )


def _first_bad(labels: Parsed, bad: np.ndarray, problem: object) -> None:
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InputError(labels.path, problem(r), labels.where(r))  # type: ignore[operator]


def gold_at(truth: TruthFolder, k: int) -> pa.Table:
    """The true neighbours at cut-off k ≤ truth.k, as gold labels (query_id, chunk_id, relevance 1):
    per query its first min(k, n_eligible) rows and every row tied with the last of them (|s − s_m|
    ≤ tolerance × max(1, |s_m|)). At k = truth.k, every row: its tied extras as the truth marks them."""
    t = truth.labels.table
    keep = np.ones(t.num_rows, bool)
    if k < truth.k and t.num_rows:
        n_elig = _eligible_per_row(truth)
        rank = single(t.column("rank")).to_numpy().astype(np.int64)
        score = single(t.column("score")).to_numpy()
        m = np.minimum(k, n_elig)
        starts = np.flatnonzero(rank == 1)
        counts = np.diff(np.r_[starts, len(rank)])
        m_query = m[starts]
        has = m_query <= counts  # a row at rank m exists (a short, post-filtered truth: not)
        edge = np.where(has, starts + np.maximum(m_query, 1) - 1, 0)
        s_m = np.repeat(score[edge], counts)
        tol = truth.tolerance * np.maximum(1.0, np.abs(s_m))
        tied = np.repeat(has, counts) & (np.abs(score - s_m) <= tol)
        keep = (rank <= m) | tied
    gold = t.filter(pa.array(keep)).select(["query_id", "chunk_id"])
    return gold.append_column("relevance", pa.array(np.ones(gold.num_rows, np.int64)))


def _eligible_per_row(truth: TruthFolder) -> np.ndarray:
    """Each truth row's query's exact n_eligible (int64)."""
    q = truth.queries.table
    at = codes.encode(truth.labels.table.column("query_id"), single(q.column("query_id"))).astype(np.int64)
    return single(q.column("n_eligible")).to_numpy()[at].astype(np.int64)


def unfiltered(filters: pa.Array) -> np.ndarray:
    """Per query, whether its filter is null or blank (bool)."""
    blank = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(pc.cast(filters, pa.string())), ""), True)
    return blank.to_numpy(zero_copy_only=False)
