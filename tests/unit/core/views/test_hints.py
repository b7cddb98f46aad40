"""Cause hints (docs/hints.md "Cause hints"): each rule on small evaluations with its cause present and
absent, the losing arm, the fixed order, no text without a corpus, and the bundled sample's six
planted regressions."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from triage.core.evaluation import Evaluation, evaluate
from triage.core.inputs.corpus import Corpus, open_corpus
from triage.core.inputs.load import load_inputs
from triage.core.inputs.manifest import from_manifest
from triage.core.views.hints import HintKind, hints_for

from conftest import manifest, write_parquet

QUERY = "when is the refund deadline for an invoice"  # content words: refund, deadline, invoice
FILLER = ("Archive > Misc > Notes", "Nothing relevant is written here about other matters at all.")


def filler(n: int, prefix: str = "x") -> dict[str, tuple[str, str]]:
    return {f"{prefix}{i}": (f"{FILLER[0]} {i}", f"{FILLER[1]} Item {i}.") for i in range(n)}


def make(
    tmp: Path,
    a: list[str],
    b: list[str],
    chunks: dict[str, tuple[str, str]],
    gold: tuple[str, ...] = ("g",),
    text: str = QUERY,
    meta_a: dict[str, str] | None = None,
    meta_b: dict[str, str] | None = None,
    row_a: dict | None = None,
    row_b: dict | None = None,
    not_relevant: tuple[str, ...] = (),
    k: int = 5,
) -> tuple[Evaluation, Corpus, int]:
    """One query `q1` (plus an unrelated both-hit `q2`), its two lists, its gold and a corpus."""
    every = {**chunks, **filler(30)}
    for name, ids, row, meta in (("a", a, row_a, meta_a), ("b", b, row_b, meta_b)):
        rows = [
            {"query_id": "q1", "retrieved": ids, **(row or {})},
            {"query_id": "q2", "retrieved": ["x29"], **{c: None for c in row or {}}},
        ]
        write_parquet(tmp / f"{name}.parquet", rows, {"name": name, **(meta or {})})
    labels = [{"query_id": "q1", "chunk_id": g, "relevance": 1} for g in gold]
    labels += [{"query_id": "q1", "chunk_id": c, "relevance": 0} for c in not_relevant]
    labels += [{"query_id": "q2", "chunk_id": "x29", "relevance": 1}]
    write_parquet(tmp / "labels.parquet", labels)
    write_parquet(
        tmp / "queries.parquet", [{"query_id": "q1", "text": text}, {"query_id": "q2", "text": "x"}]
    )
    write_parquet(
        tmp / "chunks.parquet",
        [{"chunk_id": c, "header": h, "text": t} for c, (h, t) in every.items()],
    )
    path = manifest(
        tmp,
        "a.parquet",
        "b.parquet",
        "labels.parquet",
        k=k,
        queries="queries.parquet",
        corpus="chunks.parquet",
    )
    inputs = load_inputs(from_manifest(path))
    ev = evaluate(inputs, inputs.frozen.table.filter(pa.compute.greater(inputs.frozen.table["relevance"], 0)))
    return ev, open_corpus(tmp / "chunks.parquet"), ev.query_index("q1")


def kinds(ev: Evaluation, q: int, corpus: Corpus | None) -> list[HintKind]:
    return [h.kind for h in hints_for(ev, [q], corpus)[q]]


X = [f"x{i}" for i in range(20)]  # filler ids: no query word anywhere
PREPEND = {"header_mode": "prepend"}  # the losing arm B embeds heading path + body


# -- short-list ----------------------------------------------------------------------------------


def test_short_list_present(tmp_path: Path) -> None:
    ev, corpus, q = make(
        tmp_path,
        ["g", *X[:9]],
        X[:3],
        {"g": ("Billing > Refunds", "Refund requests must reach us before the invoice deadline.")},
        row_a={"plan": "postfilter", "n_eligible": 45},
        row_b={"plan": "postfilter", "n_eligible": 45},
    )
    (first, *_) = hints_for(ev, [q], corpus)[q]
    assert first.kind is HintKind.SHORT_LIST and first.arm == "b"
    assert first.evidence == "B returned 3 of k=5 ids (plan postfilter, 45 eligible)"
    assert first.facts == {"n_returned": 3, "k": 5, "plan": "postfilter", "n_eligible": 45}


def test_short_list_absent_when_every_eligible_id_was_returned_or_the_list_is_full(tmp_path: Path) -> None:
    chunks = {"g": ("Billing > Refunds", "Refund requests must reach us before the invoice deadline.")}
    ev, corpus, q = make(tmp_path / "all", ["g"], X[:3], chunks, row_b={"n_eligible": 3})
    assert HintKind.SHORT_LIST not in kinds(ev, q, corpus)
    ev, corpus, q = make(tmp_path / "full", ["g"], X[:5], chunks)
    assert HintKind.SHORT_LIST not in kinds(ev, q, corpus)
    # n_returned, where recorded, is what the arm returned (the stored list may be cut shorter)
    ev, corpus, q = make(tmp_path / "said", ["g"], X[:5], chunks, row_b={"n_returned": 2})
    assert kinds(ev, q, corpus)[0] is HintKind.SHORT_LIST


# -- plan-change ---------------------------------------------------------------------------------


def test_plan_change_present_and_absent(tmp_path: Path) -> None:
    chunks = {"g": ("Billing > Refunds", "Refund requests must reach us before the invoice deadline.")}
    ev, corpus, q = make(tmp_path / "p", ["g"], X[:8], chunks, row_a={"plan": "scan"}, row_b={"plan": "ann"})
    (hint,) = hints_for(ev, [q], corpus)[q]
    assert hint.kind is HintKind.PLAN_CHANGE and hint.facts == {"plan_a": "scan", "plan_b": "ann"}
    assert hint.evidence == "A used plan scan, B plan ann"
    ev, corpus, q = make(
        tmp_path / "same", ["g"], X[:8], chunks, row_a={"plan": "ann"}, row_b={"plan": "ann"}
    )
    assert HintKind.PLAN_CHANGE not in kinds(ev, q, corpus)
    ev, corpus, q = make(tmp_path / "one", ["g"], X[:8], chunks, row_b={"plan": "ann"})  # A records none
    assert HintKind.PLAN_CHANGE not in kinds(ev, q, corpus)


# -- header-dominates ----------------------------------------------------------------------------

LONG_HEAD = (
    "Company Handbook 2024 > Finance and Accounting > Customer billing > Exceptions, escalations, approvals"
)
SHORT_GOLD = {"g": (LONG_HEAD, "Refund before the invoice deadline.")}
LIFTED = {  # headings hold "refund" / "deadline", bodies none of the query's words
    f"r{i}": (f"Handbook > Refund deadline rules {i}", f"Ask your manager about rule number {i}.")
    for i in range(5)
}


def test_header_dominates_present(tmp_path: Path) -> None:
    b = ["r0", "r1", "r2", "x1", "x2", "g"]  # 3 of the 5 above the gold are lifted by headings
    ev, corpus, q = make(tmp_path, ["g"], b, {**SHORT_GOLD, **LIFTED}, meta_b=PREPEND)
    (first, *_) = hints_for(ev, [q], corpus)[q]
    assert first.kind is HintKind.HEADER_DOMINATES and first.arm == "b"
    assert first.facts["lifted"] == ["r0", "r1", "r2"] and first.facts["n_above"] == 5
    head, body = first.facts["header_tokens"], first.facts["body_tokens"]
    assert isinstance(head, int) and isinstance(body, int) and head > body
    assert f"(~{head} tokens)" in first.evidence and "3 of the 5" in first.evidence


def test_header_dominates_absent(tmp_path: Path) -> None:
    chunks = {**SHORT_GOLD, **LIFTED}
    # only 2 of 5 lifted: the top k is not filled by them
    ev, corpus, q = make(tmp_path / "two", ["g"], ["r0", "r1", "x1", "x2", "x3", "g"], chunks, meta_b=PREPEND)
    assert HintKind.HEADER_DOMINATES not in kinds(ev, q, corpus)
    # the gold's heading is shorter than its body
    long_body = {"g": ("Billing", "Refund requests must reach us before the invoice deadline, always.")}
    ev, corpus, q = make(
        tmp_path / "body", ["g"], ["r0", "r1", "r2", "r3", "r4", "g"], {**long_body, **LIFTED}, meta_b=PREPEND
    )
    assert HintKind.HEADER_DOMINATES not in kinds(ev, q, corpus)
    # the losing arm embeds bodies only: headings cannot dominate its ranking
    ev, corpus, q = make(
        tmp_path / "none", ["g"], ["r0", "r1", "r2", "r3", "r4", "g"], chunks, meta_b={"header_mode": "none"}
    )
    assert HintKind.HEADER_DOMINATES not in kinds(ev, q, corpus)
    # the losing arm records no header_mode: nothing says it embedded headings
    ev, corpus, q = make(tmp_path / "unsaid", ["g"], ["r0", "r1", "r2", "x1", "x2", "g"], chunks)
    assert HintKind.HEADER_DOMINATES not in kinds(ev, q, corpus)
    # ids the corpus lacks still count among the ids above: 2 lifted of 5 is not "filled"
    ev, corpus, q = make(
        tmp_path / "unknown", ["g"], ["r0", "r1", "z1", "z2", "z3", "g"], chunks, meta_b=PREPEND
    )
    assert HintKind.HEADER_DOMINATES not in kinds(ev, q, corpus)


# -- misleading-path -----------------------------------------------------------------------------

MISFILED = {
    "g": (
        "Handbook > Benefits > Retirement plan",
        "Refund deadline: every invoice is refunded within 30 days.",
    )
}


def test_misleading_path_present(tmp_path: Path) -> None:
    # chunks above it drawn by headings that share the query's words; the rest weaker by body
    w = {"w": ("Handbook > Payments", "Invoice numbers are printed on the top right.")}  # 1 word < 3
    ev, corpus, q = make(
        tmp_path, ["g"], ["r0", "w", *X[:3], "g"], {**MISFILED, **LIFTED, **w}, meta_b=PREPEND
    )
    (first, *_) = hints_for(ev, [q], corpus)[q]
    assert first.kind is HintKind.MISLEADING_PATH
    assert first.facts["body_shared"] == ["deadline", "invoice", "refund"]
    assert first.facts["above_with_heading"] == ["r0"] and first.facts["above_weaker"] == ["w", *X[:3]]


@pytest.mark.slow
def test_misleading_path_absent(tmp_path: Path) -> None:
    headed = ["r0", *X[:4], "g"]
    # nothing above was drawn by its heading: the gold just lost to other text
    ev, corpus, q = make(tmp_path / "noheads", ["g"], [*X[:5], "g"], MISFILED, meta_b=PREPEND)
    assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # the losing arm records no header_mode: nothing says it embedded headings
    ev, corpus, q = make(tmp_path / "unsaid", ["g"], headed, {**MISFILED, **LIFTED})
    assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # the gold has no heading path at all (null or blank): none can mislead
    for i, head in enumerate((None, "  ")):
        bare = {"g": (head, MISFILED["g"][1])}
        ev, corpus, q = make(tmp_path / f"bare{i}", ["g"], headed, {**bare, **LIFTED}, meta_b=PREPEND)
        assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # an id above it is not in the corpus: its text is unread, so nothing is explained
    ev, corpus, q = make(
        tmp_path / "unknown", ["g"], ["r0", "zz", *X[:3], "g"], {**MISFILED, **LIFTED}, meta_b=PREPEND
    )
    assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # the gold's heading shares a query word
    fair = {"g": ("Handbook > Refunds", MISFILED["g"][1])}
    ev, corpus, q = make(tmp_path / "fair", ["g"], headed, {**fair, **LIFTED}, meta_b=PREPEND)
    assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # a chunk above matches as many words by its body alone: the heading is not why gold fell
    rival = {"w": ("Handbook > Payments", "An invoice refund has a deadline of thirty days.")}
    ev, corpus, q = make(
        tmp_path / "rival", ["g"], ["w", *headed], {**MISFILED, **rival, **LIFTED}, meta_b=PREPEND
    )
    assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # the gold's body shares none of the query's words
    off = {"g": ("Handbook > Benefits > Retirement plan", "Pensions are paid monthly.")}
    ev, corpus, q = make(tmp_path / "off", ["g"], headed, {**off, **LIFTED}, meta_b=PREPEND)
    assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # ... or only one of them (fewer than MIN_SHARED = 2): too little to call the body a match
    one = {"g": ("Handbook > Benefits > Retirement plan", "Pensions are paid monthly, with no refund.")}
    ev, corpus, q = make(tmp_path / "one", ["g"], headed, {**one, **LIFTED}, meta_b=PREPEND)
    assert HintKind.MISLEADING_PATH not in kinds(ev, q, corpus)
    # the control: the same lists with the misfiled gold do give the hint
    ev, corpus, q = make(tmp_path / "control", ["g"], headed, {**MISFILED, **LIFTED}, meta_b=PREPEND)
    assert kinds(ev, q, corpus)[0] is HintKind.MISLEADING_PATH


# -- likely-unlabelled ---------------------------------------------------------------------------

BODY = "Refund requests are accepted until the invoice deadline, which is thirty days after the invoice date."
TWINS = {
    "g": ("Handbook 2024 > Billing > Refunds", BODY),
    "t": ("Handbook 2023 > Billing > Refunds", BODY.replace("thirty", "30")),
}


def test_likely_unlabelled_present(tmp_path: Path) -> None:
    ev, corpus, q = make(tmp_path, ["g"], ["x1", "t", *X[2:6], "g"], TWINS)
    (first, *_) = hints_for(ev, [q], corpus)[q]
    assert first.kind is HintKind.LIKELY_UNLABELLED
    assert first.facts["chunk"] == "t" and first.facts["gold"] == "g" and first.facts["rank"] == 2
    assert first.facts["similarity"] >= 90  # type: ignore[operator]


def test_likely_unlabelled_absent(tmp_path: Path) -> None:
    other = {**TWINS, "t": ("Handbook 2023 > Billing > Refunds", "Travel is booked through the portal only.")}
    ev, corpus, q = make(tmp_path / "other", ["g"], ["t", *X[:5], "g"], other)
    assert HintKind.LIKELY_UNLABELLED not in kinds(ev, q, corpus)
    # the twin was judged not relevant for this query: a decision, not a missing label
    ev, corpus, q = make(tmp_path / "judged", ["g"], ["t", *X[:5], "g"], TWINS, not_relevant=("t",))
    assert HintKind.LIKELY_UNLABELLED not in kinds(ev, q, corpus)
    # the twin is ranked below k
    ev, corpus, q = make(tmp_path / "deep", ["g"], [*X[:5], "t", "g"], TWINS)
    assert HintKind.LIKELY_UNLABELLED not in kinds(ev, q, corpus)


# -- window --------------------------------------------------------------------------------------

WINDOW_META = {"header_mode": "prepend", "embedding_max_tokens": "60"}
HEAD10 = "Handbook > One > Two > Three > Four > Five"  # 11 whitespace words
BODY40 = " ".join(["word"] * 39 + ["refund"])  # 40 words: ~54 tokens


def test_window_present(tmp_path: Path) -> None:
    ev, corpus, q = make(tmp_path, ["g"], X[:20], {"g": (HEAD10, BODY40)}, meta_b=WINDOW_META)
    (first, *_) = hints_for(ev, [q], corpus)[q]
    assert first.kind is HintKind.WINDOW
    # 40 body words: ⌈40·4/3⌉ = 54 ≤ 60; 51 words with the heading: 68 > 60; 45 words fit, 6 cut
    assert first.facts["body_tokens"] == 54 and first.facts["header_body_tokens"] == 68
    assert first.facts["words_cut"] == 6 and first.facts["embedding_max_tokens"] == 60
    assert "4 per 3 words" in first.evidence
    # the window written as a whole number in float form reads the same
    ev, corpus, q = make(
        tmp_path / "float",
        ["g"],
        X[:20],
        {"g": (HEAD10, BODY40)},
        meta_b={**WINDOW_META, "embedding_max_tokens": "60.0"},
    )
    assert kinds(ev, q, corpus)[0] is HintKind.WINDOW


@pytest.mark.slow
def test_window_absent(tmp_path: Path) -> None:
    chunks = {"g": (HEAD10, BODY40)}
    for name, meta in (
        ("none", {"header_mode": "none", "embedding_max_tokens": "60"}),  # bodies only
        ("unsaid", {"embedding_max_tokens": "60"}),  # header_mode not recorded
        ("nowindow", {"header_mode": "prepend"}),  # the window not recorded
        ("wide", {"header_mode": "prepend", "embedding_max_tokens": "70"}),  # everything fits
        ("narrow", {"header_mode": "prepend", "embedding_max_tokens": "50"}),  # the body alone does not fit
        ("fraction", {"header_mode": "prepend", "embedding_max_tokens": "60.5"}),  # not a token count
        ("negative", {"header_mode": "prepend", "embedding_max_tokens": "-60"}),
        ("words", {"header_mode": "prepend", "embedding_max_tokens": "sixty"}),
    ):
        ev, corpus, q = make(tmp_path / name, ["g"], X[:20], chunks, meta_b=meta)
        assert HintKind.WINDOW not in kinds(ev, q, corpus), name
    # the window recorded by the other arm only: the model is held still, so it counts
    ev, corpus, q = make(
        tmp_path / "other",
        ["g"],
        X[:20],
        chunks,
        meta_a={"embedding_max_tokens": "60"},
        meta_b=PREPEND,
    )
    assert kinds(ev, q, corpus) == [HintKind.WINDOW]


# -- pushed-out / dropped, the losing arm, no corpus --------------------------------------------


def test_pushed_out_and_dropped_only_when_nothing_else_explains(tmp_path: Path) -> None:
    chunks = {"g": ("Billing > Refunds", "Refund requests must reach us before the invoice deadline.")}
    ev, corpus, q = make(tmp_path / "p", ["g"], [*X[:6], "g"], chunks)  # rank 7, k 5
    (hint,) = hints_for(ev, [q], corpus)[q]
    assert hint.kind is HintKind.PUSHED_OUT and hint.facts["rank"] == 7
    ev, corpus, q = make(tmp_path / "far", ["g"], [*X[:11], "g"], chunks)  # rank 12 > 2k
    assert kinds(ev, q, corpus) == []
    ev, corpus, q = make(tmp_path / "d", ["g"], X[:20], chunks)
    (hint,) = hints_for(ev, [q], corpus)[q]
    assert hint.kind is HintKind.DROPPED and "20 stored ids" in hint.evidence
    ev, corpus, q = make(
        tmp_path / "pl", ["g"], X[:20], chunks, row_a={"plan": "scan"}, row_b={"plan": "ann"}
    )
    assert kinds(ev, q, corpus) == [HintKind.PLAN_CHANGE]


def test_losing_arm(tmp_path: Path) -> None:
    chunks = {"g": ("Billing > Refunds", "Refund requests must reach us before the invoice deadline.")}
    ev, corpus, q = make(tmp_path / "win", X[:20], ["g"], chunks)  # miss→hit: A lost
    (hint,) = hints_for(ev, [q], corpus)[q]
    assert hint.kind is HintKind.DROPPED and hint.arm == "a" and "A's" in hint.evidence
    # not a flip: the arm with the worse best gold rank (here A: 8 against 7), B on a tie
    ev, corpus, q = make(tmp_path / "both", [*X[:7], "g"], [*X[:6], "g"], chunks)
    assert hints_for(ev, [q], corpus)[q][0].arm == "a"
    ev, corpus, q = make(tmp_path / "tie", [*X[:6], "g"], [*X[:6], "g"], chunks)
    assert hints_for(ev, [q], corpus)[q][0].arm == "b"
    # a query without gold has no hint (q2 is labelled; an unknown query index is skipped too)
    assert hints_for(ev, [], corpus) == {}


def test_without_a_corpus_only_the_hints_that_need_no_text(tmp_path: Path) -> None:
    ev, corpus, q = make(tmp_path, ["g"], ["x1", "t", *X[2:6], "g"], TWINS)
    assert kinds(ev, q, corpus) == [HintKind.LIKELY_UNLABELLED]
    (hint,) = hints_for(ev, [q], None)[q]
    assert hint.kind is HintKind.PUSHED_OUT and "no corpus" in hint.evidence
    assert hint.facts["text_examined"] is False


def test_fixed_order_most_specific_first(tmp_path: Path) -> None:
    ev, corpus, q = make(
        tmp_path,
        ["g"],
        ["t", "x1"],
        TWINS,
        row_a={"plan": "scan"},
        row_b={"plan": "postfilter"},
    )
    assert kinds(ev, q, corpus) == [HintKind.SHORT_LIST, HintKind.PLAN_CHANGE, HintKind.LIKELY_UNLABELLED]
    assert [k.code for k in HintKind] == [
        "short",
        "plan",
        "header",
        "path",
        "unlab",
        "window",
        "pushed",
        "dropped",
    ]


# -- the batched corpus look-up, the bundled sample ----------------------------------------------


def test_the_batched_look_up_matches_the_one_by_one(sample: Path) -> None:
    spec = from_manifest(sample)
    assert spec.corpus is not None
    corpus = open_corpus(spec.corpus)
    ids = corpus.ids.to_pylist()[::7] + ["absent#1", "absent#2"]
    assert len(ids) > 64
    assert corpus._batched(ids) == corpus._one_by_one(ids) == corpus.get(ids)
    rows = corpus.rows_of(pa.array(["absent", ids[3], ids[3]]))
    assert rows[0] == -1 and rows[1] == rows[2] >= 0
    assert corpus.ids[int(rows[1])].as_py() == ids[3]


def test_sample_regressions_first_hint_is_the_planted_cause(sample: Path) -> None:
    inputs = load_inputs(from_manifest(sample))
    ev = evaluate(inputs, inputs.frozen.table)
    assert inputs.spec.corpus is not None
    corpus = open_corpus(inputs.spec.corpus)
    hints = hints_for(ev, ev.flips, corpus)
    planted = {
        "q155": HintKind.HEADER_DOMINATES,
        "q113": HintKind.HEADER_DOMINATES,
        "q061": HintKind.MISLEADING_PATH,
        "q150": HintKind.LIKELY_UNLABELLED,
        "q031": HintKind.SHORT_LIST,
        "q046": HintKind.WINDOW,
    }
    firsts = {qid: hints[ev.query_index(qid)][0] for qid in planted}
    assert {qid: h.kind for qid, h in firsts.items()} == planted
    assert all(h.arm == "b" for h in firsts.values())
    assert firsts["q031"].evidence == "B returned 3 of k=5 ids (plan postfilter, 45 eligible)"
    assert firsts["q150"].facts["chunk"] == "driftwood/handbook-2023#009"
    assert firsts["q046"].facts["embedding_max_tokens"] == 512
    # every flip is asked; wins are A's losses
    assert set(hints) == set(ev.flips.tolist())
    wins = [q for q in ev.flips.tolist() if not ev.a.judged.hit[q]]
    assert all(h.arm == "a" for q in wins for h in hints[q])


# -- shown: the flips list, the detail, the report -----------------------------------------------


@pytest.mark.slow
async def test_the_flips_list_and_the_detail_show_the_hints() -> None:
    from textual.widgets import Static

    from triage.ui.app import TriageApp
    from triage.ui.screens.lists import FlipsScreen
    from triage.ui.table import VirtualTable

    from app_helpers import open_flips, wait_loaded

    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await open_flips(pilot)
        screen = app.screen
        assert isinstance(screen, FlipsScreen) and app.session is not None
        table = screen.query_one(VirtualTable)
        column = [c.title for c in table.columns].index("hint")
        codes = [table.cells(i)[column] for i in range(6)]
        assert codes == ["window", "path", "header", "header", "unlab", "short"]  # q046 … q031
        await pilot.press("enter")
        hint = str(app.screen.query_one("#hint-line", Static).render())
        assert hint.startswith("hint  window (B)") and "embedding_max_tokens 512" in hint


def test_the_report_lists_hints_and_drops_empty_columns(tmp_path: Path) -> None:
    from triage.report.build import build
    from triage.report.markdown import render_markdown as markdown
    from triage.report.model import dumps_report
    from triage.workspace.snapshot import open_snapshot

    make(tmp_path, ["g"], X[:3], {"g": ("Billing > Refunds", "Refund before the invoice deadline, always.")})
    snapshot = open_snapshot(from_manifest(tmp_path / "triage.toml"))
    report = build(snapshot)
    (flip,) = report.flips
    assert flip.text == QUERY and [h.kind for h in flip.hints] == [HintKind.SHORT_LIST]
    import json

    (row,) = json.loads(dumps_report(report))["flips"]
    assert row["hints"][0]["kind"] == "short-list" and row["hints"][0]["facts"]["n_returned"] == 3
    head = next(line for line in markdown(report).splitlines() if line.startswith("| # | query |"))
    assert "text" in head and "hints" in head
    assert "tenant" not in head and "plan A" not in head  # no tenants, no plans in this evaluation


@pytest.mark.slow
def test_the_report_reads_text_for_the_first_flips_only(sample: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Past TEXT_FLIPS flips (in flip order) the report gives only the hints that need no text,
    # and their evidence says why; the flips before are read as before.
    from triage.core.views import hints as hints_mod
    from triage.report import build as build_mod
    from triage.workspace.snapshot import open_snapshot

    snapshot = open_snapshot(from_manifest(sample))
    full = build_mod.build(snapshot).flips
    monkeypatch.setattr(hints_mod, "TEXT_FLIPS", 10)
    capped = build_mod.build(snapshot).flips
    assert [f.query_id for f in capped] == [f.query_id for f in full]
    assert capped[:10] == full[:10]
    late = [h for f in capped[10:] for h in f.hints]
    assert {h.kind for h in late} <= {
        HintKind.SHORT_LIST,
        HintKind.PLAN_CHANGE,
        HintKind.PUSHED_OUT,
        HintKind.DROPPED,
    }
    positional = [h for h in late if h.kind in (HintKind.PUSHED_OUT, HintKind.DROPPED)]
    assert positional and all(h.facts["text_examined"] is False for h in positional)
    assert all("past the first 10 flips: text causes not examined" in h.evidence for h in positional)
    read = [h for f in full[10:] for h in f.hints if h.kind in (HintKind.PUSHED_OUT, HintKind.DROPPED)]
    assert read and all(h.facts["text_examined"] is True for h in read)  # uncapped, they were read
