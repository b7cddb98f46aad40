"""A truth folder as labels, in the small: its reading and refusals, the truth at k ≤ K with ties
read from the scores, recall over min(k, n_eligible), and the flips of a graded measure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from truth_folders import Query, write_truth

from triage.core.errors import InputError
from triage.core.inputs.manifest import from_args, from_manifest, is_truth
from triage.core.measures.families.recall import exact_recall_at
from triage.core.measures.hits import GoldHits
from triage.core.measures.paired import change_order
from triage.core.truth.folder import gold_at, open_truth_folder


def _tied_query(qid: str = "q1", n_eligible: int = 50) -> Query:
    """Ranks 1–4 apart, ranks 4–6 tied within 1e-6 (rank 4 the 4th), rank 7 apart again."""
    scores = [0.9, 0.8, 0.7, 0.6, 0.6 - 4e-7, 0.6 - 8e-7, 0.5]
    return Query(qid, n_eligible, [(f"{qid}-d{i}", s) for i, s in enumerate(scores)])


def test_the_truth_at_a_smaller_k_is_its_first_k_and_every_row_tied_with_the_kth(tmp_path: Path) -> None:
    folder = open_truth_folder(write_truth(tmp_path / "t", [_tied_query()], k=7))
    at = {k: gold_at(folder, k).column("chunk_id").to_pylist() for k in (1, 3, 4, 5, 7)}
    assert at[1] == ["q1-d0"] and at[3] == ["q1-d0", "q1-d1", "q1-d2"]
    assert at[4] == at[5] == ["q1-d0", "q1-d1", "q1-d2", "q1-d3", "q1-d4", "q1-d5"]  # d4, d5 tie with d3
    assert at[7] == [f"q1-d{i}" for i in range(7)]
    assert set(gold_at(folder, 4).column("relevance").to_pylist()) == {1}


def test_ties_are_within_the_tolerance_relative_to_the_kth_score(tmp_path: Path) -> None:
    q = Query("q", 50, [("a", 1000.0), ("b", 999.0), ("c", 999.0 - 5e-4), ("d", 998.0)])
    folder = open_truth_folder(write_truth(tmp_path / "t", [q], k=4, metric="ip", tolerance=1e-6))
    assert gold_at(folder, 2).column("chunk_id").to_pylist() == ["a", "b", "c"]  # 5e-4 ≤ 1e-6 × 999


def test_the_truth_at_k_of_a_query_with_few_eligible_holds_them_all(tmp_path: Path) -> None:
    small = Query("small", 2, [("x", 0.9), ("y", 0.1)])
    none = Query("none", 0, [])
    folder = open_truth_folder(write_truth(tmp_path / "t", [small, none], k=10))
    assert gold_at(folder, 5).column("chunk_id").to_pylist() == ["x", "y"]


def test_l2_truth_ascends(tmp_path: Path) -> None:
    q = Query("q", 10, [("a", 0.1), ("b", 0.2), ("c", 0.2 + 1e-7), ("d", 0.5)])
    folder = open_truth_folder(write_truth(tmp_path / "t", [q], k=4, metric="l2"))
    assert not folder.descending
    assert gold_at(folder, 2).column("chunk_id").to_pylist() == ["a", "b", "c"]


def _hits(query: list[int], rank: list[int]) -> GoldHits:
    n = len(query)
    return GoldHits(np.array(query, np.int64), np.array(rank, np.int64), np.ones(n, np.int64), np.arange(n))


def test_exact_recall_is_over_min_k_n_eligible_and_counts_at_most_that() -> None:
    # q0: 3 of its neighbours in the top 5, 10 eligible; q1: 2 eligible, both found; q2: a short,
    # post-filtered truth of 1 id found, 10 eligible; q3: nothing eligible; q4: 6 hits (ties) in a top 5
    hits = _hits([0, 0, 0, 1, 1, 2, 4, 4, 4, 4, 4, 4], [1, 2, 6, 1, 2, 1, 1, 2, 3, 4, 5, 6])
    n_elig = np.array([10, 2, 10, 0, 4])
    got = exact_recall_at(hits, 5, n_elig)
    assert got[:3].tolist() == [2 / 5, 1.0, 1 / 5]
    assert np.isnan(got[3])
    assert got[4] == 1.0  # 5 hits in the top 5, at most min(5, 4) = 4 counted


def test_change_order_lists_the_largest_fall_first_then_the_largest_rise() -> None:
    a = np.array([1.0, 0.5, 0.9, 0.2, 0.7, np.nan, 0.4])
    b = np.array([0.3, 0.5, 0.8, 0.9, 0.0, 0.1, 0.5])
    scored = np.array([True, True, True, True, True, True, False])
    ids = pa.array(["e", "b", "c", "d", "a", "f", "g"])
    # falls: e −0.7, a −0.7 (tied: by id, a first), c −0.1; rises: d +0.7; b unchanged; f no A; g unscored
    assert change_order(a, b, scored, ids).tolist() == [4, 0, 2, 3]


# -- reading and refusing --------------------------------------------------------------------------


def _folder(tmp_path: Path) -> Path:
    qs = [_tied_query("q1"), _tied_query("q2", 3), Query("q3", 0, [])]
    return write_truth(tmp_path / "truth", qs, k=7)


def _rewrite(path: Path, change: dict[str, object]) -> None:
    t = pq.read_table(path)
    for name, values in change.items():
        if values is None:
            t = t.drop_columns([name])
        else:
            t = t.set_column(t.column_names.index(name), name, pa.array(values, t.schema.field(name).type))
    pq.write_table(t, path)


def test_a_truth_folder_is_recognised_by_its_truth_json(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert is_truth(folder)
    assert not is_truth(tmp_path)  # no truth.json: another folder (a folder of label files)
    spec = from_args(Path("a"), Path("b"), folder, in_memory=[Path("a"), Path("b")])
    assert (spec.truth, spec.labels, spec.queries) == (
        folder,
        folder / "labels.parquet",
        folder / "queries.parquet",
    )
    mine = tmp_path / "mine.jsonl"
    mine.write_text('{"query_id": "q1"}\n')
    spec = from_args(Path("a"), Path("b"), folder, queries=mine, in_memory=[Path("a"), Path("b")])
    assert spec.queries == mine  # a queries file named wins; the truth's n_eligible is still read
    assert folder / "truth.json" in spec.inputs() and str(folder) in spec.forbidden().folders


def test_a_manifest_names_a_truth_folder_as_its_labels(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    for name in ("a.parquet", "b.parquet"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "triage.toml").write_text(
        '[arms.a]\npath = "a.parquet"\n[arms.b]\npath = "b.parquet"\n[labels]\npath = "truth"\n'
    )
    spec = from_manifest(tmp_path / "triage.toml")
    assert spec.truth == folder and spec.labels == folder / "labels.parquet"
    arms = '[arms.a]\npath = "a.parquet"\n[arms.b]\npath = "b.parquet"\n'
    (tmp_path / "triage.toml").write_text(arms + '[labels]\npath = "truth"\nsplit = "dev"\n')
    with pytest.raises(InputError, match="split 'dev' names a split of a BEIR folder, not of a truth folder"):
        from_manifest(tmp_path / "triage.toml")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"format": "qrels"}, "truth.json: format is 'qrels', not 'triage-truth'"),
        ({"version": 2}, "truth.json: version 2 is newer than this triage reads"),
        ({"version": "1"}, "truth.json: version is '1', expected a whole number"),
        ({"metric": "dot"}, "truth.json: metric is 'dot', expected one of cosine, ip, l2"),
        ({"k": [10, 0]}, "truth.json: k is [10, 0], expected a positive whole number"),
        ({"k": True}, "truth.json: k is True"),
        ({"tolerance": -1e-6}, "truth.json: tolerance is -1e-06, expected a number ≥ 0"),
    ],
)
def test_a_broken_truth_json_is_refused_by_key(tmp_path: Path, edit: dict[str, object], message: str) -> None:
    folder = _folder(tmp_path)
    doc = json.loads((folder / "truth.json").read_text())
    (folder / "truth.json").write_text(json.dumps({**doc, **edit}))
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        is_truth(folder) and open_truth_folder(folder)


def test_truth_json_that_is_not_one_object_is_refused_by_name(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "truth.json").write_text('{"format": "triage-truth", "format": "x"}')
    with pytest.raises(InputError, match="truth.json: not a valid JSON object: key 'format' appears twice"):
        is_truth(folder)
    shutil.copy(folder / "labels.parquet", tmp_path / "keep.parquet")
    (folder / "truth.json").write_text('{"format": "triage-truth", "version": 1}')
    (folder / "labels.parquet").unlink()
    with pytest.raises(InputError, match="labels.parquet: missing: a truth folder holds"):
        is_truth(folder)


def _labels_rows(folder: Path) -> dict[str, list[object]]:
    return pq.read_table(folder / "labels.parquet").to_pydict()


@pytest.mark.parametrize(
    ("field", "change", "message"),
    [
        ("rank", lambda v: [*v[:2], 9, *v[3:]], "labels.parquet: row 3: rank 9, expected 3"),
        (
            "score",
            lambda v: [*v[:1], 0.95, *v[2:]],
            "labels.parquet: row 2: score 0.95 breaks the descending order",
        ),
        (
            "tied",
            lambda v: [*v[:4], True, False, *v[6:]],
            "labels.parquet: row 6: an untied row after a tied one",
        ),
        ("chunk_id", lambda v: [*v[:1], v[0], *v[2:]], "labels.parquet: row 2: chunk 'q1-d0' listed twice"),
        (
            "query_id",
            lambda v: [*v[:8], "nobody", *v[9:]],
            "labels.parquet: row 9: query 'nobody' is not in queries.parquet",
        ),
        (
            "query_id",
            lambda v: [*v[:7], "q2", "q1", *v[9:]],
            "labels.parquet: row 9: query 'q1''s rows are not together",
        ),
        ("score", lambda v: [*v[:3], None, *v[4:]], "labels.parquet: row 4: 'score' is empty"),
    ],
)
def test_a_broken_truth_row_is_refused_by_file_and_row(
    tmp_path: Path, field: str, change: object, message: str
) -> None:
    folder = _folder(tmp_path)
    values = _labels_rows(folder)[field]
    _rewrite(folder / "labels.parquet", {field: change(values)})  # type: ignore[operator]
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        open_truth_folder(folder)


def test_queries_parquet_must_give_every_query_once_with_its_exact_count(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    _rewrite(folder / "queries.parquet", {"n_eligible": None})
    with pytest.raises(InputError, match="queries.parquet: missing required column 'n_eligible'"):
        open_truth_folder(folder)
    folder = _folder(tmp_path / "again")
    _rewrite(folder / "queries.parquet", {"query_id": ["q1", "q2", "q1"]})
    with pytest.raises(
        InputError, match=r"queries.parquet: row 3: duplicate query_id 'q1' \(row 1 and row 3\)"
    ):
        open_truth_folder(folder)
    folder = _folder(tmp_path / "third")
    _rewrite(folder / "queries.parquet", {"n_eligible": [50, -3, 0]})
    with pytest.raises(InputError, match="queries.parquet: row 2: 'n_eligible' is -3"):
        open_truth_folder(folder)


def test_the_truth_folder_read_keeps_every_query_and_its_counts(tmp_path: Path) -> None:
    folder = open_truth_folder(_folder(tmp_path))
    q = folder.queries.table
    assert q.column("query_id").to_pylist() == ["q1", "q2", "q3"]
    assert q.column("n_eligible").to_pylist() == [50, 3, 0]
    assert folder.k == 7 and folder.metric == "cosine" and folder.tolerance == 1e-6
    tied = pc.sum(folder.labels.table.column("tied")).as_py()
    assert tied == 4  # q2: 3 eligible, 7 listed (ties past 3 as the helper marks them)
