"""Paired significance of B against A, per measure and per slice (definitions: docs/measures.md
"Paired tests per measure").

Per query the difference is dᵢ = Bᵢ − Aᵢ, over the queries where both arms have a finite value (the
scored queries, n of them). Pairs are formed by query id: the arrays given here are already aligned
(the evaluation holds both arms' values by query code). With d̄ the mean and s the standard deviation (ddof 1):
    delta = d̄;  ci95 = d̄ ± t₀.₉₇₅,ₙ₋₁ · s/√n;  d_z = d̄ / s;  mde80 = (z₀.₉₇₅ + z₀.₈) · s/√n
    p.t             two-sided paired t-test on n − 1 df (as scipy.stats.ttest_rel)
    p.wilcoxon      signed-rank test on d (scipy.stats.wilcoxon with its defaults: zeros dropped)
    p.randomization sign-flip test of |Σd|: p = (count + 1) / (rounds + 1), count = random sign
                    vectors s with |Σ sᵢdᵢ| ≥ |Σdᵢ| (seeded; the observed statistic counts as one round;
                    the measures compared together share their signs: `sign_flip_ps`)
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
GROUPED = 16  # from this many equal |d| in a column, one count of random bits beats a sign bit each
BINOMIAL_FROM = (
    1024  # from this many, one binomial draw (~50 ns) beats counting k/64 random words (~9 ns each)
)
ROUNDS_AT_ONCE, WORDS_AT_ONCE = 1 << 14, 1 << 17  # rounds per chunk; random words at once (1 MiB)
SIGN_ROWS, SIGN_TILE = 256, 1024  # rounds × queries of signs as float64 at once (2 MiB; SIGN_TILE % 8 == 0)


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
class MeasureTest:
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


def _pairs(a: np.ndarray, b: np.ndarray, query_ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"the arms are not aligned: {a.shape} values in A, {b.shape} in B")
    if query_ids is not None and len(query_ids) != len(a):
        raise ValueError(f"{len(query_ids)} query ids for {len(a)} pairs")
    return a, b


def _check_unique(query_ids: np.ndarray | None) -> None:
    if query_ids is not None and len(np.unique(np.asarray(query_ids))) != len(query_ids):
        raise ValueError("a query id appears in more than one pair: align the arms by id first")


def why_untested(n: int, d_min: float, d_max: float) -> NoTest | None:
    """No test below 2 queries or without spread: max d − min d within 1e-12 (float noise) of 0."""
    if n < 2:
        return NoTest.TOO_FEW_QUERIES
    if d_max - d_min <= 1e-12 * max(1.0, abs(d_min), abs(d_max)):
        zero = max(abs(d_min), abs(d_max)) <= 1e-12
        return NoTest.ALL_DIFFERENCES_ZERO if zero else NoTest.CONSTANT_DIFFERENCE
    return None


def t_test(n: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided paired-t p and the 95% half-width t₀.₉₇₅,ₙ₋₁·s/√n, vectorised over comparisons.
    Student's t through scipy.special (`stdtr`, the distribution function, and `stdtrit`, its
    inverse): the same functions scipy.stats.t calls, without the 0.7 s CPU of importing stats."""
    from scipy import special

    se = sd / np.sqrt(n)
    p = 2 * special.stdtr(n - 1, -np.abs(mean / se))
    return p, special.stdtrit(n - 1, 0.975) * se


def wilcoxon_p(d: np.ndarray) -> float:
    """scipy.stats.wilcoxon(d) with its defaults (two-sided; zero differences dropped)."""
    from scipy import stats

    return float(stats.wilcoxon(d).pvalue)


def sign_flip_p(d: np.ndarray, rounds: int = 10_000, seed: int = 0) -> float:
    """The randomisation p of one measure's differences (`sign_flip_ps` of one column)."""
    return float(sign_flip_ps(np.asarray(d, np.float64).reshape(-1, 1), rounds, seed)[0])


def sign_flip_ps(d: np.ndarray, rounds: int = 10_000, seed: int = 0) -> np.ndarray:
    """Randomisation p of |Σd| under random sign flips, (count + 1) / (rounds + 1), for each column of
    d (queries × measures, aligned by query; 0 where a measure has no difference or no score).

    Each round gives every query one random sign, shared by the measures that sum its dᵢ bit by bit
    (below): each column is still an exact sign-flip test (the tests of different measures are not
    independent, which neither Holm nor Bonferroni assumes). The rows are taken in value order (by
    the first column, then the second, ...), so the p does not depend on the order of the rows; rows
    that are 0 in every column are dropped (their sign changes nothing). Within a column, the
    k ≥ GROUPED differences that share one magnitude v add up to v·(2K − k), K ~ Binomial(k, ½) the
    number of + signs: counted from ⌈k/64⌉ random 64-bit words, or one binomial draw from
    BINOMIAL_FROM on, instead of summing k signed values (those signs come from streams of their
    own). Every other difference is summed under its query's sign bit by BLAS (float64) a tile at a
    time (`_signed_sums`). Sums within 1e-9·Σ|dᵢ| of |Σd| (float noise) count as ties, so they
    count. The same seed gives the same p for the same differences (in this version: a change to how
    signs are drawn changes the p of a seed)."""
    d = np.asarray(d, np.float64)
    if d.ndim != 2:
        raise ValueError(f"differences must be queries × measures, not shape {d.shape}")
    d = d[(d != 0).any(axis=1)]
    d = d[np.lexsort(d.T[::-1])] if len(d) else d
    bar = np.abs(d.sum(axis=0)) - 1e-9 * np.abs(d).sum(axis=0)
    groups, singles = _split(d)
    columns = np.flatnonzero((singles != 0).any(axis=0))
    singles = singles[(singles != 0).any(axis=1)][:, columns]  # rows with a sign bit × their measures
    by_word, by_draw, by_sign = (np.random.PCG64(s) for s in np.random.SeedSequence(seed).spawn(3))
    draws = np.random.Generator(by_draw)
    hits = np.zeros(d.shape[1], np.int64)
    for start in range(0, rounds, ROUNDS_AT_ONCE):
        r = min(ROUNDS_AT_ONCE, rounds - start)
        stat = groups.sums(by_word, draws, r)
        if len(columns):
            stat[:, columns] += _signed_sums(by_sign, singles, r)
        hits += (np.abs(stat) >= bar).sum(axis=0)
    return (hits + 1) / (rounds + 1)


@dataclass(frozen=True)
class _Groups:
    """Per column, the magnitudes v shared by k ≥ GROUPED differences (groups in column order)."""

    columns: int
    measure: np.ndarray  # the column of each group
    k: np.ndarray  # int64
    v: np.ndarray  # float64

    def sums(self, words_from: np.random.PCG64, draws_from: np.random.Generator, rounds: int) -> np.ndarray:
        """rounds × columns: Σ v·(2K − k) over each column's groups, K ~ Binomial(k, ½): one draw for a
        group of BINOMIAL_FROM or more, else the 1 bits among k random bits (`_counted`)."""
        out = np.zeros((rounds, self.columns))
        drawn = self.k >= BINOMIAL_FROM
        for j, k, v in zip(self.measure[drawn], self.k[drawn], self.v[drawn], strict=True):
            out[:, j] += v * (2 * draws_from.binomial(k, 0.5, rounds) - k)
        if not drawn.all():
            keep = ~drawn
            out += _counted(words_from, self.measure[keep], self.k[keep], self.v[keep], self.columns, rounds)
        return out


def _counted(
    words_from: np.random.PCG64, measure: np.ndarray, k: np.ndarray, v: np.ndarray, columns: int, rounds: int
) -> np.ndarray:
    """rounds × columns: Σ v·(2K − k), K the 1 bits among k random bits, each group given ⌈k/64⌉ words
    of a round's row (the last masked to k mod 64 bits) and K read off a running count along the row;
    WORDS_AT_ONCE words at a time, so they stay in the cache."""
    words = (k + 63) // 64
    ends = np.cumsum(words)
    starts, last, width = ends - words, ends - 1, int(ends[-1])
    tail = (k - 64 * (words - 1)).astype(np.uint64)  # bits used in the last word: 1..64
    mask = np.where(tail == 64, np.uint64(2**64 - 1), (np.uint64(1) << (tail % np.uint64(64))) - np.uint64(1))
    weights = np.zeros((len(k), columns))  # v of each group, in its own column
    weights[np.arange(len(k)), measure] = v
    shift = k @ weights
    out = np.empty((rounds, columns))
    block = max(1, WORDS_AT_ONCE // width)
    ones = np.zeros((block, width + 1), np.int32)  # 1 bits before each word, then in all
    for r0 in range(0, rounds, block):
        bits = words_from.random_raw((min(block, rounds - r0), width))  # uniform uint64 words
        bits[:, last] &= mask.astype(np.uint64)
        upto = ones[: len(bits)]
        np.cumsum(_popcount(bits), axis=1, dtype=np.int32, out=upto[:, 1:])
        out[r0 : r0 + len(bits)] = 2 * ((upto[:, last + 1] - upto[:, starts]) @ weights) - shift
    return out


def _split(d: np.ndarray) -> tuple[_Groups, np.ndarray]:
    """The grouped magnitudes of each column of d, and d with them (and its zeros) as 0: the singles."""
    single = d != 0
    measure, ks, vs = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
    for j in range(d.shape[1]):
        nonzero = np.flatnonzero(single[:, j])
        mags, where, counts = np.unique(np.abs(d[nonzero, j]), return_inverse=True, return_counts=True)
        grouped = counts >= GROUPED
        measure.append(np.full(int(grouped.sum()), j))
        ks.append(counts[grouped])
        vs.append(mags[grouped])
        single[nonzero[grouped[where]], j] = False
    groups = _Groups(
        d.shape[1], np.concatenate(measure), np.concatenate(ks).astype(np.int64), np.concatenate(vs)
    )
    return groups, np.where(single, d, 0.0)


def _popcount(words: np.ndarray) -> np.ndarray:
    """The number of 1 bits of each uint64 (numpy ≥ 2 has it built in; else by byte from a table)."""
    return np.bitwise_count(words) if hasattr(np, "bitwise_count") else _popcount_by_bytes(words)


def _popcount_by_bytes(words: np.ndarray) -> np.ndarray:
    return _BYTE_BITS[words.view(np.uint8)].reshape(*words.shape, 8).sum(axis=-1, dtype=np.uint8)


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], np.uint8)


def _signed_sums(bits_from: np.random.PCG64, singles: np.ndarray, rounds: int) -> np.ndarray:
    """rounds × columns: Σ sᵢdᵢ over the rows of `singles` under random signs sᵢ = 2bᵢ − 1, as
    2·(B @ singles) − Σdᵢ for random bits B: SIGN_ROWS rounds × SIGN_TILE queries at a time, so the
    bits as float64 stay in the cache."""
    out = np.zeros((rounds, singles.shape[1]))
    tile = np.empty((SIGN_ROWS, SIGN_TILE))
    width = (len(singles) + 63) // 64  # words of bits per round
    for r0 in range(0, rounds, SIGN_ROWS):
        r = min(SIGN_ROWS, rounds - r0)
        packed = bits_from.random_raw((r, width)).astype("<u8", copy=False).view(np.uint8)
        acc = out[r0 : r0 + r]
        for q0 in range(0, len(singles), SIGN_TILE):
            q = min(SIGN_TILE, len(singles) - q0)
            f = tile[:r, :q]
            np.copyto(f, np.unpackbits(packed[:, q0 // 8 : (q0 + q + 7) // 8], axis=1, count=q))
            acc += f @ singles[q0 : q0 + q]
    return 2 * out - singles.sum(axis=0)


def _binary(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _tests(tests: Iterable[PairedTest | str]) -> list[PairedTest]:
    wanted = [PairedTest(t) for t in tests]
    if not wanted:
        raise ValueError("name at least one test")
    return wanted


def _compare(
    a: np.ndarray, b: np.ndarray, wanted: list[PairedTest], rounds: int, seed: int
) -> tuple[MeasureTest, np.ndarray | None]:
    """One measure on aligned float arrays, every figure but the randomisation p; with it, when that
    test is to run, dᵢ of every pair (0 where a pair is not scored, which adds nothing to Σ sᵢdᵢ)."""
    keep = np.isfinite(a) & np.isfinite(b)
    a, b, full = a[keep], b[keep], None
    d = np.sort(b - a)  # in value order: every figure is the same whatever the row order
    n = len(d)
    ran = PairedTest.RANDOMIZATION in wanted
    base = MeasureTest(
        n,
        _finite(d.mean()) if n else None,
        test=wanted[0],
        rounds=rounds if ran else None,
        seed=seed if ran else None,
    )
    reason = why_untested(n, float(d.min()) if n else 0.0, float(d.max()) if n else 0.0)
    if reason is not None:
        return replace(base, reason=reason), None
    if ran:
        full = np.zeros(len(keep))
        full[keep] = b - a
    sd = float(d.std(ddof=1))
    p_t, half = (float(x[0]) for x in t_test(np.array([n]), np.array([d.mean()]), np.array([sd])))
    mean = float(d.mean())
    tested = replace(
        base,
        ci95=(mean - half, mean + half),
        d_z=mean / sd,
        p_t=p_t if PairedTest.T in wanted else None,
        p_wilcoxon=_finite(wilcoxon_p(d)) if PairedTest.WILCOXON in wanted else None,
        p_mcnemar=mcnemar_exact(int((a > b).sum()), int((a < b).sum())) if _binary(a, b) else None,
        mde80=MDE_FACTOR * sd / math.sqrt(n),
    )
    return tested, full


def compare(
    a: np.ndarray,
    b: np.ndarray,
    tests: Iterable[PairedTest | str] = (PairedTest.T,),
    rounds: int = 10_000,
    seed: int = 0,
    query_ids: np.ndarray | None = None,
) -> MeasureTest:
    """One measure, B against A, on arrays already aligned by query id (`query_ids`, when given, must
    be unique: a repeated id means rows were paired by position). The first test is the one a
    correction adjusts; here, alone, `p_holm` is its p unadjusted (correction "none")."""
    wanted = _tests(tests)
    a, b = _pairs(a, b, query_ids)
    _check_unique(query_ids)
    c, d = _compare(a, b, wanted, rounds, seed)
    if d is not None:
        c = replace(c, p_randomization=sign_flip_p(d, rounds, seed))
    return replace(c, p_holm=c.p(wanted[0]))


def compare_all(
    per_query_a: Mapping[str, np.ndarray],
    per_query_b: Mapping[str, np.ndarray],
    tests: Iterable[PairedTest | str] = (PairedTest.T,),
    correction: Correction | str = Correction.HOLM,
    rounds: int = 10_000,
    seed: int = 0,
    query_ids: np.ndarray | None = None,
) -> dict[str, MeasureTest]:
    """Every named measure, B against A (each pair of arrays aligned by the query ids `query_ids`, checked
    once), with the first test's p adjusted over the measures that have one (`p_holm`, whichever
    correction). The randomisation tests of the measures share one sign per query (`sign_flip_ps`),
    unless the measures' arrays differ in length (not aligned by query: then each is drawn alone)."""
    if set(per_query_a) != set(per_query_b):
        raise ValueError(f"measures differ: A has {sorted(per_query_a)}, B has {sorted(per_query_b)}")
    wanted, how = _tests(tests), Correction(correction)
    _check_unique(query_ids)
    out, signed = {}, {}
    for name in per_query_a:
        a, b = _pairs(per_query_a[name], per_query_b[name], query_ids)
        out[name], d = _compare(a, b, wanted, rounds, seed)
        if d is not None:
            signed[name] = d
    if signed and len({len(d) for d in signed.values()}) == 1:
        ps = sign_flip_ps(np.column_stack(list(signed.values())), rounds, seed)
    else:
        ps = np.array([sign_flip_p(d, rounds, seed) for d in signed.values()])
    for name, p in zip(signed, ps, strict=True):
        out[name] = replace(out[name], p_randomization=float(p))
    raw = np.array([np.nan if c.p(wanted[0]) is None else c.p(wanted[0]) for c in out.values()])
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
