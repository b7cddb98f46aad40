"""Benchmark the truth cache and the engines: what a rerun, a changed shard and a Ray run cost beside
a full local run, and the kernel's throughput per core (the figures docs/truth.md "Past one
machine, on Ray" prices a cluster run from).

On a generated corpus of ``--shards`` Parquet shards of ``--rows`` rows of dimension ``--dim``
(float32, fixed-size lists; written once into ``--data``, default ``/tmp/triage-bench-truth``) and
``--queries`` queries in the design's mix (60% unfiltered; the rest across filters admitting about
30%, 5%, 0.5% and 0.05% of the rows, and one admitting none), prints:

- full: a run with an empty truth cache (every shard scanned, its partials kept);
- cached: the same run again (every partial read from the cache, no shard read);
- one shard changed: one shard rewritten with new vectors, then a run (that shard scanned alone),
  and whether its truth is byte for byte a full recompute's;
- per core: one shard scanned in a child process with one BLAS thread, every query unfiltered (the
  best of ``--repeat``):
  rows/s and GFLOP/s (2 × queries × rows × dim floating-point operations over the seconds),
  beside the floor: the same float32 matrix products alone;
- ray (``--ray``): the full run with ``--engine ray`` on a local cluster started by the run (all
  the machine's CPUs), and whether its labels and queries are byte for byte the local engine's.

    python tests/benchmarks/bench_truth_cache.py --shards 10 --rows 100000 --dim 768 --queries 2000 --ray
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TENANTS = np.array(["t30", "t5", "t05", "t005", "rest"])
SHARES = [0.30, 0.05, 0.005, 0.0005, 1 - 0.30 - 0.05 - 0.005 - 0.0005]
FILTERS = ["tenant = 't30'", "tenant = 't5'", "tenant = 't05'", "tenant = 't005'", "tenant = 'nobody'"]


def write_shard(path: Path, seed: int, first: int, rows: int, dim: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, dim), dtype=np.float32)
    table = pa.table(
        {
            "chunk_id": pa.array([f"c{i:09d}" for i in range(first, first + rows)]),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), dim),
            "tenant": rng.choice(TENANTS, rows, p=SHARES),
        }
    )
    pq.write_table(table, path, row_group_size=8192, compression="none")


def write_data(data: Path, shards: int, rows: int, dim: int, queries: int) -> tuple[Path, Path, Path]:
    corpus, mix, flat = data / "corpus", data / "queries.parquet", data / "unfiltered.parquet"
    stamp = data / "made.json"
    want = {"shards": shards, "rows": rows, "dim": dim, "queries": queries}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return corpus, mix, flat
    shutil.rmtree(data, ignore_errors=True)
    corpus.mkdir(parents=True)
    for s in range(shards):
        write_shard(corpus / f"part-{s:03d}.parquet", s, s * rows, rows, dim)
    rng = np.random.default_rng(99)
    q = rng.standard_normal((queries, dim), dtype=np.float32)
    filters = [None if i % 10 < 6 else FILTERS[i % 5] for i in range(queries)]
    ids = [f"q{i:06d}" for i in range(queries)]
    emb = pa.FixedSizeListArray.from_arrays(pa.array(q.ravel()), dim)
    pq.write_table(
        pa.table({"query_id": ids, "embedding": emb, "filter": pa.array(filters, pa.string())}), mix
    )
    pq.write_table(pa.table({"query_id": ids, "embedding": emb}), flat)
    stamp.write_text(json.dumps(want))
    return corpus, mix, flat


def timed(
    corpus: Path, queries: Path, out: Path, cache: Path, engine: str = "local"
) -> tuple[float, int, int]:
    """A `triage truth` run in a child process: its seconds (the run's own, as it reports them) and
    the shards it computed and read from the cache."""
    code = (
        "import json, sys; from triage.workspace.truth import compute_truth\n"
        f"r = compute_truth({str(corpus)!r}, {str(queries)!r}, 10, {str(out)!r}, engine={engine!r},"
        " force=True)\n"
        "print(json.dumps([r.seconds, r.computed, r.cached]))\n"
    )
    env = {**os.environ, "TRIAGE_CACHE": str(cache), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    seconds, computed, cached = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds, computed, cached


PER_CORE = """
import sys, time
from pathlib import Path
from triage.core.truth.kernel import Job
from triage.core.truth.queries import read_queries
from triage.core.truth.shards import corpus_shards, scan_shard
from triage.core.truth import predicate
shard = corpus_shards(Path(sys.argv[1]))[0]
qs = read_queries(Path(sys.argv[2]), True)
import numpy as np
job = Job(qs.vectors, np.zeros(len(qs.vectors), np.int64), 1, "cosine", 10, 1e-6)
t = time.perf_counter()
scan_shard(shard, job, [predicate.parse_filter(None, "", "")])
seconds = time.perf_counter() - t
x = np.random.default_rng(0).standard_normal((shard.rows, qs.vectors.shape[1]), dtype=np.float32)
t = time.perf_counter()
for first in range(0, shard.rows, 8192):  # the floor: the float32 products alone, as blocks
    qs.vectors @ x[first : first + 8192].T
floor = time.perf_counter() - t
print(seconds, floor, shard.rows, qs.vectors.shape[0], qs.vectors.shape[1])
"""


def per_core(corpus: Path, flat: Path, repeat: int) -> tuple[float, float, float]:
    """Rows/s and GFLOP/s of the kernel on one core, and the products' GFLOP/s: the best of `repeat`
    child processes (the machine is shared: the best is the least disturbed)."""
    one = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env = {**os.environ, **one, "PYTHONPATH": str(REPO)}
    runs = []
    for _ in range(repeat):
        argv = [sys.executable, "-c", PER_CORE, str(corpus), str(flat)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        runs.append([float(v) for v in done.stdout.split()])
    seconds, floor = min(r[0] for r in runs), min(r[1] for r in runs)
    rows, queries, dim = runs[0][2:]
    flop = 2 * queries * rows * dim
    return rows / seconds, flop / seconds / 1e9, flop / floor / 1e9


def same(a: Path, b: Path) -> bool:
    return all((a / n).read_bytes() == (b / n).read_bytes() for n in ("labels.parquet", "queries.parquet"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("/tmp/triage-bench-truth"))
    ap.add_argument("--shards", type=int, default=10)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--ray", action="store_true", help="also run --engine ray on a local cluster")
    ap.add_argument("--repeat", type=int, default=3, help="per-core runs, the best kept")
    args = ap.parse_args()
    corpus, mix, flat = write_data(args.data, args.shards, args.rows, args.dim, args.queries)
    rows = args.shards * args.rows
    print(f"corpus: {args.shards} shards x {args.rows:,} rows x {args.dim} float32; {args.queries:,} queries")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        full, computed, _ = timed(corpus, mix, work / "full", work / "cache")
        print(f"full (empty cache):      {full:8.2f} s  {computed} shards scanned  {rows / full:,.0f} rows/s")
        again, computed, cached = timed(corpus, mix, work / "again", work / "cache")
        print(
            f"cached rerun:            {again:8.2f} s  {computed} scanned, {cached} from the cache  "
            f"{again / full:.3f}x"
        )
        assert same(work / "full", work / "again")
        write_shard(corpus / "part-000.parquet", 10_000, 0, args.rows, args.dim)  # new vectors, same ids
        one, computed, cached = timed(corpus, mix, work / "one", work / "cache")
        recomputed, _, _ = timed(corpus, mix, work / "recomputed", work / "cache-fresh")
        print(
            f"one shard changed:       {one:8.2f} s  {computed} scanned, {cached} from the cache  "
            f"{one / full:.3f}x; "
            f"same truth as a full recompute ({recomputed:.2f} s): {same(work / 'one', work / 'recomputed')}"
        )
        write_shard(corpus / "part-000.parquet", 0, 0, args.rows, args.dim)  # as it was
        rate, gflops, floor = per_core(corpus, flat, args.repeat)
        print(
            f"per core (one shard, {args.queries:,} unfiltered queries, 1 BLAS thread): {rate:,.0f} rows/s, "
            f"{gflops:.1f} GFLOP/s (the float32 products alone: {floor:.1f} GFLOP/s)"
        )
        if args.ray:
            ray, computed, _ = timed(corpus, mix, work / "ray", work / "cache-ray", engine="ray")
            print(
                f"ray, local cluster:      {ray:8.2f} s  {computed} shards scanned  {ray / full:.2f}x local; "
                f"same bytes as local: {same(work / 'ray', work / 'full')}"
            )


if __name__ == "__main__":
    main()
