"""The truth folder (docs/truth.md "What it writes"): `labels.parquet`, `queries.parquet` and
`truth.json`, written into a temporary folder beside DIR and renamed to DIR when all three are
there: an interrupted run leaves no DIR, never a partial one. DIR may not exist yet, or be an
earlier truth folder when replacing is asked for (`force`); it is never inside an input folder.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.errors import InputError
from triage.core.files import Protected, inside, make_folder, place, write_bytes, write_new
from triage.core.inputs.manifest import TRUTH_FORMAT as FORMAT
from triage.core.inputs.manifest import TRUTH_JSON, TRUTH_LABELS, TRUTH_QUERIES
from triage.core.inputs.readers import read_json_object
from triage.core.removal import remove_tree
from triage.core.truth.merge import TruthLists

VERSION = 1  # truth.json's layout
LABELS = pa.schema(
    [
        ("query_id", pa.string()),
        ("chunk_id", pa.string()),
        ("relevance", pa.int32()),
        ("rank", pa.int32()),
        ("score", pa.float64()),
        ("tied", pa.bool_()),
    ]
)
FILES = (TRUTH_LABELS, TRUTH_QUERIES, TRUTH_JSON)


def truth_labels(lists: TruthLists, query_ids: list[str], metric: str) -> pa.Table:
    """One row per (query, chunk) listed, in the queries' order then rank; l2's score is the
    distance (the gain's negative)."""
    part = lists.partial
    qids = pa.array(query_ids, pa.string()).take(pa.array(part.query))
    scores = -part.gains if metric == "l2" else part.gains
    n = len(part.query)
    return pa.table(
        [
            qids,
            part.ids,
            pa.array(np.ones(n, np.int32)),
            pa.array(lists.rank),
            pa.array(scores),
            pa.array(lists.tied),
        ],
        schema=LABELS,
    )


def truth_queries(
    queries: pa.Table, filters: list[str | None], n_eligible: np.ndarray, rows: int
) -> pa.Table:
    """The queries' columns (no embedding), `filter` as given (null when unfiltered), with the exact
    `n_eligible` and `selectivity` (n_eligible / corpus rows) in place of any given."""
    table = queries.drop_columns(
        [c for c in ("filter", "n_eligible", "selectivity") if c in queries.column_names]
    )
    table = table.append_column("filter", pa.array(filters, pa.string()))
    table = table.append_column("n_eligible", pa.array(n_eligible, pa.int64()))
    return table.append_column("selectivity", pa.array(n_eligible / max(rows, 1), pa.float64()))


def write_truth(
    out: Path, labels: pa.Table, queries: pa.Table, provenance: dict, protected: Protected, force: bool
) -> Path:
    """Write the folder `out` at once (a temporary sibling renamed); returns `out`."""
    out = Path(out)
    refuse_out(out, protected, force)
    parent = out.parent if str(out.parent) else Path(".")
    make_folder(parent)
    tmp = parent / f".{out.name}.{secrets.token_hex(6)}.tmp"
    os.mkdir(tmp, 0o755)
    try:
        _parquet(tmp / TRUTH_LABELS, labels, protected)
        _parquet(tmp / TRUTH_QUERIES, queries, protected)
        text = json.dumps(provenance, indent=1, ensure_ascii=False).encode() + b"\n"
        write_bytes(tmp / TRUTH_JSON, text, protected)
        _swap(tmp, out, force)
    except BaseException:
        if tmp.exists():
            remove_tree(parent, tmp.name)
        raise
    return out


def _parquet(path: Path, table: pa.Table, protected: Protected) -> None:
    def fill(f: BinaryIO) -> None:
        pq.write_table(table, f)

    write_new(path, fill, protected)


def _swap(tmp: Path, out: Path, force: bool) -> None:
    """`tmp` renamed to `out`; an earlier truth folder at `out` (force) renamed away first and
    removed after."""
    if not os.path.lexists(out):
        os.rename(tmp, out)
        return
    if not force:
        raise InputError(out, "exists; not replaced (--force replaces an earlier truth folder)")
    old = out.parent / f".{out.name}.{secrets.token_hex(6)}.old"
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)
        raise
    remove_tree(old.parent, old.name)


def refuse_out(out: Path, protected: Protected, force: bool) -> None:
    """InputError when DIR cannot be written: inside an input folder, an input itself, a link,
    or something else than an earlier truth folder when it exists."""
    at = place(out)
    folder = inside(at, protected)
    if folder is not None or any(at == f for f in protected.folders):
        raise InputError(out, f"is inside {folder or at}, an input folder; never written")
    if os.path.islink(out):
        raise InputError(out, "is a symbolic link; triage never writes through links")
    if not os.path.lexists(out):
        return
    if not force:
        raise InputError(out, "exists; not replaced (--force replaces an earlier truth folder)")
    if not (out.is_dir() and _is_truth(out)):
        raise InputError(out, "exists and is not a truth folder (no truth.json of triage's); not replaced")
    for name in protected.names:
        if name.startswith(at.rstrip(os.sep) + os.sep):
            raise InputError(out, f"holds {name}, an input; not replaced")


def _is_truth(folder: Path) -> bool:
    try:
        return read_json_object(folder / TRUTH_JSON, "truth provenance").get("format") == FORMAT
    except InputError:
        return False


@dataclass(frozen=True)
class Truth:
    labels: pa.Table
    queries: pa.Table
    provenance: dict


def read_truth(folder: Path) -> Truth:
    """A truth folder as written; InputError naming what is missing or not triage's."""
    folder = Path(folder)
    for name in FILES:
        if not (folder / name).is_file():
            raise InputError(folder, f"holds no {name}: not a truth folder")
    provenance = read_json_object(folder / TRUTH_JSON, "truth provenance")
    if provenance.get("format") != FORMAT:
        raise InputError(folder / TRUTH_JSON, f"is not a truth file (format {FORMAT!r})")
    try:
        labels = pq.read_table(folder / TRUTH_LABELS)
        queries = pq.read_table(folder / TRUTH_QUERIES)
    except (pa.ArrowException, OSError) as e:
        raise InputError(folder, f"cannot read its Parquet files: {e}") from None
    return Truth(labels, queries, provenance)
