"""`triage --help`, `--version` and every verb's `--help` answer without loading the engine (README
"Speed"): each runs in a fresh interpreter, which then lists the modules it loaded."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import triage
from triage.core import defaults
from triage.core.gate import propose
from triage.core.views import slices

HEAVY = ("numpy", "pyarrow", "scipy", "textual", "rich", "rapidfuzz", "shtab")
ROOT = Path(triage.__file__).parent

# Runs main(argv) with its output captured, then builds every parser as well, and prints the exit
# status, the output and the top-level names of every module loaded.
PROBE = """
import contextlib, io, json, sys
from triage.cli import main as cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        rc = cli.main(sys.argv[1:])
    except SystemExit as e:
        rc = e.code
for build in (cli.app_parser, cli.report_parser, cli.labels_parser, cli.review_parser):
    build()
modules = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"rc": rc, "out": out.getvalue(), "modules": modules}))
"""


def probe(*argv: str, code: str = PROBE) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["report", "--help"],
        ["labels", "--help"],
        ["labels", "judge", "--help"],
        ["review", "--help"],
        ["review", "export", "--help"],
        ["sample", "--help"],
    ],
    ids=" ".join,
)
def test_help_and_version_load_no_engine(argv: list[str]) -> None:
    got = probe(*argv)
    assert got["rc"] == 0
    assert not set(got["modules"]) & set(HEAVY)
    assert "triage" in got["modules"]  # the probe did import the CLI
    assert got["out"].startswith(("usage: triage", f"triage {triage.__version__}"))


def test_the_probe_sees_a_heavy_import() -> None:
    """The check above can fail: building the engine's slices in the same probe loads numpy and pyarrow."""
    got = probe("--version", code="import triage.core.views.slices\n" + PROBE)
    assert {"numpy", "pyarrow"} <= set(got["modules"])


def test_python_dash_m_triage_version_loads_no_engine() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "triage", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout == f"triage {triage.__version__}\n"
    loaded = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines()}
    assert "triage" in loaded and not loaded & set(HEAVY)


def test_the_help_shows_the_engines_defaults() -> None:
    """The help reads the same objects the engine uses (one definition, in core/defaults.py)."""
    assert slices.DEFAULT_FLOOR is defaults.DEFAULT_FLOOR
    assert (propose.MIN_N, propose.SUGGEST_SE) == (defaults.MIN_N, defaults.SUGGEST_SE)
    text = " ".join(probe("report", "--help")["out"].split())
    assert f"--floor FLOOR tenant hit-rate floor (default {defaults.DEFAULT_FLOOR})" in text
    assert f"(default {defaults.SUGGEST_SE:g})" in text and f"(default {defaults.MIN_N})" in text


def test_each_default_is_written_once() -> None:
    """`NAME = value` for the help's defaults appears in core/defaults.py and nowhere else."""
    for name in ("DEFAULT_FLOOR", "MIN_N", "SUGGEST_SE"):
        where = [
            p.relative_to(ROOT).as_posix()
            for p in sorted(ROOT.rglob("*.py"))
            if re.search(rf"^{name}\s*[:=]", p.read_text("utf-8"), re.M)
        ]
        assert where == ["core/defaults.py"], (name, where)


def test_defaults_imports_nothing() -> None:
    source = (ROOT / "core" / "defaults.py").read_text("utf-8")
    assert not re.search(r"^\s*(import|from)\s", source, re.M)
