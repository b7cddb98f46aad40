"""JSON read by Python's `json` (docs/data.md "Input shapes"): a JSON array of rows (`json.dump` of a
list, pandas' `to_json(orient="records")`), pandas' default `to_json` (one object of columns), JSON
Lines in a RAG framework's shape (`frameworks`: their nested values vary in kind from row to row, which
Arrow's reader refuses), and LlamaIndex's `EmbeddingQAFinetuneDataset` JSON. The rules of a JSON
Lines line hold throughout: no key twice, no NaN, UTF-8 text; a row is named "row N" (its place in
the array) or "line N"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa

from triage.core.errors import InputError
from triage.core.inputs.jsonl import a_kind
from triage.core.inputs.rag import frameworks
from triage.core.inputs.readers import (
    Parsed,
    check_str,
    codec,
    no_duplicate_keys,
    reject_constant,
    sniff,
    text_bytes,
    utf8_error,
)

_EMPTY = pa.table({})
_FIRST_LINE = 16 << 20  # bytes read at most to find a JSON Lines file's first record
# LlamaIndex's EmbeddingQAFinetuneDataset.save_json: {"queries": {id: text}, "corpus": {id: text},
# "relevant_docs": {query id: [ids]}, "mode": "text"} (ranx JSON maps ids to numbers, not text)
DATASET_KEYS = ("queries", "corpus", "relevant_docs")
_DATASET = re.compile(
    r'\{\s*"(?:queries|corpus|relevant_docs)"\s*:\s*\{\s*(?:\}|"(?:[^"\\]|\\.)*"\s*:\s*["\[])'
)
_COLUMNS = re.compile(r'\{\s*"((?:[^"\\]|\\.)*)"\s*:\s*\{')
# First keys of pandas' default to_json ({column: {index: value}}) told from ranx JSON's {query: {doc: score}}
_COLUMN_NAMES = frameworks.MARKS | set(frameworks.RAGAS_01) | {"query", "query_id"}


def is_dataset(text: str) -> bool:
    """Whether JSON text opens as a LlamaIndex EmbeddingQAFinetuneDataset."""
    return _DATASET.match(text.lstrip()) is not None


def is_columns(text: str) -> bool:
    """Whether JSON text opens as pandas' `to_json()` of a frame: `{"<column>": {` for a column a
    RAG shape or the contract names."""
    found = _COLUMNS.match(text.lstrip())
    return found is not None and json.loads(f'"{found[1]}"') in _COLUMN_NAMES


def _load(path: Path, text: bytes | str, where: str = "") -> object:
    try:
        obj = json.loads(text, object_pairs_hook=no_duplicate_keys, parse_constant=reject_constant)
        check_str(obj)
    except UnicodeEncodeError:
        raise InputError(path, "holds a lone surrogate escape (invalid text)", where) from None
    except UnicodeDecodeError:
        found = utf8_error(path, text if isinstance(text, bytes) else text.encode())
        problem, place = (found[1].problem, where or found[1].where) if found else ("not UTF-8", where)
        raise InputError(path, problem, place) from None
    except RecursionError:
        raise InputError(path, "holds JSON nested too deeply to read", where) from None
    except json.JSONDecodeError as e:
        raise InputError(
            path, f"not valid JSON: {e.msg} (column {e.colno})", where or f"line {e.lineno}"
        ) from None
    except ValueError as e:
        raise InputError(path, f"not valid JSON: {e}", where) from None
    return obj


def _records(path: Path, obj: object) -> list[dict[str, object]]:
    """The rows of a JSON document: an array of objects, or pandas' object of columns."""
    if isinstance(obj, dict) and obj and all(isinstance(v, dict) for v in obj.values()):
        columns = {name: c for name, c in obj.items() if isinstance(c, dict)}
        index = list(dict.fromkeys(i for c in columns.values() for i in c))  # pandas' index, in order
        return [{name: c.get(i) for name, c in columns.items()} for i in index]
    if not isinstance(obj, list):
        raise InputError(path, "a JSON file of rows is one array of objects ([{...}, {...}])")
    bad = next((i for i, r in enumerate(obj) if not isinstance(r, dict)), None)
    if bad is not None:
        raise InputError(path, f"expected a JSON object, found {type(obj[bad]).__name__}", f"row {bad + 1}")
    if not obj:
        raise InputError(path, "holds no rows")
    return obj


def _first_record(path: Path) -> dict[str, object] | None:
    """The first line of a JSON Lines file, parsed; None when it is not one JSON object (the JSON
    Lines reader names the problem)."""
    head = sniff(path)
    try:
        name = codec(path, head)
        with pa.input_stream(str(path), compression=name) as f:
            data = b""
            while len(data) < _FIRST_LINE and b"\n" not in data.lstrip():
                chunk = f.read(1 << 16)
                if not chunk:
                    break
                data += chunk
    except (InputError, pa.ArrowException, OSError):
        return None
    line = data.removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0]
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _jsonl(path: Path) -> tuple[list[dict[str, object]], list[int]]:
    """Every record of a JSON Lines file and its line."""
    records, lines = [], []
    for n, raw in enumerate(text_bytes(path).split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        obj = _load(path, raw, f"line {n}")
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object, found {type(obj).__name__}", f"line {n}")
        records.append(obj)
        lines.append(n)
    if not records:
        raise InputError(path, "holds no records")
    return records, lines


def read(path: Path, form: str, role: str) -> Parsed | None:
    """`path` in JSON form `form` ("json", "jsonl", "llamaindex-dataset") as `role`: a RAG shape
    converted (`frameworks.convert`); None for JSON Lines of no RAG shape (Arrow's reader reads those)."""
    if form == "llamaindex-dataset":
        return read_qa_dataset(path, role)
    if form == "jsonl":
        first = _first_record(path) if role in ("run", "labels") else None
        if first is None or frameworks.shape_of(first) is None:
            return None
        records, lines = _jsonl(path)
        return _rows(Parsed(path, _EMPTY, {}, np.array(lines, np.int64)), records, role)
    return _rows(Parsed(path, _EMPTY), _records(path, _load(path, text_bytes(path))), role)


def _rows(source: Parsed, records: list[dict[str, object]], role: str) -> Parsed:
    names: dict[str, None] = {}
    for r in records:
        names.update(dict.fromkeys(r))
    framework = frameworks.shape_of(names) if role in ("run", "labels") else None
    if framework is not None:
        return frameworks.convert(source, framework, records, set(names))
    return Parsed(source.path, _table(source, records, list(names)), {}, source.lines)


def _kind(v: object) -> str:
    """A JSON value's kind, as errors name it (integers and floats are numbers)."""
    if v is None or isinstance(v, bool):
        return "null" if v is None else "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "list" if isinstance(v, list) else "object"


def _table(source: Parsed, records: list[dict[str, object]], names: list[str]) -> pa.Table:
    """Rows of any layout as a table: a column takes one kind of value (integers and floats are
    numbers), a list of ids may mix text and integers (ids are strings whatever their type)."""
    columns = {}
    for name in names:
        values = [r.get(name) for r in records]
        lists = [v for v in values if isinstance(v, list)]
        inner = {_kind(x) for v in lists for x in v} - {"null"}
        if inner == {"string", "number"} and all(
            isinstance(x, str | int) for v in lists for x in v if x is not None
        ):
            values = [
                [None if x is None else str(x) for x in v] if isinstance(v, list) else v for v in values
            ]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowException, OverflowError) as e:
            kinds = [_kind(v) for v in values]
            first = next((k for k in kinds if k != "null"), "null")
            bad = next((i for i, k in enumerate(kinds) if k not in ("null", first)), None)
            if bad is None:
                raise InputError(source.path, f"column {name!r} cannot be read: {e}") from None
            raise InputError(
                source.path,
                f"column {name!r} holds {a_kind(kinds[bad])} here but {a_kind(first)} in earlier rows",
                source.where(bad),
            ) from None
    return pa.table(columns)


# == LlamaIndex's EmbeddingQAFinetuneDataset ======================================================


def _mapping(path: Path, obj: object, key: str) -> dict[str, object]:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, dict):
        looks = "looks like a LlamaIndex EmbeddingQAFinetuneDataset"
        raise InputError(path, f"{looks} but has no {key!r} object ({', '.join(DATASET_KEYS)})")
    return value


def read_qa_dataset(path: Path, role: str) -> Parsed:
    """LlamaIndex's `EmbeddingQAFinetuneDataset` JSON (llama_index/core/llama_dataset/legacy/
    embedding.py, `save_json`): the labels (`relevant_docs`), the queries (`queries`, id -> text)
    or the corpus (`corpus`, id -> text), as `role` asks."""
    obj = _load(path, text_bytes(path))
    parts = {key: _mapping(path, obj, key) for key in DATASET_KEYS}
    if role == "run":
        raise InputError(
            path, "is a LlamaIndex EmbeddingQAFinetuneDataset: labels, queries and a corpus, not a run"
        )
    if role == "labels":
        qids, ids = [], []
        for qid, docs in parts["relevant_docs"].items():
            if not isinstance(docs, list) or not all(
                isinstance(d, str | int) and not isinstance(d, bool) for d in docs
            ):
                raise InputError(
                    path, "relevant_docs maps a query to a list of ids", f"relevant_docs[{qid!r}]"
                )
            qids += [qid] * len(docs)
            ids += [str(d) for d in docs]
        table = pa.table({"query_id": pa.array(qids, pa.string()), "chunk_id": pa.array(ids, pa.string())})
        return Parsed(path, table)
    key, column = ("queries", "query_id") if role == "queries" else ("corpus", "chunk_id")
    items = parts[key]
    bad = next((k for k, v in items.items() if not isinstance(v, str)), None)
    if bad is not None:
        raise InputError(path, f"{key} maps an id to its text", f"{key}[{bad!r}]")
    table = pa.table(
        {column: pa.array(list(items), pa.string()), "text": pa.array(list(items.values()), pa.string())}
    )
    return Parsed(path, table)
