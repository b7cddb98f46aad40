"""Benchmark the judging queue (`J`) on the 100,000-query evaluation with a 2,000,000-chunk corpus.

Measures, and prints beside the floor:

1. building the queue: ``JudgingQueue(session, corpus)`` in a fresh child (the evaluation and the
   warm corpus index loaded first, not timed), and how many candidates each tier holds;
2. per decision on a REAL pseudo-terminal (``bench_app.Term``: ``python -m triage DATA`` on a
   120x36 pty, the way a person runs it): after the overview is up and the app is idle, type
   ``J``, wait for the progress line ("N of M judged"), then type ``n`` ``--decisions`` times,
   each timed from writing the key until the repaint of the progress line that decision changes
   (drawn in the same refresh as the next candidate, after its record is fsync'd). p50 / p95 / max.
                                                                            target p95 <= 100 ms
3. the floor: the same number of fsync'd appends alone (``Writer.append``: lock, write, fsync,
   the frozen file's hash), in a child, to a session file on the same file system as the data.

The amendments folder of the data (``labels.amendments``) is removed before and after the run. The
data is built with ``make_bench.py --corpus --queries N --chunks M`` when its ``bench.json`` does
not match (default 100,000 and 2,000,000, the size the target is set for; smaller is a smoke run).

Usage::

    python tests/benchmarks/bench_queue.py                        # data in /tmp/triage-bench-corpus
    python tests/benchmarks/bench_queue.py --data /tmp/tq-small --queries 5000 --chunks 50000
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from bench_app import ANSI, Term, changed, dist, ms, ready_and_settled  # noqa: E402

PROGRESS = rb"[\d,]+ of [\d,]+ judged"
TARGET_P95 = 0.100


def ensure_data(data: Path, queries: int, chunks: int) -> None:
    meta = data / "bench.json"
    if meta.exists():
        m = json.loads(meta.read_text())
        if (
            m.get("n_queries") == queries
            and m.get("id_space") == chunks
            and (data / "chunks.parquet").exists()
        ):
            return
    print(f"building {data} ({queries:,} queries, {chunks:,} chunks) ...", flush=True)
    subprocess.run(
        [sys.executable, str(HERE / "make_bench.py"), "--out", str(data), "--queries", str(queries)]
        + ["--chunks", str(chunks), "--corpus"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def child_build(data: Path, out: Path) -> None:
    from triage.core.inputs.corpus import open_corpus
    from triage.workspace.queue import JudgingQueue
    from triage.workspace.session import open_session

    session = open_session(data, reviewer="bench")
    assert session.snapshot.spec.corpus is not None
    session.corpus = open_corpus(session.snapshot.spec.corpus)
    times = []
    queue = None
    for _ in range(3):
        t0 = time.perf_counter()
        queue = JudgingQueue(session, session.corpus)
        times.append(time.perf_counter() - t0)
    assert queue is not None
    t0 = time.perf_counter()
    JudgingQueue(session, None)
    no_corpus = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = queue.current()
    first_s = time.perf_counter() - t0
    out.write_text(
        json.dumps(
            {
                "build_s": times,
                "build_no_corpus_s": no_corpus,
                "current_s": first_s,
                "n": len(queue),
                "counts": queue.counts,
                "near_note": queue.near_note,
                "first": [first.query_id, first.chunk_id, first.tier] if first else None,
            }
        )
    )


def child_floor(data: Path, out: Path, n: int) -> None:
    from triage.core.inputs.frozen import sha256_file
    from triage.labels.records import ADD
    from triage.labels.writer import Writer

    labels = data / "labels.parquet"
    folder = Path(tempfile.mkdtemp(dir=data, prefix="floor-"))
    try:
        writer = Writer(folder, labels, sha256_file(labels), "floor")
        times = []
        for i in range(n):
            record = writer.new_record(ADD, f"q{i:06d}", f"doc{i}#1", 0, evidence={"arm": "a", "rank": 1})
            t0 = time.perf_counter()
            writer.append(record)
            times.append(time.perf_counter() - t0)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out.write_text(json.dumps({"append_s": times}))


def run_child(mode: str, data: Path, extra: list[str] | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [
            sys.executable,
            __file__,
            "--child",
            mode,
            "--data",
            str(data),
            "--out",
            str(out),
            *(extra or []),
        ]
        subprocess.run(cmd, check=True, cwd=REPO)
        return json.loads(out.read_text())


def term_queue(data: Path, env: dict[str, str], n: int, timeout: float) -> dict:
    out: dict = {"keys": []}
    t = Term([str(data)], env, "pty queue")
    try:
        if not ready_and_settled(t, out, timeout):
            return out
        t.send(b"J")
        out["J"] = t.wait(lambda text: re.search(PROGRESS, text) is not None, timeout)
        if out["J"] is None:
            out["error"] = "the queue never painted:\n" + t.tail()
            return out
        found = re.findall(PROGRESS, ANSI.sub(b"", bytes(t.buf[t.mark :])))
        label = [found[-1] if found else b""]
        for _ in range(n):
            t.send(b"n")
            dt = t.wait(changed(PROGRESS, label), 10)
            if dt is None:
                out["error"] = "no repaint after n:\n" + t.tail()
                return out
            out["keys"].append(dt)
        out["last"] = label[0].decode()
    finally:
        t.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("/tmp/triage-bench-corpus"))
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--chunks", type=int, default=2_000_000)
    ap.add_argument("--decisions", type=int, default=60, help="n presses timed (>= 50)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--cache", type=Path, default=None, help="corpus cache folder (default: temp, kept warm)")
    ap.add_argument("--child", choices=("build", "floor"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child == "build":
        child_build(args.data, args.out)
        return 0
    if args.child == "floor":
        child_floor(args.data, args.out, args.decisions)
        return 0

    ensure_data(args.data, args.queries, args.chunks)
    amendments = args.data / "labels.amendments"
    shutil.rmtree(amendments, ignore_errors=True)
    cache = args.cache or Path(tempfile.mkdtemp(prefix="tq-cache-"))
    env = {"TRIAGE_CACHE": str(cache), "TRIAGE_REVIEWER": "bench"}
    import os

    os.environ.update(env)  # the children read the same warm cache
    try:
        print("[1] building the queue (child) ...", flush=True)
        build = run_child("build", args.data)
        print("[2] the real app on a pty: J, then n per decision ...", flush=True)
        keys = term_queue(args.data, env, args.decisions, args.timeout)
        print("[3] the floor: fsync'd appends alone (child) ...", flush=True)
        floor = run_child("floor", args.data, ["--decisions", str(args.decisions)])
        on_disk = (
            sum(len(p.read_text().splitlines()) for p in amendments.glob("*.jsonl"))
            if amendments.exists()
            else 0
        )
    finally:
        shutil.rmtree(amendments, ignore_errors=True)
        if args.cache is None:
            shutil.rmtree(cache, ignore_errors=True)

    print()
    print(f"data {args.data}: {args.queries:,} queries, {args.chunks:,} chunks")
    print(
        f"queue: {build['n']:,} candidates, tiers {build['counts']}; {build['near_note']};"
        f" first {build['first']}"
    )
    b = build["build_s"]
    print(
        f"build the queue (with corpus): best {min(b):.2f} s, median {sorted(b)[1]:.2f} s;"
        f" without corpus (tiers 2, 3 only) {build['build_no_corpus_s']:.2f} s;"
        f" first candidate {build['current_s'] * 1000:.1f} ms"
    )
    if "error" in keys:
        print("pty run failed:", keys["error"])
        return 1
    print(f"J to the queue painted (real pty, includes the build): {keys['J'] * 1000:.0f} ms")
    ours, base = dist(keys["keys"]), dist(floor["append_s"])
    print(f"{'':38}{'p50':>10}{'p95':>10}{'max':>10}   n")
    for name, d in (("n: decision to next paint (pty)", ours), ("floor: fsync'd append alone", base)):
        print(f"{name:38}{ms(d['p50']):>10}{ms(d['p95']):>10}{ms(d['max']):>10}   {d['n']}")
    ok = ours["p95"] <= TARGET_P95
    verdict = "PASS" if ok else "FAIL"
    print(f"target p95 <= {TARGET_P95 * 1000:.0f} ms: {verdict}")
    print(f"records on disk {on_disk} (expected {args.decisions}); last progress '{keys.get('last')}'")
    return 0 if ok and on_disk == args.decisions else 1


if __name__ == "__main__":
    raise SystemExit(main())
