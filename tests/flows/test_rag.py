"""RAG evaluations read as they are (docs/data.md "RAG evaluations"): LlamaIndex RetrieverEvaluator
results, Ragas EvaluationDataset rows and OpenInference RETRIEVER spans as Phoenix exports them, in
every container, give the numbers of the TREC form of the same lists (tests/rag_shapes.py writes
both); the runs' expected ids are the labels, their texts the corpus, their query text the key; a
file that looks like a shape but lacks a column names the shape and the column."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rag_shapes import ARMS, SHAPES, Case, Query, generate, trec

import triage
from triage.cli.main import main
from triage.core.errors import InputError
from triage.core.inputs.rag.frameworks import (
    EXPECTED,
    Framework,
    chunk_key,
    convert,
    keyed,
    query_key,
    shape_of,
)
from triage.core.inputs.readers import Parsed
from triage.core.inputs.shapes import Format, Role, detect, read_input

from conftest import ROOT

DOCS = ROOT / "docs" / "data.md"
MEASURES = ["nDCG@10", "AP", "R@5", "P@3", "RR", "Success@5"]


def numbers(report: dict) -> dict:
    """What an evaluation found: each arm's metrics and named measures, the paired cells and tests,
    the flips (their text and hints aside: only the RAG forms have text), the counts."""
    arms = {
        s: {k: v for k, v in a.items() if k not in ("path", "meta", "name")}
        for s, a in report["arms"].items()
    }
    flips = [{k: v for k, v in f.items() if k not in ("text", "hints")} for f in report["flips"]]
    keys = ("n_queries", "n_scored", "n_unlabelled", "paired", "k_cells", "compare")
    return {"arms": arms, "flips": flips, "missing": {s: sorted(v) for s, v in report["missing"].items()}} | {
        k: report.get(k) for k in keys
    }


def close(x: object, y: object, at: str = "") -> None:
    """`x` equals `y`, floats to 1e-12."""
    if isinstance(x, dict) and isinstance(y, dict):
        assert x.keys() == y.keys(), (at, set(x) ^ set(y))
        for k in x:
            close(x[k], y[k], f"{at}/{k}")
    elif isinstance(x, list) and isinstance(y, list):
        assert len(x) == len(y), at
        for i, (a, b) in enumerate(zip(x, y, strict=True)):
            close(a, b, f"{at}[{i}]")
    elif isinstance(x, float) and isinstance(y, float):
        assert abs(x - y) <= 1e-12 or (math.isnan(x) and math.isnan(y)), (at, x, y)
    else:
        assert x == y, (at, x, y)


def report(a: object, b: object, **more: object) -> dict:
    return triage.open(a=a, b=b, k=10, names=("a", "b"), measures=MEASURES, **more).report().to_json()


def checks(rep: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for c in rep["checks"]:
        out.setdefault(c["code"], []).append(c)
    return out


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def llamaindex_row(query: str, expected: list[str] | None, retrieved: list[str], **more: object) -> dict:
    """A `RetrievalEvalResult.model_dump(mode="json")` (llama_index/core/evaluation/retrieval/base.py)."""
    row = {
        "query": query,
        "expected_ids": expected,
        "expected_texts": None,
        "retrieved_ids": retrieved,
        "retrieved_texts": [f"text of {c}" for c in retrieved],
        "mode": "text",
        "metric_dict": {"hit_rate": {"score": 1.0, "metadata": {}}},
    }
    return row | more


# -- recognised by their names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "framework"),
    [
        (
            ["query", "expected_ids", "expected_texts", "retrieved_ids", "retrieved_texts", "mode"],
            Framework.LLAMAINDEX,
        ),
        (["", "query", "retrieved_ids"], Framework.LLAMAINDEX),  # pandas' to_csv, its index first
        (["user_input", "retrieved_contexts", "response"], Framework.RAGAS),
        (["user_input", "retrieved_context_ids", "reference_context_ids"], Framework.RAGAS),
        (["question", "contexts", "answer", "ground_truth"], Framework.RAGAS),  # Ragas 0.1: to rename
        (
            ["context.span_id", "span_kind", "attributes.input.value", "attributes.retrieval.documents"],
            Framework.OPENINFERENCE,
        ),
        (["name", "context", "span_kind", "attributes"], Framework.OPENINFERENCE),  # REST, nested
        (["attributes.retrieval.documents.0.document.id"], Framework.OPENINFERENCE),  # flattened
        (["query_id", "retrieved", "scores"], None),  # the contract's own
        (["query_id", "chunk_id", "score", "retrieved_ids"], None),  # one row per id, whatever else
        (["qid", "docno", "score"], None),
    ],
)
def test_each_shape_is_recognised_by_its_column_names(names: list[str], framework: Framework | None) -> None:
    assert shape_of(names) is framework


def test_keys_are_digests_of_whitespace_normalised_text() -> None:
    assert (
        query_key("What is  a bond?\n")
        == query_key(" What is a bond?")
        == "q-" + __import__("hashlib").sha256(b"What is a bond?").hexdigest()[:10]
    )
    assert chunk_key("A\tbond  is\n") == chunk_key("A bond is") != chunk_key("A bond was")
    assert len(chunk_key("x")) == 14 and len(query_key("x")) == 12


ID = st.one_of(st.text(min_size=1, max_size=6), st.integers(min_value=-(2**40), max_value=2**40))
TEXT = st.text(min_size=1, max_size=30).filter(lambda t: t.strip() != "")


@given(
    st.lists(
        st.tuples(TEXT, st.lists(ID, max_size=8, unique_by=str), st.lists(ID, max_size=4)),
        min_size=1,
        max_size=8,
        unique_by=lambda row: " ".join(row[0].split()),
    )
)
@settings(max_examples=60, deadline=None)
@pytest.mark.slow
def test_rows_of_each_shape_convert_to_their_own_lists(rows: list[tuple[str, list, list]]) -> None:
    """Whatever the text and the ids (strings or integers), a LlamaIndex row, a Ragas row and a
    span give the run the same query key, ranked ids and expected ids."""
    source = Parsed(Path("run.jsonl"), pa.table({}))
    shapes = {
        Framework.LLAMAINDEX: [{"query": t, "retrieved_ids": r, "expected_ids": e} for t, r, e in rows],
        Framework.RAGAS: [
            {"user_input": t, "retrieved_context_ids": r, "reference_context_ids": e} for t, r, e in rows
        ],
        Framework.OPENINFERENCE: [
            {
                "span_kind": "RETRIEVER",
                "attributes": {
                    "input": {"value": t},
                    "retrieval": {"documents": [{"document": {"id": c}} for c in r]},
                },
                "attributes.metadata": json.dumps({"expected_ids": e}),
            }
            for t, r, e in rows
        ],
    }
    for framework, records in shapes.items():
        names = {k for rec in records for k in rec}
        run = keyed(convert(source, framework, records, names), None).table
        assert run.column("query_id").to_pylist() == [query_key(t) for t, _, _ in rows], framework
        retrieved = run.column("retrieved").to_pylist()
        assert retrieved == [[str(c) for c in r] for _, r, _ in rows], framework
        assert run.column(EXPECTED).to_pylist() == [[str(c) for c in e] for _, _, e in rows], framework


# -- the first command ---------------------------------------------------------------------------------


def two_llamaindex_files(tmp_path: Path) -> tuple[Path, Path]:
    a = jsonl(
        tmp_path / "a.jsonl",
        [
            llamaindex_row("What is a bond?", ["n7"], ["n2", "n7"]),
            llamaindex_row("Who pays the tariff?", ["n4", "n9"], ["n1"]),
            llamaindex_row("When does the lease end?", ["n3"], ["n3", "n5"]),
        ],
    )
    b = jsonl(
        tmp_path / "b.jsonl",
        [
            llamaindex_row("Who pays the tariff?", ["n9", "n4"], ["n4"]),
            llamaindex_row("What is a bond?", ["n7"], ["n7"]),
            llamaindex_row("When does the lease end?", ["n3"], ["n5"]),
        ],
    )
    return a, b


def test_the_first_command_reports_on_two_llamaindex_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_llamaindex_files(tmp_path)
    assert main(["report", str(a), str(b), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["k"] == 10 and rep["n_scored"] == 3
    assert rep["arms"]["a"]["hit_rate"] == pytest.approx(2 / 3) and rep["arms"]["b"][
        "hit_rate"
    ] == pytest.approx(2 / 3)
    found = checks(rep)
    assert found["labels.from_runs"][0]["level"] == "ok"  # the same set, in another order
    assert found["rag.shapes"][0]["facts"]["shapes"] == {
        "run a": Framework.LLAMAINDEX,
        "run b": Framework.LLAMAINDEX,
    }
    flips = {f["text"]: f["direction"] for f in rep["flips"]}
    assert flips == {"Who pays the tariff?": "miss->hit", "When does the lease end?": "hit->miss"}
    assert {f["query_id"] for f in rep["flips"]} == {
        query_key("Who pays the tariff?"),
        query_key("When does the lease end?"),
    }


def test_the_runs_texts_stand_in_for_the_corpus(tmp_path: Path) -> None:
    a, b = two_llamaindex_files(tmp_path)
    snapshot = triage.open(a=a, b=b).snapshot
    chunks = snapshot.inputs.chunks
    assert chunks is not None and snapshot.inputs.corpus is None  # no corpus checks on a stand-in
    assert chunks.get(["n7", "n9"])["n7"].text == "text of n7" and "n9" not in chunks.get(["n9"])
    corpus = tmp_path / "corpus.jsonl"
    jsonl(
        corpus, [{"chunk_id": c, "text": f"corpus text of {c}"} for c in ("n1", "n2", "n3", "n4", "n5", "n7")]
    )
    given = triage.open(a=a, b=b, corpus=corpus).snapshot.inputs
    assert given.rag is not None and not given.rag.stand_in


def test_labels_from_runs_that_disagree_are_an_error_check_naming_the_queries(tmp_path: Path) -> None:
    a = jsonl(
        tmp_path / "a.jsonl", [llamaindex_row("q one", ["x"], ["x"]), llamaindex_row("q two", ["y"], ["y"])]
    )
    b = jsonl(
        tmp_path / "b.jsonl", [llamaindex_row("q one", ["z"], ["x"]), llamaindex_row("q two", ["y"], ["z"])]
    )
    comparison = triage.open(a=a, b=b)
    rep = comparison.report().to_json()
    (check,) = checks(rep)["labels.from_runs"]
    assert (
        check["level"] == "error"
        and query_key("q one") in check["message"]
        and query_key("q two") not in check["message"]
    )
    gold = comparison.snapshot.labels.frozen.table.to_pylist()
    assert {(g["query_id"], g["chunk_id"]) for g in gold} == {
        (query_key("q one"), "x"),
        (query_key("q one"), "z"),  # the union: neither arm favoured
        (query_key("q two"), "y"),
    }


def test_runs_that_expect_nothing_need_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spans = [
        {
            "span_kind": "RETRIEVER",
            "attributes.input.value": "q",
            "attributes.retrieval.documents": [{"document.id": "d1"}],
        }
    ]
    a, b = jsonl(tmp_path / "a.jsonl", spans), jsonl(tmp_path / "b.jsonl", spans)
    assert main(["report", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "labels: none given, and run a and run b name no expected ids" in err and "Traceback" not in err
    trec_a, trec_b = tmp_path / "a.run", tmp_path / "b.run"
    trec_a.write_text("q1 Q0 d1 1 1.0 a\n")
    trec_b.write_text("q1 Q0 d1 1 1.0 b\n")
    assert main(["report", str(trec_a), str(trec_b)]) == 2
    assert "the runs are not RAG evaluations" in capsys.readouterr().err


# -- the query key -------------------------------------------------------------------------------------


def test_a_queries_file_maps_the_runs_text_to_the_labels_ids(tmp_path: Path) -> None:
    rows = [
        llamaindex_row("What is a bond?", None, ["n7"]),
        llamaindex_row("Who pays the tariff?", None, ["n1"]),
    ]
    a, b = jsonl(tmp_path / "a.jsonl", rows), jsonl(tmp_path / "b.jsonl", rows[::-1])
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("Q1 0 n7 1\nQ2 0 n4 1\n")
    queries = jsonl(
        tmp_path / "queries.jsonl",
        [{"query_id": "Q1", "text": "What is  a bond?"}, {"query_id": "Q2", "text": "Who pays the tariff?"}],
    )
    rep = report(a, b, labels=qrels, queries=queries)
    assert rep["n_scored"] == 2 and rep["arms"]["a"]["hit_rate"] == 0.5
    assert "queries.keyed_by_text" not in checks(rep)
    unmapped = report(a, b, labels=qrels)  # known by text, judged by id: nothing meets
    (check,) = checks(unmapped)["queries.keyed_by_text"]
    assert check["level"] == "error" and "give --queries" in check["message"]
    twice = jsonl(
        tmp_path / "q2.jsonl",
        [{"query_id": "Q1", "text": "What is a bond?"}, {"query_id": "Q9", "text": "What is a bond? "}],
    )
    with pytest.raises(
        InputError,
        match=r"a\.jsonl: line 1: the query 'What is a bond\?' is the text of 2 queries of the queries "
        r"file \(Q1, Q9\)",
    ):
        report(a, b, labels=qrels, queries=twice)


def test_a_query_twice_in_one_run_is_refused_naming_both_rows(tmp_path: Path) -> None:
    a = jsonl(
        tmp_path / "a.jsonl", [llamaindex_row("q one", ["x"], ["x"]), llamaindex_row("q  one ", ["x"], ["y"])]
    )
    with pytest.raises(
        InputError, match=r"a\.jsonl: line 2: the query 'q one' appears twice \(line 1 and line 2\)"
    ):
        report(a, a)


def test_a_query_id_given_is_the_key(tmp_path: Path) -> None:
    rows = [
        llamaindex_row("q one", ["x"], ["x"], query_id=7),
        llamaindex_row("q two", ["y"], ["z"], query_id="Q2"),
    ]
    a = jsonl(tmp_path / "a.jsonl", rows)
    table = read_input(a, Role.RUN).table
    assert table.column("query_id").to_pylist() == ["7", "Q2"]  # ids are strings, whatever their type


# -- texts without ids ---------------------------------------------------------------------------------


def test_ragas_texts_without_ids_are_keyed_by_a_digest_and_a_check_says_so(tmp_path: Path) -> None:
    def rows(first: str) -> list[dict]:
        return [
            {
                "user_input": "q one",
                "retrieved_contexts": [first, "Other  text."],
                "reference_contexts": ["A bond is a loan."],
            },
            {
                "user_input": "q two",
                "retrieved_contexts": ["Other text."],
                "reference_contexts": ["Nothing here."],
            },
        ]

    a = jsonl(tmp_path / "a.jsonl", rows("A bond\nis a loan."))  # the same text, other whitespace
    b = jsonl(tmp_path / "b.jsonl", rows("Another passage."))
    rep = report(a, b)
    assert rep["arms"]["a"]["hit_rate"] == 0.5 and rep["arms"]["b"]["hit_rate"] == 0.0
    found = checks(rep)
    assert [c["facts"] for c in found["ids.from_text"]] == [
        {"input": "run a", "rows": 2},
        {"input": "run b", "rows": 2},
    ]
    assert read_input(a, Role.RUN).table.column("retrieved").to_pylist()[0] == [
        chunk_key("A bond is a loan."),
        chunk_key("Other text."),
    ]
    assert "corpus.texts_differ" not in found  # whitespace apart, the texts agree


def test_an_id_with_two_texts_is_named(tmp_path: Path) -> None:
    a = jsonl(tmp_path / "a.jsonl", [llamaindex_row("q", ["x"], ["x"])])
    b = jsonl(
        tmp_path / "b.jsonl", [llamaindex_row("q", ["x"], ["x"]) | {"retrieved_texts": ["another text of x"]}]
    )
    (check,) = checks(report(a, b))["corpus.texts_differ"]
    assert check["level"] == "warning" and check["facts"] == {"count": 1} and "x" in check["message"]


# -- refused, naming the shape and the column ------------------------------------------------------------

BAD = {
    "llamaindex-no-retrieved": (
        [{"query": "q", "expected_ids": ["a"], "retrieved_nodes": ["a"]}],
        "looks like LlamaIndex RetrieverEvaluator results (expected_ids) but has no 'retrieved_ids' column",
    ),
    "llamaindex-no-query": (
        [{"expected_ids": ["a"], "retrieved_ids": ["a"]}],
        "looks like LlamaIndex RetrieverEvaluator results (expected_ids, retrieved_ids) but has no 'query' "
        "column (the query's text) nor a 'query_id'",
    ),
    "llamaindex-null-list": (
        [{"query": "q", "retrieved_ids": None}],
        "line 1: 'retrieved_ids' is empty (null); write [] for no results",
    ),
    "llamaindex-float-id": (
        [{"query": "q", "retrieved_ids": ["a", 1.5]}],
        "line 1: 'retrieved_ids' holds 1.5; ids are strings or integers",
    ),
    "llamaindex-texts-length": (
        [{"query": "q", "retrieved_ids": ["a", "b"], "retrieved_texts": ["t"]}],
        "line 1: 1 retrieved_texts for 2 retrieved_ids",
    ),
    "ragas-0.1": (
        [{"question": "q", "contexts": ["a"], "answer": "x", "ground_truth": "y"}],
        "looks like Ragas 0.1 rows (contexts, question): rename 'question' to 'user_input' and 'contexts' to "
        "'retrieved_contexts'",
    ),
    "ragas-no-contexts": (
        [{"user_input": "q", "reference_contexts": ["a"]}],
        "looks like Ragas EvaluationDataset rows (reference_contexts, user_input) but has no "
        "'retrieved_context_ids' or 'retrieved_contexts' column",
    ),
    "ragas-ids-in-some-rows": (
        [
            {"user_input": "q", "retrieved_context_ids": ["a"]},
            {"user_input": "r", "retrieved_contexts": ["t"]},
        ],
        "line 2: 'retrieved_context_ids' is empty (null) here but given in other rows",
    ),
    "ragas-not-a-list": (
        [{"user_input": "q", "retrieved_contexts": "one text"}],
        "line 1: 'retrieved_contexts' is text that is not a list",
    ),
    "span-no-query": (
        [{"span_kind": "RETRIEVER", "attributes.retrieval.documents": [{"document.id": "a"}]}],
        "line 1: looks like OpenInference RETRIEVER spans, but this row has neither a 'query_id' nor the "
        "query's text ('input.value')",
    ),
    "span-document-without-id": (
        [
            {
                "span_kind": "RETRIEVER",
                "attributes.input.value": "q",
                "attributes.retrieval.documents": [{"document.id": "a"}, {"document.content": "t"}],
            }
        ],
        "line 1: document 1 has no document.id, while other documents of the file have",
    ),
    "span-none-retriever": ([{"span_kind": "LLM", "attributes.input.value": "q"}], "holds no RETRIEVER span"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_file_that_looks_like_a_shape_names_the_shape_and_the_column(tmp_path: Path, case: str) -> None:
    rows, message = BAD[case]
    path = jsonl(tmp_path / "run.jsonl", rows)
    with pytest.raises(InputError) as caught:
        read_input(path, Role.RUN)
    assert message in caught.value.message


def test_a_bad_shape_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, message = BAD["ragas-0.1"]
    path = tmp_path / "ragas.csv"
    path.write_text("question,contexts,answer\nq,\"['a', 'b']\",x\n")
    assert detect(path, Role.RUN) is Format.CSV
    assert main(["report", str(path), str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "chunk_id" not in err and "Traceback" not in err


# -- JSON rows -----------------------------------------------------------------------------------------


def test_a_json_array_of_rows_reads_as_its_json_lines(tmp_path: Path) -> None:
    rows = [
        {"query_id": "q1", "retrieved": ["a", 2], "scores": [2.0, 1]},
        {"query_id": "q3", "retrieved": []},
    ]
    array = tmp_path / "run.json"
    array.write_text(json.dumps(rows, indent=2))
    assert detect(array, Role.RUN) is Format.JSON
    table = read_input(array, Role.RUN).table
    assert table.column("retrieved").to_pylist() == [["a", "2"], []]
    assert table.column("scores").to_pylist() == [[2.0, 1.0], None]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"query_id": "q1", "plan": "scan"}, {"query_id": "q2", "plan": 4}]))
    with pytest.raises(
        InputError, match=r"bad\.json: row 2: column 'plan' holds a number here but a string in earlier rows"
    ):
        read_input(bad, Role.RUN)
    not_rows = tmp_path / "not.json"
    not_rows.write_text("[1, 2]")
    with pytest.raises(InputError, match=r"row 1: expected a JSON object, found int"):
        read_input(not_rows, Role.RUN)


def test_pandas_default_to_json_is_read_as_rows(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    rows = [llamaindex_row("q one", ["x"], ["x", "y"]), llamaindex_row("q two", ["y"], ["z"])]
    path = tmp_path / "results.json"
    pd.DataFrame(rows).to_json(path)  # orient="columns": {column: {index: value}}
    assert detect(path, Role.RUN) is Format.JSON
    table = read_input(path, Role.RUN).table
    assert table.column("retrieved").to_pylist() == [["x", "y"], ["z"]]


# -- DataFrames ------------------------------------------------------------------------------------------


def test_a_spans_frame_with_columns_of_mixed_kinds_is_read(tmp_path: Path) -> None:
    """A Phoenix spans frame holds attribute columns whose values change kind from span to span (an
    output that is text here, an object there): kept as JSON text, and the documents read from it."""
    pd = pytest.importorskip("pandas")
    docs = [{"document.id": 7, "document.score": 0.5}, {"document.id": "d8", "document.score": 0.25}]
    frame = pd.DataFrame(
        {
            "span_kind": ["RETRIEVER", "LLM"],
            "attributes.input.value": ["q one", "prompt"],
            "attributes.output.value": ["text", {"an": "object"}],
            "attributes.retrieval.documents": [docs, None],
            "attributes.metadata": [{"expected_ids": ["d8"]}, None],
        }
    )
    rep = report(frame, frame)
    assert rep["n_scored"] == 1 and rep["arms"]["a"]["mrr"] == 0.5
    run = triage.open(a=frame, b=frame).snapshot.inputs.a.table
    assert run.column("retrieved").to_pylist() == [["7", "d8"]] and run.column("scores").to_pylist() == [
        [0.5, 0.25]
    ]


def test_a_frame_whose_id_lists_mix_text_and_integers_reads_them_as_text() -> None:
    """Not only a framework's: any frame whose lists of ids mix kinds, which Arrow cannot type."""
    pd = pytest.importorskip("pandas")
    run = pd.DataFrame({"query_id": ["q1", "q2"], "retrieved": [["a", 7], [8]]})
    labels = pd.DataFrame({"query_id": ["q1", "q2"], "chunk_id": ["7", "8"]})
    rep = triage.open(a=run, b=run, labels=labels).report().to_json()
    assert rep["arms"]["a"]["hit_rate"] == 1.0 and rep["arms"]["a"]["mrr"] == 0.75
    ragas = pd.DataFrame(
        {"user_input": ["q"], "retrieved_context_ids": [[1, "d2"]], "reference_context_ids": [["d2"]]}
    )
    assert triage.open(a=ragas, b=ragas).snapshot.inputs.a.table.column("retrieved").to_pylist() == [
        ["1", "d2"]
    ]


# -- the docs' examples --------------------------------------------------------------------------------


def doc_examples() -> dict[str, list[dict]]:
    """Each framework section's example file (its ```jsonl block)."""
    page = DOCS.read_text("utf-8").split("## RAG evaluations", 1)[1]
    out = {}
    for section in page.split("\n### ")[1:]:
        title = section.split("\n", 1)[0]
        block = section.split("```jsonl\n", 1)[1].split("```", 1)[0]
        out[title] = [json.loads(line) for line in block.splitlines()]
    return out


def test_each_framework_has_an_example_file_that_reads_as_documented(tmp_path: Path) -> None:
    examples = doc_examples()
    assert set(examples) == {"LlamaIndex", "Ragas", "OpenInference and Phoenix"}
    for title, rows in examples.items():
        path = jsonl(tmp_path / f"{title[:4]}.jsonl", rows)
        rep = report(path, path)
        assert (
            rep["n_scored"] == 2
            and rep["arms"]["a"]["hit_rate"] == 1.0
            and rep["arms"]["a"]["recall"] == 0.75
        ), title
        assert checks(rep)["labels.from_runs"][0]["level"] == "ok"
        flips_text = {f["text"] for f in rep["flips"]}
        assert flips_text == set()  # one file, both arms: nothing flips


# -- the numbers of the TREC form -------------------------------------------------------------------------


def test_one_llamaindex_case_gives_the_trec_forms_numbers(tmp_path: Path) -> None:
    """The fast equality (not slow): hand-written LlamaIndex rows against their TREC form."""
    case = generate(random.Random(7), 12)
    runs = []
    for arm in ARMS:
        rows = [llamaindex_row(q.text, q.expected, q.retrieved[arm]) for q in case.answering(arm)]
        runs.append(jsonl(tmp_path / f"{arm}.jsonl", rows))
    a, b, qrels = trec(case, tmp_path / "trec")
    close(numbers(report(a, b, labels=qrels)), numbers(report(*runs)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_gives_the_trec_forms_numbers(tmp_path: Path, shape: str, seed: int) -> None:
    writer, by_text, package = SHAPES[shape]
    if package is not None:
        pytest.importorskip(package)
    if shape.endswith("pandas"):
        pytest.importorskip("pandas")
    case = generate(random.Random(seed))
    a, b, qrels = trec(case, tmp_path / "trec", by_text)
    got = report(*(writer(case, arm, tmp_path) for arm in ARMS))
    close(numbers(report(a, b, labels=qrels)), numbers(got))
    assert checks(got)["labels.from_runs"][0]["level"] == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["llamaindex-jsonl", "ragas-csv", "phoenix-parquet"])
def test_the_first_command_on_each_framework(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    writer, _, package = SHAPES[shape]
    if package is not None:
        pytest.importorskip(package)
    pytest.importorskip("pandas")
    case = generate(random.Random(11), 20)
    a, b = (writer(case, arm, tmp_path) for arm in ARMS)
    assert main(["report", str(a), str(b), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["n_scored"] == len(case.queries) and rep["k"] == 10
    assert checks(rep)["rag.shapes"][0]["level"] == "ok"
    assert all(f["text"].startswith("Question ") for f in rep["flips"])


@pytest.mark.slow
def test_a_llamaindex_dataset_is_the_labels_queries_and_corpus(tmp_path: Path) -> None:
    """`EmbeddingQAFinetuneDataset.save_json` as --labels: its relevant_docs by query uuid; its queries
    map the results' text to those uuids; its corpus is the corpus (no stand-in)."""
    pytest.importorskip("llama_index.core")  # the results; the dataset is written by hand without it
    from rag_shapes import llamaindex_dataset, llamaindex_jsonl

    case = generate(random.Random(5), 15)
    dataset = llamaindex_dataset(case, tmp_path / "dataset.json")
    assert detect(dataset, Role.LABELS) is Format.LLAMAINDEX_DATASET
    runs = [llamaindex_jsonl(case, arm, tmp_path) for arm in ARMS]
    a, b, qrels = trec(case, tmp_path / "trec")
    got = triage.open(a=runs[0], b=runs[1], labels=dataset, k=10, names=("a", "b"), measures=MEASURES)
    ids = {q.text: f"uuid-{i:04d}" for i, q in enumerate(case.queries)}
    assert set(got.snapshot.labels.frozen.table.column("query_id").to_pylist()) <= set(ids.values())
    assert got.snapshot.spec.corpus == dataset and got.snapshot.inputs.rag is not None
    assert not got.snapshot.inputs.rag.stand_in
    expected = numbers(report(a, b, labels=qrels))
    found = numbers(got.report().to_json())
    renamed = {query_key(t): i for t, i in ids.items()}
    for f in expected["flips"]:
        f["query_id"] = renamed[f["query_id"]]
    expected["missing"] = {s: sorted(renamed[q] for q in v) for s, v in expected["missing"].items()}
    for side in (expected, found):  # flips tied on their order go by id: other ids, another order
        side["flips"].sort(key=lambda f: (f["direction"], f["query_id"]))
    close(expected, found)


def test_labels_may_be_a_rag_file_keyed_by_the_same_text(tmp_path: Path) -> None:
    """Spans that expect nothing, judged by a Ragas file's reference ids for the same query text."""
    from rag_shapes import ragas_jsonl

    case = Case(
        [
            Query("q one", ["x"], {"a": ["x", "y"], "b": ["y", "x"]}),
            Query("q two", ["z"], {"a": ["y"], "b": ["z"]}),
        ]
    )
    spans = []
    for arm in ARMS:
        rows = [
            {
                "span_kind": "RETRIEVER",
                "attributes.input.value": q.text,
                "attributes.retrieval.documents": [{"document.id": c} for c in q.retrieved[arm]],
            }
            for q in case.queries
        ]
        spans.append(jsonl(tmp_path / f"spans_{arm}.jsonl", rows))
    labels = ragas_jsonl(case, "a", tmp_path)
    rep = report(*spans, labels=labels)
    assert rep["arms"]["a"]["hit_rate"] == 0.5 and rep["arms"]["b"]["hit_rate"] == 1.0
    assert rep["arms"]["a"]["mrr"] == 0.5 and rep["arms"]["b"]["mrr"] == 0.75
    assert checks(rep)["rag.shapes"][0]["facts"]["shapes"]["labels"] == Framework.RAGAS


def test_a_parquet_run_of_spans_names_its_rows(tmp_path: Path) -> None:
    table = pa.table(
        {
            "span_kind": ["RETRIEVER", "RETRIEVER"],
            "attributes.input.value": ["q one", None],
            "attributes.retrieval.documents": [[{"document.id": "a"}], [{"document.id": "b"}]],
        }
    )
    pq.write_table(table, tmp_path / "spans.parquet")
    with pytest.raises(InputError, match=r"spans\.parquet: row 2: looks like OpenInference RETRIEVER spans"):
        read_input(tmp_path / "spans.parquet", Role.RUN)


@pytest.mark.slow
async def test_the_app_opens_two_result_files_and_the_detail_shows_their_texts(tmp_path: Path) -> None:
    """`triage A B` with no labels: the app loads, the flips' detail shows the query's text and, for
    the selected retrieved id, the text the run held (the stand-in corpus)."""
    from textual.widgets import Static

    from triage.ui.app import TriageApp

    from app_helpers import open_first_flip, wait_loaded

    a, b = two_llamaindex_files(tmp_path)
    app = TriageApp(triage.open(a=a, b=b).snapshot)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        screen = await open_first_flip(pilot)
        d = screen.detail
        assert d is not None and d.query_id == query_key("When does the lease end?")
        assert "When does the lease end?" in str(screen.query_one("#query-text", Static).render())
        preview = str(screen.query_one("#preview", Static).render())
        assert preview.startswith(f"B #1  {d.b.rows[0].chunk_id}") and "text of n5" in preview


def test_a_manifest_without_labels_takes_them_from_its_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_llamaindex_files(tmp_path)
    (tmp_path / "triage.toml").write_text(
        '[arms.a]\npath = "a.jsonl"\nname = "plain"\n[arms.b]\npath = "b.jsonl"\nname = "reranked"\n'
    )
    assert main(["report", str(tmp_path), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["n_scored"] == 3 and checks(rep)["labels.from_runs"][0]["level"] == "ok"
    assert main(["labels", "export", str(a), str(b), "--out", str(tmp_path / "labels.parquet")]) == 0
    exported = pq.read_table(tmp_path / "labels.parquet")
    assert sorted(exported.column("chunk_id").to_pylist()) == ["n3", "n4", "n7", "n9"]
    capsys.readouterr()
    assert (
        main(["report", str(a), str(b), "--labels", str(tmp_path / "labels.parquet"), "--format", "json"])
        == 0
    )
    again = json.loads(capsys.readouterr().out)
    close(numbers(rep), numbers(again))  # the labels written out are the labels the runs gave


def test_labels_taken_from_the_runs_have_no_file_time(tmp_path: Path) -> None:
    a, b = two_llamaindex_files(tmp_path)
    Path(f"{b}.meta.json").write_text(json.dumps({"created_at": "2024-05-01T12:00:00+00:00", "k": 5}))
    rep = triage.open(a=a, b=b).report().to_json()
    (check,) = checks(rep)["labels.time"]
    assert check["level"] == "ok" and check["message"].startswith(
        "labels taken from the runs record no created_at"
    )
    assert rep["k"] == 5  # the sidecar is read beside a framework's file too
