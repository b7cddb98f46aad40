"""`triage labels export`: frozen + amendments written as a new label file — a new frozen version
carrying its provenance (base sha256, head, amendment counts, time). Every judged pair is written,
gold (relevance ≥ 1) and judged not relevant (relevance 0) alike, so the export read as the frozen
file gives the same gold and the same judged pairs. Parquet keeps it in the file's
metadata; TREC qrels (which trec_eval reads without comments) in a `<file>.meta.json` sidecar.

Both files are written through `core.files`: never through a link, never onto an input."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from triage.core.files import Protected, refuse_target, write_bytes, write_new
from triage.labels.state import LabelState

QRELS_EXT = (".qrels", ".txt", ".trec")


def provenance(state: LabelState, table: pa.Table | None = None) -> dict[str, str]:
    """`table`: the rows exported (default: every judged pair in force)."""
    table = state.judged_table() if table is None else table
    not_relevant = int(pc.sum(pc.less_equal(table.column("relevance"), 0)).as_py() or 0)
    return {
        "triage_base_sha256": state.frozen.sha256,
        "triage_head": state.head or "",
        "triage_amendments": str(len(state.records)),
        "triage_in_force": str(len(state.in_force)),
        "triage_not_relevant": str(not_relevant),
        "triage_state": state.describe(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


def export_labels(state: LabelState, out: Path, forbidden: Protected) -> pa.Table:
    """Write the effective judgements to `out` (Parquet, or qrels by extension), grade 0 (judged not
    relevant) included; the rows written. InputError when `out` (or its sidecar) is a link, an
    input or where one is read (`Spec.forbidden`), or not a regular file."""
    table = state.judged_table()
    meta = provenance(state, table)
    protected = forbidden
    if out.suffix.lower() in QRELS_EXT:
        lines = [
            f"{q} 0 {c} {r}\n"
            for q, c, r in zip(
                table.column("query_id").to_pylist(),
                table.column("chunk_id").to_pylist(),
                table.column("relevance").to_pylist(),
                strict=True,
            )
        ]
        sidecar = out.with_name(out.name + ".meta.json")
        refuse_target(sidecar, protected)  # both names are checked before either is written
        write_bytes(out, "".join(lines).encode("utf-8"), protected)
        write_bytes(sidecar, (json.dumps(meta, indent=2) + "\n").encode("utf-8"), protected)
    else:
        with_meta = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
        write_new(out, lambda f: pq.write_table(with_meta, f), protected)
    return table
