"""`triage truth --corpus C --queries Q --k K --out DIR`: the exact top-k of every query within the
corpus rows its filter admits, written as a truth folder (the run: `workspace.truth`; docs/truth.md
"The command"). On a terminal, standard error shows a progress bar with the rows scanned, the rate
and the time left; ctrl+c stops the run and leaves no DIR."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from triage.cli.exits import Exit
from triage.core.text.sanitize import visible
from triage.workspace.truth import TruthProgress, TruthRun, compute_truth

BAR = 24  # the bar's cells


def run_truth(args: argparse.Namespace) -> int:
    ks = sorted({k for given in args.k for k in given})
    bar = Bar(sys.stderr) if sys.stderr.isatty() else None
    try:
        run = compute_truth(
            args.corpus,
            args.queries,
            ks,
            args.out,
            metric=args.metric,
            tolerance=args.tolerance,
            engine=args.engine,
            address=args.address,
            force=args.force,
            progress=bar.show if bar else None,
        )
    finally:
        if bar is not None:
            bar.clear()
    if run.notice is not None:
        print(f"triage: notice: {visible(run.notice, newlines=False)}", file=sys.stderr)
    print(run_summary(run))
    return Exit.OK


def run_summary(run: TruthRun) -> str:
    p = run.provenance
    corpus, queries = p["corpus"], p["queries"]
    shards = len(corpus["shards"])
    ks = ", ".join(str(k) for k in p["k"])
    cached = f", {run.cached} from the cache" if run.cached else ""
    return visible(
        f"triage: truth of {queries['rows']:,} queries at k = {ks} ({p['metric']}) over "
        f"{corpus['rows']:,} rows in {shards} shard{'s' if shards != 1 else ''}{cached}, written to "
        f"{run.out} in {_duration(run.seconds)}",
        cap=None,
        newlines=False,
    )


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, s = divmod(int(round(seconds)), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}:{m:02d}:{s:02d}" if hours else f"{m}:{s:02d}"


class Bar:
    """One line on a terminal, redrawn in place: the bar, the rows scanned, the rate, the time left
    and the shard being read."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.width = 0
        self.last = 0.0

    def show(self, p: TruthProgress) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and p.done < p.total:
            return
        self.last = now
        self._write(progress_line(p))

    def _write(self, text: str) -> None:
        pad = max(0, self.width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self.width = len(text)

    def clear(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def progress_line(p: TruthProgress) -> str:
    """`[########----------------]  34%  3.4M/10.0M rows  81.2k rows/s  2:10 left  part-3.parquet`"""
    share = p.done / p.total if p.total else 1.0
    filled = int(round(share * BAR))
    eta = "" if p.eta is None else f"  {_duration(p.eta)} left"
    shard = f"  {visible(p.shard, newlines=False, cap=40)}" if p.shard else ""
    return (
        f"[{'#' * filled}{'-' * (BAR - filled)}] {share:4.0%}  {_count(p.done)}/{_count(p.total)} rows"
        f"  {_count(int(p.rate))} rows/s{eta}{shard}"
    )


def _count(n: int) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return str(n)
