"""`triage --print-completion bash|zsh|fish` (docs/cli.md "Shell completion"): the scripts are made from
the verbs' own parsers, parse in their shells, and complete verbs, actions, flags and choices."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from triage.cli import main as cli

VERBS = {name: build for name, (build, _) in cli.VERBS.items()}


def script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "triage", "--print-completion", shell], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def need(shell: str) -> str:
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} is not installed here: its script is made but not run")
    return path


def option_strings() -> dict[str, set[str]]:
    """Each (sub)command's option strings, keyed as shtab names them (`report`, `labels_judge`)."""
    out: dict[str, set[str]] = {}

    def walk(p: argparse.ArgumentParser, key: str) -> None:
        out[key] = {s for a in p._actions for s in a.option_strings if a.help != argparse.SUPPRESS}
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, f"{key}_{name}")

    for verb, build in VERBS.items():
        walk(build(), verb)
    return out


def test_bash_script_names_every_verb_action_and_flag_of_the_real_parsers() -> None:
    text = script("bash")
    assert list(VERBS) == ["report", "labels", "review", "cache", "truth"]
    assert "_shtab_triage_subparsers=(report labels review cache truth)" in text
    assert "_shtab_triage_cache_subparsers=(list prune)" in text
    assert (
        "_shtab_triage_labels_subparsers=(log verify export suggest judge import conflicts agreement)" in text
    )
    expected = option_strings()
    assert {"report", "labels_conflicts", "labels_judge", "review_export"} <= set(expected)
    for key, flags in expected.items():
        line = next(x for x in text.splitlines() if x.startswith(f"_shtab_triage_{key}_option_strings="))
        assert flags <= set(line.split("=(", 1)[1].rstrip(")").split()), key
    root = next(x for x in text.splitlines() if x.startswith("_shtab_triage_option_strings="))
    assert {"--labels", "--floor", "--print-completion"} <= set(root.split("=(", 1)[1].rstrip(")").split())


def test_bash_accepts_the_script_and_it_completes(tmp_path: Path) -> None:
    bash = need("bash")
    text = script("bash")
    (tmp_path / "completion.bash").write_text(text)
    assert subprocess.run([bash, "-n", str(tmp_path / "completion.bash")]).returncode == 0
    registered = subprocess.run(
        [bash, "-c", f'eval "$(<{tmp_path / "completion.bash"})"; complete -p triage'],
        capture_output=True,
        text=True,
    )
    assert "-F _shtab_triage triage" in registered.stdout  # docs/cli.md's line registers it
    (tmp_path / "runA.parquet").touch()
    driver = (
        "source completion.bash\n"
        'try() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$*";'
        ' COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _shtab_triage; echo "${COMPREPLY[*]}"; }\n'
        "try triage re\n"
        "try triage labels co\n"
        "try triage review ''\n"
        "try triage report --fo\n"
        "try triage report --format ''\n"
        "try triage labels judge --gr\n"
        "try triage report --labels ru\n"
        "try triage --print-completion ''\n"
    )
    done = subprocess.run([bash, "-c", driver], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "report review",
        "conflicts",
        "export",
        "--format",
        "text markdown json html",
        "--grade",
        "runA.parquet",
        "bash zsh fish",
    ]


def test_zsh_script_is_made_and_parses(tmp_path: Path) -> None:
    text = script("zsh")
    assert text.startswith("#compdef triage")
    assert "conflicts" in text and "--labels" in text and "--floor-min-n" in text
    zsh = need("zsh")
    (tmp_path / "_triage").write_text(text)
    done = subprocess.run([zsh, "-n", str(tmp_path / "_triage")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # docs/cli.md's line: eval'd after compinit, the script registers its function for `triage`
    registered = subprocess.run(
        [
            zsh,
            "-f",
            "-c",
            f'autoload -U compinit && compinit -u -D && eval "$(<{tmp_path / "_triage"})" '
            "&& print -r -- ${_comps[triage]}",
        ],
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert registered.stdout.strip() == "_shtab_triage", registered.stderr


def test_fish_script_is_made_parses_and_completes(tmp_path: Path) -> None:
    text = script("fish")
    assert "conflicts" in text and "-l labels" in text
    fish = need("fish")
    path = tmp_path / "triage.fish"
    path.write_text(text)
    assert subprocess.run([fish, "-n", str(path)]).returncode == 0
    got = {}
    for line in ("triage re", "triage labels co", "triage report --format ", "triage labels judge --gr"):
        done = subprocess.run(
            [fish, "--no-config", "-c", f"source {path}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            check=True,
        )
        got[line] = [x.split("\t")[0] for x in done.stdout.splitlines()]
    assert got == {
        "triage re": ["report", "review"],
        "triage labels co": ["conflicts"],
        "triage report --format ": ["text", "markdown", "json", "html"],
        "triage labels judge --gr": ["--grade"],
    }


def test_an_unknown_shell_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "triage", "--print-completion", "tcshh"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "--print-completion" in done.stderr and not done.stdout
