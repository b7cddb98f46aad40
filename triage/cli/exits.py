"""Every exit status the command line uses, in one place: each verb returns an `Exit`, and no
number is written anywhere else in `triage.cli`. docs/cli.md "Exit codes" is the same table for
people (tests/house/test_exit_codes.py checks the two list the same codes)."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0  # done (also --help, --version, --print-completion)
    # the command ran and found what it exists to find: `report --strict` with a check at error,
    # `report --gate` with B below a floor (or nothing evaluated), `labels verify` with a problem,
    # `labels conflicts` with one
    FOUND = 1
    # an input cannot be read (or a write target is refused, or the command line is wrong: argparse
    # exits 2 too), or a judgement could not be saved
    INPUT = 2
    NOT_SAVED = 2  # `labels judge` / `import`: the disk refused a write (an alias of INPUT)
    INTERRUPTED = 130  # ctrl+c while loading (128 + SIGINT)
    PIPE = 141  # 128 + SIGPIPE, as the shell reports a reader that stopped early
