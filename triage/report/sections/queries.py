"""The per-query section (`triage report --per-query`, the API's `queries()`): one row per query,
each arm's figures and the named measures' columns, held as one Arrow table."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

import pyarrow as pa

from triage.core.measures.paired import Outcome


@dataclass(frozen=True, slots=True)
class QueryRow:
    """One query of `triage report --per-query` (the API's `queries()`), and, for each measure
    named, `<name>_a` and `<name>_b` (number, null for an unlabelled query)."""

    # Keys beyond the fields: the named measures' columns, each a number or null.
    extra_keys: ClassVar[str] = "^.+_[ab]$"
    extra_type: ClassVar[object] = float | None

    query_id: str
    outcome: Outcome
    text: str | None
    tenant: str | None
    gold_rank_a: int | None  # 1-based over the stored depth; null: no gold stored
    depth_a: int
    hit_a: bool | None  # at k; null for an unlabelled query
    recall_a: float | None  # null also where no gold is eligible
    mrr_a: float | None
    ndcg_a: float | None
    plan_a: str | None
    gold_rank_b: int | None
    depth_b: int
    hit_b: bool | None
    recall_b: float | None
    mrr_b: float | None
    ndcg_b: float | None
    plan_b: str | None


class QueryTable:
    """The per-query table (`QueryRow`s and the named measures' columns) held as one Arrow table;
    the JSON is a list of one object per row."""

    row_type: ClassVar[type] = QueryRow

    def __init__(self, table: pa.Table) -> None:
        fixed = tuple(f.name for f in fields(QueryRow))
        assert tuple(table.column_names[: len(fixed)]) == fixed, table.column_names
        self.table = table

    def __bool__(self) -> bool:  # asked for: written even with no rows
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QueryTable) and self.table.equals(other.table)

    def rows(self) -> list[dict[str, object]]:
        return self.table.to_pylist()
