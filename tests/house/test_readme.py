"""The README opens with the two commands that do everything on a fresh machine, CI runs the second
one verbatim, and every figure the README quotes is the bundled sample's own (checked here against
the report the sample gives; a number in its prose that no check covers fails the last test)."""

from __future__ import annotations

import re

import pytest

from triage.cli.main import main
from triage.core.views.slices import DEFAULT_FLOOR, FEW

from conftest import ROOT

README = ROOT / "README.md"


def opening_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)\n```", README.read_text("utf-8"), re.S)
    return blocks[:2]


def test_the_readme_opens_with_install_and_open_then_install_and_test() -> None:
    text = README.read_text("utf-8")
    assert text.index("```sh") < text.index("\n## ") and text.index("```sh") < 200
    app, tests = opening_commands()
    assert app.startswith("python3 -m venv .venv") and app.endswith(".venv/bin/triage")
    assert tests.startswith("python3 -m venv .venv") and "'.[test]'" in tests
    assert tests.endswith(".venv/bin/pytest")


def test_ci_runs_the_readmes_test_command_verbatim() -> None:
    _, tests = opening_commands()
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    assert tests in ci


def test_the_readme_is_short() -> None:
    assert len(README.read_text("utf-8").splitlines()) <= 150


# Each figure the README quotes, as a template filled from the sample's report (and triage's own
# constants). Whitespace is compared collapsed, so a template may span a line break.
FIGURES = (
    "B lifts the hit rate {a:.2f} → {b:.2f}, with {wins} wins and {regressions} regressions",
    "(`--floor`, default {floor:.2f})",
    "fewer than {few} scored queries",
    # the on-call's case (sample_runs/oncall/) judged against the truth its flow computes
    "{pf_tenant}'s ticket queries postfiltered at {pf_selectivity:.3%} selectivity",
    "Here {below_a} are below in A and {below_b} in B, the worst three {worst}",
    "{small}'s {small_chunks} chunks, scanned, stand at {small_b:.3f}",
)
# Numbers in the README's prose that are not figures of the sample: the interval's level, the
# percentile, a grade, an exit status.
CONSTANTS = (
    "95%",
    "5th-percentile",
    "(grade 1)",
    "exits 1",
    "exit 1",
    "k is 10 unless",
)  # the last: DEFAULT_K


@pytest.fixture(scope="module")
def sample_facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The sample's figures with no amendments: read with a data folder of its own (module-scoped,
    so before the per-test isolation), never the user's judgements of the sample."""
    import contextlib
    import io
    import json

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("TRIAGE_DATA", str(tmp_path_factory.mktemp("readme-data")))
        assert main(["report", "--format", "json"]) == 0
    report = json.loads(out.getvalue())
    return {
        "a": report["arms"]["a"]["hit_rate"],
        "b": report["arms"]["b"]["hit_rate"],
        "wins": report["paired"]["a_miss_b_hit"],
        "regressions": report["paired"]["a_hit_b_miss"],
        "floor": DEFAULT_FLOOR,
        "few": FEW,
        **oncall_facts(tmp_path_factory),
    }


def oncall_facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The on-call's case through its flow (`triage sample`, `triage truth`, the runs judged against
    that truth): the tenants below the floor, the worst three, the tenant whose postfilter queries
    fall below 1% selectivity, and granite, the 300-chunk tenant B scans."""
    import pyarrow.parquet as pq

    import triage
    from triage.core.bundled import bundled

    oncall, tmp = bundled("sample_runs") / "oncall", tmp_path_factory.mktemp("readme-oncall")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIAGE_CACHE", str(tmp / "cache"))
        mp.setenv("TRIAGE_DATA", str(tmp / "data"))
        triage.sample(oncall / "log.jsonl", oncall / "corpus.parquet", tmp / "q.parquet")
        triage.truth(oncall / "corpus.parquet", tmp / "q.parquet", 10, tmp / "truth")
        runs = oncall / "runs"
        t = triage.open(a=runs / "a.parquet", b=runs / "b.parquet", labels=tmp / "truth").report().tenants
    assert t is not None
    truth = {q["query_id"]: q for q in pq.read_table(tmp / "truth" / "queries.parquet").to_pylist()}
    low = [
        truth[r["query_id"]]
        for r in pq.read_table(runs / "b.parquet").to_pylist()
        if r["plan"] == "postfilter" and r["filter"] and truth[r["query_id"]]["selectivity"] < 0.01
    ]
    (pf_tenant,) = {q["tenant"] for q in low}
    (pf_selectivity,) = {q["selectivity"] for q in low}
    assert all("doc_type = 'ticket'" in q["filter"] for q in low)
    worst = [r.tenant for r in t.worst]
    small = next(r for r in t.rows if r.tenant == "granite")
    assert small.recall is not None and (small.plan, small.plan_share) == ("scan", 1.0)
    corpus = pq.read_table(oncall / "corpus.parquet", columns=["tenant"]).column("tenant").to_pylist()
    return {
        "pf_tenant": pf_tenant,
        "pf_selectivity": pf_selectivity,
        "below_a": t.below_floor.a,
        "below_b": t.below_floor.b,
        "worst": f"{', '.join(worst[:-1])} and {worst[-1]}",
        "small": small.tenant,
        "small_chunks": corpus.count(small.tenant),
        "small_b": small.recall.b,
    }


def prose(text: str) -> str:
    """The README without its code (blocks and inline), link targets, images and list numbers,
    whitespace collapsed."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"(?m)^\s*\d+\. ", " ", text)  # a numbered list's numbers
    return re.sub(r"\s+", " ", text)


def test_every_figure_the_readme_quotes_is_the_samples(sample_facts: dict[str, object]) -> None:
    text = re.sub(r"\s+", " ", README.read_text("utf-8"))
    for template in FIGURES:
        assert template.format(**sample_facts) in text, template


def test_the_readme_quotes_no_figure_the_checks_above_miss(sample_facts: dict[str, object]) -> None:
    text = prose(README.read_text("utf-8"))
    for known in (*(prose(t.format(**sample_facts)) for t in FIGURES), *CONSTANTS):
        text = text.replace(known.strip(), " ")
    stray = re.findall(r"\S*\d\S*", text)
    assert stray == [], "a figure in the README that no test checks: add it to FIGURES or drop it"


def test_the_default_k_the_readme_names_is_the_code_s() -> None:
    from triage.core.measures.names import DEFAULT_K

    assert DEFAULT_K == 10 and "k is\n10 unless" in (ROOT / "README.md").read_text("utf-8")
