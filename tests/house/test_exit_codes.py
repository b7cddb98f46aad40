"""Every exit status the command line uses is a member of `cli.exits.Exit`, and docs/cli.md "Exit
codes" lists exactly those codes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import triage
from triage.cli.exits import Exit

from conftest import ROOT

CLI = Path(triage.__file__).parent / "cli"


def readme_codes() -> list[int]:
    section = (
        (ROOT / "docs" / "cli.md").read_text("utf-8").split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    )
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [int(re.match(r"\| `(\d+)` \|", row).group(1)) for row in rows]  # type: ignore[union-attr]


def test_the_readme_table_lists_exactly_the_codes_the_cli_defines() -> None:
    codes = readme_codes()
    assert len(codes) == len(set(codes)), "a code listed twice"
    assert sorted(codes) == sorted(e.value for e in Exit)
    assert {0, 1, 2, 130, 141} <= set(codes)


def test_no_exit_number_is_written_elsewhere_in_the_cli() -> None:
    """A verb returns an `Exit` member: no `return 1`, `... else 0`, `exit(2)` or `EXIT_X = 2`."""
    literal = re.compile(r"(\breturn\s+\d|\belse\s+\d+\s*$|exit\(\s*\d|^\s*EXIT_\w+\s*=)", re.M)
    found = [
        f"{p.name}: {m.group(0)}"
        for p in sorted(CLI.glob("*.py"))
        if p.name != "exits.py"
        for m in literal.finditer(p.read_text("utf-8"))
    ]
    assert not found, found


def test_a_wrong_command_line_exits_as_argparse_does_with_the_input_code() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "triage", "report", "--k", "0"], capture_output=True, text=True
    )
    assert done.returncode == Exit.INPUT and "--k" in done.stderr
