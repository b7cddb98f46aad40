"""Any single corruption of a review file (a byte flipped, the file cut short, two lines swapped,
a line removed or repeated, another reviewer's file planted under its name) never puts a judgement
in force that was not written, and whenever what is in force changes, a problem names the file,
but for the one loss a chain holding no secret cannot see: the file cut short at a line's end."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.labels.records import ADD, canonical_hash, scan
from triage.labels.writer import Writer

PAIRS = [(f"q{i:03d}", f"doc{i}#{i % 3}", i % 3) for i in range(6)]


def written() -> tuple[bytes, bytes]:
    """One session file of six judgements, and another reviewer's file of three."""
    with tempfile.TemporaryDirectory() as tmp:
        frozen = Path(tmp) / "labels.parquet"
        frozen.write_bytes(b"frozen")
        sha = hashlib.sha256(b"frozen").hexdigest()
        ana = Writer(Path(tmp) / "a", frozen, sha, "ana", file_name="ana.jsonl")
        for q, c, g in PAIRS:
            ana.append(ana.new_record(ADD, q, c, relevance=g))
        bob = Writer(Path(tmp) / "b", frozen, sha, "bob", file_name="ana.jsonl")
        for q, c, g in PAIRS[:3]:
            bob.append(bob.new_record(ADD, q, c, relevance=3 - g))
        return ana.path.read_bytes(), bob.path.read_bytes()


ORIGINAL, PLANTED = written()


def judgements(data: bytes) -> tuple[set[tuple[str, str, int, str]], list[object]]:
    found = scan(data, "ana.jsonl")
    return {(r.query_id, r.chunk_id, r.relevance, r.reviewer) for r in found.records}, found.problems


def lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


CORRUPTION = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, len(ORIGINAL) - 1), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.integers(0, len(ORIGINAL) - 1), st.just(0)),
    st.tuples(st.just("swap"), st.integers(0, 5), st.integers(0, 5)),
    st.tuples(st.just("remove"), st.integers(0, 5), st.just(0)),
    st.tuples(st.just("repeat"), st.integers(0, 5), st.just(0)),
    st.tuples(st.just("plant"), st.just(0), st.just(0)),
)


def corrupt(kind: str, x: int, y: int) -> bytes:
    data = bytearray(ORIGINAL)
    rows = lines(ORIGINAL)
    if kind == "flip":
        data[x] ^= y
        return bytes(data)
    if kind == "cut":
        return bytes(data[:x])
    if kind == "swap":
        rows[x], rows[y] = rows[y], rows[x]
    elif kind == "remove":
        del rows[x]
    elif kind == "repeat":
        rows.insert(x, rows[x])
    else:
        return PLANTED
    return b"".join(r + b"\n" for r in rows)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(CORRUPTION)
def test_a_single_corruption_never_forges_a_judgement(corruption) -> None:
    want, problems = judgements(ORIGINAL)
    assert len(want) == len(PAIRS) and problems == []
    data = corrupt(*corruption)
    got, problems = judgements(data)
    if corruption[0] == "plant":  # a whole file of another writer: the chain cannot tell (no secret)
        assert problems == [] and all(r[3] == "bob" for r in got)
        return
    assert got <= want  # nothing that was not written
    assert all(p.file == "ana.jsonl" for p in problems)
    if got != want and not problems:  # a loss unsaid: only the file's end cut at a line's end,
        assert ORIGINAL.startswith(data), corruption  # which no chain without a secret can see
        assert got == judgements(ORIGINAL[: len(data)])[0]


def test_a_record_resealed_in_place_is_disowned_with_its_successor() -> None:
    import json

    rows = lines(ORIGINAL)
    forged = json.loads(rows[2])
    forged["relevance"] = 7
    forged.pop("hash")
    forged["hash"] = canonical_hash(forged)
    rows[2] = json.dumps(forged, ensure_ascii=False, sort_keys=True).encode()
    got, problems = judgements(b"".join(r + b"\n" for r in rows))
    assert all(r[2] != 7 for r in got) and len(got) == len(PAIRS) - 2
    assert [p.before_seq for p in problems] == [3] and problems[0].seq == 4
