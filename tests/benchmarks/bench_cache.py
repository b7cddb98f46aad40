"""Benchmark the corpus cache's proof: what checking a built cache against its manifest costs.

On a corpus of ``--chunks`` rows (default 2M, built with ``make_bench.py --corpus`` into
``--data``, default ``/tmp/triage-bench-corpus``), with its cache built once, prints per round,
each in a fresh child process so nothing is remembered between them:

- ours: ``corpus_cache.open_verified`` (the manifest read, every file mapped and hashed with
  xxh3-64, then opened as Arrow tables);
- the floor: the same files mapped and opened as Arrow tables, nothing hashed (what using the
  cache costs at all: the version before this check trusted the files this way);
- the peer: the same bytes hashed with sha256 (``hashlib``), the usual choice for a digest.

The bar: the corpus check stays within +0.5 s at 100k x 100 with a 2M-chunk corpus; run
``bench_report.py --data DATA --corpus`` for the whole report's cost beside it.

    python tests/benchmarks/bench_cache.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

OURS = """
import sys, time
from pathlib import Path
from triage.core.inputs import corpus_cache as cache
t = time.perf_counter()
assert cache.open_verified(Path(sys.argv[1])) is not None
print(time.perf_counter() - t)
"""
FLOOR = """
import sys, time, mmap, os
import pyarrow as pa
from pathlib import Path
from triage.core.inputs import corpus_cache as cache
folder = cache.folder_of(cache.corpus_key(Path(sys.argv[1])))
t = time.perf_counter()
for name in cache.SCHEMAS:
    table = pa.ipc.open_file(pa.memory_map(str(folder / name))).read_all()
print(time.perf_counter() - t)
"""
PEER = """
import sys, time, hashlib, mmap, os
from pathlib import Path
from triage.core.inputs import corpus_cache as cache
folder = cache.folder_of(cache.corpus_key(Path(sys.argv[1])))
t = time.perf_counter()
for name in cache.SCHEMAS:
    with open(folder / name, "rb") as f:
        hashlib.file_digest(f, "sha256")
print(time.perf_counter() - t)
"""


def child(code: str, corpus: Path) -> float:
    out = subprocess.run([sys.executable, "-c", code, str(corpus)], capture_output=True, text=True, cwd=REPO)
    if out.returncode:
        raise SystemExit(out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/tmp/triage-bench-corpus")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    corpus = Path(args.data) / "chunks.parquet"
    if not corpus.exists():
        subprocess.run(
            [sys.executable, str(HERE / "make_bench.py"), "--out", args.data, "--corpus"], check=True
        )
    build = (
        "from pathlib import Path; import sys; from triage.core.inputs.corpus import open_corpus; "
        "open_corpus(Path(sys.argv[1]))"
    )
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", build, str(corpus)], check=True, cwd=REPO)
    print(f"cache ready in {time.perf_counter() - t:.1f} s (built unless it was there)")
    folder = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from triage.core.inputs import corpus_cache as c; "
            "print(c.folder_of(c.corpus_key(Path(sys.argv[1]))))",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout.strip()
    size = sum(os.path.getsize(Path(folder) / n) for n in os.listdir(folder))
    rows = {"ours (xxh3-64, mapped)": OURS, "floor (mapped, no digest)": FLOOR, "peer (sha256)": PEER}
    times: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.repeat):  # alternating, one child each
        for label, code in rows.items():
            times[label].append(child(code, corpus))
    print(f"{size / 2**20:.0f} MiB of cache files, {args.repeat} rounds")
    for label, got in times.items():
        print(f"{label:<28} best {min(got):.3f} s  median {statistics.median(got):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
