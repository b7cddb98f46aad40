"""Truth folders written as `triage truth` writes them (docs/data.md "Exact truth as labels"), and
a generated multi-tenant case with planted failures to judge against.

`write_truth` writes one folder from per-query neighbour lists; `Case` is the on-call's case: many
tenants answered by ann, a tenant whose queries a postfilter plan answers at about
0.1% selectivity, a tenant of 300 documents answered by exact scan beside neighbours at recall 0.3
in the same band, and the truths that fake recall (post-filtered, another corpus, padding).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

K = 10


@dataclass
class Query:
    query_id: str
    n_eligible: int
    neighbours: list[tuple[str, float]]  # the truth: min(K, n_eligible) ids, then tied extras
    tenant: str | None = None
    filter: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


def write_truth(
    folder: Path,
    queries: list[Query],
    k: int | list[int] = K,
    corpus_rows: int = 300_000,
    metric: str = "cosine",
    tolerance: float = 1e-6,
    snapshot: str | None = "corpus-v1",
    digest: str = "c0ffee",
    queries_digest: str = "q1",
    vectors_digest: str = "v1",
    json_doc: dict[str, object] | None = None,
) -> Path:
    """A truth folder: labels.parquet (query_id, chunk_id, relevance 1, rank, score, tied: the rows
    past min(K, n_eligible) are the tied extras), queries.parquet (every query, its tenant and filter,
    n_eligible, selectivity) and truth.json. `json_doc` replaces truth.json's object whole."""
    folder.mkdir(parents=True, exist_ok=True)
    top = max(k) if isinstance(k, list) else k
    rows: dict[str, list[object]] = {
        c: [] for c in ("query_id", "chunk_id", "relevance", "rank", "score", "tied")
    }
    for q in queries:
        full = min(top, q.n_eligible)
        for i, (chunk, score) in enumerate(q.neighbours):
            for name, value in zip(rows, (q.query_id, chunk, 1, i + 1, score, i + 1 > full), strict=True):
                rows[name].append(value)
    schema = pa.schema(
        [
            ("query_id", pa.string()),
            ("chunk_id", pa.string()),
            ("relevance", pa.int32()),
            ("rank", pa.int32()),
            ("score", pa.float64()),
            ("tied", pa.bool_()),
        ]
    )
    pq.write_table(pa.table(rows, schema=schema), folder / "labels.parquet")
    extra_names = sorted({name for q in queries for name in q.extra})
    pq.write_table(
        pa.table(
            {
                "query_id": [q.query_id for q in queries],
                "tenant": pa.array([q.tenant for q in queries], pa.string()),
                "filter": pa.array([q.filter for q in queries], pa.string()),
                "n_eligible": pa.array([q.n_eligible for q in queries], pa.int64()),
                "selectivity": pa.array([q.n_eligible / corpus_rows for q in queries], pa.float64()),
                **{name: [q.extra.get(name) for q in queries] for name in extra_names},
            }
        ),
        folder / "queries.parquet",
    )
    doc = json_doc or {
        "format": "triage-truth",
        "version": 1,
        "triage": "0.1.0",
        "created_at": "2026-12-01T00:00:00Z",
        "metric": metric,
        "order": "score (distance) ascending, then chunk_id ascending"
        if metric == "l2"
        else "score descending, then chunk_id ascending",
        "k": k if isinstance(k, list) else [k],
        "tolerance": tolerance,
        "engine": "local",
        "kernel": "numpy",
        "corpus": {
            "path": "corpus.parquet",
            "rows": corpus_rows,
            "snapshot": snapshot,
            "digest": digest,
            "shards": [{"name": "corpus.parquet", "rows": corpus_rows, "digest": digest}],
        },
        "queries": {
            "path": "queries.parquet",
            "rows": len(queries),
            "digest": queries_digest,
            "vectors_digest": vectors_digest,
        },
    }
    (folder / "truth.json").write_text(json.dumps(doc))
    return folder


def write_run(path: Path, rows: list[dict[str, object]], meta: dict[str, str]) -> Path:
    """A run one row per query (query_id, retrieved, scores, plan, n_eligible, n_returned, …)."""
    table = pa.Table.from_pylist(rows)
    table = table.replace_schema_metadata({key.encode(): value.encode() for key, value in meta.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def scores_for(n: int, rng: np.random.Generator) -> list[float]:
    """n distinct cosine scores, descending, well apart (no accidental ties)."""
    return sorted((0.95 - 0.01 * i - float(rng.uniform(0, 0.001)) for i in range(n)), reverse=True)


@dataclass
class Tenant:
    name: str
    docs: int  # documents the tenant holds
    plan_b: str
    recall_a: float  # each query of the tenant found this share of its truth
    recall_b: float
    selectivity_of_filter: float | None = None  # the filter's own (a doc_type within the tenant), else docs


@dataclass
class Case:
    """The generated multi-tenant case: its files and, per query, what was planted."""

    root: Path
    truth: Path
    run_a: Path
    run_b: Path
    queries: list[Query]
    planted: dict[str, tuple[float, float]]  # query id -> (recall A, recall B) as generated
    tenant_of: dict[str, str | None]
    misestimated: list[str]  # queries whose run n_eligible differs from the exact count
    corpus_rows: int = 300_000

    def runs(self) -> tuple[Path, Path]:
        return self.run_a, self.run_b


def tenants_of_case(rng: np.random.Generator) -> list[Tenant]:
    """Twenty ordinary tenants (ann, recall 0.55 to 1.0), and the three planted ones."""
    out = [
        Tenant(
            f"t{i:02d}",
            30_000,
            "ann",
            float(rng.choice([0.9, 1.0])),
            float(rng.choice(np.arange(5, 11) / 10)),
        )
        for i in range(20)
    ]
    out += [
        Tenant("sliver", 20_000, "postfilter", 1.0, 0.0, selectivity_of_filter=240 / 300_000),
        Tenant("minnow", 300, "scan", 1.0, 1.0),
        Tenant("pike", 1_500, "ann", 0.6, 0.3),
        Tenant("perch", 1_200, "ann", 0.6, 0.3),
    ]
    return out


def make_case(root: Path, seed: int = 7, per_tenant: int = 6, unfiltered: int = 12) -> Case:
    """The case's truth folder (k = 10) and two runs (A: ann everywhere; B: each tenant's plan),
    with run metadata naming the corpus snapshot, metric and queries digest the truth records."""
    rng = np.random.default_rng(seed)
    corpus_rows = 300_000
    queries: list[Query] = []
    planted: dict[str, tuple[float, float]] = {}
    plans: dict[str, tuple[str, str]] = {}
    tenant_of: dict[str, str | None] = {}
    for t in tenants_of_case(rng):
        for j in range(per_tenant):
            qid = f"{t.name}-q{j}"
            if t.selectivity_of_filter is not None:
                n_elig = round(t.selectivity_of_filter * corpus_rows)
                where = f"tenant = '{t.name}' AND doc_type = 'memo'"
            else:
                n_elig = t.docs
                where = f"tenant = '{t.name}'"
            ids = [f"{t.name}-d{i}" for i in rng.choice(t.docs, size=min(K, n_elig), replace=False)]
            queries.append(
                Query(qid, n_elig, list(zip(ids, scores_for(len(ids), rng), strict=True)), t.name, where)
            )
            planted[qid] = (t.recall_a, t.recall_b)
            plans[qid] = ("ann", t.plan_b)
            tenant_of[qid] = t.name
    for j in range(unfiltered):
        qid = f"open-q{j}"
        ids = [f"t{int(rng.integers(20)):02d}-d{int(rng.integers(30_000))}x{i}" for i in range(K)]
        queries.append(Query(qid, corpus_rows, list(zip(ids, scores_for(K, rng), strict=True))))
        planted[qid] = (1.0, 0.9)
        plans[qid] = ("ann", "ann")
        tenant_of[qid] = None
    truth = write_truth(root / "truth", queries, K, corpus_rows)
    misestimated = [q.query_id for q in queries if q.tenant == "pike"][:3]
    rows_a, rows_b = [], []
    for q in queries:
        for side, rows in (("a", rows_a), ("b", rows_b)):
            recall = planted[q.query_id][0 if side == "a" else 1]
            plan = plans[q.query_id][0 if side == "a" else 1]
            rows.append(_answer(q, recall, plan, corpus_rows, q.query_id in misestimated and side == "b"))
    meta = {"k": str(K), "corpus_snapshot": "corpus-v1", "metric": "cosine", "queries_digest": "v1"}
    run_a = write_run(root / "a.parquet", rows_a, {**meta, "name": "ann"})
    run_b = write_run(root / "b.parquet", rows_b, {**meta, "name": "router"})
    return Case(root, truth, run_a, run_b, queries, planted, tenant_of, misestimated, corpus_rows)


def _answer(q: Query, recall: float, plan: str, corpus_rows: int, misestimate: bool) -> dict[str, object]:
    """A run's row for `q`: round(recall × min(K, n_eligible)) of its true neighbours, then other
    eligible ids; a postfilter plan below 1% selectivity returns about K × s ids (a short list)."""
    m = min(K, q.n_eligible)
    found = [c for c, _ in q.neighbours[: round(recall * m)]]
    if plan == "postfilter" and q.n_eligible / corpus_rows < 0.01:
        ids = found[: max(0, round(K * q.n_eligible / corpus_rows))]
    else:
        ids = found + [f"{q.query_id}-other{i}" for i in range(K - len(found))]
    n_elig = q.n_eligible * 3 if misestimate else q.n_eligible
    return {
        "query_id": q.query_id,
        "retrieved": ids,
        "scores": [0.9 - 0.01 * i for i in range(len(ids))],
        "plan": plan,
        "n_eligible": n_elig,
        "n_returned": len(ids),
        "tenant": q.tenant,
    }
