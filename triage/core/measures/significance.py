"""Paired significance of B against A, per measure and per slice (definitions: README, "Paired tests").

Per query the difference is dᵢ = Bᵢ − Aᵢ, over the queries where both arms have a finite value (the
scored queries, n of them). Pairs are formed by query id: the arrays given here are already aligned
(`align_by_id` aligns two (ids, values) tables). With d̄ the mean and s the standard deviation (ddof 1):
    delta = d̄;  ci95 = d̄ ± t₀.₉₇₅,ₙ₋₁ · s/√n;  d_z = d̄ / s;  mde80 = (z₀.₉₇₅ + z₀.₈) · s/√n
    p.t             two-sided paired t-test on n − 1 df (as scipy.stats.ttest_rel)
    p.wilcoxon      signed-rank test on d (scipy.stats.wilcoxon with its defaults: zeros dropped)
    p.randomization sign-flip test of |Σd|: p = (count + 1) / (rounds + 1), count = random sign
                    vectors s with |Σ sᵢdᵢ| ≥ |Σdᵢ| (seeded; the observed statistic counts as one round)
    p.mcnemar       exact McNemar on the discordant pairs, for a binary measure (every value 0 or 1)
No p (nor ci95, d_z, mde80) with fewer than 2 scored queries or when every dᵢ is the same value: the
comparison says why (`NoTest`). scipy is imported only inside the functions that run a test.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np

from triage.core.measures.corrections import Correction, adjust
from triage.core.measures.paired import mcnemar_exact

Z_975 = 1.959963984540054  # standard normal quantiles: two-sided α = 0.05, and power 0.8
Z_80 = 0.8416212335729143
MDE_FACTOR = Z_975 + Z_80  # ≈ 2.8016
SIGN_BUDGET = 1 << 22  # random signs held at once: chunks of rounds × queries up to this many cells
GROUPED = 64  # from this many equal |d|, one binomial draw (~0.2 µs) beats one sign bit each (~3 ns)


class PairedTest(StrEnum):
    """A paired test of d; the value is its key under `p` in the JSON report."""

    T = "t"
    WILCOXON = "wilcoxon"
    RANDOMIZATION = "randomization"


class NoTest(StrEnum):
    """Why a comparison has no p."""

    TOO_FEW_QUERIES = "fewer_than_2_scored_queries"
    ALL_DIFFERENCES_ZERO = "all_differences_zero"
    CONSTANT_DIFFERENCE = "constant_difference"  # every dᵢ equal and not 0: s = 0


@dataclass(frozen=True)
class Comparison:
    """One measure, B against A. A figure not computed is None (null in JSON), never NaN."""

    n: int  # scored queries
    delta: float | None  # mean(B − A); None when n = 0
    ci95: tuple[float, float] | None = None
    d_z: float | None = None
    p_t: float | None = None
    p_wilcoxon: float | None = None
    p_randomization: float | None = None
    p_mcnemar: float | None = None  # binary measures only
    p_holm: float | None = None  # the p of `test` adjusted by `correction` over the family
    mde80: float | None = None
    reason: NoTest | None = None  # why there is no p; None when tested
    test: PairedTest = PairedTest.T  # the p the correction adjusts
    correction: Correction = Correction.NONE
    rounds: int | None = None  # the randomisation test's rounds and seed, when it ran
    seed: int | None = None

    def p(self, test: PairedTest) -> float | None:
        """The unadjusted p of one test (None when it did not run)."""
        if test is PairedTest.T:
            return self.p_t
        return self.p_wilcoxon if test is PairedTest.WILCOXON else self.p_randomization

    def json(self) -> dict[str, Any]:
        """The report's contract: {n, delta, ci95: [lo, hi], d_z, p: {t, wilcoxon, randomization,
        mcnemar}, p_holm, correction, test, randomization: {rounds, seed}, mde80, reason}."""
        ran = self.rounds is not None
        return {
            "n": self.n,
            "delta": self.delta,
            "ci95": None if self.ci95 is None else [self.ci95[0], self.ci95[1]],
            "d_z": self.d_z,
            "p": {
                "t": self.p_t,
                "wilcoxon": self.p_wilcoxon,
                "randomization": self.p_randomization,
                "mcnemar": self.p_mcnemar,
            },
            "p_holm": self.p_holm,
            "correction": self.correction.value,
            "test": self.test.value,
            "randomization": {"rounds": self.rounds, "seed": self.seed} if ran else None,
            "mde80": self.mde80,
            "reason": None if self.reason is None else self.reason.value,
        }


@dataclass(frozen=True)
class Aligned:
    """Two arms' values on the query ids both hold, in id order; the ids held by one arm only are counted."""

    ids: np.ndarray
    a: np.ndarray
    b: np.ndarray
    only_a: int
    only_b: int


def align_by_id(ids_a: np.ndarray, values_a: np.ndarray, ids_b: np.ndarray, values_b: np.ndarray) -> Aligned:
    """Pair two arms' per-query values by query id (never by row order). A repeated id is an error."""
    ids_a, ids_b = np.asarray(ids_a), np.asarray(ids_b)
    for arm, ids, values in (("A", ids_a, values_a), ("B", ids_b, values_b)):
        if len(ids) != len(values):
            raise ValueError(f"arm {arm}: {len(ids)} query ids but {len(values)} values")
        unique, counts = np.unique(ids, return_counts=True)
        if len(unique) != len(ids):
            raise ValueError(f"arm {arm}: query id {unique[counts > 1][0].item()!r} appears more than once")
    ids, ia, ib = np.intersect1d(ids_a, ids_b, assume_unique=True, return_indices=True)
    a, b = np.asarray(values_a)[ia], np.asarray(values_b)[ib]
    return Aligned(ids, a, b, len(ids_a) - len(ids), len(ids_b) - len(ids))


def _scored(a: np.ndarray, b: np.ndarray, query_ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"the arms are not aligned: {a.shape} values in A, {b.shape} in B")
    if query_ids is not None:
        if len(query_ids) != len(a):
            raise ValueError(f"{len(query_ids)} query ids for {len(a)} pairs")
        if len(np.unique(np.asarray(query_ids))) != len(a):
            raise ValueError("a query id appears in more than one pair: align the arms by id first")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep]


def why_untested(n: int, d_min: float, d_max: float) -> NoTest | None:
    """No test below 2 queries or without spread: max d − min d within 1e-12 (float noise) of 0."""
    if n < 2:
        return NoTest.TOO_FEW_QUERIES
    if d_max - d_min <= 1e-12 * max(1.0, abs(d_min), abs(d_max)):
        zero = max(abs(d_min), abs(d_max)) <= 1e-12
        return NoTest.ALL_DIFFERENCES_ZERO if zero else NoTest.CONSTANT_DIFFERENCE
    return None


def t_test(n: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided paired-t p and the 95% half-width t₀.₉₇₅,ₙ₋₁·s/√n, vectorised over comparisons."""
    from scipy import stats

    se = sd / np.sqrt(n)
    p = 2 * stats.t.sf(np.abs(mean / se), n - 1)
    return p, stats.t.ppf(0.975, n - 1) * se


def wilcoxon_p(d: np.ndarray) -> float:
    """scipy.stats.wilcoxon(d) with its defaults (two-sided; zero differences dropped)."""
    from scipy import stats

    return float(stats.wilcoxon(d).pvalue)


def sign_flip_p(d: np.ndarray, rounds: int = 10_000, seed: int = 0) -> float:
    """Randomisation p of |Σd| under random sign flips: (count + 1) / (rounds + 1).

    The differences are taken in value order, so the p does not depend on the order of the rows; zero
    differences are dropped (their sign changes nothing). The k differences that share one magnitude v,
    when k ≥ GROUPED (binary and rank-based measures), add up to v·(2K − k) with K ~ Binomial(k, ½): the
    same distribution for one draw instead of k. Every other difference gets one random sign bit, summed
    by einsum straight from the unpacked bits (no float copy of the signs, no BLAS threads). Chunks of
    rounds hold at most SIGN_BUDGET cells. Sums within 1e-9·Σ|dᵢ| of |Σd| (float noise) count as ties,
    so they count."""
    d = np.sort(np.asarray(d, np.float64))
    d = d[d != 0]
    if len(d) == 0:
        return 1.0
    rng = np.random.default_rng(seed)
    magnitudes, group, counts = np.unique(np.abs(d), return_inverse=True, return_counts=True)
    grouped = counts >= GROUPED
    mags, ks = magnitudes[grouped], counts[grouped]
    single = d[~grouped[group]]
    single_sum, width = float(single.sum()), (len(single) + 7) // 8
    bar = abs(float(d.sum())) - 1e-9 * float(np.abs(d).sum())
    rows = max(1, SIGN_BUDGET // max(1, len(single), len(mags)))
    hits, done = 0, 0
    while done < rounds:
        r = min(rows, rounds - done)
        stat = np.zeros(r)
        if len(mags):
            stat += np.einsum("rv,v->r", 2 * rng.binomial(ks, 0.5, size=(r, len(mags))) - ks, mags)
        if len(single):
            bits = np.unpackbits(rng.integers(0, 256, (r, width), dtype=np.uint8), axis=1, count=len(single))
            stat += 2 * np.einsum("rq,q->r", bits, single) - single_sum
        hits += int((np.abs(stat) >= bar).sum())
        done += r
    return (hits + 1) / (rounds + 1)


def _binary(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def compare(
    a: np.ndarray,
    b: np.ndarray,
    tests: Iterable[PairedTest | str] = (PairedTest.T,),
    rounds: int = 10_000,
    seed: int = 0,
    query_ids: np.ndarray | None = None,
) -> Comparison:
    """One measure, B against A, on arrays already aligned by query id (`query_ids`, when given, must
    be unique: a repeated id means rows were paired by position). The first test is the one a
    correction adjusts; here, alone, `p_holm` is its p unadjusted (correction "none")."""
    wanted = [PairedTest(t) for t in tests]
    if not wanted:
        raise ValueError("name at least one test")
    a, b = _scored(a, b, query_ids)
    d = np.sort(b - a)  # in value order: every figure is the same whatever the row order
    n = len(d)
    ran = PairedTest.RANDOMIZATION in wanted
    base = Comparison(
        n,
        _finite(d.mean()) if n else None,
        test=wanted[0],
        rounds=rounds if ran else None,
        seed=seed if ran else None,
    )
    reason = why_untested(n, float(d.min()) if n else 0.0, float(d.max()) if n else 0.0)
    if reason is not None:
        return replace(base, reason=reason)
    sd = float(d.std(ddof=1))
    p_t, half = (float(x[0]) for x in t_test(np.array([n]), np.array([d.mean()]), np.array([sd])))
    mean = float(d.mean())
    tested = replace(
        base,
        ci95=(mean - half, mean + half),
        d_z=mean / sd,
        p_t=p_t if PairedTest.T in wanted else None,
        p_wilcoxon=_finite(wilcoxon_p(d)) if PairedTest.WILCOXON in wanted else None,
        p_randomization=sign_flip_p(d, rounds, seed) if ran else None,
        p_mcnemar=mcnemar_exact(int((a > b).sum()), int((a < b).sum())) if _binary(a, b) else None,
        mde80=MDE_FACTOR * sd / math.sqrt(n),
    )
    return replace(tested, p_holm=tested.p(wanted[0]))


def compare_all(
    per_query_a: Mapping[str, np.ndarray],
    per_query_b: Mapping[str, np.ndarray],
    tests: Iterable[PairedTest | str] = (PairedTest.T,),
    correction: Correction | str = Correction.HOLM,
    rounds: int = 10_000,
    seed: int = 0,
    query_ids: np.ndarray | None = None,
) -> dict[str, Comparison]:
    """Every named measure, B against A (each pair of arrays aligned by the query ids `query_ids`), with
    the first test's p adjusted over the measures that have one (`p_holm`, whichever correction)."""
    if set(per_query_a) != set(per_query_b):
        raise ValueError(f"measures differ: A has {sorted(per_query_a)}, B has {sorted(per_query_b)}")
    tests, how = [PairedTest(t) for t in tests], Correction(correction)
    out = {
        name: compare(per_query_a[name], per_query_b[name], tests, rounds, seed, query_ids)
        for name in per_query_a
    }
    raw = np.array([np.nan if c.p_holm is None else c.p_holm for c in out.values()])
    adjusted = adjust(raw, how)
    return {
        name: replace(c, correction=how, p_holm=_finite(q))
        for (name, c), q in zip(out.items(), adjusted, strict=True)
    }


@dataclass(frozen=True)
class SliceComparisons:
    """One measure per slice, B against A: arrays with one entry per slice (NaN where not computed)."""

    names: tuple[str, ...]
    n: np.ndarray  # scored queries in the slice (int64)
    delta: np.ndarray  # mean(B − A) in the slice
    p: np.ndarray  # paired t, or exact McNemar for a binary measure
    q: np.ndarray  # Benjamini–Hochberg over the slices that have a p
    test: str  # "t" or "mcnemar"
    reasons: tuple[NoTest | None, ...]

    def json(self) -> list[dict[str, Any]]:
        """One row per slice: {slice, n, delta, p, q, test, reason}; null for what was not computed."""
        return [
            {
                "slice": name,
                "n": int(n),
                "delta": _finite(delta),
                "p": _finite(p),
                "q": _finite(q),
                "test": self.test,
                "reason": None if why is None else why.value,
            }
            for name, n, delta, p, q, why in zip(
                self.names, self.n, self.delta, self.p, self.q, self.reasons, strict=True
            )
        ]


def compare_slices(
    a: np.ndarray, b: np.ndarray, slices: np.ndarray, names: Sequence[str], binary: bool | None = None
) -> SliceComparisons:
    """Per slice, delta and p of one measure (arrays aligned by query id; `slices` holds each pair's
    index into `names`, −1 for none). The test is the paired t, or McNemar when the measure is binary
    (every value 0 or 1, unless `binary` says otherwise); q is the BH-adjusted p across the slices."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    codes = np.asarray(slices, np.int64)
    if not a.shape == b.shape == codes.shape or a.ndim != 1:
        raise ValueError(f"not aligned: {a.shape} values in A, {b.shape} in B, {codes.shape} slice codes")
    k = len(names)
    if len(codes) and codes.max() >= k:
        raise ValueError(f"slice code {codes.max()} but only {k} slice names")
    keep = np.isfinite(a) & np.isfinite(b) & (codes >= 0)
    a, b, codes = a[keep], b[keep], codes[keep]
    d = b - a
    n = np.bincount(codes, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(codes, d, minlength=k) / n
        sd = np.sqrt(np.bincount(codes, (d - mean[codes]) ** 2, minlength=k) / (n - 1))
    lo, hi = np.full(k, np.inf), np.full(k, -np.inf)
    np.minimum.at(lo, codes, d)
    np.maximum.at(hi, codes, d)
    reasons = tuple(why_untested(int(n[i]), float(lo[i]), float(hi[i])) for i in range(k))
    tested = np.array([why is None for why in reasons], bool)
    is_binary = _binary(a, b) if binary is None else binary
    p = np.full(k, np.nan)
    if is_binary:
        losses = np.bincount(codes, (a == 1) & (b == 0), minlength=k).astype(np.int64)
        wins = np.bincount(codes, (a == 0) & (b == 1), minlength=k).astype(np.int64)
        p[tested] = [mcnemar_exact(int(losses[i]), int(wins[i])) for i in np.flatnonzero(tested)]
    elif tested.any():
        p[tested] = t_test(n[tested], mean[tested], sd[tested])[0]
    return SliceComparisons(
        tuple(names), n, mean, p, adjust(p, Correction.BH), "mcnemar" if is_binary else "t", reasons
    )
