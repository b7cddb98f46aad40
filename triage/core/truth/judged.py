"""A truth folder over one evaluation's queries: what judging the runs against exact truth reads.

Per query of the universe (`evaluation.universe`): whether the truth lists it, its exact
`n_eligible` (the recall denominator is min(k, n_eligible)), its exact selectivity and whether it
is filtered; per query, its true neighbours with their rank and score in the truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.ids import codes
from triage.core.inputs.contract import single
from triage.core.truth.folder import TruthFolder, unfiltered


@dataclass(frozen=True)
class Neighbour:
    """One true neighbour of a query: its id, its 1-based rank and its score in the truth."""

    chunk_id: str
    rank: int
    score: float
    tied: bool  # one of the tied extras past min(K, n_eligible)


@dataclass(frozen=True)
class ExactTruth:
    """`folder` over the query universe: arrays with one entry per query index."""

    folder: TruthFolder
    listed: np.ndarray  # bool: queries.parquet names the query
    n_eligible: np.ndarray  # int64: the exact count of eligible documents; -1 where not listed
    selectivity: np.ndarray  # float64: n_eligible / corpus rows; NaN where unfiltered or not listed
    filtered: np.ndarray  # bool: listed with a filter
    row_query: np.ndarray  # int64: each labels row's query index (-1: a query outside the universe)

    @property
    def k(self) -> int:
        return self.folder.k

    @cached_property
    def _rows_by_query(self) -> np.ndarray:
        return np.argsort(self.row_query, kind="stable")

    def neighbours(self, q: int) -> list[Neighbour]:
        """Query index `q`'s true neighbours as the truth lists them, rank 1 first."""
        order = self._rows_by_query
        lo, hi = np.searchsorted(self.row_query[order], [q, q + 1])
        rows = pa.array(order[lo:hi])
        t = self.folder.labels.table
        columns = [t.column(c).take(rows).to_pylist() for c in ("chunk_id", "rank", "score", "tied")]
        return [Neighbour(c, int(r), float(s), bool(x)) for c, r, s, x in zip(*columns, strict=True)]

    @cached_property
    def held(self) -> np.ndarray:
        """Per query, the ids its truth holds, tied extras left out (int64)."""
        tied = single(self.folder.labels.table.column("tied")).to_numpy(zero_copy_only=False)
        mine = (self.row_query >= 0) & ~tied
        return np.bincount(self.row_query[mine], minlength=len(self.listed)).astype(np.int64)


def align(folder: TruthFolder, query_ids: pa.Array) -> ExactTruth:
    """`folder` over the query universe `query_ids`."""
    n = len(query_ids)
    q = folder.queries.table
    at = codes.encode(single(q.column("query_id")), query_ids).astype(np.int64)
    mine = at >= 0
    listed = np.zeros(n, bool)
    listed[at[mine]] = True
    n_elig = np.full(n, -1, np.int64)
    n_elig[at[mine]] = single(q.column("n_eligible")).to_numpy()[mine]
    filtered = np.zeros(n, bool)
    if "filter" in q.column_names:
        filtered[at[mine]] = ~unfiltered(single(q.column("filter")))[mine]
    else:  # no filter column: a query with fewer eligible documents than the corpus holds is filtered
        rows = folder.section("corpus").get("rows")
        filtered[at[mine]] = n_elig[at[mine]] < rows if isinstance(rows, int) else False
    sel = np.full(n, np.nan)
    sel[at[mine]] = _selectivity(folder, q)[mine]
    sel[~filtered] = np.nan
    row_query = codes.encode(folder.labels.table.column("query_id"), query_ids).astype(np.int64)
    return ExactTruth(folder, listed, n_elig, sel, filtered, row_query)


def _selectivity(folder: TruthFolder, q: pa.Table) -> np.ndarray:
    """Each queries.parquet row's selectivity: its column, else n_eligible / the corpus's rows."""
    if "selectivity" in q.column_names:
        values = single(q.column("selectivity"))
        if not values.null_count:
            return values.to_numpy(zero_copy_only=False).astype(np.float64)
    rows = folder.section("corpus").get("rows")
    n_elig = single(q.column("n_eligible")).to_numpy().astype(np.float64)
    if isinstance(rows, int) and not isinstance(rows, bool) and rows > 0:
        return n_elig / rows
    return np.full(len(n_elig), np.nan)


def padding(chunk_ids: pa.Array) -> np.ndarray:
    """Which ids are padding read as ids: "-1" (a search library's empty slot) or empty (bool)."""
    ids = pc.utf8_trim_whitespace(pc.cast(chunk_ids, pa.string()))
    return pc.or_(pc.equal(ids, "-1"), pc.equal(ids, "")).to_numpy(zero_copy_only=False)
