"""Missing evidence against unused evidence: where a run carries `answer_correct`
(the harness's verdict on the answer), each scored query it judged falls in one of four cells:

- working: the evidence retrieved (a hit at k) and the answer correct;
- lucky: the answer correct without the evidence (a miss);
- assembly problem: the evidence retrieved, the answer wrong (the reader did not use it);
- retrieval problem: the evidence missing and the answer wrong.

Answer accuracy is the share correct; beside the hit rate it is compared on the paired queries
(scored, with `answer_correct` known in both arms), with each arm's Wilson 95% interval
(core/measures/intervals.py) and McNemar's exact p on the discordant answers, as the hit rate is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from triage.core.evaluation import Arm, Evaluation
from triage.core.measures.intervals import wilson_one
from triage.core.measures.paired import mcnemar_exact

COLUMN = "answer_correct"


@dataclass(frozen=True)
class AnswerCells:
    """One arm's evidence × answer table over its judged scored queries."""

    working: int  # hit, correct
    lucky: int  # miss, correct
    assembly: int  # hit, wrong
    retrieval: int  # miss, wrong

    @property
    def n(self) -> int:
        return self.working + self.lucky + self.assembly + self.retrieval


@dataclass(frozen=True)
class PairedAnswers:
    """Both arms on the queries scored and judged in both (`n`): accuracy and hit rate each."""

    n: int
    accuracy_a: float  # NaN when n = 0
    accuracy_b: float
    wilson_a: tuple[float, float]
    wilson_b: tuple[float, float]
    hit_rate_a: float
    hit_rate_b: float
    both_correct: int
    a_correct_b_wrong: int
    a_wrong_b_correct: int
    both_wrong: int
    mcnemar_p: float


@dataclass(frozen=True)
class Answers:
    a: AnswerCells | None  # None: that arm carries no answer_correct
    b: AnswerCells | None
    paired: PairedAnswers


def correct(arm: Arm) -> tuple[np.ndarray, np.ndarray] | None:
    """(known, correct) per query of the universe (bool arrays), or None without the column."""
    col = arm.aligned(COLUMN)
    if col is None:
        return None
    known = col.is_valid().to_numpy(zero_copy_only=False)
    right = col.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    return known, right


def _cells(hit: np.ndarray, right: np.ndarray) -> AnswerCells:
    return AnswerCells(
        int((hit & right).sum()),
        int((~hit & right).sum()),
        int((hit & ~right).sum()),
        int((~hit & ~right).sum()),
    )


def answers(ev: Evaluation) -> Answers | None:
    """The evidence × answer tables, or None when neither arm carries `answer_correct`."""
    got = [correct(arm) for arm in ev.arms]
    if got[0] is None and got[1] is None:
        return None
    scored = ev.scored
    cells: list[AnswerCells | None] = []
    for arm, g in zip(ev.arms, got, strict=True):
        if g is None:
            cells.append(None)
            continue
        mask = scored & g[0]
        cells.append(_cells(arm.judged.hit[mask], g[1][mask]))
    both = scored.copy()
    for g in got:
        both &= g[0] if g is not None else False
    n = int(both.sum())
    ra = got[0][1][both] if got[0] is not None else np.zeros(0, bool)
    rb = got[1][1][both] if got[1] is not None else np.zeros(0, bool)
    ha, hb = ev.a.judged.hit[both], ev.b.judged.hit[both]
    xa, xb = int(ra.sum()), int(rb.sum())
    down, up = int((ra & ~rb).sum()), int((~ra & rb).sum())
    nan = float("nan")
    return Answers(
        cells[0],
        cells[1],
        PairedAnswers(
            n=n,
            accuracy_a=xa / n if n else nan,
            accuracy_b=xb / n if n else nan,
            wilson_a=wilson_one(xa, n),
            wilson_b=wilson_one(xb, n),
            hit_rate_a=float(ha.mean()) if n else nan,
            hit_rate_b=float(hb.mean()) if n else nan,
            both_correct=int((ra & rb).sum()),
            a_correct_b_wrong=down,
            a_wrong_b_correct=up,
            both_wrong=int((~ra & ~rb).sum()),
            mcnemar_p=mcnemar_exact(down, up),
        ),
    )
