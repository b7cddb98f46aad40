"""`triage --print-completion bash|zsh|fish`: the shell completion script, made by shtab.

`main()` picks a parser by its first word (`main.VERBS`: `report`, `labels`, `review`; else the
app's), so no single parser knows every verb. `tree()` joins them for completion only: the app's
parser with a subcommand per verb, each copied (argparse `parents`) from the very parser `main()`
parses that verb with, so a flag added to a verb completes with nothing written twice. Imported
only when a script is asked for: no other command loads shtab.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

import shtab

from triage.cli.exits import Exit

FILE_ARGUMENTS = ("paths", "out")  # the positionals that name files (the flags are typed Path)


def _complete_files(parser: argparse.ArgumentParser) -> None:
    """Every argument that names a file completes file names, in `parser` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _complete_files(sub)
        elif action.type is Path or action.dest in FILE_ARGUMENTS:
            action.complete = shtab.FILE  # type: ignore[attr-defined]


def tree(
    root: argparse.ArgumentParser, verbs: Mapping[str, argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    """`root` (the app's parser) with each of `verbs` (`report`, `labels`, `review`) as a subcommand."""
    # The app's PATH (any number of them) would swallow the verb in every shell's script: in the
    # tree the verb is the first word (bash falls back to file names when no verb matches).
    root._positionals._remove_action(next(a for a in root._actions if a.dest == "paths"))
    sub = root.add_subparsers(dest="verb", metavar="VERB")
    for name, parser in verbs.items():
        text = parser.description
        sub.add_parser(name, parents=[parser], add_help=False, help=text, description=text)
    _complete_files(root)
    return root


def print_completion(
    shell: str, root: argparse.ArgumentParser, verbs: Mapping[str, argparse.ArgumentParser]
) -> Exit:
    sys.stdout.write(shtab.complete(tree(root, verbs), shell=shell))
    return Exit.OK
