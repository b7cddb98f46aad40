"""Load every input file of an evaluation into contract-shaped Arrow tables: `load_inputs`.

The inputs are what a manifest names: two runs, the frozen labels, the queries and the corpus ids.
Amendments are not inputs (they are the label store's, `triage.labels`)."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.ids import codes
from triage.core.ids.index import CorpusIds, by_slot
from triage.core.inputs.contract import (
    ALIASES,
    CORPUS,
    QUERIES,
    QUERY_ALIASES,
    RUN,
    conform,
    single,
    unique_ids,
)
from triage.core.inputs.corpus import Corpus, cached_ids, corpus_of
from triage.core.inputs.frozen import FrozenLabels, frozen_of, sha256_file
from triage.core.inputs.long_runs import Placed
from triage.core.inputs.manifest import ArmSpec, Spec
from triage.core.inputs.rag import frameworks, from_runs
from triage.core.inputs.rag.from_runs import RagFacts
from triage.core.inputs.readers import Parsed
from triage.core.inputs.shapes import Role, in_layout, read_input
from triage.core.inputs.split import DocSplit, split_of


@dataclass(frozen=True)
class ListFacts:
    """What a run's ranked lists break of the contract (checks report them: docs/checks.md "The checks").

    duplicates: {row: {id: [1-based ranks]}} for lists holding an id twice;
    score_rises: rows whose scores rise somewhere (int64, ascending);
    scored: the run gives scores (checked here even when the column is not kept: `run_of`)."""

    duplicates: dict[int, dict[str, list[int]]]
    score_rises: np.ndarray
    scored: bool = False


def list_facts(table: pa.Table, fp: np.ndarray | None = None) -> ListFacts:
    """`fp`: the lists' `codes.list_fingerprints`, when already computed."""
    lists = single(table.column("retrieved"))
    rises = np.zeros(0, np.int64)
    if "scores" in table.column_names:
        scores = single(table.column("scores"))
        values = scores.flatten().to_numpy(zero_copy_only=False)
        offsets = scores.offsets.to_numpy().astype(np.int64)
        offsets -= offsets[0]
        up = values[1:] > values[:-1]
        starts = offsets[1:-1]
        starts = starts[(starts > 0) & (starts < len(values))]
        up[starts - 1] = False  # a row's first score follows another row's last: not a rise
        rises = np.unique(np.searchsorted(offsets, np.flatnonzero(up) + 1, side="right") - 1)
    return ListFacts(codes.duplicate_rows(lists, fp=fp), rises, "scores" in table.column_names)


class Prints:
    """A run's id fingerprints (`codes.list_fingerprints` of its retrieved `lists`, the table's own
    column; uint64, 8 bytes an id): computed at loading for the duplicate screen and kept for the
    gold look-up. `drop` lets them go (0.3 GB for two arms of 1M queries x 20); the next `get`
    computes them again from the same lists. Safe across threads."""

    __slots__ = ("_lists", "_value", "_lock")

    def __init__(self, lists: pa.ChunkedArray | pa.ListArray, value: np.ndarray) -> None:
        self._lists = lists
        self._value: np.ndarray | None = value
        self._lock = threading.Lock()

    def get(self) -> np.ndarray:
        with self._lock:
            if self._value is None:
                self._value = codes.list_fingerprints(single(self._lists))
            return self._value

    def drop(self) -> None:
        with self._lock:
            self._value = None

    @property
    def held(self) -> bool:
        return self._value is not None


@dataclass(frozen=True)
class Run:
    """One arm as stored: a row per query; `k` is the cut-off its metadata records (None: unsaid).
    `prints`: the retrieved lists' fingerprints, read as `fingerprints` (`Prints`)."""

    name: str
    loaded: Parsed
    table: pa.Table
    k: int | None
    facts: ListFacts
    prints: Prints = field(compare=False, repr=False)

    @property
    def path(self) -> Path:
        return self.loaded.path

    @property
    def meta(self) -> dict[str, str]:
        return self.loaded.meta

    @cached_property
    def retrieved(self) -> pa.ListArray:
        return single(self.table.column("retrieved"))

    @property
    def fingerprints(self) -> np.ndarray:
        """`codes.list_fingerprints(self.retrieved)`, computed once and held (`Prints`)."""
        return self.prints.get()

    def column(self, name: str) -> pa.Array | None:
        return single(self.table.column(name)) if name in self.table.column_names else None


def run_of(loaded: Parsed, name: str, named: bool = True, scores: bool = True) -> Run:
    """One arm from a parsed file or table, checked against the contract; `named`: the arm's name came
    from the manifest (wins over the file's own `name`). Without `scores` the
    scores are checked, then let go: nothing that reads them will run (a report naming no
    measure). They are 8 bytes an id: 0.3 GB for two arms of 1M queries x 20."""
    path = loaded.path
    table = conform(loaded, RUN)
    unique_ids(loaded, table)
    if "scores" in table.column_names:
        n_ids = pc.list_value_length(table.column("retrieved")).to_numpy(zero_copy_only=False)
        n_scores = pc.list_value_length(table.column("scores")).to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(n_ids != n_scores)
        if len(bad):
            r = int(bad[0])
            raise InputError(path, f"{n_scores[r]} scores for {n_ids[r]} retrieved ids", loaded.where(r))
    k = loaded.meta.get("k")
    if k is not None:
        try:
            k_int = int(str(k).strip())
        except ValueError:
            raise InputError(path, f"metadata k = {k!r} is not an integer") from None
        if k_int < 1:
            raise InputError(path, f"metadata k = {k_int} must be at least 1")
    name = name if named else loaded.meta.get("name") or name
    fp = codes.list_fingerprints(single(table.column("retrieved")))
    facts = list_facts(table, fp)
    if not scores and facts.scored:
        table = table.drop_columns(["scores"])
        loaded = replace(loaded, table=loaded.table.drop_columns(["scores"]))
    prints = Prints(table.column("retrieved"), fp)
    return Run(name, loaded, table, None if k is None else k_int, facts, prints)


def load_queries(path: Path, fmt: str | None = None) -> pa.Table:
    return queries_of(read_input(path, Role.QUERIES, fmt))


def queries_of(loaded: Parsed) -> pa.Table:
    table = conform(loaded, QUERIES, QUERY_ALIASES)
    unique_ids(loaded, table)
    return table


def load_corpus_ids(path: Path, fmt: str | None = None) -> CorpusIds:
    """The corpus's chunk ids only: a corpus may hold millions of chunks, never all loaded."""
    return load_corpus_docs(path, fmt, docs=False)[0]


def load_corpus_docs(
    path: Path, fmt: str | None = None, docs: bool = True
) -> tuple[CorpusIds, pa.Array | None]:
    """The corpus's chunk ids and, with `docs`, its `doc_id` column (None when it has none, or
    without `docs`), for the tuning split. One id, one chunk: a look-up must not pick one of two.
    Without `docs`, from the corpus's mapped cache when one is built (the app's look-ups and the
    report's text hints build it once per corpus version), else read from the file; the tuning
    split's `doc_id` is always read from the file, where its type is checked."""
    cached = cached_ids(path, fmt) if not docs else None
    if cached is not None:
        return cached, None
    wanted = {"chunk_id": CORPUS["chunk_id"], **({"doc_id": CORPUS["doc_id"]} if docs else {})}
    loaded = read_input(path, Role.CORPUS, fmt, columns=["chunk_id", "_id", *(["doc_id"] if docs else [])])
    table = conform(loaded, wanted, ALIASES)
    chunk_ids = single(table.column("chunk_id"))
    fp = codes.fingerprint(chunk_ids)
    placed = by_slot(fp)  # the index's layout order, in which equal ids are adjacent
    unique_ids(loaded, table, "chunk_id", adjacent=placed)
    doc_ids = single(table.column("doc_id")) if "doc_id" in table.column_names else None
    return CorpusIds(chunk_ids, fp, placed), doc_ids


@dataclass(frozen=True)
class Tables:
    """Inputs given as tables rather than files (a Python caller's): each parsed by `from_table`
    under the name errors give it ("run a", "labels"); None: read from the file the spec names."""

    a: Parsed | None = None
    b: Parsed | None = None
    labels: Parsed | None = None
    queries: Parsed | None = None
    corpus: Parsed | None = None

    @property
    def given(self) -> frozenset[str]:
        """The names of the inputs given as tables."""
        roles = ("a", "b", "labels", "queries", "corpus")
        return frozenset(r for r in roles if getattr(self, r) is not None)


FILES = Tables()  # every input read from its file


@dataclass(frozen=True)
class Inputs:
    """The files of one evaluation, read and checked against the data contract. `given`: which
    inputs came as tables (`Tables.given`); `chunks`: a corpus given as a table, for look-ups."""

    spec: Spec
    a: Run
    b: Run
    frozen: FrozenLabels
    queries: pa.Table | None
    corpus: CorpusIds | None
    given: frozenset[str] = frozenset()
    chunks: Corpus | None = None
    split: DocSplit | None = None  # the tuning split over the corpus's chunks (spec.holdout)
    notices: tuple[str, ...] = ()  # one line each, printed once (not checks): a BEIR split's queries
    rag: RagFacts | None = None  # what reading a RAG framework's shape did (None: no input had one)


def load_inputs(spec: Spec, tables: Tables = FILES, scores: bool = True) -> Inputs:
    """Read every file `spec` names, or take the input from `tables` where it gives one: both go
    through the same contract checks. The two runs are independent: one thread each (2 cores).
    Without `scores` the runs' scores are checked, then let go (`run_of`).
    A BEIR split (`spec.split`): only its queries are evaluated (`_of_split`). Runs in a RAG
    framework's shape are keyed by the queries file (`frameworks.keyed`) and may give the labels, the
    queries' text and the corpus's (`_from_runs`)."""

    def parse(arm: ArmSpec, given: Parsed | None) -> Parsed:
        return read_input(arm.path, Role.RUN, arm.format) if given is None else in_layout(given, Role.RUN)

    def run(arm: ArmSpec, parsed: Future[Parsed]) -> Run:
        return run_of(frameworks.keyed(_without(parsed.result(), others), queries), arm.name, scores=scores)

    others: pa.Array | None = None  # queries of other splits
    notices: tuple[str, ...] = ()
    with ThreadPoolExecutor(max_workers=2) as pool:
        parsed_a, parsed_b = pool.submit(parse, spec.a, tables.a), pool.submit(parse, spec.b, tables.b)
        if tables.queries is not None:
            queries: pa.Table | None = queries_of(tables.queries)
        else:
            queries = load_queries(spec.queries) if spec.queries else None
        frozen, labels_shape = _frozen(spec, tables, queries)
        if spec.split is not None and queries is not None and frozen is not None:
            queries, others, notices = _of_split(spec, queries, frozen)
        future_a, future_b = pool.submit(run, spec.a, parsed_a), pool.submit(run, spec.b, parsed_b)
        chunks = corpus_of(tables.corpus) if tables.corpus else None
        split = None
        if chunks is not None:
            corpus: CorpusIds | None = CorpusIds(chunks.ids)
            if spec.holdout is not None:
                docs = single(chunks.table.column("doc_id"))
                split = split_of(spec.holdout, chunks.ids, None if docs.null_count == len(docs) else docs)
        elif spec.corpus and spec.holdout is not None:  # one read gives the ids and the documents
            corpus, doc_ids = load_corpus_docs(spec.corpus, spec.corpus_format)
            split = split_of(spec.holdout, corpus.ids, doc_ids)
        else:
            corpus = load_corpus_ids(spec.corpus, spec.corpus_format) if spec.corpus else None
        run_a, run_b = future_a.result(), future_b.result()
    if (
        frozen is not None
        and not labels_shape
        and not (frameworks.converted(run_a.loaded) or frameworks.converted(run_b.loaded))
    ):
        return Inputs(spec, run_a, run_b, frozen, queries, corpus, tables.given, chunks, split, notices)
    frozen, queries, chunks, facts = _from_runs((run_a, run_b), frozen, labels_shape, queries, chunks, spec)
    given = tables.given | ({"labels"} if facts.labels_from_runs else set())
    return Inputs(spec, run_a, run_b, frozen, queries, corpus, given, chunks, split, notices, facts)


def _frozen(spec: Spec, tables: Tables, queries: pa.Table | None) -> tuple[FrozenLabels | None, str]:
    """The frozen labels a file or table gives (None: taken from the runs, `spec.labels_from_runs`),
    and the RAG framework whose shape they had ("" for none): such labels are the expected ids of
    its rows, keyed by `queries` as a run's are."""
    if tables.labels is None and spec.labels_from_runs:
        return None, ""
    if tables.labels is not None:
        parsed, sha = in_layout(tables.labels, Role.LABELS), None
    else:
        parsed, sha = read_input(spec.labels, Role.LABELS), sha256_file(spec.labels)
    shape = frameworks.framework_of(parsed)
    if shape:
        parsed = frameworks.keyed(parsed, queries)
        table, _ = from_runs.labels_table([from_runs.expected(parsed.table)])
        if not table.num_rows:
            raise InputError(parsed.path, f"holds {shape} that name no expected ids: no labels")
        parsed = Parsed(parsed.path, table, parsed.meta)
    return frozen_of(parsed, sha), shape


def _from_runs(
    runs: tuple[Run, Run],
    frozen: FrozenLabels | None,
    labels_shape: str,
    queries: pa.Table | None,
    chunks: Corpus | None,
    spec: Spec,
) -> tuple[FrozenLabels, pa.Table | None, Corpus | None, RagFacts]:
    """What runs of a RAG framework's shape give where no input does (`from_runs`): the labels (their
    expected ids), the queries' text, and their texts standing in for the corpus."""
    read = {
        f"run {side}": run for side, run in zip("ab", runs, strict=True) if frameworks.converted(run.loaded)
    }
    differ: tuple[str, ...] = ()
    if frozen is None:
        labels, differ = from_runs.labels_of({name: run.loaded for name, run in read.items()})
        frozen = frozen_of(labels)
    tables = [run.table for run in read.values()]
    queries = from_runs.queries_with_runs(tables, queries)
    texts, texts_differ = (
        (None, ()) if chunks is not None or spec.corpus is not None else from_runs.texts_of(tables)
    )
    if texts is not None:
        chunks = corpus_of(Parsed(from_runs.TEXTS, texts))
    shapes = {name: frameworks.framework_of(run.loaded) for name, run in read.items()}
    facts = RagFacts(
        shapes=shapes | ({"labels": labels_shape} if labels_shape else {}),
        labels_from_runs=spec.labels_from_runs,
        differ=differ,
        by_text={
            name: int(sum(run.table.column(frameworks.BY_TEXT).to_pylist())) for name, run in read.items()
        },
        keyed_by_text={name: getattr(run.loaded, "keyed_by_text", 0) for name, run in read.items()},
        stand_in=texts is not None,
        texts_differ=texts_differ,
    )
    return frozen, queries, chunks, facts


def _of_split(
    spec: Spec, queries: pa.Table, frozen: FrozenLabels
) -> tuple[pa.Table, pa.Array, tuple[str, ...]]:
    """A BEIR folder's queries file names every split's queries: those of `spec.split` (the ones
    its qrels judge) kept; the others, to be left out of the runs as well; one notice of them."""
    ids = single(queries.column("query_id"))
    mine = pc.is_in(ids, value_set=pc.unique(frozen.judged_ids)).to_numpy(zero_copy_only=False)
    n_other = int((~mine).sum())
    if not n_other:
        return queries, pa.array([], pa.string()), ()
    name = spec.queries.name if spec.queries is not None else "the queries file"
    notice = (
        f"{name} holds {n_other} queries beyond the {int(mine.sum())} of split {spec.split!r} "
        f"(qrels/{spec.split}.tsv): only those are evaluated"
    )
    return queries.filter(pa.array(mine)), ids.filter(pa.array(~mine)), (notice,)


def _without(loaded: Parsed, others: pa.Array | None) -> Parsed:
    """A run without its rows for `others` (queries of another BEIR split), each row kept placed
    where the file has it; as is when it has none (or its ids are not text: the contract says so)."""
    if others is None or not len(others) or "query_id" not in loaded.table.column_names:
        return loaded
    try:
        ids = pc.cast(single(loaded.table.column("query_id")), pa.string())
    except (pa.ArrowException, TypeError):
        return loaded
    keep = pc.invert(pc.is_in(ids, value_set=others)).to_numpy(zero_copy_only=False)
    if keep.all():
        return loaded
    rows = np.flatnonzero(keep)
    return Placed(loaded.path, loaded.table.take(pa.array(rows)), loaded.meta, source=loaded, origin=rows)
