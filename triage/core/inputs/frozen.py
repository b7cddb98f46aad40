"""The frozen gold-label file: read once, hashed, never opened for writing (docs/data.md "The data
contract", docs/labels.md "Label amendments")."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from triage.core.errors import InputError
from triage.core.ids import codes
from triage.core.inputs.contract import LABELS, conform, single
from triage.core.inputs.readers import Parsed
from triage.core.inputs.shapes import members


def sha256_file(path: Path) -> str:
    """sha256 of the file's bytes; of a folder or glob, of its files' bytes one after another in
    path order."""
    h = hashlib.sha256()
    for member in members(Path(path)):
        with open(member, "rb") as f:  # read-only, always
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class FrozenLabels:
    """Gold rows with relevance ≥ 1 (`table`: query_id, chunk_id, relevance int64), plus what the
    file says of itself. Rows with relevance 0 or below are judged not relevant, never gold (a
    negative grade is trec_eval's "pooled, unjudged" or TREC Web's −2 for junk; the measures by
    name read it as trec_eval does: `measures/ranked.py`): `judgements` holds every judged pair
    once (query_id, chunk_id, relevance, the highest grade of a pair given twice), and
    `judged_ids` every query the file names, so a query judged only not relevant counts as
    unlabelled, not as unknown."""

    loaded: Parsed
    sha256: str
    table: pa.Table
    judged_ids: pa.Array
    duplicate_pairs: list[tuple[str, str]]
    judgements: pa.Table
    gold_rows: np.ndarray | None = None  # the file rows `table` holds, in order (None: pairs merged)

    @property
    def path(self) -> Path:
        return self.loaded.path

    @cached_property
    def judged_pairs(self) -> frozenset[tuple[str, str]]:
        """Every (query, chunk) pair the file judges, gold or not (built once: amendments ask
        about it on every decision)."""
        t = self.judgements
        return frozenset(zip(t.column("query_id").to_pylist(), t.column("chunk_id").to_pylist(), strict=True))

    @property
    def meta(self) -> dict[str, str]:
        return self.loaded.meta


def sha256_table(table: pa.Table) -> str:
    """Identifies labels given as a table (no file bytes to hash): sha256 over the CSV text of
    its query_id, chunk_id and relevance columns, in row order."""
    sink = pa.BufferOutputStream()
    pacsv.write_csv(table.select(["query_id", "chunk_id", "relevance"]), sink)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


_PAIR = np.uint64(0x9E3779B97F4A7C15)  # a pair's fingerprint: fp(query) · _PAIR xor fp(chunk)


def frozen_of(loaded: Parsed, sha256: str | None = None) -> FrozenLabels:
    """The frozen labels of a parsed file or table; `sha256` None: computed by `sha256_table`."""
    path = loaded.path
    table = conform(loaded, LABELS)
    if "relevance" not in table.column_names:
        table = table.append_column("relevance", pa.array(np.ones(table.num_rows, np.int64)))
    rel = single(table.column("relevance"))
    if rel.null_count:
        row = int(np.flatnonzero(rel.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(path, "relevance is empty (null); write 0 for not relevant", loaded.where(row))
    grades = rel.to_numpy()
    table = table.select(["query_id", "chunk_id", "relevance"])
    judged = single(table.column("query_id"))
    gold = table.filter(pc.greater(rel, 0))
    # Distinct pair fingerprints mean distinct pairs: only a file with a repeated fingerprint is
    # grouped by its strings (a hash table of every pair) to find and merge the repeats.
    pair_fp = np.sort(codes.fingerprint(judged) * _PAIR ^ codes.fingerprint(single(table.column("chunk_id"))))
    unique = not (pair_fp[1:] == pair_fp[:-1]).any()
    dups: list[tuple[str, str]] = []
    every = table  # every pair once already, unless the fingerprints say otherwise
    if not unique:
        # One grade per (query, chunk): a pair given twice, at any grades (0 and 1 too), keeps its
        # highest and is reported.
        pairs = table.group_by(["query_id", "chunk_id"], use_threads=False).aggregate(
            [("relevance", "max"), ("relevance", "count")]
        )
        repeated = pairs.filter(pc.greater(pairs.column("relevance_count"), 1))
        dups = list(
            zip(repeated.column("query_id").to_pylist(), repeated.column("chunk_id").to_pylist(), strict=True)
        )
        every = pairs.select(["query_id", "chunk_id", "relevance_max"]).rename_columns(
            ["query_id", "chunk_id", "relevance"]
        )
        if dups:
            gold = every.filter(pc.greater(every.column("relevance"), 0))
    return FrozenLabels(
        loaded=loaded,
        sha256=sha256 or sha256_table(table),
        table=gold,
        judged_ids=judged,
        duplicate_pairs=dups,
        judgements=every,
        gold_rows=None if dups else np.flatnonzero(grades > 0),
    )
