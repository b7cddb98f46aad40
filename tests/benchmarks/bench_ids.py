"""Benchmark the corpus id index: triage's fingerprint table beside the library structures.

On the corpus of ``make_bench.py --corpus`` (2M chunk ids, in ``--data``, default
``/tmp/triage-bench-corpus``, generated when absent) and arm A's retrieved lists (100k x 100 =
10M ids), each variant is run in a fresh child process, alternating, ``--repeat`` rounds:

- (a) ours: `ids.index.CorpusIds` (the open-addressing table of 64-bit fingerprints, with each
  slot's row), as the evaluation uses it;
- (b) numpy: the fingerprints sorted (`np.argsort`, with the permutation as each key's row) and
  searched with `np.searchsorted`, in batches of `codes.BATCH` like ours, whole, and whole with
  the keys sought sorted first (`np.argsort`: numpy's search then starts from the last one found);
- (c) Arrow: `pc.index_in` of the retrieved ids (strings) against the 2M ids, and (c') the same
  over the 64-bit fingerprints (Arrow hashes integers, no strings): Arrow builds its hash table
  inside each call, so there is nothing to build before, nor to keep in the cache.

Per variant: build (the structure from the 2M fingerprints, or nothing), find (the corpus row of
each of the 10M retrieved ids: the corpus check asks whether each is held, the cost row asks
the rows of the top k), a screen (the rows of 25 ids, fingerprinted, the median of 200 tries;
Arrow: the 2M ids scanned against the 25, as `Corpus.rows_of` does, which beats hashing 2M ids
per screen), the bytes the structure holds, and the peak resident memory the child added.

Floors: reading the ids column (the corpus's 2M ids from its Parquet file: what any index costs
at least to build) and one pass over the 10M keys to look up (what any look-up costs at least).
The fingerprints, used by (a), (b) and (c'), are computed once by the loader for its other
checks (repeated ids in a list: `codes.list_fingerprints`); their cost is printed on its own.
Every variant's rows are checked to be the same. The figures, and why triage keeps its own table:
the docstring of ``triage/core/ids/index.py``.

    python tests/benchmarks/bench_ids.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.ids import codes

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

CHILD = r"""
import json, resource, statistics, sys, time
from pathlib import Path
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from triage.core.ids import codes
from triage.core.ids.index import CorpusIds

variant, folder = sys.argv[1], Path(sys.argv[2])
fp = np.load(folder / "fp.npy")
qfp = np.load(folder / "qfp.npy")
ids = pa.ipc.open_file(pa.memory_map(str(folder / "ids.arrow"))).read_all().column(0).chunk(0)
flat = pa.ipc.open_file(pa.memory_map(str(folder / "flat.arrow"))).read_all().column(0).chunk(0)
screen = flat.slice(len(flat) // 2, 25)
if variant.startswith("c"):  # the strings are read, as Arrow reads them
    pc.sum(pc.utf8_length(ids)); pc.sum(pc.utf8_length(flat))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def timed(fn):
    t = time.perf_counter(); out = fn(); return time.perf_counter() - t, out

B = codes.BATCH
if variant == "a":
    def build():
        known = CorpusIds(ids, fp)
        known.find(fp[:1])  # the table and each slot's row, built at the first look-up
        return known
    t_build, known = timed(build)
    held = known.index.table.nbytes + known._rows.nbytes
    find = known.find
    few = lambda: known.find(codes.fingerprint(screen))
elif variant in ("b", "b-whole", "b-sorted"):
    def build():
        order = np.argsort(fp, kind="stable")
        return fp[order], order.astype(np.int32)
    t_build, (keys, order) = timed(build)
    held = keys.nbytes + order.nbytes
    last = len(keys) - 1
    def search(q):
        at = np.searchsorted(keys, q)
        np.minimum(at, last, out=at)
        return np.where(keys[at] == q, order[at], -1)
    def find(q):
        if variant == "b-whole":
            return search(q)
        if variant == "b-sorted":  # the keys sought in order: each search starts near the last
            by = np.argsort(q)
            out = np.empty(len(q), np.int64)
            out[by] = search(q[by])
            return out
        out = np.empty(len(q), np.int64)
        for s in range(0, len(q), B):
            out[s : s + B] = search(q[s : s + B])
        return out
    few = lambda: search(codes.fingerprint(screen))
elif variant in ("c", "c-fp"):
    t_build, held = 0.0, 0
    corpus = ids if variant == "c" else pa.array(fp)
    def find(q):
        wanted = flat if variant == "c" else pa.array(q)
        return pc.index_in(wanted, value_set=corpus).fill_null(-1).to_numpy()
    def few():  # the corpus scanned against the few wanted (no hash table of 2M)
        wanted = screen if variant == "c" else pa.array(codes.fingerprint(screen))
        where = pc.index_in(corpus, value_set=wanted)
        rows = pc.indices_nonzero(pc.is_valid(where)).to_numpy()
        out = np.full(len(wanted), -1, np.int64)
        out[where.filter(pc.is_valid(where)).to_numpy()] = rows
        return out
elif variant == "floor":
    import pyarrow.parquet as pq
    t_build, _ = timed(lambda: pq.read_table(folder / "chunks.parquet", columns=["chunk_id"]))
    held = 0
    find = lambda q: np.bitwise_xor.reduce(q)
    few = lambda: codes.fingerprint(screen)
t_find, rows = timed(lambda: find(qfp))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tries = []
for _ in range(200):
    t = time.perf_counter(); few(); tries.append(time.perf_counter() - t)
digest = "" if variant == "floor" else str(int(np.asarray(rows, np.int64).sum()))
print(json.dumps({"build": t_build, "find": t_find, "screen": statistics.median(tries),
                  "held": held, "peak": (peak - base) * 1024, "digest": digest}))
"""

ROWS = {
    "floor": "floor: read the ids column / one pass over the keys",
    "a": "(a) ours: fingerprint table",
    "b": "(b) numpy searchsorted, batched",
    "b-whole": "(b) numpy searchsorted, whole",
    "b-sorted": "(b) numpy searchsorted, whole, keys sorted first",
    "c": "(c) pc.index_in, strings",
    "c-fp": "(c') pc.index_in, fingerprints",
}


def prepare(data: Path, folder: Path) -> dict[str, float]:
    """The inputs every child reads: the corpus ids, arm A's retrieved ids and the fingerprints
    of both (computed here once, timed: the loader computes them for its other checks)."""
    ids = pq.read_table(data / "chunks.parquet", columns=["chunk_id"]).column(0).combine_chunks()
    lists = pq.read_table(data / "run_a.parquet", columns=["retrieved"]).column(0).combine_chunks()
    t = time.perf_counter()
    fp = codes.fingerprint(ids)
    t_fp = time.perf_counter() - t
    t = time.perf_counter()
    qfp = codes.list_fingerprints(lists)
    t_qfp = time.perf_counter() - t
    np.save(folder / "fp.npy", fp)
    np.save(folder / "qfp.npy", qfp)
    for name, arr in (("ids", ids), ("flat", lists.flatten())):
        with (
            pa.OSFile(str(folder / f"{name}.arrow"), "wb") as f,
            pa.ipc.new_file(f, pa.schema([("v", arr.type)])) as w,
        ):
            w.write_table(pa.table({"v": arr}))
    (folder / "chunks.parquet").unlink(missing_ok=True)
    (folder / "chunks.parquet").symlink_to(data / "chunks.parquet")
    return {"ids": len(ids), "keys": len(qfp), "fp": t_fp, "qfp": t_qfp}


def child(variant: str, folder: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, variant, str(folder)], capture_output=True, text=True, cwd=REPO
    )
    if out.returncode:
        raise SystemExit(f"variant {variant}: exit {out.returncode}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/tmp/triage-bench-corpus")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--work", help="a folder for the prepared inputs, kept and reused (default: a temporary one)"
    )
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "chunks.parquet").exists():
        subprocess.run(
            [sys.executable, str(HERE / "make_bench.py"), "--out", str(data), "--corpus"], check=True
        )
    with tempfile.TemporaryDirectory(prefix="bench-ids-") as tmp:
        folder = Path(args.work or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        done = folder / "sizes.json"
        sizes = json.loads(done.read_text()) if done.exists() else prepare(data, folder)
        done.write_text(json.dumps(sizes))
        got: dict[str, list[dict]] = {v: [] for v in ROWS}
        for _ in range(args.repeat):  # alternating, one fresh child each
            for variant in ROWS:
                got[variant].append(child(variant, folder))
    print(
        f"{sizes['ids']:,} corpus ids, {sizes['keys']:,} ids looked up (arm A's 100k x 100), "
        f"{args.repeat} rounds, best of each; fingerprints: {sizes['fp']:.2f} s for the corpus ids, "
        f"{sizes['qfp']:.2f} s for the retrieved ids (computed by the loader anyway)"
    )
    print(f"{'':<52}{'build':>9}{'find 10M':>10}{'screen 25':>11}{'held':>9}{'peak +':>9}")
    digests = {}
    for variant, label in ROWS.items():
        runs = got[variant]
        best = {k: min(r[k] for r in runs) for k in ("build", "find", "screen")}
        held = runs[0]["held"] / 2**20
        peak = statistics.median(r["peak"] for r in runs) / 2**20
        print(
            f"{label:<52}{best['build']:>8.3f}s{best['find']:>9.3f}s{best['screen'] * 1e3:>9.3f}ms"
            f"{held:>6.0f}MiB{peak:>6.0f}MiB"
        )
        if variant != "floor":
            digests[variant] = runs[0]["digest"]
    same = len(set(digests.values())) == 1
    print("every variant found the same rows" if same else f"rows differ: {digests}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
