"""Everything `triage report` says, as one typed `Report`: each section's type is its own
module's (`sections/`), and `to_json` is the one JSON spelling, so no two outputs can disagree.

Undefined numbers (nothing to judge) are None here and null in the JSON, never NaN.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from operator import attrgetter
from pathlib import Path
from typing import BinaryIO

import numpy as np

from triage.core.checks.model import Check
from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import bytes_shown
from triage.labels import jsontext
from triage.report import cells
from triage.report.arms import ByArm
from triage.report.rows import Flips, Rows
from triage.report.sections.answers import AnswersSection
from triage.report.sections.cost import CostSection
from triage.report.sections.gate import GateSection
from triage.report.sections.holdout import HoldoutSection
from triage.report.sections.labels import FrozenView, LabelsSection
from triage.report.sections.measures import MeasureComparison
from triage.report.sections.metrics import ArmSection, KCells
from triage.report.sections.origins import OriginQuote, OriginRow, OverlapSection
from triage.report.sections.paired import PairedSection
from triage.report.sections.queries import QueryTable
from triage.report.sections.ranks import RanksSection
from triage.report.sections.slices import Partition, SliceRow
from triage.report.sections.tenants import TenantOrder, TenantsSection

SCHEMA = 1  # `to_json()["schema"]`: raised when a key changes name or meaning


@dataclass(frozen=True)
class TruthSection:
    """The exact truth the runs are judged against (docs/data.md "Exact truth as labels"): the
    decision measure is `decision`."""

    path: Path  # the truth folder
    k: int  # the truth's depth: it judges every k ≤ it
    metric: str
    tolerance: float
    decision: str  # "recall@10": over min(k, n_eligible), the truth's exact count
    no_eligible: int  # queries the truth lists with n_eligible = 0: counted apart, not scored


@dataclass(frozen=True)
class Report:
    triage: str  # the version that wrote it
    k: int
    n_queries: int
    n_scored: int
    n_unlabelled: int
    unlabelled: tuple[str, ...]
    missing: ByArm[tuple[str, ...]]
    labels: LabelsSection
    arms: ByArm[ArmSection]
    paired: PairedSection
    frozen: FrozenView
    k_cells: KCells | None
    slices: Mapping[str, tuple[SliceRow, ...]]
    partition: Mapping[str, Partition]
    tenants: TenantsSection | None
    flips: Flips
    ranks: RanksSection
    checks: tuple[Check, ...]  # errors first
    gate: GateSection | None = None
    ks: tuple[int, ...] = ()  # every cut-off asked for, `k` (the decision k) first
    holdout: HoldoutSection | None = None  # None: no tuning split named
    origins: tuple[OriginRow, ...] = ()  # per query origin, largest first; empty: no origin column
    origin_quote: OriginQuote | None = None
    overlap: OverlapSection | None = None  # None: not asked for (the app's screens)
    cost: CostSection | None = None  # what the change cost (core/views/cost.py)
    answers: AnswersSection | None = None  # None: no run carries answer_correct
    # Each measure named (docs/measures.md "Paired tests per measure"), B against A; left out when none is.
    compare: Mapping[str, MeasureComparison] = field(default_factory=dict, metadata={"omit_empty": True})
    # The per-query table (`--per-query`): left out unless asked for.
    queries: QueryTable | None = field(default=None, metadata={"omit_empty": True})
    # What the reader should know that is not a number (the corpus read without its cache): on
    # standard error and in the app, never in the JSON.
    notices: tuple[str, ...] = field(default=(), metadata={"json": False})
    # (ids, unjudged in A, unjudged in B) with every scored query's two top-k lists cut at the
    # shorter one, when they differ in length: the shown B − A of the unjudged counts; not in the
    # JSON, whose `unjudged_in_top_k` keeps its meaning.
    unjudged_same_depth: tuple[int, int, int] | None = field(default=None, metadata={"json": False})
    # Judged against exact truth; left out otherwise.
    truth: TruthSection | None = field(default=None, metadata={"omit_empty": True})

    @property
    def not_scored(self) -> str:
        """The unscored queries as the summary line spells them (`cells.unscored`)."""
        return cells.unscored(self.n_unlabelled, self.truth.no_eligible if self.truth else 0)

    def with_tenant_order(self, order: TenantOrder) -> Report:
        return self if self.tenants is None else replace(self, tenants=self.tenants.ordered(order))

    def to_json(self) -> dict[str, object]:
        """The JSON-ready dict: `schema` first, then every field under its own name."""
        out = _plain(self)
        assert isinstance(out, dict)
        return {"schema": SCHEMA, **out}


def dumps_report(report: Report) -> str:
    """One strict JSON object: `json.dumps(report.to_json(), ensure_ascii=False)` byte for byte,
    written through orjson (`write_json`, `labels/jsontext.py`)."""
    sink = io.BytesIO()
    write_json(report, sink)
    return sink.getvalue().decode("utf-8")


def write_json(report: Report, out: BinaryIO) -> None:
    """`dumps_report(report)` as UTF-8 on `out`: the row sections (`Rows`) spelled from their columns a
    slice at a time, everything else by orjson (`jsontext.dumps`)."""
    _write({"schema": SCHEMA, **_plain(report, keep=True)}, out)  # type: ignore[dict-item]


def _write(x: object, out: BinaryIO) -> None:
    if isinstance(x, Rows):
        x.write_json(out)
    elif isinstance(x, dict) and _holds_rows(x):
        for i, (name, value) in enumerate(x.items()):
            out.write(("{" if i == 0 else ", ").encode() + jsontext.dumps(name) + b": ")
            _write(value, out)
        out.write(b"}")
    else:
        out.write(jsontext.dumps(x, spaced=True, allow_nan=False))


def _holds_rows(x: dict[str, object]) -> bool:
    return any(isinstance(v, Rows) or (isinstance(v, dict) and _holds_rows(v)) for v in x.values())


_PRIMITIVE = frozenset({str, int, float, bool, type(None)})

_FIELDS: dict[type, tuple[tuple[str, ...], attrgetter[tuple[object, ...]]]] = {}

_OMIT_EMPTY: set[tuple[type, str]] = set()  # (class, field) spelled only when not empty


def _fields(cls: type) -> tuple[tuple[str, ...], attrgetter[tuple[object, ...]]]:
    got = _FIELDS.get(cls)
    if got is None:
        names = tuple(f.name for f in fields(cls) if f.metadata.get("json", True))
        got = _FIELDS[cls] = (names, attrgetter(*names, *names[:1]))  # ≥ 2 names: always a tuple
        _OMIT_EMPTY.update((cls, f.name) for f in fields(cls) if f.metadata.get("omit_empty"))
    return got


def _plain(x: object, keep: bool = False) -> object:
    """Fields by name, Outcome as its `.json`, other enums as their value, paths as text, row
    sections as lists of dicts (`keep`: left as `Rows`, for `write_json`). A dataclass's field
    reader is looked up first, and primitive fields are taken as they are."""
    t = type(x)
    if t in _PRIMITIVE:
        return x
    if isinstance(x, Rows):  # spelled from its columns
        return x if keep else json.loads(x.json())
    if isinstance(x, Outcome):
        return x.json
    if isinstance(x, QueryTable):
        return x.rows()
    if isinstance(x, Enum):
        return x.value
    spec = _FIELDS.get(t) or (_fields(t) if is_dataclass(x) else None)
    if spec is not None:
        names, get = spec
        return {
            n: v if type(v) in _PRIMITIVE else _plain(v, keep)
            for n, v in zip(names, get(x), strict=False)
            if (t, n) not in _OMIT_EMPTY or v
        }
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, Path):  # a byte of its name that is not UTF-8 as \xff: JSON holds text
        return bytes_shown(str(x))
    if isinstance(x, Mapping):
        return {str(k): _plain(v, keep) for k, v in x.items()}
    if isinstance(x, tuple | list):
        return [_plain(v, keep) for v in x]
    raise TypeError(f"no JSON spelling for {t.__name__}")
