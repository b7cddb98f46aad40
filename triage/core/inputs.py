"""Load the run, query and corpus files of an evaluation into contract-shaped Arrow tables."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core import ids
from triage.core.contract import (
    ALIASES,
    CORPUS,
    QUERIES,
    QUERY_ALIASES,
    RUN,
    conform,
    single,
    unique_ids,
)
from triage.core.errors import InputError
from triage.core.manifest import Arm
from triage.core.readers import Loaded, read_table


@dataclass(frozen=True)
class ListFacts:
    """What a run's ranked lists break of the contract (DESIGN §5 reports them as checks).

    duplicates: {row: {id: [1-based ranks]}} for lists holding an id twice;
    score_rises: rows whose scores rise somewhere (int64, ascending)."""

    duplicates: dict[int, dict[str, list[int]]]
    score_rises: np.ndarray


def list_facts(table: pa.Table) -> ListFacts:
    lists = single(table.column("retrieved"))
    rises = np.zeros(0, np.int64)
    if "scores" in table.column_names:
        scores = single(table.column("scores"))
        values = scores.flatten().to_numpy(zero_copy_only=False)
        offsets = scores.offsets.to_numpy().astype(np.int64)
        offsets -= offsets[0]
        up = values[1:] > values[:-1]
        starts = offsets[1:-1]
        starts = starts[(starts > 0) & (starts < len(values))]
        up[starts - 1] = False  # a row's first score follows another row's last: not a rise
        rises = np.unique(np.searchsorted(offsets, np.flatnonzero(up) + 1, side="right") - 1)
    return ListFacts(ids.duplicate_rows(lists), rises)


@dataclass(frozen=True)
class Run:
    """One arm as stored: a row per query; `k` is the cut-off its metadata records (None: unsaid)."""

    name: str
    loaded: Loaded
    table: pa.Table
    k: int | None
    facts: ListFacts

    @property
    def path(self) -> Path:
        return self.loaded.path

    @property
    def meta(self) -> dict[str, str]:
        return self.loaded.meta

    @cached_property
    def retrieved(self) -> pa.ListArray:
        return single(self.table.column("retrieved"))

    def column(self, name: str) -> pa.Array | None:
        return single(self.table.column(name)) if name in self.table.column_names else None


def load_run(arm: Arm, named: bool = True) -> Run:
    """`named`: the arm's name came from the manifest (wins over the file's own `name`)."""
    loaded = read_table(arm.path, trec="run")
    table = conform(loaded, RUN)
    unique_ids(loaded, table)
    if "scores" in table.column_names:
        n_ids = pc.list_value_length(table.column("retrieved")).to_numpy(zero_copy_only=False)
        n_scores = pc.list_value_length(table.column("scores")).to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(n_ids != n_scores)
        if len(bad):
            r = int(bad[0])
            raise InputError(arm.path, f"{n_scores[r]} scores for {n_ids[r]} retrieved ids", loaded.where(r))
    k = loaded.meta.get("k")
    if k is not None:
        try:
            k_int = int(str(k).strip())
        except ValueError:
            raise InputError(arm.path, f"metadata k = {k!r} is not an integer") from None
        if k_int < 1:
            raise InputError(arm.path, f"metadata k = {k_int} must be at least 1")
    name = arm.name if named else loaded.meta.get("name") or arm.name
    return Run(name, loaded, table, None if k is None else k_int, list_facts(table))


def load_queries(path: Path) -> pa.Table:
    loaded = read_table(path)
    table = conform(loaded, QUERIES, QUERY_ALIASES)
    unique_ids(loaded, table)
    return table


def load_corpus_ids(path: Path) -> pa.Array:
    """The corpus's chunk ids only: a corpus may hold millions of chunks, never all loaded."""
    loaded = read_table(path, columns=["chunk_id", "_id"])
    table = conform(loaded, {"chunk_id": CORPUS["chunk_id"]}, ALIASES)
    return single(table.column("chunk_id"))
