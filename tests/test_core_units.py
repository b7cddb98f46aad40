"""Unit tests of the core's building blocks: id fingerprints and duplicate screening, re-judging
one query's gold, the query searcher, the near-duplicate rule and the memory-mapped corpus cache."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.core.errors import InputError
from triage.core.evaluation import Evaluation, evaluate
from triage.core.ids.codes import duplicate_rows, fingerprint, list_fingerprints
from triage.core.ids.index import CorpusIds
from triage.core.inputs import corpus as corpus_mod
from triage.core.inputs import corpus_cache as cache
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.load import load_inputs
from triage.core.inputs.manifest import from_manifest
from triage.core.inputs.readers import from_table, validate_text
from triage.core.inputs.shapes import Role
from triage.core.measures.gold import SLOTS, encode_gold, gold_hits
from triage.core.text.search import Searcher
from triage.core.text.suggest import MIN_CHARS, THRESHOLD, near_duplicates

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


# == gold.gold_hits ==============================================================================

# Ids built to collide: equal length and equal first and last 8 bytes, differing in the middle.
COLLIDING = [f"prefix--{c * 6}--suffix" for c in "ABCDEF"]
IDS = ["a", "b", "abcdefgh", "doc7#12", "doc7#13", *COLLIDING] + [f"c{i}" for i in range(14)]


def brute_hits(lists: list[list[str]], gold: dict[int, dict[str, int]]) -> list[tuple[int, int, int, str]]:
    """(query, rank, grade, id) of each gold id at its first position, read literally."""
    out = []
    for q, row in enumerate(lists):
        mine = dict(gold.get(q, {}))
        for rank, chunk in enumerate(row, 1):
            if chunk in mine:
                out.append((q, rank, mine.pop(chunk), chunk))
    return out


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(IDS), max_size=12), min_size=1, max_size=12),
    st.lists(st.lists(st.sampled_from(IDS), unique=True, max_size=SLOTS + 4), min_size=1, max_size=12),
    st.booleans(),
)
def test_gold_hits_equal_a_literal_reading(
    lists: list[list[str]], golds: list[list[str]], shuffled_rows: bool
) -> None:
    # Rows in another order than the queries (a run joined on query id); gold sets of up to
    # SLOTS + 4 ids (past the fingerprint slots); colliding fingerprints; ids listed twice.
    n = len(lists)
    gold = {q: {c: 1 + (i % 3) for i, c in enumerate(golds[q % len(golds)])} for q in range(n)}
    qids = pa.array([f"q{q}" for q in range(n)])
    rows = list(range(n))[::-1] if shuffled_rows else list(range(n))
    table = pa.table(
        {
            "query_id": pa.array([f"q{q}" for q in gold for _ in gold[q]], pa.string()),
            "chunk_id": pa.array([c for q in gold for c in gold[q]], pa.string()),
            "relevance": pa.array([g for q in gold for g in gold[q].values()], pa.int32()),
        }
    )
    encoded = encode_gold(table, table, qids)
    arr = pa.array([lists[r] for r in rows], pa.list_(pa.string()))
    hits = gold_hits(arr, np.array(rows, np.int64), encoded)
    names = encoded.vocabulary.take(pa.array(hits.code)).to_pylist()
    got = list(zip(hits.query.tolist(), hits.rank.tolist(), hits.grade.tolist(), names, strict=True))
    assert got == brute_hits(lists, gold)
    again = gold_hits(arr, np.array(rows, np.int64), encoded, list_fingerprints(arr, batch=5))
    assert all((getattr(again, f) == getattr(hits, f)).all() for f in ("query", "rank", "grade", "code"))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(1, 9), st.booleans())
def test_gold_hits_on_equally_deep_lists(data: st.DataObject, depth: int, shuffled_rows: bool) -> None:
    # Every list as deep as the others (read as a matrix), no id listed twice (so `repeats`
    # False may skip dropping repeats): the literal reading still.
    row = st.lists(st.sampled_from(IDS), min_size=depth, max_size=depth, unique=True)
    lists = data.draw(st.lists(row, min_size=1, max_size=12))
    golds = data.draw(st.lists(st.lists(st.sampled_from(IDS), unique=True, max_size=SLOTS + 2), min_size=1))
    n = len(lists)
    gold = {q: {c: 1 + (i % 3) for i, c in enumerate(golds[q % len(golds)])} for q in range(n)}
    table = pa.table(
        {
            "query_id": pa.array([f"q{q}" for q in gold for _ in gold[q]], pa.string()),
            "chunk_id": pa.array([c for q in gold for c in gold[q]], pa.string()),
            "relevance": pa.array([g for q in gold for g in gold[q].values()], pa.int32()),
        }
    )
    encoded = encode_gold(table, table, pa.array([f"q{q}" for q in range(n)]))
    rows = list(range(n))[::-1] if shuffled_rows else list(range(n))
    arr = pa.array([lists[r] for r in rows], pa.list_(pa.string()))
    for repeats in (True, False):
        hits = gold_hits(arr, np.array(rows, np.int64), encoded, repeats=repeats)
        names = encoded.vocabulary.take(pa.array(hits.code)).to_pylist()
        got = list(zip(hits.query.tolist(), hits.rank.tolist(), hits.grade.tolist(), names, strict=True))
        assert got == brute_hits(lists, gold)


# == Evaluation.rejudged =========================================================================


@pytest.fixture(scope="module")
def sample_ev(sample: Path) -> Evaluation:
    inputs = load_inputs(from_manifest(sample))
    return evaluate(inputs, inputs.frozen.table)


PER_QUERY = ("gold_rank", "hit", "recall", "mrr", "ndcg")


def snapshot(ev: Evaluation) -> dict[str, object]:
    """Copies of every per-query array and the gold, to tell later whether anything changed."""
    out: dict[str, object] = {"golds": [ev.gold_of(q) for q in range(ev.n)]}
    for side, arm in (("a", ev.a), ("b", ev.b)):
        for name in PER_QUERY:
            out[f"{side}.{name}"] = getattr(arm.judged, name).copy()
        out[f"{side}.hits"] = hits_of(ev, side)
    out["keys"], out["vocabulary"] = ev.gold.keys.copy(), ev.gold.vocabulary.to_pylist()
    out["grade"], out["frozen_keys"] = ev.gold.grade.copy(), ev.gold.frozen_keys.copy()
    for name in ("query", "grade", "code", "n_gold"):
        out[f"sets.{name}"] = getattr(ev.gold.sets, name).copy()
    return out


def hits_of(ev: Evaluation, side: str) -> set[tuple[int, int, int, str]]:
    h = getattr(ev, side).hits
    names = ev.gold.vocabulary.take(pa.array(h.code)).to_pylist()
    return set(zip(h.query.tolist(), h.rank.tolist(), h.grade.tolist(), names, strict=True))


def gold_table(ev: Evaluation, amended: dict[int, list[tuple[str, int]]]) -> pa.Table:
    """The frozen gold with each amended query's gold replaced by its pairs."""
    rows = []
    for q in range(ev.n):
        qid = ev.query_ids[q].as_py()
        pairs = amended[q] if q in amended else frozen_gold(ev, q)
        rows += [{"query_id": qid, "chunk_id": c, "relevance": g} for c, g in pairs]
    return pa.Table.from_pylist(
        rows, pa.schema([("query_id", pa.string()), ("chunk_id", pa.string()), ("relevance", pa.int64())])
    )


def frozen_gold(ev: Evaluation, q: int) -> list[tuple[str, int]]:
    """Query q's pairs as the frozen file has them."""
    t = ev.inputs.frozen.table
    part = t.filter(pc.equal(t.column("query_id"), ev.query_ids[q].as_py()))
    return list(zip(part.column("chunk_id").to_pylist(), part.column("relevance").to_pylist(), strict=True))


def assert_same_judgement(got: Evaluation, want: Evaluation) -> None:
    assert got.query_ids.equals(want.query_ids) and got.k == want.k
    for side in ("a", "b"):
        for name in PER_QUERY:
            g, w = getattr(getattr(got, side).judged, name), getattr(getattr(want, side).judged, name)
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, equal_nan=True, err_msg=f"{side}.{name}")
        assert hits_of(got, side) == hits_of(want, side), side
    np.testing.assert_array_equal(got.scored, want.scored)
    np.testing.assert_array_equal(got.outcomes, want.outcomes)
    np.testing.assert_array_equal(got.flips, want.flips)
    assert got.paired() == want.paired()
    for q in range(got.n):
        assert sorted(got.gold_of(q)) == sorted(want.gold_of(q)), q
    assert got.amended == want.amended


def random_amendment(ev: Evaluation, rng: random.Random, q: int) -> list[tuple[str, int]]:
    """q's gold plus a few ids — retrieved by A or B (so the numbers move), or never seen — with
    grades 1–3; sometimes a frozen gold regraded."""
    pairs = dict(ev.gold_of(q))
    retrieved = ev.a.retrieved(q) + ev.b.retrieved(q)
    for _ in range(rng.randrange(1, 4)):
        pick = rng.random()
        chunk = rng.choice(retrieved) if pick < 0.6 and retrieved else f"new/{rng.randrange(10**6)}"
        pairs[chunk] = rng.randint(1, 3)
    if pairs and rng.random() < 0.3:
        pairs[rng.choice(list(pairs))] = rng.randint(1, 3)
    return list(pairs.items())


@pytest.mark.slow
def test_rejudged_equals_a_fresh_evaluation_of_the_amended_gold(sample_ev: Evaluation) -> None:
    rng = random.Random(20261130)
    before = snapshot(sample_ev)
    ev, amended = sample_ev, {}
    for _ in range(12):  # a chain of amendments, some to the same query twice
        q = rng.choice([*ev.flips.tolist()[:10], rng.randrange(ev.n)])
        pairs = random_amendment(ev, rng, q)
        previous = snapshot(ev)
        new = ev.rejudged(q, pairs)
        amended[q] = pairs
        fresh = evaluate(sample_ev.inputs, gold_table(sample_ev, amended), sample_ev.k)
        assert_same_judgement(new, fresh)
        assert_unchanged(ev, previous)  # the evaluation it came from is untouched
        ev = new
    assert_unchanged(sample_ev, before)
    assert ev.amended and not sample_ev.amended


def test_rejudging_a_query_to_its_own_gold_changes_nothing(sample_ev: Evaluation) -> None:
    q = sample_ev.flips[0]
    same = sample_ev.rejudged(int(q), sample_ev.gold_of(int(q)))
    assert_same_judgement(same, sample_ev)


def assert_unchanged(ev: Evaluation, before: dict[str, object]) -> None:
    after = snapshot(ev)
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(after[key], value, err_msg=key)
        else:
            assert after[key] == value, key


# == Searcher ====================================================================================

IDS = ["q1", "q100", "q10", "x-q1-y", "leave", "q2", "q3", "q4", "q5"]
TEXTS = [
    "how much parental leave do I get",
    "reset a password",
    "expense report deadline",
    "card reader declined",
    "office opening hours",
    "remote work days per week",
    "remote work days per week",
    "annual leave carry over",
    None,
]


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(pa.array(IDS), pa.array(TEXTS, pa.string()))


def names(hits: list[int]) -> list[str]:
    return [IDS[i] for i in hits]


def test_search_exact_id_first_then_id_substrings_by_length(searcher: Searcher) -> None:
    got = names(searcher.search("q1"))
    assert got[:4] == ["q1", "q10", "q100", "x-q1-y"]
    assert names(searcher.search("Q100")) == ["q100"]  # case does not matter; no text holds it


def test_search_word_matches_rank_texts(searcher: Searcher) -> None:
    # texts holding any of the needle's words, best first: both words, then one ("annual leave")
    assert names(searcher.search("parental leave")) == ["q1", "q4"]
    # an id holding the needle comes before every text match
    assert names(searcher.search("leave")) == ["leave", "q1", "q4"]
    assert names(searcher.search("leave", limit=2)) == ["leave", "q1"]


def test_search_falls_back_to_qratio_on_a_typo(searcher: Searcher) -> None:
    # no word of these is in any text (or id): QRatio over every text ranks them instead
    for typo, want in (
        ("pasword resett", "q100"),
        ("expnse reprot dedline", "q10"),
        ("ofice opning", "leave"),
    ):
        assert not any(w in t for w in typo.split() for t in TEXTS if t)
        assert names(searcher.search(typo))[0] == want, typo


def test_search_within_limits_the_queries(searcher: Searcher) -> None:
    within = np.array([IDS.index("q10"), IDS.index("q4"), IDS.index("q3")])
    got = names(searcher.search("q1", within=within))
    assert got[0] == "q10" and set(got) <= {"q10", "q4", "q3"}
    assert names(searcher.search("remote work", within=np.array([IDS.index("q3")]))) == ["q3"]
    assert searcher.search("   ") == [] and searcher.search("") == []


def test_search_prefer_breaks_ties(searcher: Searcher) -> None:
    q2, q3 = IDS.index("q2"), IDS.index("q3")  # the very same text: an equal score
    assert names(searcher.search("remote work days", prefer=np.array([q3])))[:2] == ["q3", "q2"]
    assert names(searcher.search("remote work days", prefer=np.array([q2])))[:2] == ["q2", "q3"]
    assert names(searcher.search("remote work days"))[:2] == ["q2", "q3"]  # no preference: universe order
    assert len(searcher.search("remote work days", limit=1)) == 1


# == suggest.near_duplicates =====================================================================

PARA_2024 = (
    "Employees may work from home up to three days a week, agreed in advance with their manager's "
    "approval and recorded in the team calendar."
)
PARA_2023 = PARA_2024.replace("manager's", "line manager's")
CLAUSE = (
    "Neither party shall be liable for any indirect or consequential loss arising out of or in "
    "connection with this agreement, however caused."
)


def test_the_same_passage_in_another_edition_is_flagged() -> None:
    golds = {"hb-2024#009": ("Handbook 2024 > Working hours > Remote work", PARA_2024)}
    candidates = {
        "hb-2023#009": ("Handbook 2023 > Working hours > Remote work", PARA_2023),
        "hb-2024#010": ("Handbook 2024 > Working hours > Overtime", "Overtime is paid at 1.5x " * 4),
    }
    got = near_duplicates(golds, candidates)
    assert set(got) == {"hb-2023#009"}
    gold, score = got["hb-2023#009"]
    assert gold == "hb-2024#009" and THRESHOLD <= score < 100


def test_a_boilerplate_clause_under_another_heading_path_is_not_flagged() -> None:
    golds = {"acme/msa#12": ("Acme master services agreement > Liability > Exclusions", CLAUSE)}
    other = {"fjord/msa#30": ("Fjord support contract > Termination > Effect of termination", CLAUSE)}
    assert near_duplicates(golds, other) == {}
    # the same body with no heading path on one side: the body alone decides
    assert near_duplicates(golds, {"x#1": (None, CLAUSE)}) == {"x#1": ("acme/msa#12", 100.0)}


def test_short_texts_are_not_flagged() -> None:
    short = "Paid leave: 14 weeks."
    assert len(short) < MIN_CHARS
    same_header = "Handbook > Leave"
    assert near_duplicates({"g": (same_header, short)}, {"c": (same_header, short)}) == {}
    # a long candidate against a short gold, and the other way round
    assert near_duplicates({"g": (same_header, short)}, {"c": (same_header, short + " " * 40)}) == {}
    long_text = "x" * (MIN_CHARS - 1)
    assert near_duplicates({"g": (None, long_text)}, {"c": (None, long_text)}) == {}
    exactly = "y" * MIN_CHARS
    # one character short of the minimum, against a gold of exactly the minimum (similarity ~99)
    assert near_duplicates({"g": (None, exactly)}, {"c": (None, exactly[1:])}) == {}
    assert near_duplicates({"g": (None, exactly[1:])}, {"c": (None, exactly)}) == {}
    assert near_duplicates({"g": (None, exactly)}, {"c": (None, exactly)}) == {"c": ("g", 100.0)}


def test_the_best_of_several_golds_is_chosen_and_golds_are_not_candidates() -> None:
    header = "Handbook > Working hours > Remote work"
    near = PARA_2024.replace("three", "two")  # one word off PARA_2024, further off PARA_2023
    golds = {"g-2023": (header, PARA_2023), "g-2024": (header, PARA_2024)}
    got = near_duplicates(golds, {"c": (header, near), "g-2023": (header, PARA_2024)})
    assert set(got) == {"c"}  # a gold id is never its own suggestion
    assert got["c"][0] == "g-2024"
    golds_reversed = dict(reversed(golds.items()))  # whichever gold comes first
    assert near_duplicates(golds_reversed, {"c": (header, near)})["c"][0] == "g-2024"


# == corpus.open_corpus: the memory-mapped cache =================================================


def write_corpus(path: Path, n: int = 60, row_group: int = 7) -> list[str]:
    """A Parquet corpus of `n` chunks in row groups of `row_group`, ids in no particular order,
    an extra column the corpus does not use, and BEIR's `title` for the header."""
    rng = random.Random(5)
    ids = [f"doc{rng.randrange(10**6):06d}#{i:03d}" for i in range(n)]
    table = pa.table(
        {
            "chunk_id": ids,
            "title": [f"Doc {i} > Section" if i % 5 else None for i in range(n)],
            "text": [f"body of chunk {i} " + "é" * (i % 4) for i in range(n)],
            "doc_id": [f"doc{i // 10}" for i in range(n)],
            "tenant": ["t"] * n,
        }
    )
    pq.write_table(table, path, row_group_size=row_group)
    assert pq.ParquetFile(path).num_row_groups == -(-n // row_group)
    return ids


def test_the_cache_gives_the_same_chunks_as_the_in_memory_corpus(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path)
    progress: list[float] = []
    cached = open_corpus(path, progress.append, small=0)
    in_memory = open_corpus(path)
    assert progress == [pytest.approx((i + 1) / 9) for i in range(9)]  # one call per row group
    assert list((tmp_path / "cache" / "triage").glob("corpus-*/index.arrow"))  # the cache is there
    assert len(cached) == len(in_memory) == len(ids)
    assert cached.ids.to_pylist() == in_memory.ids.to_pylist() == ids
    wanted = [*ids[::-1], "absent#1", "", "zzzz", "doc"]
    got, want = cached.get(wanted), in_memory.get(wanted)
    assert got == want and list(got) == ids[::-1]  # in the order asked; absent ids absent
    assert got[ids[3]].header == "Doc 3 > Section" and got[ids[5]].header is None
    assert got[ids[3]].text == "body of chunk 3 ééé" and got[ids[3]].source_type is None
    assert cached.get(["absent#1"]) == {} and cached.get([]) == {}
    asked = pa.array([ids[7], None, "absent#1", "", ids[7], ids[0]])
    assert cached._known is not None and in_memory._known is None  # by fingerprint / by hash set
    assert cached.rows_of(asked).tolist() == in_memory.rows_of(asked).tolist() == [7, -1, -1, -1, 7, 0]


def counted_builds(monkeypatch) -> list[Path]:  # type: ignore[no-untyped-def]
    """From now on, the cache folder of each corpus cache build, in order."""
    builds: list[Path] = []
    real = cache.build_cache

    def counting(p: Path, progress: object = None) -> object:
        builds.append(cache.folder_of(cache.corpus_key(p)))
        return real(p, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "build_cache", counting)
    return builds


def test_the_cache_is_built_once_and_reused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=30, row_group=4)
    builds = counted_builds(monkeypatch)
    first = open_corpus(path, small=0)
    second = open_corpus(path, small=0)
    assert len(builds) == 1
    assert second.get(ids) == first.get(ids) and len(second.get(ids)) == len(ids)
    assert open_corpus(path, small=1 << 40).get(ids) == first.get(ids)  # large threshold: in memory
    assert len(builds) == 1
    write_corpus(path, n=31, row_group=4)  # a new version of the file: a new cache
    assert len(open_corpus(path, small=0)) == 31 and len(builds) == 2 and builds[0] != builds[1]


def test_the_caches_header_tokens_are_the_headers_counted_now(tmp_path: Path, monkeypatch) -> None:
    from triage.core.text.words import token_estimate

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=40, row_group=6)
    table = pq.read_table(path)
    titles = table.column("title").to_pylist()
    titles[7] = "  many\twords\u3000here, é and\u00a0more  "  # non-ASCII whitespace: the regex path
    pq.write_table(table.set_column(1, "title", pa.array(titles, pa.string())), path, row_group_size=6)
    rows = np.array([7, 0, 5, 39, 7, 12], np.int64)
    want = [token_estimate(titles[r]) if titles[r] else 0 for r in rows]
    cached, in_memory = open_corpus(path, small=0), open_corpus(path)
    assert cached._tokens is not None and in_memory._tokens is None
    assert cached.header_tokens(rows).tolist() == in_memory.header_tokens(rows).tolist() == want
    assert want[0] > 0 and want[2] == 0  # a header counted, a null header none


def test_an_uncached_corpus_counts_each_header_once_when_first_asked(tmp_path: Path, monkeypatch) -> None:
    from triage.core.text.words import token_estimate

    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=30, row_group=4)
    corpus = open_corpus(path)  # small: in memory, no cached counts
    want = [token_estimate(h) if h else 0 for h in corpus.table.column("header").to_pylist()]
    counted: list[int] = []
    count = corpus_mod.token_estimates

    def counting(texts):  # type: ignore[no-untyped-def]
        counted.append(len(texts))
        return count(texts)

    monkeypatch.setattr(corpus_mod, "token_estimates", counting)
    first, second = np.array([5, 1, 5, 0]), np.array([1, 29, 0, 5, 29])
    assert corpus.header_tokens(first).tolist() == [want[i] for i in first]
    assert corpus.header_tokens(second).tolist() == [want[i] for i in second]
    assert corpus.header_tokens(first).tolist() == [want[i] for i in first]
    assert counted == [3, 1]  # rows 0, 1, 5; then 29 alone; then none


@pytest.mark.slow
def test_a_cache_folder_without_header_tokens_is_built_again_and_a_wrong_one_refused(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=20, row_group=4)
    builds = counted_builds(monkeypatch)
    open_corpus(path, small=0)
    tokens = builds[0] / "tokens.arrow"
    tokens.unlink()  # a folder an older triage wrote
    again = open_corpus(path, small=0)
    assert len(builds) == 2 and tokens.is_file() and again._tokens is not None
    with (
        pa.OSFile(str(tokens), "wb") as f,
        pa.ipc.new_file(f, pa.schema([("header_tokens", pa.int64())])) as w,
    ):
        w.write_table(pa.table({"header_tokens": pa.array([1, 2], pa.int64())}))
    third = open_corpus(path, small=0)  # not what the manifest proves: built again
    counted = open_corpus(path).header_tokens(np.arange(20)).tolist()  # in memory, counted now
    assert len(builds) == 3 and third.header_tokens(np.arange(20)).tolist() == counted


@pytest.mark.slow
@pytest.mark.parametrize("left", ["file", "link to the corpus", "folder"])
def test_the_files_an_older_triage_kept_are_removed_when_the_folder_is_built_again(
    tmp_path: Path, monkeypatch, left: str
) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=20, row_group=4)
    before = path.read_bytes()
    builds = counted_builds(monkeypatch)
    open_corpus(path, small=0)
    (builds[0] / "manifest.json").unlink()  # the folder as a version before left it
    older = [builds[0] / name for name in cache.OLDER_FILES]
    for name in older:
        if left == "file":
            name.write_bytes(b"fp and placed keys")
        elif left == "link to the corpus":
            name.symlink_to(path)
        else:
            name.mkdir()
    again = open_corpus(path, small=0)
    assert len(builds) == 2 and (builds[0] / "manifest.json").is_file()
    assert again.rows_of(pa.array(ids[:3])).tolist() == [0, 1, 2]
    assert all(n.is_dir() if left == "folder" else not os.path.lexists(n) for n in older)
    assert path.read_bytes() == before  # a link is removed, never followed


def test_the_corpus_ids_come_from_a_built_cache_as_the_file_gives_them(tmp_path: Path, monkeypatch) -> None:
    from triage.core.ids.index import IdIndex
    from triage.core.inputs import load as inputs

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)  # this small file is mapped like a large one
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=50, row_group=6)
    assert corpus_mod.cached_ids(path) is None  # no cache yet: the file is read
    from_file = inputs.load_corpus_ids(path)
    open_corpus(path, small=0)  # built (the app's look-ups, the report's text hints)
    got = corpus_mod.cached_ids(path)
    assert got is not None
    chunk_ids, index, slot_rows = got.ids, got.index, got._rows
    assert chunk_ids.to_pylist() == ids and slot_rows is not None
    fp = fingerprint(pa.array(ids))
    built = IdIndex.build(fp)
    assert index.table.tolist() == built.table.tolist() and index.mask == built.mask
    assert slot_rows[built.ends(fp)].tolist() == list(range(len(ids)))  # each id's slot holds its row
    assert (slot_rows[built.table == 0] == -1).all()  # and a free slot none

    read = inputs.read_input

    def no_corpus_file(path, role, *args, **kwargs):  # type: ignore[no-untyped-def]
        assert role is not Role.CORPUS, "the corpus file was read although its cache is built"
        return read(path, role, *args, **kwargs)

    monkeypatch.setattr(inputs, "read_input", no_corpus_file)
    from_cache = inputs.load_corpus_ids(path)
    asked = fingerprint(pa.array(ids[::3] + ["absent#1", ids[7] + "x"]))
    assert from_cache.holds(asked).tolist() == from_file.holds(asked).tolist() == [True] * 17 + [False] * 2
    assert from_cache.find(asked).tolist() == from_file.find(asked).tolist()


@pytest.mark.slow
def test_the_cache_of_a_corpus_with_a_repeated_id_is_refused_by_row(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=30, row_group=4)
    table = pq.read_table(path)
    pq.write_table(
        table.set_column(0, "chunk_id", pa.array(ids[:20] + [ids[3]] + ids[21:])), path, row_group_size=4
    )
    with pytest.raises(InputError, match=f"duplicate chunk_id '{ids[3]}' \\(row 4 and row 21\\)"):
        open_corpus(path, small=0)
    assert corpus_mod.cached_ids(path) is None


def _packed(key: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every id moved into one run of filled slots from slot 0, its row with it: laid out as an
    index would be, but most ids are not where a probe from their home slot looks."""
    filled = rows >= 0
    out_key, out_rows = np.zeros_like(key), np.full_like(rows, -1)
    out_key[: filled.sum()] = key[filled]
    out_rows[: filled.sum()] = rows[filled]
    return out_key, out_rows


def _free_slot(key: np.ndarray) -> int:
    return int(np.flatnonzero(key == 0)[0])


def _with(rows: np.ndarray, slot: int, row: int) -> np.ndarray:
    out = rows.copy()
    out[slot] = row
    return out


def _slot_of(rows: np.ndarray, row: int) -> int:
    return int(np.flatnonzero(rows == row)[0])


BROKEN_SLOTS = {
    "one slot": lambda key, rows: (key[:1], rows[:1]),
    "no free slot at the end": lambda key, rows: (np.arange(1, len(key) + 1, dtype=np.uint64), rows),
    # row 1's slot: not among the ids spot-checked (SPOT = 4 below: rows 0, 25, 50 and 75)
    "a row past the ids": lambda key, rows: (key, _with(rows, _slot_of(rows, 1), 105)),
    "no row in a filled slot": lambda key, rows: (key, _with(rows, _slot_of(rows, 1), -1)),
    "a row in a free slot": lambda key, rows: (key, _with(rows, _free_slot(key), 1)),
    "free slots marked other than -1": lambda key, rows: (key, np.where(rows < 0, np.int32(-7), rows)),
    "a row given twice": lambda key, rows: (key, _with(rows, _slot_of(rows, 1), 2)),
    "free slots filled, but the last": lambda key, rows: (
        np.r_[np.where(key[:-1] == 0, np.uint64(3), key[:-1]), key[-1:]],
        rows,
    ),
    "a slot's row missing": lambda key, rows: (key, rows[:-1]),
    "one run of every id": _packed,
}


def _plant(folder: Path, key: np.ndarray, rows: np.ndarray) -> None:
    for name, schema, values in (("table", cache.TABLE, key), ("slot_rows", cache.ROWS, rows)):
        (folder / f"{name}.arrow").unlink()
        with pa.OSFile(str(folder / f"{name}.arrow"), "wb") as f, pa.ipc.new_file(f, schema) as w:
            w.write_table(pa.table({schema.names[0]: pa.array(values, schema.field(0).type)}))
    _reseal(folder)


def _reseal(folder: Path) -> None:
    """The manifest rewritten for the files now there: a forgery the digests cannot see, so the
    index's own checks must."""
    import json

    manifest = json.loads((folder / "manifest.json").read_bytes())
    for name in manifest["files"]:
        size, digest = cache._file_digest(folder / name)
        manifest["files"][name] = {"bytes": size, "xxh3_64": digest}
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.slow
@pytest.mark.parametrize("broken", BROKEN_SLOTS, ids=list(BROKEN_SLOTS))
def test_a_broken_index_in_the_cache_is_read_past_and_then_named(
    tmp_path: Path, monkeypatch, broken: str
) -> None:
    from triage.core.inputs import load as inputs

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    monkeypatch.setattr(corpus_mod, "SPOT", 4)
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=100, row_group=16)
    open_corpus(path, small=0)
    folder = cache.folder_of(cache.corpus_key(path))
    key = (
        pa.ipc.open_file(pa.memory_map(str(folder / "table.arrow")))
        .read_all()
        .column("key")
        .to_numpy()
        .copy()
    )
    rows = (
        pa.ipc.open_file(pa.memory_map(str(folder / "slot_rows.arrow")))
        .read_all()
        .column("row")
        .to_numpy()
        .copy()
    )
    _plant(folder, *BROKEN_SLOTS[broken](key, rows))
    assert corpus_mod.cached_ids(path) is None
    assert inputs.load_corpus_ids(path).holds(fingerprint(pa.array(ids))).all()  # read from the file
    opened = open_corpus(path, small=0)  # built again (rows unlike the manifest's) or read directly
    assert (opened.notice is None or "inconsistent" in opened.notice) and opened.rows_of(
        pa.array(ids[:3])
    ).tolist() == [0, 1, 2]


@pytest.mark.parametrize("name", ["table", "slot_rows"])
def test_an_index_file_holding_a_null_is_read_past_and_then_named(tmp_path: Path, monkeypatch, name) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=20, row_group=4)
    open_corpus(path, small=0)
    target = cache.folder_of(cache.corpus_key(path)) / f"{name}.arrow"
    built = pa.ipc.open_file(pa.memory_map(str(target))).read_all()
    values = built.column(0).to_pylist()
    values[-1] = None
    target.unlink()
    with pa.OSFile(str(target), "wb") as f, pa.ipc.new_file(f, built.schema) as w:
        w.write_table(pa.table({built.schema.names[0]: pa.array(values, built.schema.field(0).type)}))
    _reseal(target.parent)
    assert corpus_mod.cached_ids(path) is None
    assert "inconsistent" in (open_corpus(path, small=0).notice or "")


def test_the_index_read_at_load_is_taken_again_only_for_the_same_ids(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=20, row_group=4)
    open_corpus(path)  # built
    known = corpus_mod.cached_ids(path)
    assert known is not None
    checked: list[int] = []
    check = corpus_mod._known
    monkeypatch.setattr(corpus_mod, "_known", lambda *a: checked.append(1) or check(*a))
    again = open_corpus(path, known=known)
    assert checked == [] and again._known is known  # one index for both: the very table's ids
    alike = CorpusIds(pa.array(ids))  # the same ids, read from the file
    assert open_corpus(path, known=alike)._known is alike and checked == []
    assert again.rows_of(pa.array(ids[:2])).tolist() == [0, 1]
    stale = CorpusIds(pa.array(ids[::-1]))  # another corpus version's ids
    opened = open_corpus(path, known=stale)
    assert opened._known is not None and opened._known is not stale and checked == [1]


def test_a_mapped_corpus_never_gives_one_id_s_chunk_for_another(tmp_path: Path, monkeypatch) -> None:
    """Rows found by fingerprint are confirmed by their ids: two ids' rows swapped in an index
    that was not checked give absent chunks, not each other's."""
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=20, row_group=4)
    mapped = open_corpus(path, small=0)
    assert mapped._known is not None and mapped._known._rows is not None
    rows = mapped._known._rows
    swapped = _with(_with(rows, _slot_of(rows, 3), 4), _slot_of(rows, 4), 3)
    known = CorpusIds(mapped.ids, index=mapped._known.index, slot_rows=swapped)
    corpus = corpus_mod.Corpus(mapped.table, path, None, None, known)
    assert corpus.rows_of(pa.array([ids[3], ids[4], ids[5]])).tolist() == [-1, -1, 5]
    assert set(corpus._batched(ids[:8])) == set(ids[:8]) - {ids[3], ids[4]}  # more than FEW ids asked


@pytest.mark.slow
def test_an_index_of_another_corpus_is_not_taken_for_this_ones(tmp_path: Path, monkeypatch) -> None:
    import shutil

    from triage.core.inputs import load as inputs

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    p, q = tmp_path / "p.parquet", tmp_path / "q.parquet"
    ids = write_corpus(p, n=25, row_group=5)
    pq.write_table(pa.table({"chunk_id": [f"other#{i}" for i in range(25)]}), q)
    open_corpus(p, small=0)
    open_corpus(q, small=0)
    for name in ("table.arrow", "slot_rows.arrow"):  # same rows, another corpus
        target = cache.folder_of(cache.corpus_key(p)) / name
        target.unlink()
        shutil.copyfile(cache.folder_of(cache.corpus_key(q)) / name, target)
    assert corpus_mod.cached_ids(p) is None  # the digests fail
    assert inputs.load_corpus_ids(p).holds(fingerprint(pa.array(ids))).all()  # read from the file
    rebuilt = open_corpus(p, small=0)  # nor taken for its chunks: built again
    assert rebuilt.notice is None and rebuilt.rows_of(pa.array(ids[:2])).tolist() == [0, 1]
    _reseal(cache.folder_of(cache.corpus_key(p)))
    for name in ("table.arrow", "slot_rows.arrow"):  # planted again, the manifest forged to match
        target = cache.folder_of(cache.corpus_key(p)) / name
        target.unlink()
        shutil.copyfile(cache.folder_of(cache.corpus_key(q)) / name, target)
    _reseal(cache.folder_of(cache.corpus_key(p)))
    assert corpus_mod.cached_ids(p) is None  # the index's own check
    assert "inconsistent" in (open_corpus(p, small=0).notice or "")


@pytest.mark.slow
def test_the_report_is_the_same_with_the_corpus_ids_from_its_cache(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import shutil

    from triage.cli.main import main
    from triage.core.bundled import bundled

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    folder = tmp_path / "ev"
    shutil.copytree(bundled("sample_runs"), folder)
    manifest = folder / "triage.toml"  # without the tuning split: its doc ids are read from the file
    manifest.write_text(manifest.read_text().split("[holdout]")[0])
    from triage.core.inputs import load as inputs

    reads: list[Path] = []
    read = inputs.read_input

    def counted(path, role, *args, **kwargs):  # type: ignore[no-untyped-def]
        if role is Role.CORPUS:
            reads.append(path)
        return read(path, role, *args, **kwargs)

    monkeypatch.setattr(inputs, "read_input", counted)
    outs = []
    for _ in range(2):  # the first reads the ids from the file and builds the cache; the second maps it
        assert main(["report", str(folder / "triage.toml"), "--format", "json"]) == 0
        outs.append(capsys.readouterr().out)
    assert len(reads) == 1 and corpus_mod.cached_ids(folder / "chunks.parquet") is not None
    assert outs[0] == outs[1] and '"corpus.ids"' in outs[0]


# == ids.index.IdIndex ============================================================================


# hypothesis in the quick loop: this one stays out of the `slow` mark
@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(max_size=12), max_size=200, unique=True),
    st.lists(st.text(max_size=12), max_size=200),
)
def test_an_id_index_holds_exactly_its_ids(corpus: list[str], asked: list[str]) -> None:
    from triage.core.ids.index import IdIndex

    index = IdIndex.build(fingerprint(pa.array(corpus, pa.string())))
    values = asked + corpus[::3]
    held = index.contains(fingerprint(pa.array(values, pa.string())), batch=7)
    assert held.tolist() == [v in set(corpus) for v in values]


def test_an_id_index_probes_past_full_slots_and_keeps_repeated_keys() -> None:
    from triage.core.ids.index import IdIndex

    # Keys built to share their low bits (the slot): one long probe chain; a key given twice; 0.
    keys = np.array([(i << 20) | 5 for i in range(1, 40)] + [7 << 20 | 5, 0], np.uint64)
    index = IdIndex.build(keys)
    asked = np.array([(i << 20) | 5 for i in range(1, 45)] + [0, 6], np.uint64)
    want = [i < 40 for i in range(1, 45)] + [True, False]
    assert index.contains(asked).tolist() == want


def test_an_id_index_runs_past_its_last_home_slot_instead_of_wrapping() -> None:
    from triage.core.ids.index import IdIndex

    # 8 keys whose home is the last slot (low bits all ones) and 3 at slot 0: the first run
    # spills past the end of the home slots, the second must not be taken for its continuation.
    keys = np.array([(i << 20) | 0xFFFFF for i in range(1, 9)] + [(i << 20) for i in range(1, 4)], np.uint64)
    index = IdIndex.build(keys)
    assert index.mask < 0xFFFFF  # 11 ids: 64 home slots, all these keys at the last one or the first
    asked = np.array(
        [(i << 20) | 0xFFFFF for i in range(1, 12)] + [(i << 20) for i in range(1, 6)], np.uint64
    )
    want = [i < 9 for i in range(1, 12)] + [i < 4 for i in range(1, 6)]
    assert index.contains(asked).tolist() == want
    assert index.table[-1] == 0  # a probe ends at a free slot


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=6), max_size=120), st.lists(st.text(max_size=6), max_size=60))
def test_corpus_ids_find_each_ids_first_row(corpus: list[str], asked: list[str]) -> None:
    from triage.core.ids.index import by_slot

    chunk_ids = pa.array(corpus, pa.string())
    first = {}
    for row, c in enumerate(corpus):
        first.setdefault(c, row)
    values = asked + corpus[::2]
    for built in (
        CorpusIds(chunk_ids),
        CorpusIds(chunk_ids, fingerprint(chunk_ids), by_slot(fingerprint(chunk_ids))),
    ):
        found = built.find(fingerprint(pa.array(values, pa.string())))
        assert found.tolist() == [first.get(v, -1) for v in values]
        assert built.holds(fingerprint(pa.array(values, pa.string()))).tolist() == [
            v in first for v in values
        ]


# == the query universe ==========================================================================


@pytest.mark.parametrize("order_b", ["same", "reversed", "fewer"])
@pytest.mark.parametrize("layout", ["grouped", "interleaved", "as_a"])
def test_the_universe_gives_every_row_its_query(
    tmp_path: Path, order_b: str, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run B listing the queries in A's order reuses A's positions; any other order is hashed. The
    # labels' query ids are hashed once per stretch of equal neighbours ("as_a": A lists the labels'
    # queries in their order, and reuses their positions). Either way every run row and every
    # label row points at its own query id, first-seen order.
    from triage.core.evaluation import universe

    from conftest import manifest, write_parquet

    qs = [f"q{i}" for i in range(50)]
    b = {"same": qs, "reversed": qs[::-1], "fewer": qs[:40] + ["extra"]}[order_b]
    write_parquet(tmp_path / "a.parquet", [{"query_id": q, "retrieved": ["c"]} for q in qs], {"name": "a"})
    write_parquet(tmp_path / "b.parquet", [{"query_id": q, "retrieved": ["c"]} for q in b], {"name": "b"})
    judged = {"grouped": ["late", *qs[::3]], "interleaved": ["late", *qs[::3]], "as_a": qs}[layout]
    by_query = [(q, c) for q in judged for c in "xy"]
    pairs = [(q, c) for c in "xy" for q in judged] if layout == "interleaved" else by_query
    labels = [{"query_id": q, "chunk_id": c, "relevance": 1} for q, c in pairs]
    write_parquet(tmp_path / "labels.parquet", labels)
    inputs = load_inputs(from_manifest(manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet")))
    from triage.core.ids import codes

    hashed: list[int] = []
    real = codes.coded_distinct
    monkeypatch.setattr(codes, "coded_distinct", lambda values: (hashed.append(len(values)), real(values))[1])
    every, (rows_a, rows_b), label_rows = universe(inputs)
    labels_hashed = {"grouped": len(judged), "interleaved": 2 * len(judged), "as_a": len(judged)}[layout]
    a_hashed = 0 if layout == "as_a" else len(qs)
    assert hashed == [labels_hashed + a_hashed + (0 if b == qs else len(b))]
    assert every.to_pylist() == list(dict.fromkeys([r["query_id"] for r in labels] + qs + b))
    assert every.take(pa.array(rows_a)).to_pylist() == qs
    assert every.take(pa.array(rows_b)).to_pylist() == b
    assert every.take(pa.array(label_rows)).to_pylist() == [r["query_id"] for r in labels]


# == the frozen labels ============================================================================


@pytest.mark.parametrize(
    "rows",
    [
        [("q1", "c1", 1), ("q1", "c2", 0), ("q2", "c1", 2)],  # every pair once, one judged 0
        [("q1", "c1", 1), ("q2", "c1", 2), ("q1", "c1", 2)],  # a gold pair twice: its highest grade
        [("q1", "c1", 0), ("q1", "c1", 2), ("q2", "c3", 1), ("q2", "c3", 1)],  # 0 then 2; 1 twice
        [("q1", "c1", 1), ("q11", "c1", 1), ("q1", "1c1", 1)],  # near-equal strings, all distinct
    ],
)
def test_the_frozen_labels_keep_one_grade_a_pair(tmp_path: Path, rows: list[tuple[str, str, int]]) -> None:
    from conftest import frozen_labels, write_parquet

    path = write_parquet(
        tmp_path / "labels.parquet",
        [dict(zip(("query_id", "chunk_id", "relevance"), r, strict=True)) for r in rows],
    )
    frozen = frozen_labels(path)
    best: dict[tuple[str, str], int] = {}
    for q, c, g in rows:
        best[(q, c)] = max(best.get((q, c), 0), g)

    def as_set(t: pa.Table) -> list[tuple[str, str, int]]:
        return sorted(
            zip(*(t.column(n).to_pylist() for n in ("query_id", "chunk_id", "relevance")), strict=True)
        )

    assert as_set(frozen.judgements) == sorted((q, c, g) for (q, c), g in best.items())
    assert as_set(frozen.table) == sorted((q, c, g) for (q, c), g in best.items() if g > 0)
    # any pair given twice, at any grades (0 then 2 too: the 0 is overruled, and that is said)
    given = {(q, c): sum(1 for r in rows if r[:2] == (q, c)) for q, c, _ in rows}
    assert sorted(frozen.duplicate_pairs) == sorted(p for p, n in given.items() if n > 1)
    if frozen.gold_rows is not None:  # the gold table is these file rows, in order
        assert frozen.table.column("query_id").to_pylist() == [rows[i][0] for i in frozen.gold_rows]
    else:
        assert frozen.duplicate_pairs


# == readers.validate_text ========================================================================


def test_validate_text_refuses_what_the_full_validation_refuses() -> None:
    # ASCII text skips Arrow's UTF-8 decoding; bytes past ASCII, and offsets that fall (possible in
    # an array built from buffers), still get the full check.
    good = pa.table({"q": ["q1", "q2"], "ids": [["a", "b"], ["c"]], "n": [1, 2]})
    validate_text(good)
    bad_byte = pa.array([b"q1", b"q\xff"], pa.binary()).view(pa.string())
    fall = pa.py_buffer(np.array([0, 5, 3], np.int32).tobytes())
    falling = pa.Array.from_buffers(pa.string(), 2, [None, fall, pa.py_buffer(b"abcdef")])
    listed = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), falling)
    # A bad byte in a list's child that the list's slice does not reach: the full check reads it.
    child = pa.array([b"a", b"b", b"\xff"], pa.binary()).view(pa.string())
    unreached = pa.ListArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), child).slice(0, 2)
    for col in (bad_byte, falling, listed, unreached):
        table = pa.table({"n": list(range(len(col))), "x": col})
        with pytest.raises(pa.ArrowInvalid) as full:
            table.validate(full=True)
        with pytest.raises(pa.ArrowInvalid) as ours:
            validate_text(table)
        assert str(ours.value) == str(full.value)  # worded the same: "Column 1: …"
    # Given as a table (the Python API's way), each is refused by name, never a crash.
    for col, words in ((bad_byte, "not UTF-8"), (falling, "is corrupt"), (unreached, "is corrupt")):
        with pytest.raises(InputError, match=words):
            from_table("run a", pa.table({"x": col}))
