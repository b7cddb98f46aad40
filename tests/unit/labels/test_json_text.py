"""JSON through orjson (`triage.labels.jsontext`) spells what Python's `json.dumps` spelled.

Review records carry sha256 hashes over the text `json.dumps` wrote, and each line's `prev` is the
hash of the line before, so a record written before orjson must verify byte for byte, and a record
written now must be the line the old writer wrote. `old_line` and `old_canonical` below are the old
writer's two spellings, kept as the reference.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from triage.labels import jsontext
from triage.labels.records import ADD, RETRACT, VERDICT, Op, Record, line_hash, parse_record, read_file
from triage.labels.verdicts import Cause
from triage.labels.writer import Writer

from conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "review_v1.jsonl"  # written by the json.dumps writer


def old_line(body: dict[str, object]) -> bytes:
    """A record's line as the writer before orjson wrote it."""
    return json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")


def old_canonical(body: dict[str, object]) -> bytes:
    """The text a record's hash covered before orjson."""
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


# -- values ----------------------------------------------------------------------------------------

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)  # every code point but surrogates
floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [1e-05, -2.5e-07, 1e-9, 9.99e-05, 1e-4, 1e16, -1e22, 5e-324, 0.0, -0.0, 1 / 3]
)
ints = st.integers() | st.integers(-(2**70), 2**70)
scalars = st.none() | st.booleans() | ints | floats | text
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow  # 400 Hypothesis values: 1-4 s on a busy machine; the cases below stay in the quick loop
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(values, st.booleans())
def test_orjson_spells_every_value_as_json_dumps(value: object, sort_keys: bool) -> None:
    for spaced, separators in ((False, (",", ":")), (True, (", ", ": "))):
        want = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, separators=separators)
        assert jsontext.dumps(value, sort_keys=sort_keys, spaced=spaced) == want.encode("utf-8")


@settings(max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_reads_back_the_same(f: float) -> None:
    assert jsontext.dumps(f) == repr(f).encode()
    assert json.loads(jsontext.dumps([f]))[0] == f


@pytest.mark.parametrize(
    "value, spelled",
    [
        (1e-05, b"1e-05"),  # orjson alone: 0.00001
        (-2.5e-07, b"-2.5e-07"),  # orjson alone: -2.5e-7
        (2**64, b"18446744073709551616"),  # orjson alone refuses it
        (float("nan"), b"NaN"),  # orjson alone: null
        (float("-inf"), b"-Infinity"),
        ({"a, b": "c: d", "e": [1, 2]}, b'{"a, b": "c: d", "e": [1, 2]}'),  # no space put in a string
        ({"q": 'say "a, b": \\'}, b'{"q": "say \\"a, b\\": \\\\"}'),
    ],
)
def test_the_normalised_spellings(value: object, spelled: bytes) -> None:
    assert jsontext.dumps(value, spaced=True) == spelled


def test_what_json_cannot_hold_is_refused_as_json_dumps_refuses_it() -> None:
    with pytest.raises(jsontext.NotJSON):  # json.dumps writes it; UTF-8 then refuses it
        jsontext.dumps({"note": "a\ud800b"})
    with pytest.raises(ValueError, match="not JSON compliant"):
        jsontext.dumps([1.0, float("inf")], allow_nan=False)
    with pytest.raises(TypeError):
        jsontext.dumps({"x": object()})


def test_nesting_beyond_orjsons_depth_is_spelled_whole() -> None:
    deep: object = "leaf"
    for i in range(400):
        deep = [deep] if i % 2 else {"k": deep}
    assert jsontext.dumps(deep, sort_keys=True) == old_canonical(deep)  # type: ignore[arg-type]


def test_subclasses_and_keys_as_json_dumps_reads_them() -> None:
    value = {Op.ADD: Op.RETRACT, 1: True, 2.5: None, None: 1e-06, False: Cause(list(Cause)[0])}
    assert jsontext.dumps(value, spaced=True) == json.dumps(value, ensure_ascii=False).encode()


# -- records ---------------------------------------------------------------------------------------

ids = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8)
evidence = st.none() | st.dictionaries(text, values, max_size=5)


@st.composite
def records(draw: st.DrawFn) -> Record:
    op = draw(st.sampled_from([ADD, RETRACT, VERDICT]))
    verdict = op == VERDICT
    return Record(
        id=draw(ids),
        seq=draw(st.integers(1, 2**53 - 1)),
        op=op,
        query_id=draw(ids),
        chunk_id="" if verdict else draw(ids),
        relevance=0 if verdict else draw(st.integers(0, 2**53 - 1)),
        reviewer=draw(ids),
        at=draw(ids),
        base=draw(ids),
        prev=draw(st.none() | st.text(max_size=64, alphabet="0123456789abcdef")),
        note=draw(text),
        retracts=draw(ids) if op == RETRACT else None,
        evidence=None if verdict else draw(evidence),
        repairs=draw(st.none() | st.integers(0, 2**70)),
        resolves=None if verdict else draw(st.none() | st.lists(ids, max_size=3).map(tuple)),
        cause=draw(st.sampled_from(list(Cause))) if verdict else None,
    )


@pytest.mark.slow  # 300 Hypothesis records: 1-4 s on a busy machine; the committed file stays in the loop
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_a_record_is_written_and_hashed_as_the_json_dumps_writer_did(record: Record) -> None:
    body = record._body()
    assert record.content_hash() == hashlib.sha256(old_canonical(body)).hexdigest()
    sealed = record.sealed()
    line = sealed.line()
    assert line == old_line({**body, "hash": sealed.hash})
    back = parse_record(line)  # and it reads back as itself, its hash verified (NaN != NaN: compare lines)
    assert back.line() == line and back.hash == sealed.hash


def test_the_committed_review_file_verifies_byte_for_byte() -> None:
    """Written by the json.dumps writer: every hash and the chain hold, no record is quarantined, and
    each record read back is written as the very line it was read from."""
    data = FIXTURE.read_bytes()
    lines = data.split(b"\n")[:-1]
    records, problems = read_file(FIXTURE)
    assert problems == [] and len(records) == len(lines) == 5
    prev = None
    for rec, raw in zip(records, lines, strict=True):
        assert rec.hash == rec.content_hash() == json.loads(raw)["hash"]
        assert rec.prev == prev
        assert rec.line() == raw
        prev = line_hash(raw)
    evidence = records[0].evidence or {}  # the spellings that differ between the two encoders
    assert {"tiny", "tinier", "nan", "inf", "long_int", "ctl", "text"} <= set(evidence)


def test_the_writer_appends_the_lines_the_json_dumps_writer_wrote(tmp_path: Path) -> None:
    """The committed records appended again, one by one, by today's writer: the same bytes."""
    frozen = tmp_path / "labels.parquet"
    shutil.copy(ROOT / "sample_runs" / "labels.parquet", frozen)
    originals, _ = read_file(FIXTURE)
    assert originals[0].base == hashlib.sha256(frozen.read_bytes()).hexdigest()
    w = Writer(tmp_path / "am", frozen, originals[0].base, "ana", file_name=FIXTURE.name)
    for rec in originals:
        w.append(rec)  # seq, prev and hash recomputed by the writer
    assert w.path.read_bytes() == FIXTURE.read_bytes()


def test_a_record_with_a_lone_surrogate_is_quarantined_as_before() -> None:
    (rec, *_), _ = read_file(FIXTURE)
    line = rec.line().replace(b'"note": "a note', b'"note": "\\ud800 note')
    with pytest.raises(ValueError, match="lone surrogate"):
        parse_record(line)


# -- the report ------------------------------------------------------------------------------------


def test_the_report_is_written_as_json_dumps_wrote_it_even_where_orjson_differs(sample: Path) -> None:
    """The sample's report with figures in the spellings orjson alone writes otherwise."""
    from dataclasses import replace

    import triage
    from triage.report.model import dumps_report

    report = triage.open(sample).report()
    odd = replace(
        report,
        paired=replace(report.paired, mcnemar_p=1e-05),
        arms=replace(report.arms, a=replace(report.arms.a, noise_band=2.5e-07, recall=1e-4)),
    )
    want = json.dumps(odd.to_json(), ensure_ascii=False, allow_nan=False)
    assert dumps_report(odd) == want
    assert '"mcnemar_p": 1e-05' in want and '"noise_band": 2.5e-07' in want
    with pytest.raises(ValueError, match="not JSON compliant"):  # never NaN, as before
        dumps_report(replace(report, paired=replace(report.paired, mcnemar_p=float("nan"))))
