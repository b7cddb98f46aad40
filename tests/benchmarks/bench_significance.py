"""Time the paired tests (core/measures/significance.py) on five measures × 100,000 queries: the t-test,
Wilcoxon and the 10,000-round sign-flip randomisation test, with Holm over the five. Beside it the floor
(the five measures' means in both arms) and scipy alone (ttest_rel and wilcoxon on the same differences,
and its sign-flip `permutation_test` on one measure at a few rounds, scaled to 10,000 rounds × 5).

    PYTHONPATH=. python tests/benchmarks/bench_significance.py [--queries N] [--rounds R] [--scipy-rounds S]
        [--repeat N]
    PYTHONPATH=. python tests/benchmarks/bench_significance.py --manifest /tmp/triage-bench/triage.toml
        [--measures nDCG@10,AP,R@100,RR,P@10]   (make_bench.py data: compare_all as the report calls it)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from triage.core.measures.significance import PairedTest, compare_all


def measures(n: int, seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Two arms' per-query values shaped like the real measures (a gold rank in 1..10 or absent, graded
    gains 1..3), and one continuous score: the worst case, every |d| distinct."""
    rng = np.random.default_rng(seed)

    def arm(skill: float) -> dict[str, np.ndarray]:
        rank = np.where(rng.random(n) < skill, rng.integers(1, 11, n), 0)
        found = rank > 0
        gold = rng.integers(1, 4, n)
        got = np.minimum(gold, found * rng.integers(1, 4, n))
        return {
            "hit_rate@10": found.astype(np.float64),
            "mrr@10": np.where(found, 1 / np.maximum(rank, 1), 0.0),
            "recall@10": got / gold,
            "ndcg@10": np.where(found, 1 / np.log2(np.maximum(rank, 1) + 1), 0.0) * rng.integers(1, 4, n) / 3,
            "score": rng.random(n),
        }

    return arm(0.60), arm(0.62)


def from_manifest(
    manifest: str, names: str
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """The named measures per query of an evaluation (`triage.open(...).queries()`), over the queries
    that have them (labelled), and their ids: what the report passes to compare_all."""
    import triage

    table = triage.open(manifest, measures=names).queries()
    ids = np.asarray(table["query_id"].to_numpy(zero_copy_only=False))
    a, b = {}, {}
    for name in names.split(","):
        a[name] = table[f"{name}_a"].to_numpy(zero_copy_only=False).astype(np.float64)
        b[name] = table[f"{name}_b"].to_numpy(zero_copy_only=False).astype(np.float64)
    scored = np.isfinite(a[names.split(",")[0]])
    return {n: v[scored] for n, v in a.items()}, {n: v[scored] for n, v in b.items()}, ids[scored]


def time_real(args: argparse.Namespace) -> None:
    """compare_all on a real evaluation's named measures, by the tests run: best wall and CPU."""
    a, b, ids = from_manifest(args.manifest, args.measures)
    print(f"{args.manifest}: {len(ids):,} scored queries; {args.measures}; {args.rounds:,} rounds")
    for tests in (("t",), ("t", "wilcoxon"), ("t", "wilcoxon", "randomization")):
        walls, cpus = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            compare_all(a, b, tests=tests, rounds=args.rounds, query_ids=ids)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        print(f"compare_all {','.join(tests):24} best wall {min(walls):.3f} s, CPU {min(cpus):.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", help="time an evaluation's named measures instead (a triage.toml)")
    ap.add_argument("--measures", default="nDCG@10,AP,R@100,RR,P@10", help="with --manifest")
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--scipy-rounds", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3, help="runs of compare_all (best wall and CPU)")
    args = ap.parse_args()
    if args.manifest:
        time_real(args)
        return
    a, b = measures(args.queries, 0)
    tests = (PairedTest.T, PairedTest.WILCOXON, PairedTest.RANDOMIZATION)

    t0 = time.perf_counter()
    for name in a:
        float(a[name].mean()), float(b[name].mean())
    floor = time.perf_counter() - t0

    from scipy import stats

    t0 = time.perf_counter()
    for name in a:
        stats.ttest_rel(b[name], a[name])
        stats.wilcoxon(b[name] - a[name])
    scipy_t_w = time.perf_counter() - t0

    walls, cpus = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = compare_all(a, b, tests=tests, correction="holm", rounds=args.rounds, seed=0)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)

    for name, c in out.items():
        spent = []
        for t in tests:
            t1 = time.perf_counter()
            compare_all({name: a[name]}, {name: b[name]}, tests=[t], rounds=args.rounds)
            spent.append(time.perf_counter() - t1)
        print(
            f"{name:12} delta {c.delta:+.5f}  p t {c.p_t:.3g} wilcoxon {c.p_wilcoxon:.3g} "
            f"randomization {c.p_randomization:.3g}  holm {c.p_holm:.3g}  "
            f"(t {spent[0]:.3f} s, wilcoxon {spent[1]:.3f} s, randomization {spent[2]:.3f} s)"
        )

    d = b["score"] - a["score"]
    t0 = time.perf_counter()
    stats.permutation_test(
        (d,),
        lambda x, axis: np.abs(x.sum(axis=axis)),
        permutation_type="samples",
        n_resamples=args.scipy_rounds,
        alternative="greater",
        random_state=0,
    )
    scipy_perm = (time.perf_counter() - t0) * (args.rounds / args.scipy_rounds) * len(a)
    print(f"{args.queries:,} queries × {len(a)} measures, {args.rounds:,} rounds")
    print(f"floor (the means of both arms):        {floor:.4f} s")
    print(f"scipy ttest_rel + wilcoxon:            {scipy_t_w:.3f} s")
    print(f"scipy permutation_test (scaled from {args.scipy_rounds} rounds × 1 measure): {scipy_perm:.1f} s")
    print(
        f"compare_all (t, wilcoxon, randomization, holm), best of {args.repeat}: "
        f"wall {min(walls):.3f} s, CPU {min(cpus):.3f} s (median wall {sorted(walls)[len(walls) // 2]:.3f} s)"
    )


if __name__ == "__main__":
    main()
