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
def sample_facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
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


def test_every_figure_the_readme_quotes_is_the_samples(sample_facts: dict[str, float]) -> None:
    text = re.sub(r"\s+", " ", README.read_text("utf-8"))
    for template in FIGURES:
        assert template.format(**sample_facts) in text, template


def test_the_readme_quotes_no_figure_the_checks_above_miss(sample_facts: dict[str, float]) -> None:
    text = prose(README.read_text("utf-8"))
    for known in (*(prose(t.format(**sample_facts)) for t in FIGURES), *CONSTANTS):
        text = text.replace(known.strip(), " ")
    stray = re.findall(r"\S*\d\S*", text)
    assert stray == [], "a figure in the README that no test checks: add it to FIGURES or drop it"


def test_the_default_k_the_readme_names_is_the_code_s() -> None:
    from triage.core.measures.names import DEFAULT_K

    assert DEFAULT_K == 10 and "k is\n10 unless" in (ROOT / "README.md").read_text("utf-8")
