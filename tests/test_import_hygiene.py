"""The core and the label store import without the UI toolkit (DESIGN §7)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS = [
    "triage.core.evaluation",
    "triage.core.checks",
    "triage.core.readers",
    "triage.core.frozen",
    "triage.report.model",
    "triage.report.markdown",
    "triage.report.cells",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_module_imports_neither_textual_nor_rich(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')); "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_json_report_never_loads_textual(sample) -> None:
    code = (
        "import sys, io, contextlib; from triage.cli.main import main; "
        "buf = io.StringIO(); ctx = contextlib.redirect_stdout(buf); ctx.__enter__(); "
        "rc = main(['report', '--format', 'json']); ctx.__exit__(None, None, None); "
        "print(rc, any(m.startswith('textual') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]
