"""The README's commands stay true, and an installed wheel carries the sample and the styles."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import triage
from triage.core.bundled import bundled

from conftest import ROOT


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    return re.findall(r"```sh\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_opens_with_the_two_commands() -> None:
    run, test = readme_commands()
    assert run.strip().endswith(".venv/bin/triage") and "pip install" in run
    assert test.strip().endswith(".venv/bin/pytest") and "'.[test]'" in test


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, test = readme_commands()
    assert test.strip() in (ROOT / ".ci" / "run").read_text("utf-8")


def test_bundled_files_are_found() -> None:
    assert (bundled("sample_runs") / "triage.toml").is_file()
    assert (bundled("sample_runs") / "make_sample.py").is_file()
    assert any(bundled("styles").glob("*.tcss"))


def test_ci_exercises_the_installed_wheel_not_the_checkout() -> None:
    if not os.environ.get("CI"):
        pytest.skip("a developer's editable install imports the checkout, by design")
    package = Path(triage.__file__).resolve().parent
    assert ROOT not in package.parents or ".venv" in package.parts, package
    assert (package / "_bundled" / "sample_runs" / "triage.toml").is_file()
    assert any((package / "_bundled" / "styles").glob("*.tcss"))


def test_the_distribution_has_a_name_of_its_own_and_keeps_the_command() -> None:
    """`triage` on the registry is another project: the distribution is `retrieval-triage`, the
    command and the import package stay `triage`, and the README says how to install it."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["name"] == "retrieval-triage"
    assert project["scripts"] == {"triage": "triage.cli.main:main"}
    assert project["keywords"] and any(c.startswith("Topic ::") for c in project["classifiers"])
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "pipx install retrieval-triage" in readme and "uv tool install retrieval-triage" in readme
