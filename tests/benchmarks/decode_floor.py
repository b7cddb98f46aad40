"""The decode floor of the report benchmarks: read what `triage report` reads, and nothing else.

For an evaluation folder (``triage.toml`` + Parquet files), decode into Arrow, with pyarrow's
own threads and the two runs in two threads as triage does: every column of each run that the
data contract knows, the labels, the queries if named, and the corpus's ``chunk_id`` (and
``doc_id`` when the manifest has a ``[holdout]``). No checks, no metrics: no program that
reports on these files can do less. Prints the seconds on stderr, nothing on stdout.

Usage::

    python tests/benchmarks/decode_floor.py /tmp/triage-bench
"""

from __future__ import annotations

import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq

RUN_COLUMNS = {"query_id", "retrieved", "scores", "plan", "n_eligible", "n_returned", "latency_ms"}
RUN_COLUMNS |= {"tenant", "filter", "selectivity", "answer_correct"}


def main(folder: str) -> None:
    t0 = time.perf_counter()
    root = Path(folder)
    manifest = root / "triage.toml" if root.is_dir() else root
    spec = tomllib.loads(manifest.read_text())
    here = manifest.parent

    def run(path: Path) -> int:
        names = set(pq.read_schema(path).names) & RUN_COLUMNS
        return pq.read_table(path, columns=sorted(names)).num_rows

    with ThreadPoolExecutor(max_workers=2) as pool:
        arms = [pool.submit(run, here / arm["path"]) for arm in spec["arms"].values()]
        rows = pq.read_table(here / spec["labels"]["path"]).num_rows
        if "queries" in spec:
            rows += pq.read_table(here / spec["queries"]["path"]).num_rows
        if "corpus" in spec:
            path = here / spec["corpus"]["path"]
            wanted = {"chunk_id", "doc_id"} if "holdout" in spec else {"chunk_id"}
            rows += pq.read_table(path, columns=sorted(wanted & set(pq.read_schema(path).names))).num_rows
        rows += sum(f.result() for f in arms)
    print(f"decoded {rows:,} rows in {time.perf_counter() - t0:.3f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
