"""An exact filtered truth computed apart from triage's engine, and a check of a truth DIR against it.

Nothing here imports `triage.core.truth`: the corpus is read with pyarrow.parquet, each query's
eligible rows are the rows DuckDB's `WHERE` admits (SQL's own three-valued logic: only TRUE rows),
and every score is computed in float64, one query at a time, over that query's eligible rows:

- cosine: both vectors normalised in float64, then their inner product;
- ip: the inner product;
- l2: the Euclidean distance (not squared), from the coordinates' differences.

A row's float32 coordinates are cast to float64 (a product of two float32 values is exact in
float64), and each score is a sum along the row of a C-contiguous float64 array, so two equal
vectors always get bit-equal scores (planted ties stay ties). Rows holding one vector (bit for bit)
are exact ties, and the check holds the engine to them: one score, chunk_id order, and no copy
left out of the top k for a copy with a larger chunk_id. Rows whose exact scores merely round to
one float64 (near-duplicates; for cosine, a vector and its multiple) are not: they may come in
either order, like any two rows closer than SLACK. Order: best first (descending for
cosine and ip, ascending for l2), equal scores by chunk_id in Python's str order.

`check_truth(folder, oracle)` lists every way a truth DIR (labels.parquet, queries.parquet,
truth.json) differs from the oracle's answer; an empty list is agreement. Rounding is allowed for
only where it cannot decide anything: engine and oracle scores may differ by `SCORE_TOL` (1e-9
relative to max(1, |s|)), so two rows whose exact scores are that close may be in either order and a
row that close to the tie tolerance's edge may be in or out; rows of one vector never.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SCORE_TOL = 1e-9  # engine's score vs the oracle's, relative to max(1, |s|)
SLACK = 2 * SCORE_TOL  # two rows closer than this (in oracle scores) may come in either order
DESCENDING = {"cosine": True, "ip": True, "l2": False}


# -- reading ---------------------------------------------------------------------------------------


def shard_paths(corpus: Path) -> list[Path]:
    """The corpus's Parquet files: the file itself, or a folder's `*.parquet` sorted by name."""
    corpus = Path(corpus)
    return sorted(corpus.glob("*.parquet"), key=lambda p: p.name) if corpus.is_dir() else [corpus]


@dataclass
class CorpusData:
    ids: np.ndarray  # str (object), one per row, every shard's rows in shard order
    vectors: np.ndarray  # float64 (rows, d): the stored values cast
    meta: pa.Table  # every column but the embedding, plus `__row`
    same: np.ndarray  # int64 per row: rows with one number hold one vector (exact ties)
    shard_rows: list[int]


def _vectors(column: pa.ChunkedArray) -> np.ndarray:
    """A list or fixed-size-list column as float64 (rows, d); every row one length, none null."""
    arr = column.combine_chunks()
    assert arr.null_count == 0, "a null embedding"
    lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
    d = int(lengths[0]) if len(lengths) else 0
    assert (lengths == d).all(), "embeddings of different lengths"
    return pc.list_flatten(arr).to_numpy(zero_copy_only=False).astype(np.float64).reshape(len(arr), d)


def read_corpus(corpus: Path, embedding: str = "embedding") -> CorpusData:
    tables = [pq.read_table(p) for p in shard_paths(corpus)]
    ids: list[str] = []
    vectors = []
    metas = []
    for t in tables:
        ids += [str(x) for x in t.column("chunk_id").to_pylist()]
        vectors.append(_vectors(t.column(embedding)))
        metas.append(t.drop_columns([embedding]))
    meta = pa.concat_tables(metas, promote_options="permissive")
    meta = meta.append_column("__row", pa.array(np.arange(meta.num_rows, dtype=np.int64)))
    vectors = np.vstack(vectors)
    same = np.unique(vectors, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return CorpusData(np.array(ids, dtype=object), vectors, meta, same, [t.num_rows for t in tables])


@dataclass
class Query:
    query_id: str
    vector: np.ndarray  # float32, as the engine reads it
    filter: str | None
    extra: dict = field(default_factory=dict)


def read_queries(path: Path) -> list[Query]:
    path = Path(path)
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        rows = pq.read_table(path).to_pylist()
    out = []
    for r in rows:
        extra = {k: v for k, v in r.items() if k not in ("query_id", "embedding", "filter")}
        vec = np.asarray(r["embedding"], dtype=np.float64).astype(np.float32)
        out.append(Query(str(r["query_id"]), vec, r.get("filter"), extra))
    return out


# -- the exact truth -------------------------------------------------------------------------------


def unfiltered(text: str | None) -> bool:
    return text is None or not text.strip()


def eligible_rows(con: duckdb.DuckDBPyConnection, rows: int, text: str | None) -> np.ndarray:
    """Row numbers where DuckDB finds the predicate TRUE over the table `corpus` registered on `con`
    (NULL and FALSE rows are not eligible)."""
    if unfiltered(text):
        return np.arange(rows, dtype=np.int64)
    got = con.execute(f'SELECT "__row" FROM corpus WHERE ({text}) ORDER BY "__row"').fetchnumpy()["__row"]
    return np.asarray(got, dtype=np.int64)


def scores(metric: str, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """float64 scores of `rows` (float64, (n, d)) for one query."""
    q = query.astype(np.float64)
    if metric == "cosine":
        qn = q / math.sqrt(float(np.sum(q * q)))
        norms = np.sqrt(np.sum(rows * rows, axis=1))
        return np.sum((rows / norms[:, None]) * qn, axis=1)
    if metric == "ip":
        return np.sum(rows * q, axis=1)
    if metric == "l2":
        diff = rows - q
        return np.sqrt(np.sum(diff * diff, axis=1))
    raise ValueError(f"unknown metric {metric!r}")


def by_chunk_id(ids: np.ndarray) -> np.ndarray:
    """The permutation putting rows in chunk_id order (Python's str order: code points)."""
    return np.array(sorted(range(len(ids)), key=lambda i: ids[i]), dtype=np.int64)


def best_first(metric: str, by_id: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The permutation putting rows best first, equal scores in chunk_id order (`by_id`)."""
    key = -s if DESCENDING[metric] else s
    return by_id[np.argsort(key[by_id], kind="stable")]


def tied(s: float | np.ndarray, s_k: float, tolerance: float) -> bool | np.ndarray:
    """Within the stated tolerance of the k-th score: |s - s_k| <= tolerance * max(1, |s_k|)."""
    return np.abs(s - s_k) <= tolerance * max(1.0, abs(s_k))


@dataclass
class QueryTruth:
    query: Query
    n_eligible: int
    ids: np.ndarray  # every eligible row's chunk_id, best first
    scores: np.ndarray  # their float64 scores, same order
    same: np.ndarray  # their vectors' numbers (CorpusData.same), same order
    m: int  # min(K, n_eligible)
    extras: int  # rows past m tied with the m-th

    def labels(self) -> list[tuple[str, float, bool]]:
        n = self.m + self.extras
        return [(str(self.ids[i]), float(self.scores[i]), i >= self.m) for i in range(n)]


@dataclass
class Oracle:
    metric: str
    k: int
    tolerance: float
    corpus_rows: int
    shard_rows: list[int]
    queries: list[QueryTruth]


def exact_truth(
    corpus: Path, queries: Path, k: int, metric: str = "cosine", tolerance: float = 1e-6
) -> Oracle:
    data = read_corpus(corpus)
    asked = read_queries(queries)
    eligible: dict[str | None, tuple[np.ndarray, np.ndarray]] = {}  # filter text -> rows, chunk_id order
    con = duckdb.connect()
    con.register("corpus", data.meta)
    out = []
    for q in asked:
        key = None if unfiltered(q.filter) else q.filter
        if key not in eligible:
            rows = eligible_rows(con, data.meta.num_rows, key)
            eligible[key] = rows, by_chunk_id(data.ids[rows])
        rows, by_id = eligible[key]
        ids = data.ids[rows]
        s = scores(metric, q.vector, data.vectors[rows])
        order = best_first(metric, by_id, s)
        ids, s, same = ids[order], s[order], data.same[rows][order]
        m = min(k, len(rows))
        extras = 0
        if m:
            extras = int(np.count_nonzero(tied(s[m:], float(s[m - 1]), tolerance)))
            assert not np.any(tied(s[m + extras :], float(s[m - 1]), tolerance)), "tied rows must be adjacent"
        out.append(QueryTruth(q, len(rows), ids, s, same, m, extras))
    con.close()
    return Oracle(metric, k, tolerance, data.meta.num_rows, data.shard_rows, out)


# -- a truth DIR in the spec's layout (the comparison's own test writes and spoils these) ----------


LABELS_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("chunk_id", pa.string()),
        ("relevance", pa.int32()),
        ("rank", pa.int32()),
        ("score", pa.float64()),
        ("tied", pa.bool_()),
    ]
)


def write_truth_dir(oracle: Oracle, out: Path) -> Path:
    """The oracle's answer written as TRUTH_SPEC lays out a truth DIR (provenance fields are stand-ins)."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for t in oracle.queries:
        for rank, (cid, s, extra) in enumerate(t.labels(), 1):
            rows.append((t.query.query_id, cid, 1, rank, s, extra))
    cols = list(zip(*rows, strict=True)) if rows else [[]] * 6
    pq.write_table(
        pa.table(
            [pa.array(c, f.type) for c, f in zip(cols, LABELS_SCHEMA, strict=True)], schema=LABELS_SCHEMA
        ),
        out / "labels.parquet",
    )
    qrows = []
    for t in oracle.queries:
        q = t.query
        r = {"query_id": q.query_id, **q.extra, "filter": None if unfiltered(q.filter) else q.filter}
        r["n_eligible"] = t.n_eligible
        r["selectivity"] = t.n_eligible / oracle.corpus_rows
        qrows.append(r)
    pq.write_table(pa.Table.from_pylist(qrows), out / "queries.parquet")
    meta = {
        "format": "triage-truth",
        "version": 1,
        "metric": oracle.metric,
        "order": "descending" if DESCENDING[oracle.metric] else "ascending",
        "k": [oracle.k],
        "tolerance": oracle.tolerance,
        "corpus": {"rows": oracle.corpus_rows, "shards": [{"rows": n} for n in oracle.shard_rows]},
        "queries": {"rows": len(oracle.queries)},
    }
    (out / "truth.json").write_text(json.dumps(meta), encoding="utf-8")
    return out


# -- the comparison --------------------------------------------------------------------------------


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def check_query(t: QueryTruth, got: Sequence[dict], metric: str, tolerance: float) -> list[str]:
    """How one query's labels rows (dicts with chunk_id, rank, score, tied, relevance) differ."""
    name = f"query {t.query.query_id!r}"
    if t.m == 0:
        return [f"{name}: {t.n_eligible} eligible rows but {len(got)} labels rows"] if got else []
    where = {str(c): i for i, c in enumerate(t.ids)}
    ids = [r["chunk_id"] for r in got]
    foreign = [c for c in ids if c is None or c not in where]
    if foreign:
        return [f"{name}: chunk_id {c!r} is not an eligible row (padding or foreign)" for c in foreign[:10]]
    if len(set(ids)) != len(ids):
        return [f"{name}: a chunk_id listed twice"]
    problems = _shape(t, got, name)
    pos = np.array([where[c] for c in ids], dtype=np.int64)
    problems += _order(t, got, pos, 1.0 if DESCENDING[metric] else -1.0, name)
    if len(got) < t.m:
        return problems + [f"{name}: {len(got)} rows for min(k, n_eligible) = {t.m}"]
    return problems + _boundary(t, pos, 1.0 if DESCENDING[metric] else -1.0, tolerance, name)


def _shape(t: QueryTruth, got: Sequence[dict], name: str) -> list[str]:
    """Ranks 1..n, relevance 1, `tied` false for the first min(k, n_eligible) rows and true after."""
    problems = []
    if [r["rank"] for r in got] != list(range(1, len(got) + 1)):
        problems.append(f"{name}: ranks {[r['rank'] for r in got][:12]} are not 1..{len(got)}")
    if any(r["relevance"] != 1 for r in got):
        problems.append(f"{name}: relevance other than 1")
    flags = [bool(r["tied"]) for r in got]
    if flags != [i >= t.m for i in range(len(got))]:
        problems.append(
            f"{name}: tied flags {flags[: t.m + 3]} (expected false for the first {t.m} = "
            f"min(k, {t.n_eligible}) rows, true after)"
        )
    return problems


def _order(t: QueryTruth, got: Sequence[dict], pos: np.ndarray, sign: float, name: str) -> list[str]:
    """Scores within SCORE_TOL of the exact ones; best first by the exact scores (rows closer than
    SLACK in either order); rows of one vector (exact ties) with one score, in chunk_id order, and
    rows written with equal scores in chunk_id order."""
    problems = []
    exact = t.scores[pos]
    ids = [r["chunk_id"] for r in got]
    for r, s in zip(got, exact, strict=True):
        if not _close(float(r["score"]), float(s), SCORE_TOL):
            problems.append(f"{name}: {r['chunk_id']} scored {r['score']!r}, exactly {float(s)!r}")
    for i in range(len(got) - 1):
        a, b = sign * exact[i], sign * exact[i + 1]
        if a < b - SLACK * max(1.0, abs(a)):
            problems.append(
                f"{name}: rank {i + 1} ({ids[i]}, {exact[i]!r}) before a better row "
                f"({ids[i + 1]}, {exact[i + 1]!r})"
            )
        elif got[i]["score"] == got[i + 1]["score"] and ids[i] > ids[i + 1]:
            problems.append(
                f"{name}: equal scores at ranks {i + 1}, {i + 2} not in chunk_id order "
                f"({ids[i]} before {ids[i + 1]})"
            )
    last: dict[int, int] = {}  # vector number -> the latest row listed with it
    for i, v in enumerate(t.same[pos]):
        j = last.get(int(v))
        if j is not None and (ids[j] > ids[i] or got[j]["score"] != got[i]["score"]):
            problems.append(
                f"{name}: {ids[j]} (rank {j + 1}, {got[j]['score']!r}) and {ids[i]} (rank {i + 1}, "
                f"{got[i]['score']!r}) are one vector: one score, in chunk_id order"
            )
        last[int(v)] = i
    return problems


def _boundary(t: QueryTruth, pos: np.ndarray, sign: float, tolerance: float, name: str) -> list[str]:
    """The top m are the best m (up to SLACK, exact ties by chunk_id); the tied extras are every
    other row within the tolerance of the m-th's score (up to SLACK at the tolerance's edge)."""
    in_top = np.zeros(len(t.ids), dtype=bool)
    in_top[pos[: t.m]] = True
    listed = np.zeros(len(t.ids), dtype=bool)
    listed[pos[t.m :]] = True
    g = sign * t.scores
    worst = float(g[pos[: t.m]].min())
    ids_all = np.array([str(c) for c in t.ids], dtype=object)
    latest: dict[int, str] = {}  # vector number -> the largest chunk_id of the top m with it
    for i in pos[: t.m]:
        latest[int(t.same[i])] = max(latest.get(int(t.same[i]), ""), ids_all[i])
    tie_lost = np.array(
        [c < latest.get(int(v), "") for c, v in zip(ids_all, t.same, strict=True)], dtype=bool
    )
    missing = ~in_top & ((g > worst + SLACK * max(1.0, abs(worst))) | tie_lost)
    s_k = float(t.scores[pos[t.m - 1]])
    edge, slack = tolerance * max(1.0, abs(s_k)), SLACK * max(1.0, abs(s_k))
    gap = np.abs(t.scores - s_k)
    wrongly_tied = listed & (gap > edge + slack)
    not_tied = ~in_top & ~listed & (gap < edge - slack)
    problems = [
        f"{name}: {ids_all[i]} (score {t.scores[i]!r}) belongs in the top {t.m} and is not there"
        for i in np.flatnonzero(missing)[:10]
    ]
    problems += [
        f"{name}: {ids_all[i]} is listed as tied but is {gap[i]:.3g} from the k-th score"
        for i in np.flatnonzero(wrongly_tied)[:10]
    ]
    problems += [
        f"{name}: {ids_all[i]} is within the tolerance of the k-th score ({gap[i]:.3g}) and is "
        "not listed as tied"
        for i in np.flatnonzero(not_tied)[:10]
    ]
    return problems


def _json(folder: Path) -> dict:
    return json.loads((folder / "truth.json").read_text(encoding="utf-8"))


def check_truth(folder: Path, oracle: Oracle, ks: Iterable[int] | None = None) -> list[str]:
    """Every difference between the truth DIR `folder` and the oracle's exact answer."""
    folder = Path(folder)
    problems: list[str] = []
    for name in ("labels.parquet", "queries.parquet", "truth.json"):
        if not (folder / name).is_file():
            return [f"{name} is missing from {folder}"]
    labels = pq.read_table(folder / "labels.parquet")
    if not labels.schema.equals(LABELS_SCHEMA):
        problems.append(f"labels.parquet's schema is {labels.schema}, expected {LABELS_SCHEMA}")
    problems += _check_queries(pq.read_table(folder / "queries.parquet"), oracle)
    problems += _check_meta(_json(folder), oracle, ks)
    rows = labels.to_pylist()
    order = {t.query.query_id: i for i, t in enumerate(oracle.queries)}
    seen = [order.get(r["query_id"], -1) for r in rows]
    if -1 in seen:
        problems.append(f"labels.parquet has a query_id no query has: {rows[seen.index(-1)]['query_id']!r}")
    elif seen != sorted(seen):
        problems.append("labels.parquet's rows are not in the queries' order")
    by_query: dict[str, list[dict]] = {}
    for r in rows:
        by_query.setdefault(r["query_id"], []).append(r)
    for t in oracle.queries:
        problems += check_query(t, by_query.get(t.query.query_id, []), oracle.metric, oracle.tolerance)
    return problems


def _check_queries(table: pa.Table, oracle: Oracle) -> list[str]:
    problems = []
    if "embedding" in table.column_names:
        problems.append("queries.parquet keeps the embedding")
    rows = table.to_pylist()
    want = [t.query.query_id for t in oracle.queries]
    if [str(r.get("query_id")) for r in rows] != want:
        return problems + [f"queries.parquet lists {len(rows)} queries, not the {len(want)} given in order"]
    for r, t in zip(rows, oracle.queries, strict=True):
        name = f"queries.parquet: query {t.query.query_id!r}"
        if r.get("n_eligible") != t.n_eligible:
            problems.append(f"{name}: n_eligible {r.get('n_eligible')}, exactly {t.n_eligible}")
        sel = t.n_eligible / oracle.corpus_rows
        if r.get("selectivity") is None or not math.isclose(r["selectivity"], sel, rel_tol=1e-12, abs_tol=0):
            problems.append(f"{name}: selectivity {r.get('selectivity')}, exactly {sel}")
        f = t.query.filter
        if (f is None and r.get("filter") is not None) or (not unfiltered(f) and r.get("filter") != f):
            problems.append(f"{name}: filter {r.get('filter')!r}, given {f!r}")
        for key, value in t.query.extra.items():
            if r.get(key) != value:
                problems.append(f"{name}: column {key} is {r.get(key)!r}, given {value!r}")
    for col, typ in (("n_eligible", pa.int64()), ("selectivity", pa.float64())):
        if col in table.column_names and table.schema.field(col).type != typ:
            problems.append(f"queries.parquet's {col} is {table.schema.field(col).type}, expected {typ}")
    return problems


def _check_meta(meta: dict, oracle: Oracle, ks: Iterable[int] | None) -> list[str]:
    problems = []
    want = {"format": "triage-truth", "metric": oracle.metric, "tolerance": oracle.tolerance}
    for key, value in want.items():
        if meta.get(key) != value:
            problems.append(f"truth.json's {key} is {meta.get(key)!r}, expected {value!r}")
    order = str(meta.get("order", "")).split(",")[0]  # e.g. "score descending, then chunk_id ascending"
    if ("descending" if DESCENDING[oracle.metric] else "ascending") not in order:
        problems.append(f"truth.json's order is {meta.get('order')!r} for {oracle.metric}")
    got_k = meta.get("k")
    if sorted(got_k or []) != sorted(set(ks or [oracle.k])):
        problems.append(f"truth.json's k is {got_k!r}, expected {sorted(set(ks or [oracle.k]))}")
    corpus = meta.get("corpus") or {}
    if corpus.get("rows") != oracle.corpus_rows:
        problems.append(
            f"truth.json's corpus rows {corpus.get('rows')!r}, the corpus has {oracle.corpus_rows}"
        )
    if [s.get("rows") for s in corpus.get("shards") or []] != oracle.shard_rows:
        problems.append(f"truth.json's shards {corpus.get('shards')!r}, the corpus's {oracle.shard_rows}")
    if (meta.get("queries") or {}).get("rows") != len(oracle.queries):
        problems.append(f"truth.json's queries rows {(meta.get('queries') or {}).get('rows')!r}")
    return problems


def assert_truth(folder: Path, oracle: Oracle, ks: Iterable[int] | None = None) -> None:
    problems = check_truth(folder, oracle, ks)
    assert not problems, f"{len(problems)} differences from the exact truth:\n" + "\n".join(problems[:30])
