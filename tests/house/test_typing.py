"""The whole package type-checks (mypy, settings in pyproject.toml): core, label store, workspace,
report, command line and the UI alike."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # mypy over the whole package: left out of the quick loop (docs/development.md)


def test_the_whole_package_type_checks() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "triage"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues found" in out.stdout
