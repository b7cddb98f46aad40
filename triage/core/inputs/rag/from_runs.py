"""What runs read from a RAG framework's shape (`frameworks`) give beyond their ranked lists, where no file
gives it (docs/data.md "RAG evaluations"): the labels (each query's expected ids, when `--labels`
names none), the queries' text, and the texts that stand in for the corpus.

The labels from the runs: a query's gold is the ids its rows expected, relevance 1; both arms must
expect the same set of a query, and where they do not, its gold is the union of theirs (neither arm
is favoured) and the `labels.from_runs` check names it. The stand-in corpus holds each id's text as
the runs show it (retrieved texts, then expected texts), the first where one id has two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from triage.core.errors import InputError
from triage.core.inputs.rag import frameworks
from triage.core.inputs.readers import Parsed

LABELS = Path("the runs' expected ids")  # the name the labels taken from the runs go by
TEXTS = Path("the runs' texts")  # the name the stand-in corpus goes by


@dataclass(frozen=True)
class RagFacts:
    """What reading RAG shapes did, for the checks (docs/checks.md, `checks/rag.py`).

    shapes: input name ("run a", "run b", "labels") -> the framework whose shape it had;
    labels_from_runs: the labels are the runs' expected ids; differ: queries whose expected ids
    differ between the arms (their gold: the union); by_text: input name -> rows whose ids are
    digests of their text; keyed_by_text: input name -> queries keyed by their text (no query id);
    stand_in: the runs' texts stand in for the corpus; texts_differ: ids the runs give two texts."""

    shapes: dict[str, str] = field(default_factory=dict)
    labels_from_runs: bool = False
    differ: tuple[str, ...] = ()
    by_text: dict[str, int] = field(default_factory=dict)
    keyed_by_text: dict[str, int] = field(default_factory=dict)
    stand_in: bool = False
    texts_differ: tuple[str, ...] = ()


def _column(table: pa.Table, name: str) -> list[object]:
    return table.column(name).to_pylist() if name in table.column_names else [None] * table.num_rows


def expected(table: pa.Table) -> dict[str, list[str]]:
    """Each query's expected ids, in the order given, once each; queries whose rows name none left out."""
    out: dict[str, list[str]] = {}
    for qid, ids in zip(_column(table, "query_id"), _column(table, frameworks.EXPECTED), strict=True):
        if isinstance(qid, str) and isinstance(ids, list):
            out[qid] = list(dict.fromkeys(ids))
    return out


def labels_table(sets: list[dict[str, list[str]]]) -> tuple[pa.Table, tuple[str, ...]]:
    """The labels (query_id, chunk_id, relevance 1) of the arms' expected ids, and the queries the arms
    disagree on, in first-seen order: a query's gold is the union of the sets given for it."""
    gold: dict[str, dict[str, None]] = {}
    seen: dict[str, list[frozenset[str]]] = {}
    for one in sets:
        for qid, ids in one.items():
            gold.setdefault(qid, {}).update(dict.fromkeys(ids))
            seen.setdefault(qid, []).append(frozenset(ids))
    differ = tuple(q for q, given in seen.items() if len(set(given)) > 1)
    qids = [q for q, ids in gold.items() for _ in ids]
    chunks = [c for ids in gold.values() for c in ids]
    table = pa.table(
        {
            "query_id": pa.array(qids, pa.string()),
            "chunk_id": pa.array(chunks, pa.string()),
            "relevance": pa.array([1] * len(chunks), pa.int64()),
        }
    )
    return table, differ


def labels_of(runs: dict[str, Parsed]) -> tuple[Parsed, tuple[str, ...]]:
    """The labels taken from the runs (`runs`: input name -> the run as read), and the queries whose
    expected ids differ between them. A run that expects nothing is refused, naming what it lacks."""
    sets = {name: expected(p.table) for name, p in runs.items()}
    given = {name: s for name, s in sets.items() if s}
    if not given:
        what = (
            f"{' and '.join(runs)} name no expected ids (LlamaIndex expected_ids, Ragas "
            "reference_context_ids or reference_contexts, a span's metadata expected_ids)"
            if runs
            else "the runs are not RAG evaluations (LlamaIndex, Ragas, OpenInference spans) whose "
            "expected ids could be the labels"
        )
        raise InputError("labels", f"none given, and {what}: give the labels (--labels)")
    table, differ = labels_table(list(given.values()))
    return Parsed(LABELS, table), differ


def queries_with_runs(runs: list[pa.Table], queries: pa.Table | None) -> pa.Table | None:
    """The queries file's table with a row (query_id, text) added for each query of the runs it does
    not hold, with the text the runs give (A's first); None when neither gives one."""
    have = set(queries.column("query_id").to_pylist()) if queries is not None else set()
    ids: list[str] = []
    texts: list[str] = []
    for table in runs:
        for qid, text in zip(_column(table, "query_id"), _column(table, frameworks.TEXT), strict=True):
            if isinstance(qid, str) and isinstance(text, str) and qid not in have:
                have.add(qid)
                ids.append(qid)
                texts.append(text)
    if not ids:
        return queries
    added = pa.table({"query_id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string())})
    if queries is None:
        return added
    return pa.concat_tables([queries, added], promote_options="permissive")


def texts_of(runs: list[pa.Table]) -> tuple[pa.Table | None, tuple[str, ...]]:
    """The stand-in corpus (chunk_id, text) of the texts the runs show, retrieved then expected,
    and the ids given two different texts (each keeps its first); None when the runs show none."""
    text_of: dict[str, str] = {}
    differ: dict[str, None] = {}
    for ids_name, texts_name in (
        ("retrieved", frameworks.RETRIEVED_TEXTS),
        (frameworks.EXPECTED, frameworks.EXPECTED_TEXTS),
    ):
        for table in runs:
            for ids, texts in zip(_column(table, ids_name), _column(table, texts_name), strict=True):
                if not isinstance(ids, list) or not isinstance(texts, list):
                    continue
                for chunk, text in zip(ids, texts, strict=True):  # one text per id (`frameworks`)
                    if text is None:
                        continue
                    first = text_of.setdefault(chunk, text)
                    if first != text and frameworks.chunk_key(first) != frameworks.chunk_key(text):
                        differ[chunk] = None
    if not text_of:
        return None, ()
    table = pa.table(
        {
            "chunk_id": pa.array(list(text_of), pa.string()),
            "text": pa.array(list(text_of.values()), pa.string()),
        }
    )
    return table, tuple(differ)
