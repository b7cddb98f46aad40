"""`triage labels export`: frozen + amendments written as a new label file — a new frozen version
carrying its provenance (base sha256, head, amendment counts, time). Parquet keeps it in the file's
metadata; TREC qrels (which trec_eval reads without comments) in a `<file>.meta.json` sidecar.

Both files are written through `core.files`: never through a link, never onto an input."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.files import protect, refuse_target, write_bytes, write_new
from triage.labels.state import LabelState

QRELS_EXT = (".qrels", ".txt", ".trec")


def provenance(state: LabelState) -> dict[str, str]:
    return {
        "triage_base_sha256": state.frozen.sha256,
        "triage_head": state.head or "",
        "triage_amendments": str(len(state.records)),
        "triage_in_force": str(len(state.in_force)),
        "triage_state": state.describe(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


def export(state: LabelState, out: Path, inputs: list[Path]) -> pa.Table:
    """Write the effective labels to `out` (Parquet, or qrels by extension); the rows written.
    InputError when `out` (or its sidecar) is a link, an input, or not a regular file."""
    table = state.gold_table()
    meta = provenance(state)
    protected = protect([state.frozen.path, *inputs])
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
