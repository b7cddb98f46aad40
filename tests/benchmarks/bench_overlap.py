"""Time the lexical overlap (core/checks/overlap.py) at 100,000 queries: each with a ~12-word text and one
or two gold chunks of ~150 words in a 200,000-chunk corpus. Prints the seconds of `overlap`.

    PYTHONPATH=. python tests/benchmarks/bench_overlap.py [--queries N] [--data DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.checks.overlap import overlap
from triage.core.evaluation import evaluate
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.load import load_inputs
from triage.core.inputs.manifest import from_manifest


def build(folder: Path, n: int) -> Path:
    rng = np.random.default_rng(1)
    vocab = np.array([f"w{i}" for i in range(20000)] + ["the", "of", "and", "policies", "weeks"])
    chunks = 2 * n

    def texts(count: int, width: int) -> pa.Array:
        picks = vocab[rng.integers(0, len(vocab), (count, width))]
        return pa.array([" ".join(row) + "." for row in picks])

    ids = pa.array([f"c{i}" for i in range(chunks)])
    pq.write_table(
        pa.table({"chunk_id": ids, "header": texts(chunks, 6), "text": texts(chunks, 150)}),
        folder / "chunks.parquet",
    )
    qids = pa.array([f"q{i}" for i in range(n)])
    pq.write_table(pa.table({"query_id": qids, "text": texts(n, 12)}), folder / "queries.parquet")
    extra = rng.random(n) < 0.3
    lq = np.concatenate([np.arange(n), np.flatnonzero(extra)])
    lc = rng.integers(0, chunks, len(lq))
    pq.write_table(
        pa.table({"query_id": pa.array([f"q{i}" for i in lq]), "chunk_id": pa.array([f"c{i}" for i in lc])}),
        folder / "labels.parquet",
    )
    lists = pa.array(
        [[f"c{j}" for j in rng.integers(0, chunks, 10)] for _ in range(n)], pa.list_(pa.string())
    )
    pq.write_table(pa.table({"query_id": qids, "retrieved": lists}), folder / "run.parquet")
    (folder / "triage.toml").write_text(
        'k = 5\n[labels]\npath = "labels.parquet"\n[corpus]\npath = "chunks.parquet"\n[queries]\n'
        'path = "queries.parquet"\n[arms.a]\nname = "a"\npath = "run.parquet"\n[arms.b]\nname = "b"\n'
        'path = "run.parquet"\n'
    )
    return folder / "triage.toml"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=Path("/tmp/triage-bench-overlap"))
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    path = (
        args.data / "triage.toml" if (args.data / "triage.toml").exists() else build(args.data, args.queries)
    )
    inputs = load_inputs(from_manifest(path))
    ev = evaluate(inputs, inputs.frozen.table)
    corpus = open_corpus(from_manifest(path).corpus)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        o = overlap(ev, corpus)
        best = min(best, time.perf_counter() - t0)
    print(f"overlap of {ev.n} queries: best {best:.2f} s; {int(o.known.sum())} with an overlap")


if __name__ == "__main__":
    main()
