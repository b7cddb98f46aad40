"""The README opens with the two commands that do everything on a fresh machine, and CI runs the
second one verbatim."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def opening_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text("utf-8"), re.S)
    return blocks[:2]


def test_the_readme_opens_with_install_and_open_then_install_and_test() -> None:
    app, tests = opening_commands()
    assert app.startswith("python3 -m venv .venv") and app.endswith(".venv/bin/triage")
    assert tests.startswith("python3 -m venv .venv") and "'.[test]'" in tests
    assert tests.endswith(".venv/bin/pytest")


def test_ci_runs_the_readmes_test_command_verbatim() -> None:
    _, tests = opening_commands()
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    assert tests in ci


def python_api_example() -> str:
    """The doctest block of the README's "Python API" section."""
    section = (ROOT / "README.md").read_text("utf-8").split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1 and ">>> " in blocks[0]
    return blocks[0]


def test_the_python_api_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    test = doctest.DocTestParser().get_doctest(python_api_example(), {}, "README Python API", "README.md", 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False) == doctest.TestResults(failed=0, attempted=len(test.examples))


@pytest.mark.slow
def test_a_wrong_output_in_the_example_would_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    wrong = python_api_example().replace("(6, 40, 0.79)", "(6, 40, 0.62)")
    test = doctest.DocTestParser().get_doctest(wrong, {}, "wrong", "README.md", 0)
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda _: None)
    assert runner.summarize(verbose=False).failed == 1
