"""The README opens with the two commands that do everything on a fresh machine, and CI runs the
second one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

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
