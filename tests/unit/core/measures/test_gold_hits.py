"""The gold hits of ranked lists (core/measures/gold.py `gold_hits`) against a literal reading, ids
built to collide included."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.core.ids.codes import list_fingerprints
from triage.core.measures.gold import SLOTS, encode_gold, gold_hits

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
