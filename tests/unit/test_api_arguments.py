"""`triage.open` checks its arguments as the CLI does: TypeError for a value of the wrong kind,
ValueError for one out of range, each message naming the argument."""

from __future__ import annotations

import pytest

import triage
from triage.core.bundled import bundled

RUNS = bundled("sample_runs")
FILES = {
    "a": RUNS / "runs/plain.parquet",
    "b": RUNS / "runs/headers.parquet",
    "labels": RUNS / "labels.parquet",
}

BAD = [
    ({"k": 2**70}, ValueError, "k"),
    ({"k": 2**63}, ValueError, "k"),
    ({"k": 0}, ValueError, "k"),
    ({"k": -3}, ValueError, "k"),
    ({"k": True}, TypeError, "k"),
    ({"k": 5.0}, TypeError, "k"),
    ({"k": "5"}, TypeError, "k"),
    ({"k": []}, ValueError, "k"),
    ({"k": [5, 5]}, ValueError, "k"),
    ({"k": [5, None]}, TypeError, "k"),
    ({"names": "ab"}, TypeError, "names"),
    ({"names": ("a",)}, TypeError, "names"),
    ({"names": ("a", "")}, ValueError, "names"),
    ({"names": ("a", 2)}, ValueError, "names"),
    ({"meta": {"a": 3}}, TypeError, "meta['a']"),
    ({"meta": [("a", {})]}, TypeError, "meta"),
    ({"meta": {"a": {1: "x"}}}, TypeError, "meta['a']"),
    ({"meta": {"z": {}}}, ValueError, "meta"),
    ({"label_state": "both"}, ValueError, "label_state"),
    ({"label_state": 1}, TypeError, "label_state"),
    ({"apply_stale": "yes"}, TypeError, "apply_stale"),
    ({"amendments": 3}, TypeError, "amendments"),
]


@pytest.mark.parametrize(("kwargs", "error", "named"), BAD, ids=[repr(b[0]) for b in BAD])
def test_a_bad_argument_is_a_value_or_type_error_naming_it(kwargs, error, named) -> None:
    with pytest.raises(error, match=None) as caught:
        triage.open(**FILES, **kwargs)
    assert type(caught.value) is error and named in str(caught.value)


def test_a_bad_manifest_argument_is_named() -> None:
    with pytest.raises(TypeError, match="manifest"):
        triage.open(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [5, [5, 10], (1, 5), 10])
def test_good_arguments_open(k) -> None:
    ev = triage.open(**FILES, k=k, names=["plain", "headers"], label_state="frozen", apply_stale=False)
    assert ev.k == (k if isinstance(k, int) else k[0]) and ev.names == ("plain", "headers")
