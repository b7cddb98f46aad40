"""The headless packages type-check (mypy, settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_core_and_labels_type_check() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "triage/core", "triage/labels"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
