"""The report's cost and answer-accuracy sections, mapped from core/views/cost.py's and
core/views/answers.py's results."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from triage.report.model import (
    AnswerCellsRow,
    AnswersSection,
    ArmCostSection,
    ByArm,
    CostSection,
    SliceLatencyRow,
    Sourced,
)

if TYPE_CHECKING:
    from triage.core.views.answers import AnswerCells, Answers
    from triage.core.views.cost import ArmCost, Cost, Figure


def _num(x: float | None) -> float | None:
    """A figure for JSON: None when unknown; a whole count stays an integer."""
    if x is None or math.isnan(x):
        return None
    return x if isinstance(x, int) else float(x)


def _sourced(f: Figure) -> Sourced:
    return Sourced(_num(f.value), f.source)


def _arm(c: ArmCost) -> ArmCostSection:
    def meta(key: str) -> Sourced | None:
        f = c.meta.get(key)
        return None if f is None else _sourced(f)

    return ArmCostSection(
        n_chunks=_sourced(c.n_chunks),
        latency_p50_ms=_sourced(c.latency_p50),
        latency_p95_ms=_sourced(c.latency_p95),
        latency_n=c.latency_n,
        header_mode=c.header_mode,
        heading_tokens=_sourced(c.heading_tokens),
        header_tokens=_sourced(c.header_tokens),
        header_tax=_sourced(c.header_tax),
        top_k_chunks=c.top_k_chunks,
        index_bytes=meta("index_bytes"),
        ingest_seconds=meta("ingest_seconds"),
        embed_input_tokens_mean=meta("embed_input_tokens_mean"),
    )


def cost_section(c: Cost) -> CostSection:
    return CostSection(
        arms=ByArm(_arm(c.a), _arm(c.b)),
        corpus_header_tokens=_sourced(c.corpus_header_tokens),
        slices=tuple(
            SliceLatencyRow(
                s.key,
                s.value,
                s.n,
                s.n_a,
                s.n_b,
                _num(s.p50_a),
                _num(s.p95_a),
                _num(s.p50_b),
                _num(s.p95_b),
            )
            for s in c.slices
        ),
    )


def _cells(c: AnswerCells | None) -> AnswerCellsRow | None:
    return None if c is None else AnswerCellsRow(c.working, c.lucky, c.assembly, c.retrieval, c.n)


def answers_section(x: Answers | None) -> AnswersSection | None:
    if x is None:
        return None
    p = x.paired
    return AnswersSection(
        cells=ByArm(_cells(x.a), _cells(x.b)),
        n=p.n,
        accuracy=ByArm(_num(p.accuracy_a), _num(p.accuracy_b)),
        wilson_low=ByArm(_num(p.wilson_a[0]), _num(p.wilson_b[0])),
        wilson_high=ByArm(_num(p.wilson_a[1]), _num(p.wilson_b[1])),
        hit_rate=ByArm(_num(p.hit_rate_a), _num(p.hit_rate_b)),
        both_correct=p.both_correct,
        a_correct_b_wrong=p.a_correct_b_wrong,
        a_wrong_b_correct=p.a_wrong_b_correct,
        both_wrong=p.both_wrong,
        mcnemar_p=_num(p.mcnemar_p),
    )
