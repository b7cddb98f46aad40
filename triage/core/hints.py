"""Cause hints for a flip: what in the data likely made the losing arm miss, with its evidence.

(Skeleton: the kinds and the value types are fixed here; `hints_for` is being written.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from triage.core.corpus import Corpus
from triage.core.evaluation import Evaluation


class HintKind(StrEnum):
    """The JSON values of `flips[].hints[].kind`, most specific first."""

    SHORT_LIST = "short-list"
    PLAN_CHANGE = "plan-change"
    HEADER_DOMINATES = "header-dominates"
    MISLEADING_PATH = "misleading-path"
    LIKELY_UNLABELLED = "likely-unlabelled"
    WINDOW = "window"
    PUSHED_OUT = "pushed-out"
    DROPPED = "dropped"


@dataclass(frozen=True)
class Hint:
    kind: HintKind
    arm: str  # "a" or "b": the arm that lost (for a miss→hit flip, A)
    evidence: str  # one sentence with its numbers, for people
    facts: dict[str, object] = field(default_factory=dict)  # the same numbers, for programs


def hints_for(ev: Evaluation, qs: Sequence[int], corpus: Corpus | None) -> dict[int, tuple[Hint, ...]]:
    """The hints of each query index in `qs`, for the arm that lost (skeleton: none yet).

    Without a corpus, only the hints that need no chunk text can be given."""
    return {int(q): () for q in qs}
