"""Measure names: ir_measures' syntax, ranx's and trec_eval's names, one canonical spelling, and
an unknown name refused with the close matches."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import ir_measures
import pytest

from triage.core.errors import InputError
from triage.core.measures import names
from triage.core.measures.families import METRICS
from triage.core.measures.names import FAMILIES, Measure, parse, parse_all

from conftest import ROOT

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


def docs_hooks() -> ModuleType:
    """docs/hooks.py, the mkdocs hook that generates the docs' tables (importable without mkdocs)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_tables_are_generated_from_the_registry() -> None:
    """docs/measures.md holds the markers, not the tables: the site's tables are the registry's
    rows, every family and every metric, each `|` in a cell escaped."""
    page = (ROOT / "docs" / "measures.md").read_text("utf-8")
    assert "<!-- generated: metrics -->" in page and "<!-- generated: measures -->" in page
    assert "| `nDCG, nDCG@k` |" not in page and "| `ndcg@k` |" not in page  # no copy by hand
    hooks = docs_hooks()
    measures, metrics = hooks.GENERATORS["measures"](), hooks.GENERATORS["metrics"]()
    for canon, aliases, definition in names.table_rows():
        assert f"| `{canon}` | {aliases or '—'} | {definition} |" in measures.splitlines()
    assert len(measures.splitlines()) == 2 + len(FAMILIES)
    rows = metrics.splitlines()[2:]
    assert [r.split(" | ")[0] for r in rows] == [f"| `{m}@k`" for m in ("hit_rate", "recall", "mrr", "ndcg")]
    assert "| mean of \\|top ∩ gold\\| / min(k, \\|gold\\|);" in metrics
    assert all(len(r.replace("\\|", "").split("|")) == 7 for r in rows)  # 5 cells: no stray `|`


def test_each_metric_names_measures_the_tools_know() -> None:
    """The names a metric's row gives the same number in trec_eval, ir_measures and ranx are ones
    triage reads (at k = 5), and its kernel is the one its module's family runs."""
    for metric in METRICS.values():
        assert metric.definition
        for cell in (metric.trec_eval, metric.ir_measures, metric.ranx):
            (name, *_) = re.findall(r"`([^`]+)`", cell)
            assert parse(name)
    assert str(parse("ndcg@5")) == "nDCG@5" and str(parse("hit_rate@5")) == "Success@5"


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


def test_a_parameter_given_twice_is_refused() -> None:
    with pytest.raises(InputError, match="rel is given twice"):
        parse("P(rel=1,rel=2)@10")
