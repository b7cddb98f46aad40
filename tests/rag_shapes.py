"""Retrieval evaluations written as RAG frameworks write them (tests/flows/test_rag.py): one generated `Case`
(ranked lists and expected ids per query), and the same lists as each framework's files, its
DataFrames, and the TREC form (run + qrels) whose numbers they must give.

Where a framework's package is in the test extra its own objects write the files: LlamaIndex's
`RetrievalEvalResult` and `EmbeddingQAFinetuneDataset` (llama-index-core), OpenTelemetry spans
carrying OpenInference's attributes (openinference-instrumentation's `get_*_attributes`, the SDK's
in-memory exporter). Ragas (a 2-minute, 800 MB install) is written as its code writes rows:
ragas/src/ragas/dataset_schema.py, `to_jsonl` (json.dumps of `model_dump(exclude_none=True)` per
line) and `to_csv` (csv.DictWriter, the first row's keys as the header, lists as Python literals).
Phoenix's exports are built from those spans as Phoenix's code builds them: the REST API's span
(src/phoenix/server/api/routers/v1/spans.py: `context`, `span_kind`, flattened `attributes`),
the spans DataFrame (src/phoenix/trace/dsl/query.py `get_spans_dataframe`: `attributes.` columns,
semantic conventions kept whole, so `attributes.retrieval.documents` is a list of
{"document.id", "document.score", "document.content"}), and the nested form it stores and
`log_spans` takes (tests/integration/client/test_rag_helpers.py: {"retrieval": {"documents":
[{"document": {...}}]}}).
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from triage.core.inputs.rag.frameworks import chunk_key, query_key

ARMS = ("a", "b")
WORDS = ("bond", "lease", "gearbox", "aspirin", "glacier", "tariff", "enzyme", "sonnet", "orbit")


@dataclass(frozen=True)
class Query:
    text: str
    expected: list[str]
    retrieved: dict[str, list[str]]  # arm -> its ranked ids; an arm absent: it lacks the query


@dataclass(frozen=True)
class Case:
    queries: list[Query]

    def text_of(self, chunk_id: str) -> str:
        """A chunk's text: one per id, with spaces a digest must see through."""
        word = WORDS[sum(map(ord, chunk_id)) % len(WORDS)]
        return f"Passage {chunk_id}  on the {word}.\n"

    def answering(self, arm: str) -> list[Query]:
        return [q for q in self.queries if arm in q.retrieved]


def generate(rng: random.Random, n: int | None = None) -> Case:
    """Queries with 1-4 expected ids and, per arm, a ranked list of 1-15 distinct ids drawn from a
    pool that holds the expected ones; now and then a query one arm lacks."""
    pool = [f"d{i}" for i in range(rng.randint(12, 40))]
    queries = []
    for i in range(n if n is not None else rng.randint(3, 25)):
        expected = rng.sample(pool, rng.randint(1, 4))
        retrieved = {}
        for arm in ARMS:
            if rng.random() < 0.08:
                continue
            ids = rng.sample(pool, rng.randint(1, min(15, len(pool))))
            if rng.random() < 0.5:  # plant a hit
                ids.insert(rng.randrange(len(ids) + 1), rng.choice(expected))
            retrieved[arm] = list(dict.fromkeys(ids))
        if not retrieved:
            retrieved["a"] = [pool[0]]
        queries.append(Query(f"Question {i}: what about the {rng.choice(WORDS)}?", expected, retrieved))
    return Case(queries)


def scores(n: int) -> list[float]:
    """Strictly falling scores for a list of `n` ids (the order a scored run keeps)."""
    return [round(1.0 - i / (n + 1), 6) for i in range(n)]


# -- the TREC form -------------------------------------------------------------------------------------


def trec(case: Case, folder: Path, by_text: bool = False) -> tuple[Path, Path, Path]:
    """Runs and qrels of the same lists; query ids are the query keys the RAG forms get from their
    text; `by_text`: chunk ids the digests of the chunks' texts (a shape that keeps no ids)."""
    folder.mkdir(parents=True, exist_ok=True)
    key = (lambda c: chunk_key(case.text_of(c))) if by_text else (lambda c: c)
    runs = []
    for arm in ARMS:
        lines = [
            f"{query_key(q.text)} Q0 {key(c)} {r} {s!r} {arm}\n"
            for q in case.answering(arm)
            for r, (c, s) in enumerate(zip(q.retrieved[arm], scores(len(q.retrieved[arm])), strict=True), 1)
        ]
        runs.append(folder / f"{arm}.run")
        runs[-1].write_text("".join(lines), "utf-8")
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{query_key(q.text)} 0 {key(c)} 1\n" for q in case.queries for c in q.expected))
    return runs[0], runs[1], qrels


# -- LlamaIndex (llama-index-core's own objects) ------------------------------------------------------


def llamaindex_results(case: Case, arm: str) -> list:
    """`RetrievalEvalResult`s as `RetrieverEvaluator.aevaluate` returns them (one per query)."""
    from llama_index.core.evaluation import RetrievalEvalResult
    from llama_index.core.evaluation.retrieval.metrics_base import RetrievalMetricResult

    out = []
    for q in case.answering(arm):
        ids = q.retrieved[arm]
        hit = float(any(c in q.expected for c in ids))
        out.append(
            RetrievalEvalResult(
                query=q.text,
                expected_ids=q.expected,
                retrieved_ids=ids,
                retrieved_texts=[case.text_of(c) for c in ids],
                metric_dict={"hit_rate": RetrievalMetricResult(score=hit)},
            )
        )
    return out


def llamaindex_dataset(case: Case, path: Path) -> Path:
    """An `EmbeddingQAFinetuneDataset` saved by its `save_json` (`json.dump(self.model_dump(), f,
    indent=4)`): queries by uuid, the corpus, each query's relevant docs. By the class where the
    installed llama-index-core still holds it (llama_index/core/llama_dataset/legacy/embedding.py;
    0.14 moved it out of core), else as `save_json` writes it."""
    ids = {q.text: f"uuid-{i:04d}" for i, q in enumerate(case.queries)}
    chunks = sorted({c for q in case.queries for ids_ in (q.expected, *q.retrieved.values()) for c in ids_})
    fields = {
        "queries": {ids[q.text]: q.text for q in case.queries},
        "corpus": {c: case.text_of(c) for c in chunks},
        "relevant_docs": {ids[q.text]: q.expected for q in case.queries},
    }
    try:
        from llama_index.core.llama_dataset.legacy.embedding import EmbeddingQAFinetuneDataset
    except ImportError:
        path.write_text(json.dumps({**fields, "mode": "text"}, indent=4), "utf-8")
    else:
        EmbeddingQAFinetuneDataset(**fields).save_json(str(path))
    return path


def _frame(records: list[dict]) -> object:
    import pandas as pd

    return pd.DataFrame(records)


def llamaindex_jsonl(case: Case, arm: str, folder: Path) -> Path:
    path = folder / f"{arm}.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in llamaindex_results(case, arm)), "utf-8")
    return path


def llamaindex_json(case: Case, arm: str, folder: Path) -> Path:
    path = folder / f"{arm}.json"
    path.write_text(json.dumps([r.model_dump(mode="json") for r in llamaindex_results(case, arm)]), "utf-8")
    return path


def llamaindex_parquet(case: Case, arm: str, folder: Path) -> Path:
    """Parquet through pandas; `metric_dict` left out (its empty `metadata` objects are structs
    without fields, which Parquet cannot write)."""
    path = folder / f"{arm}.parquet"
    rows = [r.model_dump(mode="json", exclude={"metric_dict"}) for r in llamaindex_results(case, arm)]
    _frame(rows).to_parquet(path)  # type: ignore[attr-defined]
    return path


def llamaindex_csv(case: Case, arm: str, folder: Path) -> Path:
    path = folder / f"{arm}.csv"
    _frame([r.model_dump(mode="json") for r in llamaindex_results(case, arm)]).to_csv(path)  # type: ignore[attr-defined]
    return path


def llamaindex_pandas(case: Case, arm: str, _folder: Path) -> object:
    return _frame([r.model_dump() for r in llamaindex_results(case, arm)])


# -- Ragas (rows as ragas/dataset_schema.py writes them) -----------------------------------------------


def ragas_rows(case: Case, arm: str, ids: bool = True) -> list[dict]:
    """`SingleTurnSample.to_dict()` rows (`model_dump(exclude_none=True)`): with ids, the contexts'
    ids beside their text; without, the text alone. Ids are integers where they are numbers, as
    `t.List[t.Union[str, int]]` allows."""
    rows = []
    for q in case.answering(arm):
        row = {"user_input": q.text, "retrieved_contexts": [case.text_of(c) for c in q.retrieved[arm]]}
        row["reference_contexts"] = [case.text_of(c) for c in q.expected]
        if ids:
            row["retrieved_context_ids"] = q.retrieved[arm]
            row["reference_context_ids"] = q.expected
        row["response"] = "An answer."
        rows.append(row)
    return rows


def ragas_jsonl(case: Case, arm: str, folder: Path, ids: bool = True) -> Path:
    path = folder / f"{arm}.jsonl"
    with path.open("w", encoding="utf-8") as f:  # RagasDataset.to_jsonl
        for row in ragas_rows(case, arm, ids):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def ragas_csv(case: Case, arm: str, folder: Path, ids: bool = True) -> Path:
    path = folder / f"{arm}.csv"
    rows = ragas_rows(case, arm, ids)
    with path.open("w", newline="", encoding="utf-8") as f:  # RagasDataset.to_csv
        writer = csv.DictWriter(f, fieldnames=rows[0].keys())
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return path


def ragas_pandas(case: Case, arm: str, _folder: Path) -> object:
    return _frame(ragas_rows(case, arm))  # RagasDataset.to_pandas


# -- OpenInference spans (the SDK, OpenInference's attributes) and Phoenix's exports ---------------------


def otel_spans(case: Case, arm: str) -> list:
    """One trace per query: a CHAIN span and, under it, a RETRIEVER span whose attributes
    OpenInference's helpers write (input, documents with id, score and content, and the query's
    expected ids in its metadata); finished spans from the SDK's in-memory exporter."""
    from openinference.instrumentation import (
        get_input_attributes,
        get_metadata_attributes,
        get_retriever_attributes,
        get_span_kind_attributes,
    )
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag")
    for q in case.answering(arm):
        ids = q.retrieved[arm]
        with tracer.start_as_current_span("query", attributes={**get_span_kind_attributes("chain")}):
            documents = [
                {"id": c, "score": s, "content": case.text_of(c)}
                for c, s in zip(ids, scores(len(ids)), strict=True)
            ]
            attributes = {
                **get_span_kind_attributes("retriever"),
                **get_input_attributes(q.text),
                **get_retriever_attributes(documents=documents),
                **get_metadata_attributes(metadata={"expected_ids": q.expected}),
            }
            with tracer.start_as_current_span("retrieve", attributes=attributes):
                pass
    return list(exporter.get_finished_spans())


def _context(span: object) -> dict[str, str]:
    ctx = span.get_span_context()  # type: ignore[attr-defined]
    return {"trace_id": f"{ctx.trace_id:032x}", "span_id": f"{ctx.span_id:016x}"}


def phoenix_rest(case: Case, arm: str, folder: Path) -> Path:
    """Spans as Phoenix's REST API returns them (`client.spans.get_spans`), saved as a JSON array."""
    out = []
    for span in otel_spans(case, arm):
        attributes = dict(span.attributes)
        kind = attributes.pop("openinference.span.kind", "UNKNOWN")
        out.append(
            {"name": span.name, "context": _context(span), "span_kind": kind, "attributes": attributes}
        )
    path = folder / f"{arm}.json"
    path.write_text(json.dumps(out), "utf-8")
    return path


def _documents(attributes: dict) -> list[dict]:
    """`retrieval.documents.N.document.F` keys gathered into a list of {"document.F": value}."""
    docs: dict[int, dict] = {}
    for key, value in attributes.items():
        if key.startswith("retrieval.documents."):
            n, field = key.removeprefix("retrieval.documents.").split(".", 1)
            docs.setdefault(int(n), {})[field] = value
    return [docs[i] for i in sorted(docs)]


def phoenix_frame(case: Case, arm: str) -> object:
    """The spans DataFrame `get_spans_dataframe` returns: every span (the CHAIN spans too), newest first."""
    rows = []
    for span in reversed(otel_spans(case, arm)):
        attributes = dict(span.attributes)
        ctx = _context(span)
        row = {
            "name": span.name,
            "span_kind": attributes.get("openinference.span.kind"),
            "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
            "status_code": "OK",
            "context.span_id": ctx["span_id"],
            "context.trace_id": ctx["trace_id"],
            "attributes.openinference.span.kind": attributes.get("openinference.span.kind"),
            "attributes.input.value": attributes.get("input.value"),
            "attributes.retrieval.documents": _documents(attributes) or None,
            "attributes.metadata": json.loads(attributes["metadata"]) if "metadata" in attributes else None,
        }
        rows.append(row)
    return _frame(rows)


def phoenix_pandas(case: Case, arm: str, _folder: Path) -> object:
    return phoenix_frame(case, arm)


def phoenix_parquet(case: Case, arm: str, folder: Path) -> Path:
    path = folder / f"{arm}.parquet"
    phoenix_frame(case, arm).to_parquet(path)  # type: ignore[attr-defined]
    return path


def phoenix_jsonl(case: Case, arm: str, folder: Path) -> Path:
    path = folder / f"{arm}.jsonl"
    phoenix_frame(case, arm).to_json(path, orient="records", lines=True)  # type: ignore[attr-defined]
    return path


def phoenix_nested(case: Case, arm: str, folder: Path) -> Path:
    """Spans in the nested form Phoenix stores and `log_spans` takes, one JSON object a line."""
    path = folder / f"{arm}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for span in otel_spans(case, arm):
            attributes = dict(span.attributes)
            kind = attributes["openinference.span.kind"]
            nested: dict = {"openinference": {"span": {"kind": kind}}}
            if kind == "RETRIEVER":
                documents = [
                    {"document": {k.removeprefix("document."): v for k, v in d.items()}}
                    for d in _documents(attributes)
                ]
                nested["input"] = {"value": attributes["input.value"]}
                nested["retrieval"] = {"documents": documents}
                nested["metadata"] = json.loads(attributes["metadata"])
            span_json = {
                "name": span.name,
                "context": _context(span),
                "span_kind": kind,
                "attributes": nested,
            }
            f.write(json.dumps(span_json) + "\n")
    return path


Writer = Callable[[Case, str, Path], object]
# shape -> (writer of one arm, whether the shape keys chunks by text, the package it needs)
SHAPES: dict[str, tuple[Writer, bool, str | None]] = {
    "llamaindex-jsonl": (llamaindex_jsonl, False, "llama_index.core"),
    "llamaindex-json": (llamaindex_json, False, "llama_index.core"),
    "llamaindex-parquet": (llamaindex_parquet, False, "llama_index.core"),
    "llamaindex-csv": (llamaindex_csv, False, "llama_index.core"),
    "llamaindex-pandas": (llamaindex_pandas, False, "llama_index.core"),
    "ragas-jsonl": (ragas_jsonl, False, None),
    "ragas-jsonl-text": (lambda c, a, f: ragas_jsonl(c, a, f, ids=False), True, None),
    "ragas-csv": (ragas_csv, False, None),
    "ragas-csv-text": (lambda c, a, f: ragas_csv(c, a, f, ids=False), True, None),
    "ragas-pandas": (ragas_pandas, False, None),
    "phoenix-rest-json": (phoenix_rest, False, "openinference.instrumentation"),
    "phoenix-jsonl": (phoenix_jsonl, False, "openinference.instrumentation"),
    "phoenix-parquet": (phoenix_parquet, False, "openinference.instrumentation"),
    "phoenix-pandas": (phoenix_pandas, False, "openinference.instrumentation"),
    "phoenix-nested-jsonl": (phoenix_nested, False, "openinference.instrumentation"),
}
