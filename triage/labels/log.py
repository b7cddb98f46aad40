"""The amendment log: every session file of one folder, merged in file-name order (DESIGN §6)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from triage.labels.records import Problem, ProblemKind, Record, read_file


@dataclass(frozen=True)
class Log:
    """Every amendment file of a folder, merged in file-name order, as read."""

    folder: Path
    records: tuple[Record, ...]
    problems: tuple[Problem, ...]
    stale: tuple[str, ...]  # files written against another frozen file (not applied unless asked)
    applied_stale: bool = False  # the stale files' records were applied anyway (--apply-stale)


def read_log(folder: Path | None, frozen_sha256: str, apply_stale: bool = False) -> Log:
    records: list[Record] = []
    problems: list[Problem] = []
    stale: list[str] = []
    if folder is None or not folder.is_dir():
        return Log(folder or Path(), (), (), ())
    for path in sorted(folder.glob("*.jsonl")):
        got, bad = read_file(path)
        problems += bad
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


def default_folder(labels: Path) -> Path:
    """`<labels stem>.amendments/` beside the frozen label file."""
    return labels.with_name(labels.stem + ".amendments")
