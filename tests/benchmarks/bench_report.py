"""Benchmark `triage report --format json` against the pytrec_eval peer, as whole processes.

1. Builds the synthetic evaluation (``make_bench.py``: 100,000 queries x 100 ids x 2
   arms) into ``--data`` (default ``/tmp/triage-bench``) unless a matching one is cached
   there (recognised by its ``bench.json``).
2. Runs, each ``--repeat`` times (default 5) after one untimed warm-up run, as child processes
   with bytecode written to a folder of their own (as an installed triage has it); (a), (b), (d)
   and ``--measures`` in rounds, one run of each in turn, so that what is compared is timed in the
   same minutes (this machine's speed drifts from one minute to the next), the peer after them:
   (a) the decode floor: ``python decode_floor.py DATA`` (reads what the report reads, no more,
       in batches: the fastest decode measured), and ``--whole`` (each file read whole by
       ``pq.read_table``, the floor as first measured; printed beside, not a target);
   (b) ours: ``--cmd`` (default ``python -m triage report DATA --format json``);
   (c) the peer: ``python peer_trec_eval.py DATA``;
   (d) with ``--corpus``: ours again on ``DATA/nocorpus.toml`` (the manifest without its corpus).
   For every run it records the wall time (seconds; ``time.perf_counter`` from just before
   the child starts until ``os.wait4`` reaps it) and the child's peak resident set size
   (``ru_maxrss`` from ``os.wait4``: that one child, in KiB on Linux, shown in MiB).
3. Prints a table (best and median wall, peak RSS), ours / floor (medians), the corpus's cost
   (medians, with ``--corpus``) and speed-up = peer best / ours best; compares the means of both
   JSON outputs (``arms.<arm>.{hit_rate,recall,mrr,ndcg}``) and prints the largest difference.
4. Exits 1 if any target is missed, naming each: results differ by more than ``--tol``
   (1e-9); ours best wall > ``--max-wall`` (3 s); ours peak RSS > ``--max-rss-mb``
   (1536 MiB); ours > ``--max-floor-ratio`` (1.7) × the floor; the corpus costs more than
   ``--max-corpus-cost`` (0.5 s); speed-up < ``--min-speedup`` (4x). Exit 0 when all are met.

``--measures`` also times ours with five measures by name and their paired t-tests
(``--measures nDCG@10,AP,R@100,RR,P@5``, the report's ``compare``) beside the report without them,
and prints what they cost (medians); the targets are ``--max-measures-cost`` (2 s) and
``--max-measures-ratio`` (2x the report without them).

``--sample`` also times ``triage report`` with no PATH (the bundled sample) and requires
its best wall time under ``--sample-max-wall`` (1 s); ``--sample-only`` runs just that.

``--cmd`` and ``--sample-cmd`` are command lines split with ``shlex``; ``{data}`` in them
is replaced by the data folder. Examples::

    python tests/benchmarks/bench_report.py                         # the full benchmark
    python tests/benchmarks/bench_report.py --sample                # + the bundled sample
    # a smoke run at a small size (the targets are set for the full size):
    python tests/benchmarks/bench_report.py --data /tmp/tb-small --queries 5000 --chunks 50000 --repeat 1
    python tests/benchmarks/bench_report.py --cmd "triage report {data} --format json"
    # exercise the harness with the peer standing in for ours:
    python tests/benchmarks/bench_report.py --repeat 1 \\
        --cmd "python tests/benchmarks/peer_trec_eval.py {data}"

The children run with the repository root as working directory, so ``python -m triage``
finds the package even when it is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

METRICS = ("hit_rate", "recall", "mrr", "ndcg")
FIVE = "nDCG@10,AP,R@100,RR,P@5"  # --measures: five measures by name, each with its paired t-test


# --------------------------------------------------------------------------------------
# running one child
# --------------------------------------------------------------------------------------
@dataclass
class Run:
    wall_s: float  # seconds, start to reap
    rss_kib: int  # peak resident set size of this child, KiB
    cpu_s: float  # user + system CPU seconds of this child (its threads included)
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Series:
    label: str
    cmd: list[str]
    runs: list[Run] = field(default_factory=list)

    @property
    def best_s(self) -> float:
        return min(r.wall_s for r in self.runs)

    @property
    def median_s(self) -> float:
        return statistics.median(r.wall_s for r in self.runs)

    @property
    def cpu_best_s(self) -> float:
        return min(r.cpu_s for r in self.runs)

    @property
    def cpu_median_s(self) -> float:
        return statistics.median(r.cpu_s for r in self.runs)

    @property
    def rss_mib(self) -> float:
        return max(r.rss_kib for r in self.runs) / 1024


def run_child(cmd: list[str]) -> Run:
    """Run ``cmd`` to completion; return its wall time and its own peak RSS.

    Output goes to temporary files (no pipe to drain, so no deadlock and no reader thread
    competing for CPU), and the child is reaped with ``os.wait4`` so its resource usage
    is that child's alone, not the cumulative RUSAGE_CHILDREN of this process.

    Caveat: Linux carries the forking process's peak RSS into the child's ``ru_maxrss``
    (it is taken over at exec), so the figure is max(this process's peak, the child's
    peak). This script therefore stays lean -- no numpy or pyarrow, and the data is
    built in a child process -- keeping that floor near 15 MiB.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=REPO, env=CHILD_ENV
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: tell Popen
        out.seek(0)
        err.seek(0)
        return Run(
            wall,
            usage.ru_maxrss,
            usage.ru_utime + usage.ru_stime,
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
        )


# Children run with bytecode, as an installed triage does (pip compiles it at install): an
# environment that forbids writing bytecode would have every run compile triage's modules from
# source (~0.2 s). The bytecode goes to a folder of its own, not into the checkout.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CHILD_ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "triage-bench-pycache")


def run_series(label: str, cmd: list[str], repeat: int) -> Series:
    """`repeat` timed runs of `cmd`, after one untimed run (it writes the bytecode and warms the
    page cache, so every timed run starts alike)."""
    return run_rounds([(label, cmd)], repeat)[0]


def run_rounds(commands: list[tuple[str, list[str]]], repeat: int) -> list[Series]:
    """`repeat` rounds, each running every command once in turn, after one untimed run of each:
    the commands compared with each other (ours, the floors, ours without the corpus) are timed in
    the same minutes, so a machine that speeds up or slows down meanwhile moves them alike."""
    series = [Series(label, cmd) for label, cmd in commands]
    for one in series:
        print(f"{one.label}: {shlex.join(one.cmd)}", flush=True)
        run_child(one.cmd)
    for i in range(repeat):
        for one in series:
            if one.runs and one.runs[-1].returncode != 0:
                continue
            r = run_child(one.cmd)
            if one.runs:  # only the last run's output is read: this process stays small (see run_child)
                one.runs[-1].stdout = one.runs[-1].stderr = ""
            one.runs.append(r)
            print(
                f"  {one.label} run {i + 1}/{repeat}: {r.wall_s:7.2f} s  cpu {r.cpu_s:7.2f} s"
                f"  {r.rss_kib / 1024:7.0f} MiB  exit {r.returncode}",
                flush=True,
            )
            if r.returncode != 0:
                print(f"  {one.label} failed; stderr tail:\n" + _tail(r.stderr), flush=True)
    return series


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join("    " + ln for ln in text.strip().splitlines()[-lines:])


# --------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------
def ensure_data(data: Path, n_queries: int, depth: int, corpus: bool, chunks: int = 2_000_000) -> None:
    """Build the evaluation into ``data`` unless bench.json shows a matching one there.

    ``chunks`` is the id space (and the corpus's rows with ``corpus``)."""
    stamp = data / "bench.json"
    want = {"n_queries": n_queries, "depth": depth, "corpus": corpus, "id_space": chunks}
    if stamp.exists():
        have = json.loads(stamp.read_text())
        if all(have.get(k) == v for k, v in want.items()) and (data / "triage.toml").exists():
            print(
                f"data: cached {data} ({n_queries:,} queries x {depth} ids over {chunks:,}, generated in "
                f"{have.get('seconds', '?')} s)"
            )
            return
    print(
        f"data: building {data} ({n_queries:,} queries x {depth} ids over {chunks:,}"
        f"{', with corpus' if corpus else ''}) ...",
        flush=True,
    )
    # In a child process, so this process's peak RSS (a floor under every child's
    # ru_maxrss, see run_child) stays small.
    cmd = [
        sys.executable,
        str(HERE / "make_bench.py"),
        "--out",
        str(data),
        "--queries",
        str(n_queries),
        "--depth",
        str(depth),
        "--id-space",
        str(chunks),
    ] + (["--corpus"] if corpus else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    rec = json.loads(stamp.read_text())
    print(f"data: built in {rec['seconds']:.1f} s")


# --------------------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------------------
def compare(ours_out: str, peer_out: str) -> tuple[float, list[str]]:
    """Return (largest absolute difference of the means, problems found)."""
    problems: list[str] = []
    try:
        ours = json.loads(ours_out)["arms"]
    except (ValueError, KeyError, TypeError) as exc:
        return float("inf"), [f"our output is not JSON with an 'arms' object ({exc!r})"]
    peer = json.loads(peer_out)["arms"]
    worst = 0.0
    for arm, want in peer.items():
        got = ours.get(arm)
        if not isinstance(got, dict):
            problems.append(f"arm {arm!r} missing from our output")
            worst = float("inf")
            continue
        for m in METRICS:
            value = got.get(m)
            if not isinstance(value, (int, float)):
                problems.append(f"arms.{arm}.{m} missing or not a number in our output")
                worst = float("inf")
                continue
            diff = abs(float(value) - want[m])
            worst = max(worst, diff)
            print(f"  {arm}.{m:<8} ours {float(value):.12f}  peer {want[m]:.12f}  |diff| {diff:.2e}")
    return worst, problems


def print_table(rows: list[Series]) -> None:
    print(
        f"\n{'command':<14} {'runs':>4} {'best s':>8} {'median s':>9} {'cpu best':>9} {'cpu median':>11}"
        f" {'peak RSS MiB':>13}"
    )
    for s in rows:
        print(
            f"{s.label:<14} {len(s.runs):>4} {s.best_s:>8.2f} {s.median_s:>9.2f} {s.cpu_best_s:>9.2f}"
            f" {s.cpu_median_s:>11.2f} {s.rss_mib:>13.0f}"
        )


def _expand(cmd: str | None, default: list[str], data: Path) -> list[str]:
    parts = default if cmd is None else shlex.split(cmd)
    return [p.replace("{data}", str(data)) for p in parts]


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data",
        type=Path,
        default=Path("/tmp/triage-bench"),
        help="evaluation folder (built here if absent)",
    )
    ap.add_argument("--queries", type=int, default=100_000, help="queries when building")
    ap.add_argument("--depth", type=int, default=100, help="ids per query when building")
    ap.add_argument(
        "--chunks",
        "--id-space",
        dest="chunks",
        type=int,
        default=2_000_000,
        help="distinct chunk ids when building (the corpus's rows with --corpus)",
    )
    ap.add_argument("--corpus", action="store_true", help="build with chunks.parquet (--chunks rows)")
    ap.add_argument(
        "--cmd",
        default=None,
        help="our command; {data} = the folder (default: python -m triage report {data} --format json)",
    )
    ap.add_argument("--repeat", type=int, default=5, help="runs of each command")
    ap.add_argument("--peer-repeat", type=int, default=None, help="runs of the peer (default: --repeat)")
    ap.add_argument("--tol", type=float, default=1e-9, help="max |ours - peer| of any mean")
    ap.add_argument("--max-wall", type=float, default=3.0, help="ours: best wall, seconds")
    ap.add_argument("--max-rss-mb", type=float, default=1536, help="ours: peak RSS, MiB")
    ap.add_argument(
        "--max-floor-ratio", type=float, default=1.7, help="ours median wall / decode floor median wall"
    )
    ap.add_argument(
        "--max-corpus-cost",
        type=float,
        default=0.5,
        help="with --corpus: ours median minus ours-without-the-corpus median, seconds",
    )
    ap.add_argument("--min-speedup", type=float, default=4.0, help="peer best wall / ours best wall")
    ap.add_argument(
        "--measures",
        action="store_true",
        help=f"also time ours with five measures by name and their t-tests ({FIVE})",
    )
    ap.add_argument(
        "--max-measures-cost",
        type=float,
        default=2.0,
        help="with --measures: ours-with-them median minus ours median, seconds",
    )
    ap.add_argument(
        "--max-measures-ratio",
        type=float,
        default=2.0,
        help="with --measures: ours-with-them median / ours median",
    )
    ap.add_argument(
        "--sample",
        action="store_true",
        help="also time `triage report` on the bundled sample (no PATH)",
    )
    ap.add_argument("--sample-only", action="store_true", help="run only the sample check")
    ap.add_argument("--sample-cmd", default=None, help="sample command (default: python -m triage report)")
    ap.add_argument("--sample-max-wall", type=float, default=1.0, help="sample: best wall, seconds")
    args = ap.parse_args(argv)

    data = args.data.resolve()
    failures: list[str] = []
    table: list[Series] = []

    if not args.sample_only:
        ensure_data(data, args.queries, args.depth, args.corpus, args.chunks)
        ours_cmd = _expand(
            args.cmd, [sys.executable, "-m", "triage", "report", "{data}", "--format", "json"], data
        )
        peer_cmd = [sys.executable, str(HERE / "peer_trec_eval.py"), str(data)]
        floor_cmd = [sys.executable, str(HERE / "decode_floor.py"), str(data)]
        commands = [("floor", floor_cmd), ("floor-whole", [*floor_cmd, "--whole"]), ("ours", ours_cmd)]
        if args.corpus and args.cmd is None:  # the same evaluation without its corpus
            plain = data / "nocorpus.toml"
            text = (data / "triage.toml").read_text()
            plain.write_text(text.split("[corpus]")[0])
            commands.append(("no-corpus", _expand(None, ours_cmd[:4] + [str(plain)] + ours_cmd[5:], data)))
        if args.measures:  # the same report with five named measures and their t-tests
            commands.append(("ours+5 t-tests", [*ours_cmd, "--measures", FIVE]))
        timed = {series.label: series for series in run_rounds(commands, args.repeat)}
        floor, whole, ours = timed["floor"], timed["floor-whole"], timed["ours"]
        bare, measured = timed.get("no-corpus"), timed.get("ours+5 t-tests")
        peer = run_series("peer", peer_cmd, args.peer_repeat or args.repeat)  # long: its own series
        table += [floor, whole, ours, peer, *(s for s in (bare, measured) if s is not None)]

        ours_ok = ours.runs[-1].returncode == 0
        peer_ok = peer.runs[-1].returncode == 0
        if not ours_ok:
            failures.append(f"ours exited {ours.runs[-1].returncode}")
        if not peer_ok:
            failures.append(f"peer exited {peer.runs[-1].returncode}")
        if ours_ok and peer_ok:
            print("\nmeans, ours vs peer:")
            worst, problems = compare(ours.runs[-1].stdout, peer.runs[-1].stdout)
            failures += problems
            print(f"max |diff| = {worst:.3e} (tolerance {args.tol:g})")
            if worst > args.tol:
                failures.append(f"results differ from the peer by {worst:.3e} > {args.tol:g}")
        if ours_ok:
            if ours.best_s > args.max_wall:
                failures.append(f"ours best wall {ours.best_s:.2f} s > {args.max_wall:g} s")
            if ours.rss_mib > args.max_rss_mb:
                failures.append(f"ours peak RSS {ours.rss_mib:.0f} MiB > {args.max_rss_mb:g} MiB")
        if ours_ok and floor.runs[-1].returncode == 0:
            ratio = ours.median_s / floor.median_s
            print(
                f"ours / decode floor (medians): {ratio:.2f}x wall, best {ours.best_s / floor.best_s:.2f}x;"
                f" cpu {ours.cpu_median_s / floor.cpu_median_s:.2f}x"
            )
            if whole.runs[-1].returncode == 0:
                wall, cpu = ours.median_s / whole.median_s, ours.cpu_median_s / whole.cpu_median_s
                print(f"ours / the floor read whole (pq.read_table, medians): {wall:.2f}x; cpu {cpu:.2f}x")
            if ratio > args.max_floor_ratio:
                failures.append(f"ours is {ratio:.2f}x the decode floor > {args.max_floor_ratio:g}x")
        if ours_ok and bare is not None and bare.runs[-1].returncode == 0:
            cost = ours.median_s - bare.median_s
            # Each round ran both one after the other: its own difference is free of the slow and
            # fast stretches that move both (the bar stays on the medians' difference).
            walls = [a.wall_s - b.wall_s for a, b in zip(ours.runs, bare.runs, strict=False)]
            cpus = [a.cpu_s - b.cpu_s for a, b in zip(ours.runs, bare.runs, strict=False)]
            print(
                f"the corpus costs (medians): {cost:+.2f} s; round by round {statistics.median(walls):+.2f} s"
                f" ({min(walls):+.2f} to {max(walls):+.2f}), cpu {statistics.median(cpus):+.2f} s"
            )
            if cost > args.max_corpus_cost:
                failures.append(f"the corpus costs {cost:.2f} s > {args.max_corpus_cost:g} s")
        if ours_ok and measured is not None:
            if measured.runs[-1].returncode != 0:
                failures.append(f"ours with --measures exited {measured.runs[-1].returncode}")
            else:
                cost = measured.median_s - ours.median_s
                times = measured.median_s / ours.median_s
                cpu = measured.cpu_median_s / ours.cpu_median_s
                print(
                    f"five measures with their t-tests cost (medians): {cost:+.2f} s,"
                    f" {times:.2f}x the report without them (cpu {cpu:.2f}x)"
                )
                if cost > args.max_measures_cost:
                    failures.append(f"five measures cost {cost:.2f} s > {args.max_measures_cost:g} s")
                if times > args.max_measures_ratio:
                    failures.append(
                        f"five measures cost {times:.2f}x the report > {args.max_measures_ratio:g}x"
                    )
        if ours_ok and peer_ok:
            speedup = peer.best_s / ours.best_s
            print(f"speed-up (peer best / ours best): {speedup:.1f}x")
            if speedup < args.min_speedup:
                failures.append(f"speed-up {speedup:.1f}x < {args.min_speedup:g}x")

    if args.sample or args.sample_only:
        sample_cmd = _expand(args.sample_cmd, [sys.executable, "-m", "triage", "report"], data)
        sample = run_series("sample", sample_cmd, args.repeat)
        table.append(sample)
        if sample.runs[-1].returncode != 0:
            failures.append(f"sample exited {sample.runs[-1].returncode}")
        elif sample.best_s >= args.sample_max_wall:
            failures.append(f"sample best wall {sample.best_s:.2f} s >= {args.sample_max_wall:g} s")

    print_table(table)
    if failures:
        print("\nFAILED:")
        for f in failures:
            print(f"  - {f}")
        return 1
    print("\nall targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
