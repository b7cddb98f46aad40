"""Each filter's exact count of eligible corpus rows, as `triage sample` bands its queries (docs/truth.md
"Sampling the queries").

Each shard's filtered columns are read once and reduced, per set of columns the predicates name, to
their distinct values and each one's rows; the shards' are merged, and each predicate is evaluated
once, over the distinct values of its columns, its count the rows of those it admits: the same count
as row by row (a predicate reads a row's own values alone), over thousands of rows instead of
millions. Shards whose types differ, or a type Arrow cannot group by, are counted apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from triage.core.errors import InputError
from triage.core.inputs.parquet import read_parquet
from triage.core.truth.predicate import Predicate, check
from triage.core.truth.shards import Shard


def eligible_counts(
    corpus: Path,
    shards: Sequence[Shard],
    preds: Mapping[str, Predicate],
    columns: list[str],
    path: Path,
    where: Mapping[str, str],
) -> tuple[int, dict[str, int]]:
    """The corpus's rows and each filtered predicate's eligible count, by key. `columns`: every
    column the predicates name; a predicate that does not fit a shard is refused naming `path` and
    `where[key]` (the file and row it came from)."""
    by_columns: dict[tuple[str, ...], list[str]] = {}
    for key, p in preds.items():
        if not p.unfiltered:
            by_columns.setdefault(tuple(sorted(p.columns)), []).append(key)
    parts: dict[tuple[str, ...], list[tuple[pa.Table, np.ndarray]]] = {names: [] for names in by_columns}
    total, checked = 0, None
    for shard in shards:
        if checked is None or not shard.schema.equals(checked):  # a column it lacks, a literal it cannot hold
            for key, p in preds.items():
                check(p, shard.schema, path, where[key])
            checked = shard.schema
        if by_columns:
            table = read_parquet(shard.path, columns).table
            for names in by_columns:
                parts[names].append(_value_rows(table, names))
        total += shard.rows
    if total == 0:
        raise InputError(corpus, "holds no rows; selectivity is a share of the corpus")
    counts = dict.fromkeys((k for keys in by_columns.values() for k in keys), 0)
    for names, keys in by_columns.items():
        for values, rows in _merged(parts[names], names):
            for key in keys:
                counts[key] += int(rows[preds[key].mask(values, path, where[key])].sum())
    return total, counts


def _value_rows(table: pa.Table, names: tuple[str, ...]) -> tuple[pa.Table, np.ndarray]:
    """The distinct values of `names` in `table` and each one's rows (int64); a type Arrow cannot
    group by: every row, one each."""
    keyed = table.select(list(names)).rename_columns([f"k{i}" for i in range(len(names))])
    try:
        grouped = keyed.group_by(keyed.column_names, use_threads=False).aggregate([([], "count_all")])
    except pa.ArrowNotImplementedError:
        return table.select(list(names)), np.ones(table.num_rows, dtype=np.int64)
    rows = grouped.column("count_all").to_numpy().astype(np.int64)
    return grouped.select(keyed.column_names).rename_columns(list(names)), rows


def _merged(
    parts: list[tuple[pa.Table, np.ndarray]], names: tuple[str, ...]
) -> list[tuple[pa.Table, np.ndarray]]:
    """The shards' distinct values merged into one table, their rows summed; the parts as they are
    when they do not merge (shards whose types differ, a type Arrow cannot group by)."""
    if len(parts) < 2:
        return parts
    keys = [f"k{i}" for i in range(len(names))]
    try:
        whole = pa.concat_tables([v.rename_columns(keys) for v, _ in parts])
        whole = whole.append_column("w", pa.array(np.concatenate([r for _, r in parts])))
        grouped = whole.group_by(keys, use_threads=False).aggregate([("w", "sum")])
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return parts
    rows = grouped.column("w_sum").to_numpy().astype(np.int64)
    return [(grouped.select(keys).rename_columns(list(names)), rows)]
