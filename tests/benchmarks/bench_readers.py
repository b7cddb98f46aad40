"""Benchmark the text readers: ours beside the floor (Arrow's parser alone).

Writes, into ``--data`` (default ``/tmp/triage-bench-readers``), a TREC run of ``--queries`` x
``--depth`` lines (default 20,000 x 100 = 2,000,000 lines), the same run gzipped, and the same run
as JSON Lines (one object per query: ``query_id``, ``retrieved``, ``scores``). Then times, in this
process, each ``--repeat`` times, round-robin (median and best wall seconds, ``time.perf_counter``):

- TREC: ``trec.read_trec_run`` (ours, plain and ``.gz``); the floor ``pyarrow.csv.read_csv`` of
  the same file (space separated, column names given, types inferred).
- JSON Lines: ``jsonl.read_jsonl``; the floor ``pyarrow.json.read_json``.

It checks that both TREC readings and the JSON Lines one give the run as written, and exits 1 when
ours (plain TREC, median) takes more than ``--max-ratio`` (default 2.0) times the floor's median.
Example::

    PYTHONPATH=$PWD python tests/benchmarks/bench_readers.py --repeat 5
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.csv as csv
import pyarrow.json as pj

from triage.core.inputs.jsonl import read_jsonl
from triage.core.inputs.readers import Parsed
from triage.core.inputs.trec import read_trec_run


def write_data(folder: Path, queries: int, depth: int) -> tuple[Path, Path, Path]:
    """The TREC run, its gzipped copy and the JSON Lines run (rebuilt when the sizes differ)."""
    folder.mkdir(parents=True, exist_ok=True)
    trec, gz, jsonl = folder / "run.trec", folder / "run.trec.gz", folder / "run.jsonl"
    stamp = folder / "sizes.json"
    if stamp.exists() and json.loads(stamp.read_text()) == [queries, depth] and gz.exists():
        return trec, gz, jsonl
    rng = np.random.default_rng(12)
    docs = rng.integers(0, 10_000_000, size=(queries, depth))
    scores = np.round(np.sort(rng.random((queries, depth)), axis=1)[:, ::-1] * 100, 4)
    with trec.open("w") as t, jsonl.open("w") as j:
        for q in range(queries):
            ids = [f"d{d}" for d in docs[q]]
            sc = scores[q].tolist()
            t.write(
                "".join(
                    f"q{q} Q0 {i} {r} {s!r} bm25\n" for r, (i, s) in enumerate(zip(ids, sc, strict=True), 1)
                )
            )
            j.write(json.dumps({"query_id": f"q{q}", "retrieved": ids, "scores": sc}) + "\n")
    gz.write_bytes(gzip.compress(trec.read_bytes(), compresslevel=6))
    stamp.write_text(json.dumps([queries, depth]))
    return trec, gz, jsonl


def timed(
    cases: list[tuple[str, Callable[[], object]]], repeat: int
) -> dict[str, tuple[float, float, object]]:
    """(median, best) wall seconds and the last result of each case, run round-robin `repeat`
    times (so a slower minute of a shared machine falls on every case alike)."""
    times: dict[str, list[float]] = {label: [] for label, _ in cases}
    out: dict[str, object] = {}
    for _ in range(repeat):
        for label, fn in cases:
            t = time.perf_counter()
            out[label] = fn()
            times[label].append(time.perf_counter() - t)
    return {k: (statistics.median(v), min(v), out[k]) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("/tmp/triage-bench-readers"))
    ap.add_argument("--queries", type=int, default=20_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-ratio", type=float, default=2.0)
    args = ap.parse_args(argv)
    trec, gz, jsonl = write_data(args.data, args.queries, args.depth)
    lines = args.queries * args.depth
    mib = {p: p.stat().st_size / 2**20 for p in (trec, gz, jsonl)}
    print(f"{lines:,} TREC lines ({mib[trec]:.0f} MiB, gzipped {mib[gz]:.0f} MiB);", end=" ")
    print(f"JSON Lines {args.queries:,} x {args.depth} ({mib[jsonl]:.0f} MiB); repeat {args.repeat}")
    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    cases: list[tuple[str, Callable[[], object]]] = [
        ("trec  ours", lambda: read_trec_run(trec)),
        ("trec  ours .gz", lambda: read_trec_run(gz)),
        (
            "trec  floor pyarrow.csv.read_csv",
            lambda: csv.read_csv(
                trec,
                read_options=csv.ReadOptions(column_names=names),
                parse_options=csv.ParseOptions(delimiter=" "),
            ),
        ),
        ("jsonl ours", lambda: read_jsonl(jsonl)),
        ("jsonl floor pyarrow.json.read_json", lambda: pj.read_json(jsonl)),
    ]
    results = timed(cases, args.repeat)
    print(f"{'':36} {'median s':>9} {'best s':>9}")
    for label, (med, best, _) in results.items():
        print(f"{label:36} {med:9.3f} {best:9.3f}")
    outs = {k: v[2] for k, v in results.items() if "ours" in k}
    assert all(isinstance(p, Parsed) for p in outs.values())
    plain, gz_out, js = outs["trec  ours"], outs["trec  ours .gz"], outs["jsonl ours"]
    assert isinstance(plain, Parsed) and isinstance(gz_out, Parsed) and isinstance(js, Parsed)
    ok = gz_out.table.equals(plain.table) and js.table.equals(plain.table)
    print(f"trec, trec .gz and jsonl give the same table: {ok}")
    ratio = results["trec  ours"][0] / results["trec  floor pyarrow.csv.read_csv"][0]
    print(f"trec ours / floor (medians): {ratio:.2f}x (target <= {args.max_ratio}x)")
    jratio = results["jsonl ours"][0] / results["jsonl floor pyarrow.json.read_json"][0]
    print(f"jsonl ours / floor (medians): {jratio:.2f}x")
    ok &= ratio <= args.max_ratio
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
