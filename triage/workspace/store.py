"""The label store seen whole (`triage labels log | verify | export`): every record with its standing,
every amendment file checked record by record, frozen + amendments written as one label file, and
the files an output must never replace.

Each returns data; the wording is the command line's (`cli.labels_cmd`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import pyarrow.compute as pc

from triage.core.files import Protected
from triage.core.inputs.manifest import Spec
from triage.core.text.sanitize import counted
from triage.labels.export import export_labels
from triage.labels.log import default_folder
from triage.labels.records import RETRACT, ProblemKind, Record, read_file
from triage.workspace.snapshot import Snapshot


@dataclass(frozen=True)
class LogEntry:
    """One record of the log, as `triage labels log` lists it."""

    record: Record
    mark: str  # "verdict", "verdict (replaced)", "retract", "add" or "add (retracted)"
    resolves: tuple[tuple[str, Record | None], ...] = ()  # each id it resolves, and its record if known


def log_entries(snapshot: Snapshot) -> list[LogEntry]:
    """Every record, saved order: a verdict is replaced by a later verdict of its reviewer on its
    query; an add is retracted when it is no longer in force."""
    state = snapshot.labels
    in_force = {r.id for r in state.in_force}
    latest = state.verdicts.ids
    by_id = {r.id: r for r in state.records}
    out = []
    for r in state.every_record:
        if r.cause is not None:
            out.append(LogEntry(r, "verdict" if r.id in latest else "verdict (replaced)"))
            continue
        mark = "retract" if r.op == RETRACT else ("add" if r.id in in_force else "add (retracted)")
        out.append(LogEntry(r, mark, tuple((i, by_id.get(i)) for i in r.resolves or ())))
    return out


class FindingLevel(StrEnum):
    OK = "ok"
    NOTE = "note"  # a tear a later write repaired: nothing acknowledged was lost
    FAIL = "FAIL"


@dataclass(frozen=True)
class Finding:
    level: FindingLevel
    text: str


@dataclass(frozen=True)
class Verified:
    folder: Path  # the amendments folder
    files: int  # amendment files found there
    findings: tuple[Finding, ...]

    @property
    def failed(self) -> bool:
        return any(f.level is FindingLevel.FAIL for f in self.findings)


def verify(snapshot: Snapshot) -> Verified:
    """Every amendment file, record hash, chain and base, in file order; then each record found
    in two files."""
    frozen = snapshot.labels.frozen
    log = snapshot.labels.log
    folder = log.folder
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    found: list[Finding] = []
    if folder != Path() and (folder.exists() or folder.is_symlink()) and not folder.is_dir():
        found.append(Finding(FindingLevel.FAIL, f"{folder}: not a folder; no amendment can be saved there"))
    for path in files:
        special = [p for p in log.problems if p.file == path.name and p.kind is ProblemKind.SPECIAL]
        if special:
            found.append(Finding(FindingLevel.FAIL, str(special[0])))
            continue
        records, problems = read_file(path)
        wrong_base = [r for r in records if r.base != frozen.sha256]
        found.extend(
            Finding(FindingLevel.NOTE if p.kind is ProblemKind.REPAIRED else FindingLevel.FAIL, str(p))
            for p in problems
        )
        if wrong_base:
            base = wrong_base[0].base
            found.append(
                Finding(
                    FindingLevel.FAIL,
                    f"{path.name}: base {base[:12]} is not the frozen file's {frozen.sha256[:12]} "
                    f"({counted(len(wrong_base), 'record')})",
                )
            )
        elif not any(p.kind is not ProblemKind.REPAIRED for p in problems):
            found.append(
                Finding(
                    FindingLevel.OK,
                    f"{path.name}: {counted(len(records), 'record')}{_verdicts_among(records)}, "
                    "hashes and chain intact",
                )
            )
    found.extend(Finding(FindingLevel.FAIL, str(p)) for p in log.problems if p.kind is ProblemKind.DUPLICATE)
    return Verified(folder, len(files), tuple(found))


def _verdicts_among(records: list[Record]) -> str:
    n = sum(1 for r in records if r.cause is not None)
    return f" ({counted(n, 'verdict')})" if n else ""


@dataclass(frozen=True)
class Exported:
    gold: int  # rows graded ≥ 1
    not_relevant: int  # rows graded 0


def export(snapshot: Snapshot, out: Path) -> Exported:
    """Frozen + amendments as a new label file: Parquet, or TREC qrels for .qrels/.txt/.trec;
    never onto an input or into the amendments folder (`InputError`)."""
    folder = snapshot.labels.log.folder
    table = export_labels(
        snapshot.labels, out, protected(snapshot.spec, folder if folder != Path() else None)
    )
    not_relevant = int(pc.sum(pc.less_equal(table.column("relevance"), 0)).as_py() or 0)
    return Exported(table.num_rows - not_relevant, not_relevant)


def protected(spec: Spec, folder: Path | None = None) -> Protected:
    """Every input and its sidecar name, the manifest, the frozen labels, and anything inside an
    input folder or the amendments folder (`folder`, else the spec's; `Spec.forbidden`, with the
    review files found there now: a hard link to one elsewhere counts)."""
    folder = folder or spec.amendments or default_folder(spec.labels)
    review_files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    return spec.forbidden(folder, review_files)
