"""Id fingerprints (core/ids/codes.py): equal strings alike wherever they sit, every byte counted; and
the duplicate screening of ranked lists against a literal reading."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.core.ids.codes import duplicate_rows, fingerprint, list_fingerprints

# == ids.fingerprint =============================================================================


def fp(values: list[str]) -> list[int]:
    return fingerprint(pa.array(values, pa.string())).tolist()


def test_equal_strings_have_equal_fingerprints_wherever_they_sit() -> None:
    # Each value twice: once near the start of the data buffer, once far from it; short (< 8 bytes,
    # some at the very start, where no 8-byte word ends on them), exactly 8, and long; non-ASCII.
    values = ["a", "ab", "", "abcdefg", "abcdefgh", "abcdefghi", "x" * 40, "größe", "日本語のテキスト"]
    got = fp(values + ["filler-" * 5] + values[::-1])
    first, second = got[: len(values)], got[len(values) + 1 :][::-1]
    assert first == second
    assert len(set(first)) == len(values)  # and these distinct values all differ


def test_unequal_strings_differ_at_the_start_the_end_and_in_length() -> None:
    base = "0123456789abcdefghij"
    variants = [
        base,
        "X" + base[1:],  # the first byte
        base[:-1] + "X",  # the last byte
        base + "j",  # one byte longer, same first 8
        base[:-1],  # one byte shorter
        "j" + base,  # longer, same last 8
        "a" * 16,
        "a" * 17,  # the same first and last 8 bytes: only the length tells them apart
        "a" * 9,
    ]
    assert len(set(fp(variants))) == len(variants)
    assert len(set(fp(["ab", *variants]))) == len(variants) + 1  # beside a short string too
    # short strings: every distinct one of up to 7 bytes, even sharing bytes with its neighbours
    short = ["a", "b", "ab", "ba", "aa", "abc", "abcdefg", "bcdefg", "abcdef", "", "\x00", "\x00\x00"]
    assert len(set(fp(short))) == len(short)
    assert len(set(fp(["zzzzzzzzzz", *short]))) == len(short) + 1  # and away from the buffer's start


def test_every_byte_counts_in_a_fingerprint() -> None:
    # Every byte is hashed: ids equal in length and in their first and last 8 bytes still differ
    # (URL-like chunk ids are often so), and so does each single-byte change anywhere.
    a, b = "prefix--" + "A" * 10 + "--suffix", "prefix--" + "B" * 10 + "--suffix"
    assert fp([a])[0] != fp([b])[0]
    base = "https://example.org/docs/section/page#chunk-0012"
    variants = [base[:i] + "X" + base[i + 1 :] for i in range(len(base))]
    assert len(set(fp([base, *variants]))) == len(base) + 1
    assert duplicate_rows(pa.array([[a, b], [a, a]])) == {1: {a: [1, 2]}}


def test_a_sliced_array_has_the_fingerprints_of_its_values() -> None:
    values = ["q1", "abc", "a-much-longer-identifier", "x", "hello world", "zz", "chunk#0001", "é"]
    arr = pa.array(values * 3, pa.string())
    for offset in (1, 3, 5, 9):
        part = arr.slice(offset, 10)
        assert fingerprint(part).tolist() == fp(part.to_pylist()), offset
        assert fingerprint(part).tolist() == fingerprint(arr).tolist()[offset : offset + 10]


def test_large_string_input_equals_string_input() -> None:
    values = ["a", "abcdefgh", "driftwood/handbook-2024#009", "", "日本"]
    assert fingerprint(pa.array(values, pa.large_string())).tolist() == fp(values)
    sliced = pa.array(["pad", *values], pa.large_string()).slice(1)
    assert fingerprint(sliced).tolist() == fp(values)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=20), min_size=1, max_size=30))
def test_a_fingerprint_depends_on_the_string_alone(values: list[str]) -> None:
    # The same strings in another order, behind other strings, alone: the same fingerprint per
    # string, whatever its place in the buffer; distinct strings differ.
    assert fp(values[:1]) == fp(["a padding string", values[0]])[1:]
    here_list = ["a padding string", *values]
    there_list = ["another, longer padding string", *values[::-1]]
    here = dict(zip(here_list, fp(here_list), strict=True))
    there = dict(zip(there_list, fp(there_list), strict=True))
    assert all(here[v] == there[v] for v in values)
    assert len(set(here[v] for v in values)) == len(set(values))


# == ids.duplicate_rows ==========================================================================


def brute_duplicates(lists: list[list[str]]) -> dict[int, dict[str, list[int]]]:
    out = {}
    for r, row in enumerate(lists):
        seen: dict[str, list[int]] = {}
        for i, v in enumerate(row, 1):
            seen.setdefault(v, []).append(i)
        dups = {v: p for v, p in seen.items() if len(p) > 1}
        if dups:
            out[r] = dups
    return out


def test_duplicates_in_ragged_lists() -> None:
    lists = [["a", "b", "a"], ["x"], [], ["p", "q", "r", "p", "q", "p"], ["a", "b"]]
    assert duplicate_rows(pa.array(lists)) == {0: {"a": [1, 3]}, 3: {"p": [1, 4, 6], "q": [2, 5]}}


def test_duplicates_in_equally_deep_lists() -> None:
    lists = [["a", "b", "c"], ["c", "b", "c"], ["x", "y", "z"], ["z", "z", "z"]]
    assert duplicate_rows(pa.array(lists)) == {1: {"c": [1, 3]}, 3: {"z": [1, 2, 3]}}
    assert duplicate_rows(pa.array([["a", "b"], ["b", "a"]])) == {}
    assert duplicate_rows(pa.array([[], []], pa.list_(pa.string()))) == {}


def test_a_deep_outlier_row_is_checked_on_its_own() -> None:
    # 200 rows of depth 3, one of depth 500 (far past 4 × median + 16): its duplicate is found,
    # and an equally deep outlier without one is not reported.
    lists = [[f"r{r}-{i}" for i in range(3)] for r in range(200)]
    deep = [f"d{i}" for i in range(500)]
    lists[50] = deep[:499] + ["d7"]
    lists[120] = deep
    lists[199] = ["r199-0", "r199-0", "r199-1"]
    assert duplicate_rows(pa.array(lists)) == {50: {"d7": [8, 500]}, 199: {"r199-0": [1, 2]}}


def test_batches_and_a_sliced_list_array_give_the_same_rows() -> None:
    rng = random.Random(7)
    lists = [[f"c{rng.randrange(40)}" for _ in range(rng.randrange(0, 9))] for _ in range(300)]
    want = brute_duplicates(lists)
    assert want  # the draw holds duplicates
    arr = pa.array(lists)
    for batch in (1, 5, 64, 1 << 20):
        assert duplicate_rows(arr, batch=batch) == want, batch
    part = arr.slice(37, 100)
    assert duplicate_rows(part, batch=16) == brute_duplicates(lists[37:137])


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["a", "b", "abcdefgh", "abcdefgh-", "x" * 12, "xx"]), max_size=8)),
    st.integers(1, 50),
)
def test_duplicate_rows_equal_a_literal_reading(lists: list[list[str]], batch: int) -> None:
    arr = pa.array(lists, pa.list_(pa.string()))
    assert duplicate_rows(arr, batch=batch) == brute_duplicates(lists)


def test_duplicate_rows_with_the_fingerprints_given_leaves_them_unchanged() -> None:
    rng = random.Random(3)
    lists = [[f"c{rng.randrange(30)}" for _ in range(rng.randrange(0, 12))] for _ in range(200)]
    arr = pa.array(lists)
    fps = list_fingerprints(arr, batch=7)
    before = fps.copy()
    assert duplicate_rows(arr, batch=32, fp=fps) == brute_duplicates(lists)
    assert (fps == before).all()  # the screen sorts a copy, never the run's fingerprints
    assert fps.tolist() == fingerprint(arr.flatten()).tolist()
