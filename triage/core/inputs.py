"""Load the run, query and corpus files of an evaluation into contract-shaped Arrow tables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.contract import ALIASES, CORPUS, QUERIES, QUERY_ALIASES, RUN, conform, unique_ids
from triage.core.errors import InputError
from triage.core.manifest import Arm
from triage.core.readers import Loaded, read_table


@dataclass(frozen=True)
class Run:
    """One arm as stored: a row per query; `k` is the cut-off its metadata records (None: unsaid)."""

    name: str
    loaded: Loaded
    table: pa.Table
    k: int | None

    @property
    def path(self) -> Path:
        return self.loaded.path

    @property
    def meta(self) -> dict[str, str]:
        return self.loaded.meta

    @property
    def retrieved(self) -> pa.ListArray:
        return self.table.column("retrieved").combine_chunks()

    def column(self, name: str) -> pa.Array | None:
        return self.table.column(name).combine_chunks() if name in self.table.column_names else None


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
            raise InputError(
                arm.path, f"{n_scores[r]} scores for {n_ids[r]} retrieved ids", loaded.where(r)
            )
    k = loaded.meta.get("k")
    if k is not None:
        try:
            k_int = int(str(k).strip())
        except ValueError:
            raise InputError(arm.path, f"metadata k = {k!r} is not an integer") from None
        if k_int < 1:
            raise InputError(arm.path, f"metadata k = {k_int} must be at least 1")
    name = arm.name if named else loaded.meta.get("name") or arm.name
    return Run(name, loaded, table, None if k is None else k_int)


def load_queries(path: Path) -> pa.Table:
    loaded = read_table(path)
    table = conform(loaded, QUERIES, QUERY_ALIASES)
    unique_ids(loaded, table)
    return table


def load_corpus_ids(path: Path) -> pa.Array:
    """The corpus's chunk ids only: a corpus may hold millions of chunks, never all loaded."""
    loaded = read_table(path, columns=["chunk_id", "_id"])
    table = conform(loaded, {"chunk_id": CORPUS["chunk_id"]}, ALIASES)
    return table.column("chunk_id").combine_chunks()
