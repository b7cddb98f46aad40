"""A generated evaluation, and its files as trec_eval reads them (pytrec_eval's qrels and run
dicts), for the tests that check triage's numbers against trec_eval."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow.parquet as pq

from triage.core.evaluation import Evaluation

from conftest import manifest, write_parquet


def generated(folder: Path, n: int = 6000, seed: int = 11) -> Path:
    rng = random.Random(seed)
    space = [f"doc{d}#{c}" for d in range(3000) for c in range(rng.randint(1, 6))]
    labels, runs = [], {"a": [], "b": []}
    for i in range(n):
        q = f"q{i:05d}"
        gold = rng.sample(space, rng.choice([1, 1, 1, 2, 2, 3, 4, 7, 12]))
        if rng.random() < 0.03:  # judged, but nothing relevant: unlabelled
            labels.append({"query_id": q, "chunk_id": gold[0], "relevance": 0})
        else:
            labels += [{"query_id": q, "chunk_id": c, "relevance": rng.choice([1, 1, 1, 2, 3])} for c in gold]
            if rng.random() < 0.1:
                labels.append({"query_id": q, "chunk_id": rng.choice(space), "relevance": 0})
        for arm, p_gold in (("a", 0.6), ("b", 0.75)):
            if arm == "b" and rng.random() < 0.01:
                continue  # B never answered this query
            depth = rng.choice([3, 8, 10, 15, 20, 20, 20])
            ranked = rng.sample(space, depth)
            for g in gold:
                if rng.random() < p_gold and g not in ranked:
                    ranked[rng.randrange(depth)] = g
            runs[arm].append(
                {"query_id": q, "retrieved": ranked, "scores": [float(depth - r) for r in range(depth)]}
            )
    for arm, rows in runs.items():
        write_parquet(folder / f"{arm}.parquet", rows, {"k": "10"})
    write_parquet(folder / "labels.parquet", labels)
    return manifest(folder, "a.parquet", "b.parquet", "labels.parquet", k=None)


def trec_inputs(ev: Evaluation, run_path: Path) -> tuple[dict, dict]:
    labels = pq.read_table(ev.inputs.frozen.path).to_pylist()
    qrels: dict[str, dict[str, int]] = {}
    for r in labels:
        qrels.setdefault(str(r["query_id"]), {})[str(r["chunk_id"])] = int(r.get("relevance", 1) or 0)
    run: dict[str, list[str]] = {}
    for r in pq.read_table(run_path, columns=["query_id", "retrieved"]).to_pylist():
        run[r["query_id"]] = r["retrieved"]
    return qrels, run


def as_run(lists: dict[str, list[str]], k: int | None = None) -> dict[str, dict[str, float]]:
    """Scores strictly descending by stored rank, so trec_eval keeps the stored order."""
    out = {}
    for q, ids in lists.items():
        ids = ids[:k] if k else ids
        out[q] = {c: float(len(ids) - i) for i, c in enumerate(ids)}
    return out
