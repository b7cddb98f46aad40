"""Benchmark the open app while another process judges: keys, and the look at the review folder.

For each size of the review folder (default 20,000, 60,000 and 200,000 records in 8 session files,
1 in 8 a retract, adds on pairs from arm B's top 10) on a `make_bench.py` evaluation (default
20,000 queries x 100 ids, no corpus), measured:

1. keys: the real app (`python -m triage DIR` on a 120x36 pseudo-terminal, as `bench_app.py` 3b)
   on the first flip's detail, while a second process judges at a steady rate from before the app
   starts (`--rate`, default 20 records a second: `Writer.append`, lock and fsync each, an add of a
   grade 0-2 on a pair from arm B's top 10). The reader presses `n` x K, `p` x K, then `a` and
   `pagedown` x K, a key every 0.15-0.35 s; each key is timed from its write to the pty until the
   label it changes ("win 3 of 40", "query 21 of 20000") is painted. The floor: the same keys with
   no one judging. The app applied what was judged: its notices ("N records from another session
   applied") are counted.
   `--app-root DIR` runs the app from another checkout instead (e.g. one from before the look moved
   off the UI thread); given more than once, each in turn.
2. the look per tick, headless: a `Session` on the same folder and the same writer; every second
   `look()` (read the bytes appended since, apply the new records, judge the moved queries again,
   build the next snapshot: the worker's part) and `take()` (the UI thread's part), timed (wall;
   and CPU of the thread), beside the floor: reading just the bytes appended since the last tick
   (`os.pread`, same files, same offsets). Python's full collections are left to the keys' rests,
   as the app leaves them. And once: what every tick cost before, a whole re-read (`read_log` +
   `LabelState.read` and its decisions).

Target: at 60,000 records with a writer, keys p95 <= 100 ms. Other processes skew every figure on a
small machine: the load they put on the cores during each run is printed beside it.

Usage::

    python tests/benchmarks/bench_sync.py                          # data in /tmp/triage-bench-sync
    python tests/benchmarks/bench_sync.py --sizes 60000 --keys 30 --ticks 20
    python tests/benchmarks/bench_sync.py --app-root /path/to/older/checkout --sizes 60000
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import bench_app  # noqa: E402 - beside this file
from bench_app import (  # noqa: E402
    ANSI,
    FLIP_LABEL,
    KEYS,
    LIST_LABEL,
    QUIET,
    Term,
    all_of,
    changed,
    dist,
    ms,
    ready_and_settled,
)

FILES = 8  # session files the folder's records are spread over (8 reviewers)


# ======================================================================================
# the review folder
# ======================================================================================
def ensure_data(data: Path, queries: int) -> None:
    """A `make_bench.py` evaluation in `data` (no corpus), unless its bench.json matches."""
    stamp = data / "bench.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("n_queries") == queries:
        return
    print(f"data: building {data} ({queries:,} queries) ...", flush=True)
    cmd = [sys.executable, str(HERE / "make_bench.py"), "--out", str(data), "--queries", str(queries)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def pairs_of(data: Path, n: int = 20_000) -> list[tuple[str, str]]:
    """(query, chunk) pairs from arm B's top 10, for n random queries."""
    import pyarrow.parquet as pq

    table = pq.read_table(data / "run_b.parquet", columns=["query_id", "retrieved"])
    ids, lists = table.column("query_id").to_pylist(), table.column("retrieved")
    rng = random.Random(3)
    out = []
    for i in rng.sample(range(len(ids)), min(n, len(ids))):
        top = lists[i].as_py()[:10]
        out.append((ids[i], rng.choice(top)))
    return out


def make_folder(data: Path, n_records: int, pairs: list[tuple[str, str]]) -> Path:
    """A folder holding `data`'s evaluation (runs linked, labels copied) and n_records amendments,
    chained and sealed as the writer writes them (one buffered write per file, no fsync per record)."""
    from triage.core.inputs.frozen import sha256_file
    from triage.labels.records import ADD, RETRACT, line_hash
    from triage.labels.writer import Writer

    out = Path(tempfile.mkdtemp(prefix="triage-sync-"))
    for name in ("run_a.parquet", "run_b.parquet"):
        os.symlink(data / name, out / name)
    for name in ("labels.parquet", "triage.toml"):
        shutil.copy(data / name, out / name)
    frozen = out / "labels.parquet"
    sha = sha256_file(frozen)
    rng = random.Random(n_records)
    per = n_records // FILES
    for f in range(FILES):
        w = Writer(out / "labels.amendments", frozen, sha, f"r{f}", file_name=f"r{f}@bench.{f:02d}.jsonl")
        lines, prev, last = [], None, None
        for seq in range(1, per + 1):
            if last is not None and seq % 8 == 0:
                rec = w.new_record(RETRACT, last.query_id, last.chunk_id, 1, retracts=last.id)
            else:
                q, c = rng.choice(pairs)
                rec = last = w.new_record(ADD, q, c, rng.choice((0, 1, 1, 2)), evidence={"arm": "b"})
            line = replace(rec, seq=seq, prev=prev).sealed().line()
            lines.append(line)
            prev = line_hash(line)
        w.folder.mkdir(parents=True, exist_ok=True)
        w.path.write_bytes(b"\n".join(lines) + b"\n")
    return out


# ======================================================================================
# the other process judging
# ======================================================================================
def writer_main(folder: Path, pairs_file: Path, rate: float, seed: int) -> None:
    """Judge at `rate` records a second until killed: one `Writer.append` (lock, write, fsync) each."""
    from triage.core.inputs.frozen import sha256_file
    from triage.labels.records import ADD
    from triage.labels.writer import Writer

    pairs = json.loads(pairs_file.read_text())
    frozen = folder / "labels.parquet"
    w = Writer(folder / "labels.amendments", frozen, sha256_file(frozen), f"judge{seed}")
    rng = random.Random(seed)
    due = time.perf_counter()
    while True:
        q, c = rng.choice(pairs)
        w.append(w.new_record(ADD, q, c, rng.choice((0, 1, 2)), evidence={"arm": "b"}))
        due += 1 / rate
        time.sleep(max(0.0, due - time.perf_counter()))


class Judging:
    """Another process judging in `folder` at `rate` records a second (none at rate 0)."""

    def __init__(self, folder: Path, pairs_file: Path, rate: float, seed: int) -> None:
        self.proc = None
        if rate > 0:
            cmd = [sys.executable, __file__, "--writer", str(folder), "--pairs", str(pairs_file)]
            cmd += ["--rate", str(rate), "--seed", str(seed)]
            self.proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(REPO)})

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()


# ======================================================================================
# 1. keys in the real app
# ======================================================================================
def keys(folder: Path, app_root: Path, judging: Judging | None, n_keys: int, timeout: float) -> dict:
    """The app on `folder`: f, enter, then n/p on the flips' detail and pagedown on all queries."""
    out: dict = {"n": [], "p": [], "pagedown": []}
    env = {"PYTHONPATH": str(app_root), "TRIAGE_REVIEWER": "bench-app", "TRIAGE_DATA": str(folder / "data")}
    rng = random.Random(5)
    bench_app.REPO = app_root  # the app runs from there (`python -m triage` imports from its folder)
    try:
        t = Term([str(folder)], env, "pty keys")
    finally:
        bench_app.REPO = REPO
    try:
        if not ready_and_settled(t, out, timeout):
            return out
        t.send(b"f")
        t.wait(all_of("Flips, hit"), 30)
        t.send(KEYS["enter"])
        if t.wait(lambda text: re.search(FLIP_LABEL, text) is not None, 30) is None:
            out["error"] = "no detail:\n" + t.tail()
            return out
        label = [re.findall(FLIP_LABEL, ANSI.sub(b"", bytes(t.buf[t.mark :])))[-1]]
        time.sleep(2.0)  # a look or two with the writer going
        for key in ("n", "p"):
            for _ in range(n_keys):
                time.sleep(rng.uniform(0.15, 0.35))
                t.send(key.encode())
                dt = t.wait(changed(FLIP_LABEL, label), 20)
                if dt is None:
                    out["error"] = f"no repaint after {key}:\n" + t.tail()
                    return out
                out[key].append(dt)
        t.send(b"a")
        t.wait(all_of("All queries"), 30)
        label = [b"query 1 of"]
        t.wait(changed(LIST_LABEL, label), 5)
        for _ in range(n_keys):
            time.sleep(rng.uniform(0.15, 0.35))
            t.send(KEYS["pagedown"])
            dt = t.wait(changed(LIST_LABEL, label), 20)
            if dt is None:
                out["error"] = "no repaint after pagedown:\n" + t.tail()
                return out
            out["pagedown"].append(dt)
    finally:
        if judging is not None:
            judging.stop()
        text = bytes(t.buf)
        t.close()
        out["load"] = t.load.cores
    out["notices"] = len(set(re.findall(rb"\d[\d,]* records? from another\s+session applied", text)))
    return out


# ======================================================================================
# 2. the look per tick, headless
# ======================================================================================
def ticks(folder: Path, judging_args: tuple[Path, float, int], n_ticks: int) -> dict:
    """`Session.look()` and `take()` every second while another process judges; the floor."""
    from triage.core.inputs.manifest import from_manifest
    from triage.labels.log import read_log
    from triage.labels.state import LabelState
    from triage.workspace.session import Session
    from triage.workspace.snapshot import open_snapshot

    session = Session(open_snapshot(from_manifest(folder)), reviewer="bench-look")
    gc.freeze()  # as the app does once loaded, and its full collections only while keys rest
    gc.set_threshold(gc.get_threshold()[0], gc.get_threshold()[1], 1_000_000)
    amendments = session.labels.log.folder
    frozen = session.labels.frozen
    out: dict = {"look": [], "look_cpu": [], "take": [], "floor": [], "new": [], "bytes": []}
    t = time.perf_counter()
    whole = LabelState.read(frozen, read_log(amendments, frozen.sha256))
    whole.decided  # noqa: B018 - built, as a tick built it before
    out["whole"] = time.perf_counter() - t
    out["records"] = len(whole.saved)
    sizes = {p.name: p.stat().st_size for p in amendments.glob("*.jsonl")}
    pairs_file, rate, seed = judging_args
    judging = Judging(folder, pairs_file, rate, seed)
    try:
        for _ in range(n_ticks):
            time.sleep(1.0)
            t = time.perf_counter()
            read = 0
            for p in sorted(amendments.glob("*.jsonl")):  # the floor: the new bytes alone
                fd = os.open(p, os.O_RDONLY)
                try:
                    size = os.fstat(fd).st_size
                    read += len(os.pread(fd, size - sizes.get(p.name, 0), sizes.get(p.name, 0)))
                finally:
                    os.close(fd)
                sizes[p.name] = size
            out["floor"].append(time.perf_counter() - t)
            out["bytes"].append(read)
            t, c = time.perf_counter(), time.thread_time()
            found = session.look()
            out["look"].append(time.perf_counter() - t)
            out["look_cpu"].append(time.thread_time() - c)
            t = time.perf_counter()
            took = found is not None and session.take(found)
            out["take"].append(time.perf_counter() - t)
            out["new"].append(found.new if took and found is not None else 0)
    finally:
        judging.stop()
    return out


# ======================================================================================
# the report
# ======================================================================================
def keys_figure(d: dict) -> str:
    return f"p50 {ms(d['p50'])}, p95 {ms(d['p95'])}, max {ms(d['max'])} (n={d['n']})"


def ticks_figure(got: dict) -> str:
    look, floor = dist(got["look"]), dist(got["floor"])
    cpu, take = statistics.median(got["look_cpu"]), dist(got["take"])["p95"]
    size, new = statistics.median(got["bytes"]), statistics.median(got["new"])
    return (
        f"look p50 {ms(look['p50'])}, p95 {ms(look['p95'])}, max {ms(look['max'])} (CPU p50 {ms(cpu)}); "
        f"take p95 {ms(take)}; floor p50 {ms(floor['p50'])}, max {ms(floor['max'])} "
        f"({size:,.0f} bytes, {new:.0f} records a tick); a whole re-read {got['whole'] * 1000:,.0f} ms"
    )


def run_size(
    size: int, data: Path, pairs: list, pairs_file: Path, args: argparse.Namespace
) -> tuple[list, dict, bool]:
    """Every measurement at one size of the review folder: rows for the table, raw figures, and
    whether the target was missed."""
    rows, raw, missed = [], {}, False
    t = time.perf_counter()
    folder = make_folder(data, size, pairs)
    print(f"\n{size:,} records: folder written in {time.perf_counter() - t:.1f} s", flush=True)
    try:
        for root in [r.resolve() for r in (args.app_root or [REPO])]:
            who = "" if root == REPO else f" [{root}]"
            for what, rate in [("judging", args.rate)] + ([] if args.no_floor else [("floor", 0.0)]):
                judging = Judging(folder, pairs_file, rate, size) if rate else None
                got = raw[f"{size}:{what}{who}"] = keys(folder, root, judging, args.keys, args.timeout)
                if "error" in got:
                    print(f"  keys ({what}){who}: {got['error'][:2000]}")
                    missed = True
                    continue
                d = dist(got["n"] + got["p"] + got["pagedown"])
                line = f"{keys_figure(d)}; load {got['load']:.1f} cores"
                line += f"; {got['notices']} distinct notices" if rate else ""
                print(f"  keys, {what}{who}: {line}", flush=True)
                for key in ("n", "p", "pagedown"):
                    print(f"    {key}: {keys_figure(dist(got[key]))}")
                rows.append((f"{size:,}", f"keys, {what}{who}", line))
                missed |= bool(rate and size == 60_000 and root == REPO and d["p95"] > 0.100)
        got = raw[f"{size}:ticks"] = ticks(folder, (pairs_file, args.rate, size + 1), args.ticks)
        print(f"  ticks: {ticks_figure(got)}", flush=True)
        rows.append((f"{size:,}", "sync per tick", ticks_figure(got)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows, raw, missed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=Path("/tmp/triage-bench-sync"), help="evaluation folder")
    ap.add_argument("--queries", type=int, default=20_000, help="queries, when building --data")
    ap.add_argument("--sizes", default="20000,60000,200000", help="records in the review folder")
    ap.add_argument("--rate", type=float, default=20.0, help="records a second the other process writes")
    ap.add_argument("--keys", type=int, default=40, help="presses of each of n, p and pagedown")
    ap.add_argument("--ticks", type=int, default=20, help="looks timed headless")
    ap.add_argument("--no-floor", action="store_true", help="skip the keys with no one judging")
    ap.add_argument(
        "--app-root", type=Path, action="append", default=None, help="checkouts to run the app from"
    )
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for the app to load")
    ap.add_argument("--quiet-cores", type=float, default=0.5, help="wait for other processes to calm down")
    ap.add_argument("--quiet-timeout", type=float, default=30.0, help="seconds to wait for that at most")
    ap.add_argument("--json", type=Path, default=None, help="also write every raw figure here")
    ap.add_argument("--writer", type=Path, help=argparse.SUPPRESS)  # internal: the judging process
    ap.add_argument("--pairs", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.writer is not None:
        writer_main(args.writer, args.pairs, args.rate, args.seed)
        return 0

    QUIET.update(cores=args.quiet_cores, timeout=args.quiet_timeout)
    sys.path.insert(0, str(REPO))
    data = args.data.resolve()
    ensure_data(data, args.queries)
    pairs = pairs_of(data)
    pairs_file = Path(tempfile.mkstemp(suffix=".json")[1])
    pairs_file.write_text(json.dumps(pairs))
    print(f"machine: {os.cpu_count()} cores; data {data} ({args.queries:,} queries); writer {args.rate:g}/s")
    rows: list[tuple[str, str, str]] = []
    raw: dict = {}
    failed = False
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            got_rows, got_raw, missed = run_size(size, data, pairs, pairs_file, args)
            rows += got_rows
            raw.update(got_raw)
            failed |= missed
    finally:
        pairs_file.unlink()
    print()
    for size, what, line in rows:
        print(f"{size:>8}  {what:<28}  {line}")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
