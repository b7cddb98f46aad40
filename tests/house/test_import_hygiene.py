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

from conftest import ROOT

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

    here = ROOT / "tests"
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


def calls_to_mallopt(*argv: str, argv_given: list[str] | None = None) -> str:
    """`triage ARGV` as its own process (main() reading sys.argv; with `argv_given`, main() called
    with it, as a program calls it), glibc's `mallopt` recorded: the exit code, then each call's
    (option, value, numpy loaded?, threads running)."""
    code = (
        "import ctypes, sys, threading, io, contextlib\n"
        "calls = []\n"
        "class Libc:\n"
        "    def mallopt(self, what, value):\n"
        "        calls.append((what, value, 'numpy' in sys.modules, threading.active_count()))\n"
        "        return 1\n"
        "ctypes.CDLL = lambda name: Libc()\n"
        "from triage.cli.main import main\n"
        f"sys.argv = ['triage', *{list(argv)!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        rc = main({argv_given!r} if {argv_given!r} is not None else None)\n"
        "    except SystemExit as e:\n"
        "        rc = e.code\n"
        "print(rc, calls)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_a_report_of_its_own_asks_glibc_for_one_malloc_arena_before_any_thread(tiny: Path) -> None:
    # cli/main.py `_one_malloc_arena`: set before numpy (whose BLAS starts a thread) or any worker
    # thread exists, or threads already holding arenas of their own keep them. Only for a report:
    # not for another verb, nor for main() called by a program (its threads are not ours to slow).
    assert calls_to_mallopt("report", str(tiny), "--format", "json") == "0 [(-8, 1, False, 1)]\n"
    assert calls_to_mallopt("report", "--json-schema") == "0 [(-8, 1, False, 1)]\n"
    assert calls_to_mallopt("--version") == "0 []\n"
    assert calls_to_mallopt(argv_given=["report", str(tiny), "--format", "json"]) == "0 []\n"
