"""Retrieval evaluations in the shapes RAG frameworks keep them (docs/data.md "RAG evaluations"):
LlamaIndex `RetrieverEvaluator` results, Ragas `EvaluationDataset` rows, and OpenInference
`RETRIEVER` spans as Phoenix exports them, each read as the contract's run, one row per query.

A shape is recognised by its column names (`shape_of`), in any container (JSON Lines, a JSON array
of rows, Parquet, CSV, a DataFrame), and converted row by row (`convert`). The query key is the
row's `query_id` where it gives one, else its text (`keyed`: a queries file maps the text to its
id, else the id is `query_key(text)`). Retrieved ids are the framework's, or, for rows that hold
texts but no ids, `chunk_key(text)`. What a row holds beyond the contract's run rides in the `rag.*`
columns: the query's text, the ids (and texts) it expected, the retrieved texts; `from_runs` takes
the labels, queries and stand-in corpus from them.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np
import pyarrow as pa

from triage.core.errors import InputError
from triage.core.inputs.contract import RUN
from triage.core.inputs.long_runs import Placed
from triage.core.inputs.readers import Parsed

# Beside the contract's columns, a converted run holds, per query: its text, the ids it expected
# (null: the row names none), their texts, the retrieved ids' texts, and whether its ids are
# digests of text (`chunk_key`).
TEXT, EXPECTED, EXPECTED_TEXTS = "rag.text", "rag.expected", "rag.expected_texts"
RETRIEVED_TEXTS, BY_TEXT = "rag.retrieved_texts", "rag.by_text"


class Framework(StrEnum):
    LLAMAINDEX = "LlamaIndex RetrieverEvaluator results"
    RAGAS = "Ragas EvaluationDataset rows"
    OPENINFERENCE = "OpenInference RETRIEVER spans"


# Column names that mark a shape: LlamaIndex's `RetrievalEvalResult` fields, Ragas's
# `SingleTurnSample` fields, OpenInference's span columns (Phoenix's spans DataFrame).
LLAMAINDEX_MARKS = frozenset(
    {"expected_ids", "retrieved_ids", "expected_texts", "retrieved_texts", "metric_dict"}
)
RAGAS_MARKS = frozenset(
    {
        "user_input",
        "retrieved_contexts",
        "reference_contexts",
        "retrieved_context_ids",
        "reference_context_ids",
    }
)
RAGAS_01 = {"question": "user_input", "contexts": "retrieved_contexts"}  # Ragas 0.1's names for them
SPAN_MARKS = frozenset(
    {"span_kind", "context.span_id", "attributes.input.value", "attributes.retrieval.documents"}
)
MARKS = LLAMAINDEX_MARKS | RAGAS_MARKS | SPAN_MARKS  # a CSV header naming one is a header row
DOCUMENTS = "retrieval.documents"
_DOCUMENT = re.compile(r"retrieval\.documents\.(\d+)\.document\.(id|score|content)")
_PASSED = [n for n in RUN if n not in ("query_id", "retrieved", "scores")]  # kept as given


def shape_of(names: Iterable[str]) -> Framework | None:
    """The framework whose shape the column names mark; None for the contract's own (`retrieved`,
    `chunk_id`) or any other layout."""
    names = set(names)
    if names & {"retrieved", "chunk_id"}:
        return None
    if names & LLAMAINDEX_MARKS:
        return Framework.LLAMAINDEX
    if names & RAGAS_MARKS or set(RAGAS_01) <= names:
        return Framework.RAGAS
    spans = any(_bare(n).startswith(DOCUMENTS) for n in names) or names & SPAN_MARKS
    if spans or ("attributes" in names and names & {"context", "span_kind", "name"}):
        return Framework.OPENINFERENCE
    return None


def _norm(text: str) -> str:
    """Text with every run of whitespace one space, none at either end."""
    return " ".join(text.split())


def _digest(text: str, n: int) -> str:
    return hashlib.sha256(_norm(text).encode("utf-8")).hexdigest()[:n]


def query_key(text: str) -> str:
    """The id of a query known by its text alone: `q-` and the first 10 hex digits of SHA-256 over
    its whitespace-normalised UTF-8 text."""
    return "q-" + _digest(text, 10)


def chunk_key(text: str) -> str:
    """The id of a chunk known by its text alone: `c-` and the first 12 hex digits of SHA-256 over
    its whitespace-normalised UTF-8 text (equal text, one chunk)."""
    return "c-" + _digest(text, 12)


def clipped(text: str, n: int = 60) -> str:
    one = _norm(text)
    return one if len(one) <= n else one[: n - 1] + "…"


class _Bad(Exception):
    """A row's problem, named with its place by `convert`."""


@dataclass
class _Row:
    """One query of a converted run."""

    query_id: str | None
    text: str | None
    retrieved: list[str]
    scores: list[float] | None = None
    expected: list[str] | None = None
    retrieved_texts: list[str | None] | None = None
    expected_texts: list[str | None] | None = None
    by_text: bool = False


# == values =======================================================================================


def _unquoted(value: object) -> object:
    """A list or object written as text (a DataFrame's mixed column kept as JSON, a CSV cell as a
    Python literal) read back; anything else as it is."""
    if not isinstance(value, str) or not value.lstrip().startswith(("[", "{")):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        try:
            return ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value


def _list(value: object, name: str) -> list[object] | None:
    """A list, as given or as text (a CSV cell: JSON, or a Python literal as Ragas's `to_csv` and
    pandas' `to_csv` write lists); None for null."""
    if value is None:
        return None
    value = _unquoted(value)
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, str):
        raise _Bad(f"{name!r} is text that is not a list: {clipped(value)!r}")
    raise _Bad(f"{name!r} is a {type(value).__name__}, expected a list")


def _id(value: object, name: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        raise _Bad(f"{name!r} holds an empty (null) id")
    raise _Bad(f"{name!r} holds {value!r}; ids are strings or integers")


def _ids(value: object, name: str) -> list[str] | None:
    items = _list(value, name)
    return None if items is None else [_id(v, name) for v in items]


def _texts(value: object, name: str) -> list[str | None] | None:
    items = _list(value, name)
    return None if items is None else [_text(v, name) for v in items]


def _text(value: object, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _Bad(f"{name!r} is a {type(value).__name__}, expected text")


def _keys(texts: list[str | None], problem: str) -> list[str]:
    """The chunk keys of texts that stand for ids (`chunk_key`); a null text has none: `problem`."""
    if any(t is None for t in texts):
        raise _Bad(problem)
    return [chunk_key(t) for t in texts if t is not None]


def _score(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _query_id(value: object) -> str | None:
    return None if value is None else _id(value, "query_id")


def _same_length(ids: list[str], texts: list[str | None] | None, names: tuple[str, str]) -> None:
    if texts is not None and len(texts) != len(ids):
        raise _Bad(f"{len(texts)} {names[1]} for {len(ids)} {names[0]}")


# == the three shapes =============================================================================


def _llamaindex(rec: dict[str, object], _names: set[str]) -> _Row:
    """A `RetrievalEvalResult` (llama_index/core/evaluation/retrieval/base.py): query,
    expected_ids, expected_texts, retrieved_ids, retrieved_texts, mode, metric_dict."""
    retrieved = _ids(rec.get("retrieved_ids"), "retrieved_ids")
    if retrieved is None:
        raise _Bad("'retrieved_ids' is empty (null); write [] for no results")
    texts = _texts(rec.get("retrieved_texts"), "retrieved_texts")
    _same_length(retrieved, texts, ("retrieved_ids", "retrieved_texts"))
    expected = _ids(rec.get("expected_ids"), "expected_ids")
    expected_texts = _texts(rec.get("expected_texts"), "expected_texts")
    if expected is not None:
        _same_length(expected, expected_texts, ("expected_ids", "expected_texts"))
    text = _text(rec.get("query"), "query")
    return _Row(_query_id(rec.get("query_id")), text, retrieved, None, expected, texts, expected_texts)


def _ragas(rec: dict[str, object], names: set[str]) -> _Row:
    """A `SingleTurnSample` (ragas/dataset_schema.py): user_input, retrieved_contexts,
    reference_contexts, retrieved_context_ids, reference_context_ids, response, reference. A
    file with `retrieved_context_ids` is keyed by them; one without, by its contexts' text."""
    text = _text(rec.get("user_input"), "user_input")
    contexts = _texts(rec.get("retrieved_contexts"), "retrieved_contexts")
    references = _texts(rec.get("reference_contexts"), "reference_contexts")
    if "retrieved_context_ids" in names:
        retrieved = _ids(rec.get("retrieved_context_ids"), "retrieved_context_ids")
        if retrieved is None:
            raise _Bad("'retrieved_context_ids' is empty (null) here but given in other rows")
        _same_length(retrieved, contexts, ("retrieved_context_ids", "retrieved_contexts"))
        expected = _ids(rec.get("reference_context_ids"), "reference_context_ids")
        if expected is not None:
            _same_length(expected, references, ("reference_context_ids", "reference_contexts"))
        qid = _query_id(rec.get("query_id"))
        return _Row(qid, text, retrieved, None, expected, contexts, None if expected is None else references)
    if contexts is None:
        raise _Bad("'retrieved_contexts' is empty (null); write [] for no results")
    null = "a context is empty (null): a context without an id is known by its text"
    retrieved = _keys(contexts, null)
    expected = None if references is None else _keys(references, null)
    qid = _query_id(rec.get("query_id"))
    return _Row(qid, text, retrieved, None, expected, contexts, references, by_text=True)


def _bare(name: str) -> str:
    """A span column's name without Phoenix's `attributes.` prefix."""
    return name.removeprefix("attributes.")


def _flat(obj: object, prefix: str = "") -> Iterator[tuple[str, object]]:
    """Dotted keys and their values, as OpenTelemetry flattens span attributes: into objects, and
    into lists of objects by index (`retrieval.documents.0.document.id`); `attributes.` dropped."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flat(v, f"{prefix}{k}.")
    elif isinstance(obj, list) and any(isinstance(v, dict) for v in obj):
        for i, v in enumerate(obj):
            yield from _flat(v, f"{prefix}{i}.")
    elif prefix:
        yield _bare(prefix[:-1]), obj


def _span_metadata(flat: dict[str, object]) -> dict[str, object]:
    """The span's `metadata` attribute (a JSON string, as OpenInference writes it, or an object)."""
    raw = flat.get("metadata")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            raw = None
    meta = dict(raw) if isinstance(raw, dict) else {}
    meta.update({k.removeprefix("metadata."): v for k, v in flat.items() if k.startswith("metadata.")})
    return meta


@dataclass
class _Span:
    """A span's kind, query text, documents (fields by name), metadata and query id, as found."""

    kind: str | None
    text: object
    documents: list[dict[str, object]]
    meta: dict[str, object]
    query_id: object


def _span(rec: dict[str, object]) -> _Span:
    rec = {
        k: _unquoted(v) if k == "attributes" or _bare(k).startswith(DOCUMENTS) else v for k, v in rec.items()
    }
    flat = dict(_flat(rec))
    docs: dict[int, dict[str, object]] = {}
    for key, value in flat.items():
        found = _DOCUMENT.fullmatch(key)
        if found and value is not None:
            docs.setdefault(int(found[1]), {})[found[2]] = value
    kind = flat.get("span_kind", flat.get("openinference.span.kind"))
    meta = _span_metadata(flat)
    qid = rec.get("query_id") if rec.get("query_id") is not None else meta.get("query_id")
    kind_text = None if kind is None else str(kind)
    return _Span(kind_text, flat.get("input.value"), [docs[i] for i in sorted(docs)], meta, qid)


def _spans(records: list[dict[str, object]]) -> tuple[list[_Span | None], bool]:
    """Each record's span (None: not a retriever's: another kind, or no kind and no documents), and
    whether the file is keyed by `document.id` (any document has one) or by content."""
    spans: list[_Span | None] = []
    for rec in records:
        s = _span(rec)
        retriever = s.kind.upper() == "RETRIEVER" if s.kind is not None else bool(s.documents)
        spans.append(s if retriever else None)
    by_id = any("id" in d for s in spans if s is not None for d in s.documents)
    return spans, by_id


def _openinference(s: _Span, by_id: bool) -> _Row:
    """A RETRIEVER span (openinference-semantic-conventions: `input.value`, `retrieval.documents`
    of `document.id`, `document.score`, `document.content`); a span's `metadata` may give its
    `query_id` and its `expected_ids` (or `reference_context_ids`)."""
    text = _text(s.text, "input.value")
    contents = [_text(d.get("content"), "document.content") for d in s.documents]
    if by_id:
        missing = next((i for i, d in enumerate(s.documents) if "id" not in d), None)
        if missing is not None:
            raise _Bad(f"document {missing} has no document.id, while other documents of the file have")
        retrieved = [_id(d["id"], "document.id") for d in s.documents]
    else:
        retrieved = _keys(contents, "a document has neither a document.id nor a document.content")
    scores = [_score(d.get("score")) for d in s.documents]
    given = None if None in scores else [v for v in scores if v is not None]
    named = "expected_ids" if "expected_ids" in s.meta else "reference_context_ids"
    expected = _ids(s.meta.get(named), f"metadata {named}")
    return _Row(_query_id(s.query_id), text, retrieved, given, expected, contents, None, by_text=not by_id)


# == a file or table, converted ===================================================================

_QUERY = {
    Framework.LLAMAINDEX: "query",
    Framework.RAGAS: "user_input",
    Framework.OPENINFERENCE: "input.value",
}
_RETRIEVED = {
    Framework.LLAMAINDEX: ("retrieved_ids",),
    Framework.RAGAS: ("retrieved_context_ids", "retrieved_contexts"),
}


def _refuse_names(source: Parsed, framework: Framework, names: set[str]) -> None:
    """A file that looks like `framework`'s shape without the columns its rows need: named, with
    the column to add or rename."""
    marks = sorted(names & (MARKS | set(RAGAS_01)))[:4]
    looks = f"looks like {framework} ({', '.join(marks)})"
    if framework is Framework.RAGAS and set(RAGAS_01) <= names and not names & RAGAS_MARKS:
        raise InputError(
            source.path,
            f"looks like Ragas 0.1 rows ({', '.join(marks)}): rename 'question' to 'user_input' and "
            "'contexts' to 'retrieved_contexts' (the names of Ragas's SingleTurnSample)",
        )
    wanted = _RETRIEVED.get(framework, ())
    if wanted and not names & set(wanted):
        raise InputError(source.path, f"{looks} but has no {' or '.join(map(repr, wanted))} column")
    if (
        _QUERY[framework] not in names
        and "query_id" not in names
        and framework is not Framework.OPENINFERENCE
    ):
        raise InputError(
            source.path,
            f"{looks} but has no {_QUERY[framework]!r} column (the query's text) nor a 'query_id'",
        )


@dataclass(frozen=True)
class Converted(Placed):
    """A run converted from `framework`'s shape; `keyed_by_text`: its rows keyed by their text."""

    framework: str = ""
    keyed_by_text: int = 0


def convert(
    source: Parsed, framework: Framework, records: list[dict[str, object]], names: set[str]
) -> Converted:
    """The run `records` hold in `framework`'s shape; records[i] is row i of `source`, which names its
    place. OpenInference spans of other kinds are left out."""
    _refuse_names(source, framework, names)
    rows: list[_Row] = []
    origin: list[int] = []
    spans, by_id = _spans(records) if framework is Framework.OPENINFERENCE else ([], False)
    for i, rec in enumerate(records):
        try:
            if framework is Framework.OPENINFERENCE:
                span = spans[i]
                if span is None:
                    continue
                row = _openinference(span, by_id)
            else:
                row = (_llamaindex if framework is Framework.LLAMAINDEX else _ragas)(rec, names)
            if row.query_id is None and row.text is None:
                raise _Bad(
                    f"looks like {framework}, but this row has neither a 'query_id' nor the query's text "
                    f"({_QUERY[framework]!r})"
                )
        except _Bad as e:
            raise InputError(source.path, str(e), source.where(i)) from None
        rows.append(row)
        origin.append(i)
    if not rows:
        raise InputError(source.path, f"holds no {'RETRIEVER span' if spans else 'rows'}")
    table = _table(source, rows, [records[i] for i in origin], names)
    origins = np.array(origin, np.int64)
    return Converted(
        source.path, table, dict(source.meta), source=source, origin=origins, framework=framework
    )


def _table(source: Parsed, rows: list[_Row], records: list[dict[str, object]], names: set[str]) -> pa.Table:
    columns: dict[str, pa.Array] = {
        "query_id": pa.array([r.query_id for r in rows], pa.string()),
        "retrieved": pa.array([r.retrieved for r in rows], pa.list_(pa.string())),
    }
    if all(r.scores is not None for r in rows):
        columns["scores"] = pa.array([r.scores for r in rows], pa.list_(pa.float64()))
    for name in _PASSED:  # the contract's optional run columns, where the rows give them
        if name in names:
            try:
                columns[name] = pa.array([rec.get(name) for rec in records])
            except (pa.ArrowException, OverflowError) as e:
                raise InputError(
                    source.path, f"column {name!r} holds values of more than one kind: {e}"
                ) from None
    texts = pa.list_(pa.string())
    columns[TEXT] = pa.array([r.text for r in rows], pa.string())
    columns[EXPECTED] = pa.array([r.expected for r in rows], texts)
    columns[EXPECTED_TEXTS] = pa.array([r.expected_texts for r in rows], texts)
    columns[RETRIEVED_TEXTS] = pa.array([r.retrieved_texts for r in rows], texts)
    columns[BY_TEXT] = pa.array([r.by_text for r in rows], pa.bool_())
    return pa.table(columns)


def _wanted(framework: Framework, name: str) -> bool:
    """Whether a table's column feeds the conversion (the others are never turned into Python)."""
    if name in _PASSED or name == "query_id":
        return True
    if framework is not Framework.OPENINFERENCE:
        return name in MARKS or name in _QUERY.values() or name in RAGAS_01
    bare = _bare(name)
    keys = ("retrieval.documents", "input.value", "span_kind", "openinference.span.kind", "metadata")
    return name in ("attributes", "context") or bare.startswith(keys)


def convert_table(loaded: Parsed, framework: Framework) -> Converted:
    """A table (a Parquet or CSV file's, a DataFrame's) in `framework`'s shape, converted."""
    names = loaded.table.column_names
    picked = [n for n in names if _wanted(framework, n)]
    return convert(loaded, framework, loaded.table.select(picked).to_pylist(), set(names))


def converted(loaded: Parsed) -> bool:
    """Whether `loaded` is a run converted from a RAG shape (it holds the `rag.*` columns)."""
    return TEXT in loaded.table.column_names


# == the query key ================================================================================


def _by_text(queries: pa.Table | None) -> dict[str, list[str]]:
    """Whitespace-normalised query text -> the ids of the queries file's queries with that text."""
    if queries is None or "text" not in queries.column_names:
        return {}
    out: dict[str, list[str]] = {}
    for qid, text in zip(
        queries.column("query_id").to_pylist(), queries.column("text").to_pylist(), strict=True
    ):
        if text is not None:
            out.setdefault(_norm(text), []).append(qid)
    return out


def keyed(loaded: Parsed, queries: pa.Table | None) -> Parsed:
    """A converted run (or labels) with every query id filled: a row without one is its text's query
    in `queries` (the queries file), else `query_key(text)`. A text two rows share is refused,
    naming both; one that names two queries of the file, too (which is meant?)."""
    if not converted(loaded):
        return loaded
    table = loaded.table
    ids: list[str | None] = table.column("query_id").to_pylist()
    if all(i is not None for i in ids):
        return loaded
    texts: list[str | None] = table.column(TEXT).to_pylist()
    known = _by_text(queries)
    first: dict[str | None, int] = {}
    for r, (qid, text) in enumerate(zip(ids, texts, strict=True)):
        if qid is None and text is not None:
            hits = known.get(_norm(text), [])
            if len(hits) > 1:
                raise InputError(
                    loaded.path,
                    f"the query {clipped(text)!r} is the text of {len(hits)} queries of the queries file "
                    f"({', '.join(hits[:3])}); give the rows a query_id",
                    loaded.where(r),
                )
            qid = ids[r] = hits[0] if hits else query_key(text)
            if qid in first:
                raise InputError(
                    loaded.path,
                    f"the query {clipped(text)!r} appears twice ({loaded.where(first[qid])} and "
                    f"{loaded.where(r)}): a run holds one retrieval per query",
                    loaded.where(r),
                )
        first.setdefault(qid, r)
    column = pa.array(ids, pa.string())
    out = replace(loaded, table=table.set_column(table.column_names.index("query_id"), "query_id", column))
    n_keyed = sum(
        1 for qid, text in zip(table.column("query_id").to_pylist(), texts, strict=True) if qid is None
    )
    return replace(out, keyed_by_text=n_keyed) if isinstance(out, Converted) else out


def framework_of(loaded: Parsed) -> str:
    """The framework whose shape `loaded` was read from ("" for none)."""
    if isinstance(loaded, Converted):
        return loaded.framework
    return "a RAG framework's shape" if converted(loaded) else ""
