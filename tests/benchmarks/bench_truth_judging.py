"""Benchmark: judging against a truth folder costs the report no more than a labels file of its size.

The generated on-call case (tests/truth_folders.py `make_case`) at 2,000 queries (25 tenants of 80,
and 80 unfiltered), k = 10. The same report is computed (`open_results`, then `report_of`) twice:
with the truth folder as the labels, and with its labels.parquet and queries.parquet as a plain
labels file and a queries file. Best of ``--repeat`` each; target: truth ≤ 1.1 × plain (exit 1 if
missed).

    PYTHONPATH=. python tests/benchmarks/bench_truth_judging.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from truth_folders import make_case  # noqa: E402

from triage.core.inputs.manifest import from_args  # noqa: E402
from triage.report.build import report_of  # noqa: E402
from triage.workspace.results import open_results  # noqa: E402

TARGET = 1.1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp())
    try:
        case = make_case(root, per_tenant=80, unfiltered=80)
        plain, queries = root / "plain.parquet", root / "queries.parquet"
        pq.write_table(
            pq.read_table(case.truth / "labels.parquet").select(["query_id", "chunk_id", "relevance"]), plain
        )
        shutil.copy(case.truth / "queries.parquet", queries)

        def best(labels: Path, named: Path | None) -> float:
            out = float("inf")
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                report_of(open_results(from_args(case.run_a, case.run_b, labels, queries=named)))
                out = min(out, time.perf_counter() - t0)
            return out

        best(case.truth, None)  # warm: imports, the page cache
        as_labels, as_truth = best(plain, queries), best(case.truth, None)
    finally:
        shutil.rmtree(root)
    ratio = as_truth / as_labels
    print(f"{len(case.queries)} queries, k = 10")
    print(f"labels file + queries file   {as_labels * 1000:8.1f} ms")
    print(
        f"truth folder                 {as_truth * 1000:8.1f} ms   {ratio:.2f}x  target ≤ {TARGET}x  "
        f"{'ok' if ratio <= TARGET else 'MISSED'}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
