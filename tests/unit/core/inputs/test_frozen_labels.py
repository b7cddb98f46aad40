"""The frozen labels (core/inputs/frozen.py): one grade a pair, the highest, and every pair given
twice named."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest


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
