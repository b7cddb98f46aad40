"""The amendment log: every session file of one folder, merged in file-name order (docs/labels.md "Label
amendments").

A record counts once however many files hold it: records are merged by `id`, so a copied session
file (`x (copy).jsonl`), a linked one or a record written twice (a retry after a short write) adds
nothing. One id with two different contents is reported, the first kept. Only regular files are
read: a FIFO or a device named `*.jsonl` is reported, never opened.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from triage.core.inputs.shapes import is_pattern
from triage.labels.records import Problem, ProblemKind, Record, read_file


@dataclass(frozen=True)
class Log:
    """Every amendment file of a folder, merged in file-name order, as read. `problems` holds what
    was not applied and why; `damage` those that are damage (not a repaired tear, not a stale base)."""

    folder: Path
    records: tuple[Record, ...]
    problems: tuple[Problem, ...]
    stale: tuple[str, ...]  # files written against another frozen file (not applied unless asked)
    applied_stale: bool = False  # the stale files' records were applied anyway (--apply-stale)

    @property
    def damage(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.kind not in (ProblemKind.BASE, ProblemKind.REPAIRED))


def read_log(folder: Path | None, frozen_sha256: str, apply_stale: bool = False) -> Log:
    records: list[Record] = []
    problems: list[Problem] = []
    stale: list[str] = []
    if folder is None or not folder.is_dir():
        return Log(folder or Path(), (), (), ())
    seen: dict[str, Record] = {}
    for path in sorted(folder.glob("*.jsonl")):
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError as e:
            problems.append(Problem(path.name, 0, ProblemKind.SPECIAL, f"cannot be read: {e.strerror}"))
            continue
        if not regular:
            problems.append(Problem(path.name, 0, ProblemKind.SPECIAL, "not a regular file; not read"))
            continue
        got, bad = read_file(path)
        problems += bad
        fresh = []
        for r in got:
            first = seen.setdefault(r.id, r)
            if first is r:
                fresh.append(r)
            elif _without_place(first) != _without_place(r):
                problems.append(
                    Problem(
                        path.name,
                        0,
                        ProblemKind.DUPLICATE,
                        f"record id {r.id} holds other content than in {first.file}; the first is kept",
                        r.seq,
                    )
                )
        got = fresh
        wrong = sorted({r.base for r in got if r.base != frozen_sha256})
        if wrong:
            stale.append(path.name)
            problems.append(
                Problem(
                    path.name,
                    0,
                    ProblemKind.BASE,
                    f"written against frozen labels {wrong[0][:12]}, not the current {frozen_sha256[:12]}"
                    + (
                        "; applied anyway as asked"
                        if apply_stale
                        else "; not applied (--apply-stale to apply)"
                    ),
                )
            )
            if not apply_stale:
                continue
        records += got
    return Log(folder, tuple(records), tuple(problems), tuple(stale), apply_stale and bool(stale))


def _without_place(r: Record) -> Record:
    """A record without what depends on where it was written (a retry lands at another seq)."""
    return replace(r, seq=0, prev=None, repairs=None, hash=None, file="")


def default_folder(labels: Path) -> Path:
    """`<labels stem>.amendments/` beside the frozen label file (or folder); for a glob, beside
    the folder that holds its matches (`labels/part-*.parquet` → `labels.amendments/`)."""
    while is_pattern(labels) and labels.parent != labels:
        labels = labels.parent
    return labels.with_name(labels.stem + ".amendments")
