"""Write the exact-truth benchmark's corpus and queries (tests/truth_data.py's generator, at size).

    python tests/benchmarks/make_truth_bench.py --out DIR --rows 1000000 --dim 768 --shards 10 --queries 2000

writes ``DIR/corpus/shard-000.parquet`` … (``--shards`` shards of equal rows), ``DIR/queries.parquet``
and ``DIR/bench.json`` (the arguments, the band counts, the bytes on disk). The corpus: ``chunk_id``,
``embedding`` fixed_size_list<float32, dim>, ``tenant`` (skewed, with 3-row and 1-row tenants),
``doc_type``, ``year``, ``region`` (nullable); clustered vectors with planted exact ties and
near-duplicates. Row groups of 16,384 rows (48 MiB at 768 dimensions).

Compression: the embedding column is written uncompressed and without dictionary (float32 embeddings
do not compress: zstd saves a few per cent of the bytes and costs a decode pass over every one of
them on every read); the metadata columns are zstd. 1M x 768 is 3.1 GB on disk; 10.2M x 768 is 31 GB.

Shards are written ``--jobs`` at a time (one process each, bounded memory: 65,536 rows in memory at
a time per process). ``--change-shard I --variant V`` rewrites shard I alone with other vectors
and metadata (same rows and chunk_ids): a changed shard, for the incremental scenario.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import truth_data as td  # noqa: E402


def layout(args: argparse.Namespace) -> td.Layout:
    return td.Layout(
        rows=args.rows,
        dim=args.dim,
        shards=args.shards,
        seed=args.seed,
        row_group_size=16_384,
        compression="none",
        clusters=256,
        anchors=24,
        rows_per_batch=65_536,
    )


def _one(lay: td.Layout, folder: Path, index: int, variant: int) -> int:
    centres, anchors = td._basis(lay)
    corpus = td.Corpus(folder, lay, [], centres, anchors)
    final = folder / f"shard-{index:03d}.parquet"
    tmp = final.with_suffix(".parquet.part")
    td.write_shard(lay, index, corpus, tmp, variant)
    os.replace(tmp, final)  # a shard is there whole or not at all
    return index


def write(out: Path, args: argparse.Namespace) -> dict:
    lay = layout(args)
    folder = out / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for i in pool.map(
            _one, [lay] * lay.shards, [folder] * lay.shards, range(lay.shards), [0] * lay.shards
        ):
            print(f"  shard {i + 1}/{lay.shards} written ({time.perf_counter() - t:.0f} s)", flush=True)
    corpus = td.open_corpus(folder, lay)
    qs = td.make_queries(corpus, out / "queries.parquet", args.queries, args.k, seed=args.seed)
    info = {
        "rows": args.rows,
        "dim": args.dim,
        "shards": args.shards,
        "queries": args.queries,
        "k": args.k,
        "seed": args.seed,
        "bands": qs.bands,
        "distinct_filters": len({r["filter"] for r in qs.rows if r["filter"] and r["filter"].strip()}),
        "corpus_bytes": sum(p.stat().st_size for p in corpus.shards),
        "seconds": round(time.perf_counter() - t, 1),
    }
    (out / "bench.json").write_text(json.dumps(info, indent=1))
    return info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--shards", type=int, default=10)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--k", type=int, default=10, help="the k the bands' 'fewer than k' is counted for")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--change-shard", type=int, help="rewrite this shard alone (with --variant)")
    ap.add_argument("--variant", type=int, default=1)
    args = ap.parse_args()
    if args.change_shard is not None:
        _one(layout(args), args.out / "corpus", args.change_shard, args.variant)
        return 0
    info = write(args.out, args)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
