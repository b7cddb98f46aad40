"""ranx Run and Qrels JSON, `{query_id: {doc_id: score}}`: one JSON document (Python's `json`, with
the rules of a JSON Lines line: no key twice, no NaN), read as a long table. Rows are placed by
query and doc id, not line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from triage.core.errors import InputError
from triage.core.inputs.readers import Parsed, no_duplicate_keys, reject_constant, text_bytes


def read_ranx(path: Path, run: bool) -> Parsed:
    """ranx Run / Qrels JSON, `{query_id: {doc_id: score}}`, as a long table (query_id, chunk_id,
    score for a run, `run`; relevance for labels)."""
    data = text_bytes(path)
    try:
        obj = json.loads(data, object_pairs_hook=no_duplicate_keys, parse_constant=reject_constant)
    except UnicodeDecodeError as e:
        raise InputError(path, f"not UTF-8: {e.reason}") from None
    except RecursionError:
        raise InputError(path, "holds JSON nested too deeply to read") from None
    except ValueError as e:
        raise InputError(path, f"not valid JSON: {e}") from None
    if not isinstance(obj, dict) or not obj:
        raise InputError(path, "a ranx file is one non-empty JSON object {query_id: {doc_id: score}}")
    bad = next((q for q, v in obj.items() if not isinstance(v, dict)), None)
    if bad is not None:
        raise InputError(path, f"query {bad!r} maps to {type(obj[bad]).__name__}, expected {{doc_id: score}}")
    qids = [q for q, docs in obj.items() for _ in docs]
    docs = [d for v in obj.values() for d in v]
    values = [s for v in obj.values() for s in v.values()]
    kind = "score" if run else "relevance"
    wrong = next(
        (i for i, s in enumerate(values) if isinstance(s, bool) or not isinstance(s, int | float)), None
    )
    if wrong is not None:
        raise InputError(
            path, f"{kind} {values[wrong]!r} is not a number", f"query {qids[wrong]!r}, doc {docs[wrong]!r}"
        )
    try:
        column = pa.array(values, pa.float64() if run else None)
    except (pa.ArrowException, OverflowError) as e:
        raise InputError(path, f"{kind} values: {e}") from None
    table = pa.table(
        {"query_id": pa.array(qids, pa.string()), "chunk_id": pa.array(docs, pa.string()), kind: column}
    )
    return Ranx(path, table, qids=qids, docs=docs)


@dataclass(frozen=True)
class Ranx(Parsed):
    """A ranx table: row i is doc `docs[i]` of query `qids[i]`."""

    qids: list[str] | None = None
    docs: list[str] | None = None

    def where(self, row: int) -> str:
        if self.qids is None or self.docs is None:
            return super().where(row)
        return f"query {self.qids[row]!r}, doc {self.docs[row]!r}"
