"""Measure names: ir_measures' syntax, ranx's and trec_eval's names, one canonical spelling, and
an unknown name refused with the close matches."""

from __future__ import annotations

import ir_measures
import pytest

from triage.core.errors import InputError
from triage.core.measures import names
from triage.core.measures.names import FAMILIES, Measure, parse, parse_all

CANONICAL = [
    "AP", "AP@100", "AP(rel=2)@100", "P@5", "P(rel=2)@10", "R@100", "RR", "RR@10", "RR(rel=3)",
    "nDCG", "nDCG@10", "nDCG(judged_only=True)@10", "Success@5", "Rprec", "Rprec(rel=2)", "Bpref",
    "Bpref(rel=2)", "Judged@10", "AP(rel=2,judged_only=True)@5", "P(judged_only=True)@5",
]  # fmt: skip


@pytest.mark.parametrize("text", CANONICAL)
def test_ir_measures_syntax_round_trips_as_ir_measures_spells_it(text: str) -> None:
    assert str(parse(text)) == text == str(ir_measures.parse_measure(text))


ALIASES = {
    # ranx
    "ndcg@10": "nDCG@10", "ndcg": "nDCG", "map@100": "AP@100", "map": "AP", "precision@5": "P@5",
    "recall@100": "R@100", "mrr": "RR", "mrr@10": "RR@10", "hit_rate@5": "Success@5",
    "r-precision": "Rprec", "bpref": "Bpref", "precision@5-l2": "P(rel=2)@5",
    # trec_eval
    "ndcg_cut_10": "nDCG@10", "map_cut_100": "AP@100", "P_10": "P@10", "recall_100": "R@100",
    "recip_rank": "RR", "success_5": "Success@5", "Rprec": "Rprec",
}  # fmt: skip


@pytest.mark.parametrize(("alias", "canonical"), ALIASES.items())
def test_ranx_and_trec_eval_names_parse_to_the_canonical_measure(alias: str, canonical: str) -> None:
    assert str(parse(alias)) == canonical


def test_unknown_names_are_refused_with_the_close_matches() -> None:
    with pytest.raises(InputError) as e:
        parse("ndgc@10", "--measures")
    assert e.value.path == "--measures" and "unknown measure 'ndgc@10'" in e.value.problem
    assert "ndcg@k" in e.value.problem or "nDCG@k" in e.value.problem


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("P", "needs a cut-off"),
        ("precision", "needs a cut-off"),
        ("Rprec@5", "takes no cut-off"),
        ("Bpref(judged_only=True)", "takes rel"),
        ("nDCG(rel=2)@10", "takes judged_only"),
        ("AP(rel=x)", "whole number"),
        ("AP(rel=0)", "rel must be"),
        ("nDCG(judged_only=yes)", "True or False"),
        ("P@0", "positive"),
        ("r-precision@5", "unknown"),
    ],
)
def test_a_bad_parameter_or_cut_off_names_the_problem(text: str, why: str) -> None:
    with pytest.raises(InputError) as e:
        parse(text)
    assert why in e.value.problem


def test_a_list_keeps_first_named_order_and_names_each_measure_once() -> None:
    got = parse_all("nDCG@10, ndcg_cut_10,AP(rel=2,judged_only=True)@5 ,R@100")
    assert [str(m) for m in got] == ["nDCG@10", "AP(rel=2,judged_only=True)@5", "R@100"]
    assert parse_all(["map", "AP"]) == (Measure("AP"),)
    with pytest.raises(InputError):
        parse_all("")
    with pytest.raises(InputError):
        parse_all([3])  # type: ignore[list-item]


def test_every_family_is_documented_and_every_alias_is_accepted() -> None:
    rows = names.table_rows()
    assert len(rows) == len(FAMILIES)
    for _, aliases, definition in rows:
        assert definition
        for alias in filter(None, aliases.split(", ")):
            parse(alias[:-1] + "7" if alias.endswith(("@k", "_k")) else alias)


def test_the_docs_document_every_measure_as_the_code_defines_it() -> None:
    from pathlib import Path

    readme = (Path(__file__).parent.parent / "docs" / "measures.md").read_text("utf-8")
    for canon, aliases, definition in names.table_rows():
        assert f"| `{canon}` | {aliases or '—'} | {definition} |" in readme


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("MAP", "AP"),
        ("NDCG@10", "nDCG@10"),
        ("NDCG_CUT_10", "nDCG@10"),
        ("Recip_Rank", "RR"),
        ("BPREF", "Bpref"),
    ],
)
def test_a_name_in_another_case_is_read_where_it_names_one_measure(text: str, canonical: str) -> None:
    assert str(parse(text)) == canonical


def test_a_name_in_another_case_that_names_nothing_is_still_refused() -> None:
    with pytest.raises(InputError, match="unknown measure 'NDGC@10'"):
        parse("NDGC@10")
