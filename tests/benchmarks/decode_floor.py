"""The decode floor of the report benchmarks: read what `triage report` reads, and nothing else.

For an evaluation folder (``triage.toml`` + Parquet files), decode into Arrow, with pyarrow's
own threads and the two runs in two threads as triage does: every column of each run that the
data contract knows, the labels, the queries if named, and the corpus's ``chunk_id`` (and
``doc_id`` when the manifest has a ``[holdout]``). No checks, no metrics: no program that
reports on these files can do less. Each file is decoded the fastest way measured here: 16,384
rows at a time through a small buffer, the batches kept as they come (no joining). With
``--whole`` each file is read whole by ``pq.read_table`` instead, the floor as first measured:
reading a 100k- or 1M-row row group whole took 2.4-2.7x as long. Prints the seconds on stderr,
nothing on stdout.

Usage::

    python tests/benchmarks/decode_floor.py /tmp/triage-bench [--whole]
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


def main(folder: str, whole: bool = False) -> None:
    t0 = time.perf_counter()
    root = Path(folder)
    manifest = root / "triage.toml" if root.is_dir() else root
    spec = tomllib.loads(manifest.read_text())
    here = manifest.parent

    def read(path: Path, columns: set[str] | None = None) -> int:
        pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=8 << 20)
        names = None if columns is None else sorted(columns & set(pf.schema_arrow.names))
        if whole:
            return pq.read_table(path, columns=names).num_rows
        batches = list(pf.iter_batches(16_384, columns=names))  # kept, as a table would hold them
        return sum(b.num_rows for b in batches)

    def run(path: Path) -> int:
        return read(path, RUN_COLUMNS)

    with ThreadPoolExecutor(max_workers=2) as pool:
        arms = [pool.submit(run, here / arm["path"]) for arm in spec["arms"].values()]
        rows = read(here / spec["labels"]["path"])
        if "queries" in spec:
            rows += read(here / spec["queries"]["path"])
        if "corpus" in spec:
            path = here / spec["corpus"]["path"]
            wanted = {"chunk_id", "doc_id"} if "holdout" in spec else {"chunk_id"}
            rows += read(path, wanted)
        rows += sum(f.result() for f in arms)
    print(f"decoded {rows:,} rows in {time.perf_counter() - t0:.3f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], "--whole" in sys.argv[2:])
