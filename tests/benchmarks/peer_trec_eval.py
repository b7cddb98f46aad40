"""The peer for the `triage report` benchmark: the same means computed with pytrec_eval.

Reads an evaluation folder (``triage.toml`` + Parquet files, docs/data.md "The data contract") the way
a user of trec_eval would: labels become a qrels dict ``{query: {chunk: relevance}}``,
each arm becomes a run dict ``{query: {chunk: score}}`` holding the whole stored depth.

trec_eval orders a run by score (ties broken by doc id), not by the stored order, so the
score given to trec_eval is ``depth - rank`` (rank 0-based): strictly descending in the
stored order, which it therefore reproduces exactly. The stored scores are not used.

Per query, at the cut-off k (docs/measures.md "The numbers"):

==========  ==================================================================
hit_rate    trec_eval ``success_k`` on the full run
mrr         ``recip_rank`` on the run truncated to its first k ids (= mrr@k)
ndcg        ``ndcg_cut_k`` on the full run (linear gain = relevance, log2 discount)
recall      ``num_rel_ret`` on the truncated run / min(k, ``num_rel``)
==========  ==================================================================

Scored queries are those with at least one label of relevance >= 1. A scored query that
an arm lacks counts as an empty retrieval (0 on every metric), as docs/measures.md "The numbers" says. The
script prints one JSON object on stdout, in the shape ``triage report --format json``
uses::

    {"k": 10, "arms": {"a": {"n": ..., "hit_rate": ..., "recall": ..., "mrr": ..., "ndcg": ...},
                       "b": {...}}}

and a timing breakdown (seconds) on stderr.

Usage::

    python tests/benchmarks/peer_trec_eval.py /tmp/triage-bench     # folder or triage.toml
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path

import pyarrow.parquet as pq
import pytrec_eval


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query_id: {chunk_id: relevance}}``; relevance defaults to 1 if the column is absent."""
    cols = ["query_id", "chunk_id"]
    schema_names = pq.read_schema(path).names
    has_rel = "relevance" in schema_names
    table = pq.read_table(path, columns=cols + (["relevance"] if has_rel else []))
    qids = table.column("query_id").to_pylist()
    cids = table.column("chunk_id").to_pylist()
    rels = table.column("relevance").to_pylist() if has_rel else [1] * len(qids)
    qrels: dict[str, dict[str, int]] = {}
    for q, c, r in zip(qids, cids, rels, strict=True):
        qrels.setdefault(q, {})[c] = int(r if r is not None else 1)
    return qrels


def load_run(path: Path, k: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Return (full run, run truncated to the first k ids), scores = depth - rank."""
    table = pq.read_table(path, columns=["query_id", "retrieved"])
    qids = table.column("query_id").to_pylist()
    lists = table.column("retrieved").to_pylist()
    del table
    full: dict[str, dict[str, float]] = {}
    top: dict[str, dict[str, float]] = {}
    for q, ids in zip(qids, lists, strict=True):
        ids = ids or []
        n = len(ids)
        scores = {doc: float(n - rank) for rank, doc in enumerate(ids)}
        full[q] = scores
        top[q] = {doc: float(n - rank) for rank, doc in enumerate(ids[:k])}
    return full, top


def evaluate_arm(qrels: dict, run_path: Path, k: int) -> dict[str, float]:
    """Means of hit_rate, recall, mrr, ndcg over the scored queries for one arm."""
    t0 = time.perf_counter()
    full, top = load_run(run_path, k)
    t1 = time.perf_counter()
    res_full = pytrec_eval.RelevanceEvaluator(qrels, {f"success.{k}", f"ndcg_cut.{k}"}).evaluate(full)
    del full
    res_top = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "num_rel_ret", "num_rel"}).evaluate(top)
    t2 = time.perf_counter()
    _log(f"  {run_path.name}: build run dicts {t1 - t0:.2f} s, pytrec_eval {t2 - t1:.2f} s")

    scored = [q for q, docs in qrels.items() if any(r >= 1 for r in docs.values())]
    sums = {"hit_rate": 0.0, "recall": 0.0, "mrr": 0.0, "ndcg": 0.0}
    for q in scored:
        f = res_full.get(q)
        t = res_top.get(q)
        if f is None or t is None:  # query absent from this arm: an empty retrieval
            continue
        num_rel = sum(1 for r in qrels[q].values() if r >= 1)
        sums["hit_rate"] += f[f"success_{k}"]
        sums["ndcg"] += f[f"ndcg_cut_{k}"]
        sums["mrr"] += t["recip_rank"]
        sums["recall"] += t["num_rel_ret"] / min(k, num_rel)
    n = len(scored)
    return {"n": n, **{m: (s / n if n else 0.0) for m, s in sums.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="pytrec_eval peer of `triage report --format json`")
    ap.add_argument("path", help="evaluation folder holding triage.toml, or the manifest itself")
    ap.add_argument(
        "--k",
        type=int,
        default=None,
        help="cut-off (default: manifest k, else the first arm's Parquet metadata k)",
    )
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    manifest_path = Path(args.path)
    if manifest_path.is_dir():
        manifest_path = manifest_path / "triage.toml"
    base = manifest_path.parent
    manifest = tomllib.loads(manifest_path.read_text())
    arms = manifest["arms"]

    k = args.k or manifest.get("k")
    if k is None:
        first = next(iter(arms.values()))
        meta = pq.read_schema(base / first["path"]).metadata or {}
        k = int(meta[b"k"])
    k = int(k)

    qrels = load_qrels(base / manifest["labels"]["path"])
    _log(f"peer: labels {time.perf_counter() - t_start:.2f} s")
    out = {"k": k, "arms": {}}
    for key, arm in arms.items():
        out["arms"][key] = evaluate_arm(qrels, base / arm["path"], k)
    _log(f"peer: total {time.perf_counter() - t_start:.2f} s")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
