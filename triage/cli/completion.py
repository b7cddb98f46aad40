"""`triage --print-completion bash|zsh|fish`: the shell completion script, made by shtab.

`main()` picks a parser by its first word (`report`, `labels`, `review`, else the app's), so no
single parser knows every verb. `tree()` builds one for completion only: the app's parser with a
subcommand per verb, each copied (argparse `parents`) from the very parser `main()` uses, so a
flag added to a verb completes with nothing written twice. Imported only when a script is asked
for: shtab is not loaded by any other command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import shtab

from triage.cli import main
from triage.cli.exits import Exit

VERBS = (
    ("report", main.report_parser),
    ("labels", main.labels_parser),
    ("review", main.review_parser),
)
FILE_ARGUMENTS = ("paths", "out")  # the positionals that name files (the flags are typed Path)


def _complete_files(parser: argparse.ArgumentParser) -> None:
    """Every argument that names a file completes file names, in `parser` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _complete_files(sub)
        elif action.type is Path or action.dest in FILE_ARGUMENTS:
            action.complete = shtab.FILE  # type: ignore[attr-defined]


def tree() -> argparse.ArgumentParser:
    """The app's parser with `report`, `labels <action>` and `review export` as subcommands."""
    root = main.app_parser()
    # The app's PATH (any number of them) would swallow the verb in every shell's script: in the
    # tree the verb is the first word (bash falls back to file names when no verb matches).
    root._positionals._remove_action(next(a for a in root._actions if a.dest == "paths"))
    verbs = root.add_subparsers(dest="verb", metavar="VERB")
    for name, build in VERBS:
        parser = build()
        verbs.add_parser(
            name, parents=[parser], add_help=False, help=parser.description, description=parser.description
        )
    _complete_files(root)
    return root


def script(shell: str) -> str:
    return shtab.complete(tree(), shell=shell)


def print_completion(shell: str) -> Exit:
    sys.stdout.write(script(shell))
    return Exit.OK
