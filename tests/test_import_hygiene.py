"""Below the UI nothing loads the UI toolkit (docs/development.md "The shape of the code"), proved in a fresh
interpreter: import-time side effects and lazy re-exports count, which a static contract cannot see."""

from __future__ import annotations

import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import triage

HEADLESS = ("triage.core", "triage.labels", "triage.workspace", "triage.report")
RICH_RENDERER = "triage.report.terminal"  # the report printed with Rich tables: Rich, never Textual


def headless_modules() -> list[str]:
    out = []
    for info in pkgutil.walk_packages(triage.__path__, "triage."):
        if info.name.startswith(HEADLESS) and info.name != RICH_RENDERER:
            out.append(info.name)
    return sorted(out)


def loaded_after(modules: list[str]) -> set[str]:
    code = (
        f"import sys; import {', '.join(modules)}; "
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.strip().split(","))


@pytest.mark.slow
def test_every_module_below_the_ui_imports_neither_textual_nor_rich() -> None:
    modules = headless_modules()
    assert {"triage.core.evaluation", "triage.labels.state", "triage.workspace.session"} <= set(modules)
    assert "triage.report.model" in modules and "triage.report.markdown" in modules
    assert not loaded_after(modules) & {"textual", "rich"}


@pytest.mark.slow
def test_the_terminal_report_loads_rich_but_not_textual() -> None:
    loaded = loaded_after([RICH_RENDERER])
    assert "rich" in loaded and "textual" not in loaded


@pytest.mark.slow
def test_json_report_never_loads_textual(sample) -> None:
    code = (
        "import sys, io, contextlib; from triage.cli.main import main; "
        "buf = io.StringIO(); ctx = contextlib.redirect_stdout(buf); ctx.__enter__(); "
        "rc = main(['report', '--format', 'json']); ctx.__exit__(None, None, None); "
        "print(rc, any(m.startswith('textual') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]


def test_no_test_imports_the_tests_package() -> None:
    """CI installs a wheel and runs pytest on the clone: `tests` is no package there, so helpers are
    imported by their module name (`from conftest import …`), never as `tests.…`."""
    import re

    here = Path(__file__).parent
    bad = [
        f"{p.name}:{i}"
        for p in sorted(here.rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*(from tests[.\s]|import tests\b)", line)
    ]
    assert not bad, bad


def frames_loaded_by_report(*args: str) -> list[str]:
    """`triage report ARGS --format json` run in a fresh interpreter: its exit code, then which of
    pandas, polars and rapidfuzz it left in sys.modules."""
    code = (
        "import sys, io, contextlib; from triage.cli.main import main; "
        "buf = io.StringIO(); ctx = contextlib.redirect_stdout(buf); ctx.__enter__(); "
        f"rc = main(['report', *{list(args)!r}, '--format', 'json']); ctx.__exit__(None, None, None); "
        "print(rc, *sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'polars', 'rapidfuzz'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed")
def test_report_never_imports_pandas_or_polars(tiny: Path) -> None:
    # pyarrow imports pandas, where installed, on its first conversion of a Python or numpy value
    # (0.3-0.5 s); the command line stops it (cli/main.py). Proved on the bundled sample and on a
    # Parquet evaluation, with pandas importable here.
    # rapidfuzz (0.05 s to import) only where chunk text is compared: the sample has a corpus
    assert frames_loaded_by_report() == ["0", "rapidfuzz"]
    assert frames_loaded_by_report(str(tiny)) == ["0"]
    code = "import sys, pyarrow; pyarrow.array([0]); print('pandas' in sys.modules)"
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert probe.stdout.split() == ["True"]  # without that stop, pyarrow would have loaded it
