"""Paired significance per measure and per slice (core/measures/significance.py, corrections.py): each
figure against scipy or an exact enumeration, the corrections against references, the bad cases, pairing
by query id, and scipy kept out of the import."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from triage.core.measures import significance
from triage.core.measures.corrections import Correction, adjust
from triage.core.measures.paired import mcnemar_exact
from triage.core.measures.significance import (
    MDE_FACTOR,
    NoTest,
    PairedTest,
    compare,
    compare_all,
    compare_slices,
    sign_flip_p,
    sign_flip_ps,
)

ALL = (PairedTest.T, PairedTest.WILCOXON, PairedTest.RANDOMIZATION)


@pytest.mark.slow  # a fresh interpreter: 0.4-2.3 s on a busy machine
def test_importing_the_module_does_not_import_scipy() -> None:
    code = (
        "import sys, numpy as np; import triage.core.measures.significance as s; "
        "import triage.core.measures.corrections as c; before = 'scipy' in sys.modules; "
        "s.compare(np.zeros(3), np.array([0.0, 1.0, 0.5])); print(before, 'scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]  # loaded by the first test, not by the import


def check_against_scipy(a: np.ndarray, b: np.ndarray) -> None:
    c = compare(a, b, tests=ALL, rounds=200)
    d = b - a
    n = len(d)
    assert c.reason is None and c.n == n
    ref = stats.ttest_rel(b, a)
    assert c.p_t == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-12)
    lo, hi = stats.t.interval(0.95, n - 1, loc=d.mean(), scale=stats.sem(d))
    assert c.ci95 is not None
    assert c.ci95[0] == pytest.approx(lo, rel=1e-12, abs=1e-12)
    assert c.ci95[1] == pytest.approx(hi, rel=1e-12, abs=1e-12)
    assert c.delta == pytest.approx(b.mean() - a.mean(), rel=1e-12, abs=1e-12)
    assert c.d_z == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    assert c.p_wilcoxon == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-12, abs=1e-12)
    assert c.p_holm == c.p_t  # alone: the first test's p, unadjusted


@pytest.mark.slow  # hypothesis against scipy: 2-19 s in the quick loop; the seeded cases below stay in it
@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=60))
def test_t_interval_and_wilcoxon_match_scipy_on_any_data(pairs: list[tuple[float, float]]) -> None:
    a, b = np.array(pairs).T
    d = b - a
    assume(np.ptp(d) > 1e-9)
    check_against_scipy(a, b)


@pytest.mark.parametrize("seed", range(5))
def test_t_interval_and_wilcoxon_match_scipy_on_seeded_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 3000))
    a = rng.random(n)
    check_against_scipy(a, np.clip(a + rng.normal(0.02 * seed, 0.3, n), 0, 1))


def exact_signed_rank_p(d: np.ndarray) -> float:
    """Two-sided exact Wilcoxon p by enumerating every sign of the ranks (no ties, no zeros)."""
    ranks = stats.rankdata(np.abs(d))
    w = ranks[d > 0].sum()
    all_w = np.array(
        [ranks[list(s)].sum() for r in range(len(d) + 1) for s in itertools.combinations(range(len(d)), r)]
    )
    return min(1.0, 2 * min((all_w <= w).mean(), (all_w >= w).mean()))


@pytest.mark.parametrize("seed", range(4))
def test_wilcoxon_is_the_exact_signed_rank_test_for_small_n(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random(10)
    b = a + rng.normal(0.2, 0.4, 10)
    c = compare(a, b, tests=[PairedTest.WILCOXON])
    assert c.p_wilcoxon == pytest.approx(exact_signed_rank_p(b - a), abs=1e-12)
    assert c.p_t is None and c.p_randomization is None and c.p_holm == c.p_wilcoxon


def exact_sign_flip_p(d: np.ndarray) -> float:
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=len(d))))
    return float((np.abs(signs @ d) >= abs(d.sum()) - 1e-9).mean())


def within_monte_carlo(p: float, exact: float, rounds: int) -> bool:
    return abs(p - exact) <= 4 * math.sqrt(exact * (1 - exact) / rounds) + 2 / (rounds + 1)


@pytest.mark.parametrize("n", [3, 6, 9, 12])
def test_randomisation_p_matches_all_sign_flips(n: int) -> None:
    rng = np.random.default_rng(n)
    d = rng.normal(0.3, 1, n)
    assert within_monte_carlo(sign_flip_p(d, 10_000, 0), exact_sign_flip_p(d), 10_000)


@pytest.mark.parametrize("n", [10, 12])
def test_randomisation_p_of_a_binary_measure_matches_all_sign_flips(n: int) -> None:
    """Few distinct |d|: the grouped (binomial) draw, ties with the observed sum counted."""
    d = np.array([1.0] * (n - 3) + [-1.0] * 3)
    exact = exact_sign_flip_p(d)
    assert within_monte_carlo(sign_flip_p(d, 10_000, 3), exact, 10_000)
    mixed = np.array([0.5, -0.5, 0.5, 0.5, 0.25, 0.25, -0.25, 0.25, 0.25, 0.5, 0.0, 0.0][:n])
    assert within_monte_carlo(sign_flip_p(mixed, 10_000, 3), exact_sign_flip_p(mixed), 10_000)


def test_randomisation_p_of_many_flips_matches_the_binomial() -> None:
    """800 discordant queries, 430 wins: |Σs| ≥ 60 exactly when K ≤ 370 or K ≥ 430, K ~ Bin(800, ½)."""
    d = np.concatenate([np.ones(430), -np.ones(370), np.zeros(500)])
    exact = 2 * stats.binom.sf(429, 800, 0.5)
    assert within_monte_carlo(sign_flip_p(d, 20_000, 1), exact, 20_000)
    spread = np.random.default_rng(2).normal(0.08, 1, 800)  # one sign bit per query
    normal = 2 * stats.norm.sf(abs(spread.sum()) / math.sqrt((spread**2).sum()))  # the CLT's p
    assert 0.01 < normal < 0.5 and abs(sign_flip_p(spread, 20_000, 1) - normal) <= 0.01


def test_randomisation_p_of_grouped_and_single_differences_matches_the_exact_distribution() -> None:
    """100 differences of ±0.5 (one binomial draw) beside 10 distinct ones (a sign bit each): the exact p
    sums, over the 2^10 signs of the ten, the binomial probability that the total reaches |Σd|."""
    rng = np.random.default_rng(21)
    single = rng.normal(0, 2, 10)
    d = np.concatenate([np.full(60, 0.5), np.full(40, -0.5), single])
    observed = abs(d.sum())
    k = np.arange(101)
    exact = 0.0
    for signs in itertools.product((-1.0, 1.0), repeat=10):
        total = 0.5 * (2 * k - 100) + np.dot(signs, single)
        exact += stats.binom.pmf(k, 100, 0.5)[np.abs(total) >= observed - 1e-9].sum() / 2**10
    assert 0.01 < exact < 0.9
    assert within_monte_carlo(sign_flip_p(rng.permutation(d), 10_000, 4), exact, 10_000)


def test_randomisation_is_seeded_and_reports_rounds_and_seed() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random(300), rng.random(300)
    first = compare(a, b, tests=[PairedTest.RANDOMIZATION], rounds=999, seed=5)
    assert compare(a, b, tests=[PairedTest.RANDOMIZATION], rounds=999, seed=5) == first
    assert first.json()["randomization"] == {"rounds": 999, "seed": 5}
    assert first.p_randomization is not None and first.p_randomization * 1000 == pytest.approx(
        round(first.p_randomization * 1000)
    )  # (count + 1) / (rounds + 1)
    other = [compare(a, b, tests=["randomization"], rounds=999, seed=s).p_randomization for s in range(1, 6)]
    assert len(set(other) | {first.p_randomization}) > 1
    assert compare(a, b).json()["randomization"] is None


def test_counted_and_drawn_groups_match_the_exact_distribution() -> None:
    """Equal magnitudes: 16 (the fewest grouped), 64 and 128 (the last word full) and 100 (a partial
    last word) counted from random words, 1500 by one binomial draw; the exact p convolves the groups'
    distributions of v·(2K − k) on a grid of 1/16."""
    sizes, values, plus = (16, 64, 128, 100, 1500), (1.0, 0.5, 0.25, 0.125, 0.0625), (11, 40, 50, 49, 780)
    groups = zip(sizes, values, plus, strict=True)
    d = np.concatenate([np.r_[np.full(p, v), np.full(k - p, -v)] for k, v, p in groups])
    pmf = np.ones(1)
    for k, v in zip(sizes, values, strict=True):  # on the grid: v·(2K − k)·16, K = 0..k
        step = round(v * 16)
        one = np.zeros(2 * k * step + 1)
        one[:: 2 * step] = stats.binom.pmf(np.arange(k + 1), k, 0.5)
        pmf = np.convolve(pmf, one)
    total = (np.arange(len(pmf)) - (len(pmf) - 1) // 2) / 16
    exact = pmf[np.abs(total) >= abs(d.sum()) - 1e-9].sum()
    assert 0.02 < exact < 0.9
    assert within_monte_carlo(sign_flip_p(np.random.default_rng(5).permutation(d), 20_000, 6), exact, 20_000)


def test_measures_compared_together_share_signs_and_each_p_is_still_exact() -> None:
    """Three measures on 11 queries, zeros in different rows, one of them with a group of 16: each
    column's p matches the enumeration of its own signs."""
    rng = np.random.default_rng(17)
    cont = rng.normal(0.4, 1, 11)
    cont[[2, 7]] = 0.0
    binary = np.array([1.0, 1, -1, 1, 0, 1, 1, -1, 0, 1, 1])
    d = np.column_stack([cont, binary, np.round(rng.normal(0.2, 1, 11), 1)])
    ps = sign_flip_ps(d, 10_000, 8)
    for j in range(3):
        assert within_monte_carlo(float(ps[j]), exact_sign_flip_p(d[:, j]), 10_000)
    grouped = np.column_stack([np.r_[np.ones(12), -np.ones(4), rng.normal(0, 1, 8)], rng.normal(0.3, 1, 24)])
    k = np.arange(17)  # 12 of 16 unit differences positive (one group) beside 8 distinct ones
    exact = 0.0
    for signs in itertools.product((-1.0, 1.0), repeat=8):
        total = (2 * k - 16) + np.dot(signs, grouped[16:, 0])
        exact += stats.binom.pmf(k, 16, 0.5)[np.abs(total) >= abs(grouped[:, 0].sum()) - 1e-9].sum() / 2**8
    assert within_monte_carlo(float(sign_flip_ps(grouped, 10_000, 9)[0]), exact, 10_000)


def test_shared_randomisation_is_independent_of_row_order_and_of_the_tile_size(monkeypatch) -> None:
    rng = np.random.default_rng(23)
    n = 2600  # singles over three tiles of 1024 queries
    ids = np.array([f"q{i}" for i in range(n)])
    a, b = (
        {
            "cont": rng.random(n),
            "binary": (rng.random(n) < p).astype(float),
            "ranks": 1 / rng.integers(1, 11, n),
        }
        for p in (0.5, 0.55)
    )
    first = compare_all(a, b, tests=ALL, rounds=600, seed=3, query_ids=ids)
    assert first == compare_all(a, b, tests=ALL, rounds=600, seed=3, query_ids=ids)  # seeded
    order = rng.permutation(n)
    shuffled = compare_all(
        {m: v[order] for m, v in a.items()},
        {m: v[order] for m, v in b.items()},
        tests=ALL,
        rounds=600,
        seed=3,
        query_ids=ids[order],
    )
    assert shuffled == first
    monkeypatch.setattr(significance, "SIGN_TILE", 64)
    monkeypatch.setattr(significance, "SIGN_ROWS", 7)
    monkeypatch.setattr(significance, "WORDS_AT_ONCE", 100)
    assert compare_all(a, b, tests=ALL, rounds=600, seed=3, query_ids=ids) == first
    alone = compare(a["cont"], b["cont"], tests=ALL, rounds=600, seed=3)
    together = compare_all({"cont": a["cont"]}, {"cont": b["cont"]}, tests=ALL, rounds=600, seed=3)
    assert together["cont"] == replace(alone, correction=Correction.HOLM)


def test_the_population_count_by_byte_table_counts_the_bits() -> None:
    words = np.random.PCG64(4).random_raw(500)
    words[:3] = [0, 2**64 - 1, 1 << 63]
    expected = [bin(int(w)).count("1") for w in words]
    assert significance._popcount(words).tolist() == expected
    assert significance._popcount_by_bytes(words).tolist() == expected


def test_a_shift_far_beyond_the_noise_gives_the_smallest_randomisation_p() -> None:
    a = np.random.default_rng(0).random(200)
    assert sign_flip_p(1 + 0.01 * a, 500, 0) == 1 / 501  # every flip lowers |Σd|: count 0


def test_binary_measures_get_the_exact_mcnemar_p() -> None:
    rng = np.random.default_rng(4)
    a = (rng.random(400) < 0.6).astype(float)
    b = np.where(rng.random(400) < 0.15, 1 - a, a)
    c = compare(a, b)
    losses, wins = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    assert c.p_mcnemar == mcnemar_exact(losses, wins)
    assert c.p_mcnemar == pytest.approx(stats.binomtest(losses, losses + wins).pvalue, rel=1e-12)
    assert compare(a, b + 0.5 * (b == 1)).p_mcnemar is None  # a 1.5 is not binary


def holm_reference(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=25))
def test_corrections_match_their_references(ps: list[float]) -> None:
    p = np.array(ps)
    assert adjust(p, "holm") == pytest.approx(holm_reference(ps), abs=1e-15)
    assert adjust(p, "bonferroni") == pytest.approx([min(1.0, len(ps) * x) for x in ps], abs=1e-15)
    assert adjust(p, "bh") == pytest.approx(stats.false_discovery_control(p), rel=1e-12, abs=1e-15)
    assert (adjust(p, "none") == p).all()
    for how in Correction:
        q = adjust(p, how)
        assert (q >= p).all() and (q <= 1).all()
        order = np.argsort(p, kind="stable")
        assert (np.diff(q[order]) >= 0).all()  # monotone in p


def test_an_untested_entry_is_outside_the_family() -> None:
    q = adjust(np.array([0.01, np.nan, 0.04]), "holm")
    assert np.isnan(q[1]) and q[0] == pytest.approx(0.02) and q[2] == pytest.approx(0.04)
    assert np.isnan(adjust(np.array([np.nan]), "bh")).all()


def test_the_mde_is_the_normal_approximation_at_80_percent_power() -> None:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert MDE_FACTOR == pytest.approx(z, rel=1e-14) and round(MDE_FACTOR, 4) == 2.8016
    rng = np.random.default_rng(9)
    a, b = rng.random(250), rng.random(250)
    c = compare(a, b)
    se = (b - a).std(ddof=1) / math.sqrt(250)
    assert c.mde80 == pytest.approx(z * se, rel=1e-12)
    assert stats.norm.cdf(c.mde80 / se - stats.norm.ppf(0.975)) == pytest.approx(0.8, abs=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        ([], [], NoTest.TOO_FEW_QUERIES),
        ([0.3], [0.9], NoTest.TOO_FEW_QUERIES),
        ([0.3, 1.0, 0.0], [0.3, 1.0, 0.0], NoTest.ALL_DIFFERENCES_ZERO),
        ([0.1, 0.2, 0.7], [0.2, 0.3, 0.8], NoTest.CONSTANT_DIFFERENCE),  # 0.1 each, give or take a ulp
        ([0.1, np.nan, 0.5], [0.4, 0.9, np.nan], NoTest.TOO_FEW_QUERIES),  # unscored rows are dropped
    ],
)
def test_bad_cases_have_a_reason_and_no_p_and_no_nan(a: list[float], b: list[float], reason: NoTest) -> None:
    c = compare(np.array(a), np.array(b), tests=ALL)
    assert c.reason is reason
    assert c.p_t is c.p_wilcoxon is c.p_randomization is c.p_holm is c.ci95 is c.d_z is c.mde80 is None
    out = json.loads(json.dumps(c.json(), allow_nan=False))
    assert out["reason"] == reason.value and out["p"]["t"] is None and out["p_holm"] is None
    assert out["delta"] is None if len(a) == 0 else isinstance(out["delta"], float)


def test_the_json_contract() -> None:
    rng = np.random.default_rng(3)
    a = rng.random(40)
    b = a + rng.normal(0.1, 0.2, 40)
    out = compare_all({"m": a}, {"m": b}, tests=ALL, correction="bonferroni")
    doc = json.loads(json.dumps(out["m"].json(), allow_nan=False))
    assert set(doc) == {
        "n",
        "delta",
        "ci95",
        "d_z",
        "p",
        "p_holm",
        "correction",
        "test",
        "randomization",
        "mde80",
        "reason",
    }
    assert set(doc["p"]) == {"t", "wilcoxon", "randomization", "mcnemar"} and doc["p"]["mcnemar"] is None
    assert doc["correction"] == "bonferroni" and doc["test"] == "t" and len(doc["ci95"]) == 2
    assert doc["n"] == 40 and doc["randomization"] == {"rounds": 10_000, "seed": 0}


def test_pairs_are_formed_by_query_id_not_row_order() -> None:
    rng = np.random.default_rng(11)
    ids = np.array([f"q{i}" for i in range(500)])
    a, b = rng.random(500), rng.random(500) * 0.8 + 0.15
    in_order = compare(a, b, tests=ALL)
    pa, pb = rng.permutation(500), rng.permutation(500)
    # each arm in its own row order, B with one query A lacks; paired by id, as the evaluation pairs them
    ids_b, values_b = np.concatenate([ids[pb], ["extra"]]), np.append(b[pb], 0.5)
    both, ia, ib = np.intersect1d(ids[pa], ids_b, assume_unique=True, return_indices=True)
    assert len(both) == 500
    assert compare(a[pa][ia], values_b[ib], tests=ALL, query_ids=both) == in_order
    assert compare(a[pa], b[pb], tests=ALL) != in_order  # pairing by row would be wrong
    with pytest.raises(ValueError, match="align the arms by id"):
        compare(a[:3], b[:3], query_ids=ids[[1, 1, 2]])
    with pytest.raises(ValueError, match="align the arms by id"):
        compare_all({"m": a[:3]}, {"m": b[:3]}, query_ids=ids[[1, 1, 2]])


def test_compare_all_corrects_over_the_measures_that_have_a_p() -> None:
    rng = np.random.default_rng(12)
    a = {name: rng.random(120) for name in ("ndcg", "mrr", "recall", "flat")}
    shifts = {"ndcg": 0.1, "mrr": 0.05, "recall": 0.0, "flat": 0.0}
    b = {name: v + rng.normal(shifts[name], 0.3, 120) for name, v in a.items()}
    b["flat"] = a["flat"].copy()
    raw = [compare(a[m], b[m]).p_t for m in ("ndcg", "mrr", "recall")]
    for how in Correction:
        out = compare_all(a, b, correction=how)
        assert list(out) == list(a) and out["flat"].p_holm is None
        assert [out[m].p_holm for m in ("ndcg", "mrr", "recall")] == pytest.approx(adjust(np.array(raw), how))
        assert all(c.correction is how for c in out.values())
    wil = compare_all(a, b, tests=["wilcoxon", "t"])
    smallest = min(c.p_wilcoxon for c in wil.values() if c.p_wilcoxon is not None)
    assert wil["ndcg"].p_holm == pytest.approx(min(1, 3 * smallest))
    with pytest.raises(ValueError, match="measures differ"):
        compare_all(a, {"ndcg": b["ndcg"]})


def test_slices_match_one_comparison_per_slice_and_bh_across_them() -> None:
    rng = np.random.default_rng(13)
    n = 3000
    codes = rng.integers(-1, 5, n)
    codes[codes == 4] = -1
    codes[:1] = 4  # slice 4 holds one query
    a = rng.random(n)
    b = a + rng.normal(0.03, 0.2, n) * (codes + 1)
    names = ["w", "x", "y", "z", "one"]
    out = compare_slices(a, b, codes, names)
    assert out.test == "t" and out.reasons[4] is NoTest.TOO_FEW_QUERIES and np.isnan(out.p[4])
    for i in range(4):
        alone = compare(a[codes == i], b[codes == i])
        assert out.n[i] == alone.n and out.delta[i] == pytest.approx(alone.delta, rel=1e-12)
        assert out.p[i] == pytest.approx(alone.p_t, rel=1e-9, abs=1e-15)
    assert out.q[:4] == pytest.approx(stats.false_discovery_control(out.p[:4]), rel=1e-12)
    rows = json.loads(json.dumps(out.json(), allow_nan=False))
    assert [r["slice"] for r in rows] == names and rows[4]["p"] is None
    assert rows[4]["reason"] == "fewer_than_2_scored_queries"


def test_slices_of_a_binary_measure_use_mcnemar() -> None:
    rng = np.random.default_rng(14)
    codes = rng.integers(0, 3, 2000)
    a = (rng.random(2000) < 0.5).astype(float)
    b = np.where(rng.random(2000) < 0.1 * (codes + 1), 1 - a, a)
    out = compare_slices(a, b, codes, ["a", "b", "c"])
    assert out.test == "mcnemar"
    for i in range(3):
        s = codes == i
        assert out.p[i] == mcnemar_exact(int((a[s] > b[s]).sum()), int((a[s] < b[s]).sum()))
