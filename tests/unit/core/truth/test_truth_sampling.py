"""The sampling rule (core/truth/sampling.py): bands at their edges, the quotas spread as the
module says (against a unit-at-a-time simulation written apart), tenants taken in turn."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.core.truth import sampling
from triage.core.truth.sampling import BANDS, LOW_FIRST, UNFILTERED, ZERO
from triage.core.views import slices


def band_by_fraction(n: int, rows: int) -> str:
    """The band read off the definition with exact fractions."""
    if n == 0:
        return ZERO
    s = Fraction(n, rows)
    for edge, name in ((Fraction(1, 10), "≥10%"), (Fraction(1, 100), "1–10%"), (Fraction(1, 1000), "0.1–1%")):
        if s >= edge:
            return name
    return "<0.1%"


def one_at_a_time(quota: int, available: dict[str, int], order: tuple[str, ...]) -> dict[str, int]:
    """Hand out the quota a query at a time, cycling over the bands in `order` that have one left."""
    out = dict.fromkeys(order, 0)
    while quota:
        open_ = [b for b in order if out[b] < available.get(b, 0)]
        if not open_:
            break
        for b in open_:
            if not quota:
                break
            out[b] += 1
            quota -= 1
    return out


def test_the_bands_are_the_slices_bands_with_the_empty_one_apart() -> None:
    assert BANDS[:4] == slices.BANDS[1:] and UNFILTERED == slices.UNFILTERED
    assert set(LOW_FIRST) == set(BANDS) and LOW_FIRST[-1] == ZERO


@pytest.mark.parametrize(
    ("n", "rows", "band"),
    [
        (0, 1000, ZERO),
        (1, 1000, "0.1–1%"),  # exactly 0.1%: the lower edge is the band's
        (1, 1001, "<0.1%"),
        (9, 1000, "0.1–1%"),
        (10, 1000, "1–10%"),
        (99, 1000, "1–10%"),
        (100, 1000, "≥10%"),
        (1000, 1000, "≥10%"),
        (1, 10_000_000, "<0.1%"),
        (100_000, 1_000_000, "≥10%"),
        (99_999, 1_000_000, "1–10%"),
        # 0.001 * 3 rounds up in floats (0.0030000000000000001 > 0.003): whole numbers decide
        (3, 3000, "0.1–1%"),
        (29, 2900, "1–10%"),
    ],
)
def test_each_band_holds_its_lower_edge(n: int, rows: int, band: str) -> None:
    assert sampling.eligible_band(np.array([n]), rows).tolist() == [band]
    assert band_by_fraction(n, rows) == band


@given(st.integers(1, 10**10), st.data())
def test_the_band_is_the_exact_fractions(rows: int, data: st.DataObject) -> None:
    n = data.draw(st.lists(st.integers(0, rows), min_size=1, max_size=20))
    assert sampling.eligible_band(np.array(n), rows).tolist() == [band_by_fraction(x, rows) for x in n]


def test_requested_splits_evenly_and_gives_the_remainder_to_the_lowest_bands() -> None:
    assert sampling.requested(100) == dict.fromkeys(BANDS, 20)
    assert sampling.requested(7) == {"≥10%": 1, "1–10%": 1, "0.1–1%": 2, "<0.1%": 2, ZERO: 1}
    assert sampling.requested(4) == {"≥10%": 1, "1–10%": 1, "0.1–1%": 1, "<0.1%": 1, ZERO: 0}
    assert sampling.requested(0) == dict.fromkeys(BANDS, 0)
    assert list(sampling.requested(3)) == list(BANDS)


def test_a_band_the_log_cannot_fill_gives_its_shortfall_to_the_others_lowest_first() -> None:
    got = sampling.water_fill(100, {"≥10%": 500, "1–10%": 300, "0.1–1%": 40, "<0.1%": 3, ZERO: 0}, LOW_FIRST)
    # 3 and 0 taken whole; 97 over three bands: 32 each and one more to the lowest of them
    assert got == {"<0.1%": 3, "0.1–1%": 33, "1–10%": 32, "≥10%": 32, ZERO: 0}
    assert sum(got.values()) == 100
    assert sampling.water_fill(100, {"≥10%": 5, "<0.1%": 2}, LOW_FIRST) == {
        "<0.1%": 2,
        "0.1–1%": 0,
        "1–10%": 0,
        "≥10%": 5,
        ZERO: 0,
    }


@given(
    st.integers(0, 300),
    st.lists(st.integers(0, 120), min_size=len(BANDS), max_size=len(BANDS)),
)
@settings(max_examples=300)
@pytest.mark.slow
def test_water_fill_is_the_unit_at_a_time_round(quota: int, caps: list[int]) -> None:
    available = dict(zip(LOW_FIRST, caps, strict=True))
    got = sampling.water_fill(quota, available, LOW_FIRST)
    assert got == one_at_a_time(quota, available, LOW_FIRST)
    assert sum(got.values()) == min(quota, sum(caps))


def test_round_robin_takes_one_per_tenant_a_turn_not_by_popularity() -> None:
    tenants = ["big"] * 900 + ["mid"] * 60 + ["a", "b", "c"] + ["small"] * 2
    rows = np.arange(len(tenants))
    keys = sampling.order_keys(7, (str(i).encode() for i in rows))
    used: Counter[object] = Counter()
    order = {t: i for i, t in enumerate(sorted(set(tenants)))}
    chosen = sampling.round_robin(rows, tenants, keys, 12, used, order)
    got = Counter(tenants[r] for r in chosen)
    # six tenants: the first turn takes one each, the second three (a, b and c have one query
    # each), the third two (small has two), and the fourth one more of big or mid
    assert sum(got.values()) == 12
    assert got["a"] == got["b"] == got["c"] == 1 and got["small"] == 2
    assert abs(got["big"] - got["mid"]) <= 1 and got["big"] + got["mid"] == 7
    assert used == got
    # each tenant's queries are taken lowest key first
    for t in ("big", "mid"):
        mine = sorted((r for r in rows if tenants[r] == t), key=lambda r: int(keys[r]))
        assert [r for r in chosen if tenants[r] == t] == mine[: got[t]]


@given(
    st.lists(st.integers(0, 7), min_size=1, max_size=200),
    st.integers(0, 60),
    st.integers(0, 2**32),
)
@settings(max_examples=200)
def test_no_tenant_with_queries_left_has_two_fewer_than_another(
    owners: list[int], quota: int, seed: int
) -> None:
    tenants = [f"t{o}" for o in owners]
    rows = np.arange(len(tenants))
    keys = sampling.order_keys(seed, (str(i).encode() for i in rows))
    order = {t: hash((seed, t)) for t in set(tenants)}
    chosen = sampling.round_robin(rows, tenants, keys, quota, Counter(), order)
    assert len(chosen) == min(quota, len(rows)) and len(set(chosen)) == len(chosen)
    got = Counter(tenants[r] for r in chosen)
    have = Counter(tenants)
    top = max(got.values(), default=0)
    assert all(got[t] >= top - 1 for t in have if have[t] > got[t])


def test_earlier_strata_make_a_tenant_wait_its_turn() -> None:
    tenants = ["x", "y", "z"]
    keys = np.array([1, 2, 3], dtype=np.uint64)
    used: Counter[object] = Counter({"x": 2, "y": 1})
    chosen = sampling.round_robin(np.arange(3), tenants, keys, 2, used, {"x": 0, "y": 1, "z": 2})
    assert [tenants[r] for r in chosen] == ["z", "y"]


def _candidates(spec: dict[tuple[str, str], list[str]]) -> tuple[list[str], list[str], list[str]]:
    shapes, bands, tenants = [], [], []
    for (shape, band), owners in spec.items():
        shapes += [shape] * len(owners)
        bands += [band] * len(owners)
        tenants += owners
    return shapes, bands, tenants


def test_allocate_fills_each_stratum_as_the_rule_says() -> None:
    spec = {
        (UNFILTERED, UNFILTERED): [f"t{i % 5}" for i in range(300)],
        ("tenant", "≥10%"): [f"t{i % 3}" for i in range(100)],
        ("tenant", "1–10%"): [f"t{i % 3}" for i in range(50)],
        ("tenant", "0.1–1%"): ["t0"] * 4,
        ("tenant", "<0.1%"): ["t1", "t2"],
        ("doc_type & tenant", "<0.1%"): [f"t{i}" for i in range(40)],
        ("doc_type & tenant", ZERO): ["t0"] * 3,
    }
    shapes, bands, tenants = _candidates(spec)
    keys = sampling.order_keys(3, (f"{i}".encode() for i in range(len(shapes))))
    got = sampling.allocate(shapes, bands, tenants, keys, per_shape=30, control=25, seed=3)
    cells = {(s.shape, s.band): (s.requested, s.available, s.filled) for s in got.strata}
    assert [(s.shape, s.band) for s in got.strata] == [(UNFILTERED, UNFILTERED)] + [
        (shape, b) for shape in ("doc_type & tenant", "tenant") for b in BANDS
    ]
    assert cells[(UNFILTERED, UNFILTERED)] == (25, 300, 25)
    for shape in ("tenant", "doc_type & tenant"):
        available = {b: len(spec.get((shape, b), [])) for b in BANDS}
        available[ZERO] = min(available[ZERO], 6)  # the empty band takes no other band's shortfall
        expected = one_at_a_time(30, available, LOW_FIRST)
        assert {b: cells[(shape, b)][2] for b in BANDS} == expected
        assert {b: cells[(shape, b)][0] for b in BANDS} == dict.fromkeys(BANDS, 6)
    # an independent count of the rows taken
    counted = Counter((shapes[r], bands[r]) for r in got.rows)
    assert counted == Counter({k: v[2] for k, v in cells.items() if v[2]})
    assert len(set(got.rows.tolist())) == len(got.rows)
    # the output's order: control first, then shapes by name, bands broadest first
    seen = [(shapes[r], bands[r]) for r in got.rows]
    rank = {k: i for i, k in enumerate((s.shape, s.band) for s in got.strata)}
    assert [rank[k] for k in seen] == sorted(rank[k] for k in seen)
    short = {(s.shape, s.band): s.short for s in got.strata if s.short}
    assert short == {
        ("tenant", "0.1–1%"): 2,
        ("tenant", "<0.1%"): 4,
        ("tenant", ZERO): 6,
        ("doc_type & tenant", ZERO): 3,
        **{("doc_type & tenant", b): 6 for b in ("≥10%", "1–10%", "0.1–1%")},
    }


def test_the_empty_band_takes_its_share_and_no_more() -> None:
    shapes = ["doc_type"] * 60
    bands = [ZERO] * 50 + ["≥10%"] * 10
    keys = sampling.order_keys(0, (str(i).encode() for i in range(60)))
    got = sampling.allocate(shapes, bands, [None] * 60, keys, per_shape=50, control=0, seed=0)
    filled = {s.band: s.filled for s in got.strata if s.shape == "doc_type"}
    assert filled == {"≥10%": 10, "1–10%": 0, "0.1–1%": 0, "<0.1%": 0, ZERO: 10}
    assert sum(s.short for s in got.strata) == 30  # 10 each in the three empty bands


def test_allocate_is_reproducible_and_moves_with_the_seed() -> None:
    shapes = [UNFILTERED] * 500
    tenants = [f"t{i % 50}" for i in range(500)]
    ids = [f"q{i}".encode() for i in range(500)]
    runs = [
        sampling.allocate(shapes, shapes, tenants, sampling.order_keys(s, ids), 10, 20, s).rows.tolist()
        for s in (1, 1, 2)
    ]
    assert runs[0] == runs[1] != runs[2]
    # 20 of 50 tenants: no tenant twice
    assert len({tenants[r] for r in runs[0]}) == 20


def test_a_control_group_the_log_lacks_is_reported_not_dropped() -> None:
    got = sampling.allocate(["tenant"], ["≥10%"], ["a"], np.array([5], dtype=np.uint64), 5, 10, 0)
    control = got.strata[0]
    assert (control.shape, control.requested, control.available, control.filled) == (UNFILTERED, 10, 0, 0)
    assert control.short == 10


def test_shape_names_ignore_values_and_order() -> None:
    assert sampling.predicate_shape({"tenant", "doc_type"}) == "doc_type & tenant"
    assert sampling.predicate_shape({"Tenant"}) == "tenant"
    assert sampling.predicate_shape(set()) == sampling.NO_COLUMN
    assert sampling.predicate_shape(set(), unfiltered=True) == UNFILTERED
    assert slices.filter_shape("tenant = 'a' AND doc_type IN ('x')") == "doc_type & tenant"
