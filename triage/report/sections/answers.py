"""The answers section: evidence × answer per arm, and answer accuracy beside the hit rate on the
queries both arms judge (core/views/answers.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from triage.report.arms import ByArm
from triage.report.blocks import Block, Heading, Para, Table, every_column
from triage.report.cells import delta, p_value, rate, rate_interval
from triage.report.sections.cost import measured
from triage.report.sections.metrics import ArmSection

if TYPE_CHECKING:
    from triage.core.views.answers import AnswerCells, Answers


@dataclass(frozen=True, slots=True)
class AnswerCellsRow:
    """Evidence × answer over an arm's scored queries with an answer_correct."""

    working: int  # hit, answer correct
    lucky: int  # miss, answer correct
    assembly: int  # hit, answer wrong: an assembly problem
    retrieval: int  # miss, answer wrong: a retrieval problem
    n: int


@dataclass(frozen=True)
class AnswersSection:
    """Answer accuracy beside the hit rate, on the queries scored and judged in both arms (`n`)."""

    cells: ByArm[AnswerCellsRow | None]  # None: that arm has no answer_correct column
    n: int
    accuracy: ByArm[float | None]
    wilson_low: ByArm[float | None]  # Wilson 95% interval of each arm's accuracy
    wilson_high: ByArm[float | None]
    hit_rate: ByArm[float | None]  # on the same n queries
    both_correct: int
    a_correct_b_wrong: int
    a_wrong_b_correct: int
    both_wrong: int
    mcnemar_p: float | None


class AnswersSource(Protocol):
    """What the answers' blocks read of the report."""

    @property
    def arms(self) -> ByArm[ArmSection]: ...
    @property
    def answers(self) -> AnswersSection | None: ...


def _answer_cells(c: AnswerCells | None) -> AnswerCellsRow | None:
    return None if c is None else AnswerCellsRow(c.working, c.lucky, c.assembly, c.retrieval, c.n)


def answers_section(x: Answers | None) -> AnswersSection | None:
    if x is None:
        return None
    p = x.paired
    return AnswersSection(
        cells=ByArm(_answer_cells(x.a), _answer_cells(x.b)),
        n=p.n,
        accuracy=ByArm(measured(p.accuracy_a), measured(p.accuracy_b)),
        wilson_low=ByArm(measured(p.wilson_a[0]), measured(p.wilson_b[0])),
        wilson_high=ByArm(measured(p.wilson_a[1]), measured(p.wilson_b[1])),
        hit_rate=ByArm(measured(p.hit_rate_a), measured(p.hit_rate_b)),
        both_correct=p.both_correct,
        a_correct_b_wrong=p.a_correct_b_wrong,
        a_wrong_b_correct=p.a_wrong_b_correct,
        both_wrong=p.both_wrong,
        mcnemar_p=measured(p.mcnemar_p),
    )


ANSWER_HEAD = ["", "answer correct", "answer wrong"]


def answer_rows(c: AnswerCellsRow) -> list[list[str]]:
    """One arm's evidence × answer table: rows hit / miss, columns answer correct / wrong."""
    return [
        ["gold in top k (hit)", f"{c.working} working", f"{c.assembly} assembly problem"],
        ["gold missing (miss)", f"{c.lucky} lucky", f"{c.retrieval} retrieval problem"],
    ]


def answer_change(x: AnswersSection) -> str:
    """ "answer accuracy 0.586 [0.516, 0.652] → 0.692 [0.624, 0.752] (+0.106) beside hit rate
    0.616 → 0.788 (+0.172), over 198 queries judged in both; McNemar p = …"."""
    a = rate_interval(x.accuracy.a, x.wilson_low.a, x.wilson_high.a)
    b = rate_interval(x.accuracy.b, x.wilson_low.b, x.wilson_high.b)
    return (
        f"answer accuracy {a} → {b} ({delta(x.accuracy.a, x.accuracy.b)}) beside hit rate "
        f"{rate(x.hit_rate.a)} → {rate(x.hit_rate.b)} ({delta(x.hit_rate.a, x.hit_rate.b)}), over "
        f"{x.n} scored queries with answer_correct in both arms; answers {x.a_correct_b_wrong} "
        f"right→wrong, {x.a_wrong_b_correct} wrong→right, McNemar exact p = {p_value(x.mcnemar_p)}"
    )


UNFILLED = "Evidence × answer: no `answer_correct` column in the runs."


def answer_blocks(r: AnswersSource) -> list[Block]:
    """Evidence × answer per arm, and answer accuracy beside the hit rate."""
    x = r.answers
    if x is None:
        return [Para(UNFILLED, own=True)]
    out: list[Block] = [Heading("Evidence × answer")]
    for side, arm_cells in x.cells.items():
        name = (r.arms.a if side == "a" else r.arms.b).name
        if arm_cells is None:
            out.append(Para(f"{side.upper()} {name}: no answer_correct column."))
            continue
        head = ANSWER_HEAD
        out += [
            Heading(f"{side.upper()} {name}", 3, own=False),
            Table(head, answer_rows(arm_cells), own=every_column(head)),
        ]
    out.append(Para(answer_change(x) + "."))
    return out
