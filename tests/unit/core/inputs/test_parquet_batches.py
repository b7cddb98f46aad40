"""Parquet decoded a batch of rows at a time (core/inputs/parquet.py): every column comes back one
contiguous array equal to what pyarrow reads whole, whatever the batch size, nulls, types or row
groups."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.core.errors import InputError
from triage.core.inputs import parquet
from triage.core.inputs.parquet import read_parquet
from triage.core.inputs.readers import plain_table


def _read(
    path: Path, batch: int, monkeypatch: pytest.MonkeyPatch, columns: list[str] | None = None
) -> pa.Table:
    monkeypatch.setattr(parquet, "BATCH_ROWS", batch)
    table = read_parquet(path, columns).table
    table.validate(full=True)
    assert all(c.num_chunks == 1 for c in table.columns)  # one contiguous array a column
    return table


def _whole(path: Path, columns: list[str] | None = None) -> pa.Table:
    """What pyarrow reads whole, dictionaries decoded (the readers' `plain_table`)."""
    return plain_table(path, pq.read_table(path, columns=columns)).replace_schema_metadata(None)


MIXED = pa.table(
    {
        "query_id": pa.array([f"q{i}" for i in range(23)]),
        "retrieved": pa.array(
            [[f"c{i}-{j}" for j in range(i % 5)] for i in range(23)], pa.list_(pa.string())
        ),
        "scores": pa.array([[float(-j) for j in range(i % 5)] for i in range(23)], pa.list_(pa.float64())),
        "n_returned": pa.array(range(23), pa.int64()),
        "flag": pa.array([i % 3 == 0 for i in range(23)]),  # bits, not bytes: kept as pieces
        "tenant": pa.array([f"t{i % 4}" for i in range(23)]).dictionary_encode(),
        "plan": pa.array(["ann" if i % 2 else None for i in range(23)]),  # nulls
        "labels": pa.array(  # a null list and null ids inside lists
            [None if i == 5 else [None if j == 1 else f"x{j}" for j in range(i % 3)] for i in range(23)],
            pa.list_(pa.string()),
        ),
    }
)


@pytest.mark.parametrize("batch", [1, 2, 7, 8, 23, 1000])
@pytest.mark.parametrize("row_group", [3, 10, 64])
def test_every_column_equals_the_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int, row_group: int
) -> None:
    path = tmp_path / "mixed.parquet"
    pq.write_table(MIXED, path, row_group_size=row_group)
    assert _read(path, batch, monkeypatch).equals(_whole(path))
    some = ["retrieved", "plan"]
    assert _read(path, batch, monkeypatch, some).equals(_whole(path, some))


def test_nulls_after_a_clean_start_join_the_rows_before_them(tmp_path: Path, monkeypatch) -> None:
    # The first batches are copied flat; a null in a later batch turns the column into pieces,
    # the flat part first: the order and the values are kept.
    ids = [f"id{i}" for i in range(40)]
    ids[33] = None
    lists: list[list[str | None] | None] = [[f"c{i}", f"d{i}"] for i in range(40)]
    lists[35] = None
    table = pa.table({"query_id": pa.array(ids), "retrieved": pa.array(lists, pa.list_(pa.string()))})
    path = tmp_path / "late_nulls.parquet"
    pq.write_table(table, path)
    assert _read(path, 4, monkeypatch).equals(_whole(path))


def test_an_empty_file_and_large_strings(tmp_path: Path, monkeypatch) -> None:
    empty = tmp_path / "empty.parquet"
    pq.write_table(MIXED.slice(0, 0), empty)
    got = _read(empty, 4, monkeypatch)
    assert got.num_rows == 0 and got.schema.equals(_whole(empty).schema)
    big = tmp_path / "large.parquet"
    pq.write_table(pa.table({"query_id": pa.array(["a", "bb", "x" * 1000], pa.large_string())}), big)
    assert _read(big, 2, monkeypatch).equals(_whole(big))


def test_bad_text_is_still_named_by_its_row(tmp_path: Path, monkeypatch) -> None:
    # Parquet does not check UTF-8: a bad byte in a later batch is named by its row in the file.
    good = [b"q%d" % i for i in range(10)]
    good[8] = b"q\xff"
    table = pa.table({"query_id": pa.array(good, pa.binary()).cast(pa.string(), safe=False)})
    path = tmp_path / "bad.parquet"
    pq.write_table(table, path)
    monkeypatch.setattr(parquet, "BATCH_ROWS", 3)
    with pytest.raises(InputError, match="row 9"):
        read_parquet(path)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.one_of(st.none(), st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=6)), max_size=40
    ),
    batch=st.integers(1, 50),
    row_group=st.integers(1, 50),
)
def test_any_lists_of_text_read_in_any_batches(rows, batch: int, row_group: int, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("h") / "lists.parquet"
    pq.write_table(
        pa.table({"retrieved": pa.array(rows, pa.list_(pa.string()))}), path, row_group_size=row_group
    )
    with pytest.MonkeyPatch.context() as mp:
        assert _read(path, batch, mp).equals(_whole(path))


@pytest.mark.parametrize(
    "values",
    [
        pa.array(["a", "b", "a"]).dictionary_encode(),
        pa.array([{"x": 1}, {"x": 2}, {"x": 3}]),
        pa.array([True, False, True]),
        pa.array(["a", "b", "c"], pa.large_string()),
    ],
    ids=["dictionary", "struct", "bool", "large_string"],
)
def test_lists_of_what_cannot_be_copied_flat(tmp_path: Path, monkeypatch, values: pa.Array) -> None:
    # A list whose items are not plain text or numbers is kept as pieces, with rows or without: a
    # file of no rows once built such a list from empty buffers, and Arrow aborted the process.
    lists = pa.ListArray.from_arrays(pa.array([0, 2, 2, 3], pa.int32()), values)
    for rows in (3, 0):
        path = tmp_path / f"lists{rows}.parquet"
        table = pa.table({"query_id": pa.array(["q1", "q2", "q3"])[:rows], "retrieved": lists[:rows]})
        pq.write_table(table, path)
        assert _read(path, 2, monkeypatch).equals(_whole(path))


def test_columns_asked_for_that_are_absent_or_named_twice(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"id": ["c1", "c2"], "text": ["a", "b"]}), path)
    assert read_parquet(path, ["chunk_id", "_id"]).table.num_columns == 0  # the contract names what lacks
    assert _read(path, 1, monkeypatch, ["text", "id", "text"]).equals(_whole(path, ["text", "id"]))


def test_a_corpus_without_an_id_column_is_named_not_a_traceback(tmp_path: Path, capsys) -> None:
    from triage.cli.main import main
    from triage.core.bundled import bundled

    sample = bundled("sample_runs")
    corpus = tmp_path / "c.parquet"
    pq.write_table(pa.table({"id": ["c1"], "text": ["a"]}), corpus)
    runs, labels = sample / "runs", str(sample / "labels.parquet")
    args = [str(runs / "plain.parquet"), str(runs / "headers.parquet"), "--labels", labels]
    assert main(["report", *args, "--corpus", str(corpus)]) == 2
    assert "c.parquet" in capsys.readouterr().err
