"""Time measures by name (docs/measures.md "Measures by name") on a large evaluation: `triage report
--format json` without them and with ``--measures nDCG@10,AP,R@100,RR,P@5``, beside the decode floor
(tests/benchmarks/decode_floor.py: the files read, nothing computed) and pytrec_eval computing the same
five measures from the same files. Each is a child process, run N times; the best wall time and the best
CPU time (user + system of the child, from getrusage) are printed, since the machine may be shared, with
the ratio with / without the measures and the load average before and after.

The peer reads the labels into a qrels dict and each arm into a run dict; its scores are depth - rank
(0-based), which trec_eval's order reproduces as stored, unless ``--order trec_eval``, when the stored
scores are given (ties broken by trec_eval). Its means (over the queries with a grade >= 1, a query an
arm lacks counting 0) are printed beside ours.

    python tests/benchmarks/make_bench.py --out /tmp/speed-bench
    PYTHONPATH=. python tests/benchmarks/bench_measures.py /tmp/speed-bench [--repeat 3] [--order trec_eval]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tomllib
from pathlib import Path

MEASURES = "nDCG@10,AP,R@100,RR,P@5"
TREC = {"nDCG@10": "ndcg_cut_10", "AP": "map", "R@100": "recall_100", "RR": "recip_rank", "P@5": "P_5"}
HERE = Path(__file__).resolve().parent


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv: list[str], repeat: int) -> tuple[float, float, str]:
    """Best wall and best CPU seconds over `repeat` runs of `argv`, and the last run's stdout."""
    walls, cpus, out = [], [], ""
    for _ in range(repeat):
        c0, t0 = children_cpu(), time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - t0)
        cpus.append(children_cpu() - c0)
        if done.returncode not in (0, 1):  # 1: the report's gate said the arms differ
            sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
        out = done.stdout
    return min(walls), min(cpus), out


def peer(folder: str, order: str | None) -> None:
    """The five measures' means per arm with pytrec_eval, as JSON on stdout."""
    import pyarrow.parquet as pq
    import pytrec_eval

    root = Path(folder)
    manifest = root / "triage.toml" if root.is_dir() else root
    spec = tomllib.loads(manifest.read_text())
    here = manifest.parent
    labels = pq.read_table(here / spec["labels"]["path"], columns=["query_id", "chunk_id", "relevance"])
    qrels: dict[str, dict[str, int]] = {}
    for q, c, r in zip(*(labels.column(n).to_pylist() for n in labels.column_names), strict=True):
        qrels.setdefault(q, {})[c] = int(r)
    scored = [q for q, docs in qrels.items() if max(docs.values()) >= 1]
    asked = {"ndcg_cut.10", "map", "recall.100", "recip_rank", "P.5"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, asked)
    out = {}
    for key, arm in spec["arms"].items():
        cols = ["query_id", "retrieved"] + (["scores"] if order == "trec_eval" else [])
        table = pq.read_table(here / arm["path"], columns=cols)
        run: dict[str, dict[str, float]] = {}
        qids, lists = table.column("query_id").to_pylist(), table.column("retrieved").to_pylist()
        if order == "trec_eval":
            for q, ids, scores in zip(qids, lists, table.column("scores").to_pylist(), strict=True):
                run[q] = dict(zip(ids, scores, strict=True))
        else:
            for q, ids in zip(qids, lists, strict=True):
                run[q] = {d: float(len(ids) - r) for r, d in enumerate(ids)}
        got = evaluator.evaluate(run)
        out[key] = {
            name: sum(got.get(q, {}).get(measure, 0.0) for q in scored) / len(scored)
            for name, measure in TREC.items()
        }
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="evaluation folder holding triage.toml (make_bench.py --out)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the best is shown")
    ap.add_argument("--order", choices=["trec_eval", "as_given"], help="as triage report --order")
    ap.add_argument("--no-peer", action="store_true", help="leave pytrec_eval out")
    ap.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)  # the child: run the peer
    args = ap.parse_args()
    if args.peer:
        peer(args.folder, args.order)
        return
    py = sys.executable
    report = [py, "-m", "triage", "report", args.folder, "--format", "json"]
    order = ["--order", args.order] if args.order else []
    load = os.getloadavg()
    rows = {
        "decode floor": timed([py, str(HERE / "decode_floor.py"), args.folder], args.repeat),
        "report": timed(report, args.repeat),
        f"report --measures {MEASURES}": timed([*report, "--measures", MEASURES, *order], args.repeat),
    }
    if not args.no_peer:
        argv = [py, __file__, args.folder, "--peer", *order]
        rows["pytrec_eval, the same five"] = timed(argv, args.repeat)
    after = os.getloadavg()[0]
    print(f"{args.folder}: best of {args.repeat}; load average {load[0]:.1f} before, {after:.1f} after")
    print(f"{'':52} {'wall s':>8} {'CPU s':>8}")
    for name, (wall, cpu, _) in rows.items():
        print(f"{name:52} {wall:8.2f} {cpu:8.2f}")
    plain, named = rows["report"], rows[f"report --measures {MEASURES}"]
    print(f"with / without the measures: wall {named[0] / plain[0]:.2f}x, CPU {named[1] / plain[1]:.2f}x")
    ours = json.loads(named[2])["arms"]
    if not args.no_peer:
        theirs = json.loads(rows["pytrec_eval, the same five"][2])
        gap = max(abs(ours[a]["measures"][m] - theirs[a][m]) for a in theirs for m in TREC)
        print(f"means, ours vs pytrec_eval: largest difference {gap:.2e}")
    for arm, values in ours.items():
        print(f"  {arm}: " + ", ".join(f"{m} {v:.4f}" for m, v in values["measures"].items()))


if __name__ == "__main__":
    main()
