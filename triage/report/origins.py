"""The report's origin sections: the headline numbers per query origin, which figure to quote,
and the lexical overlap of the queries with their gold, with its two checks."""

from __future__ import annotations

import math

import numpy as np

from triage.core.checks.model import Check
from triage.core.checks.overlap import GENERATED_LIKE, Overlap, overlap, overlap_checks, spread
from triage.core.evaluation import Evaluation
from triage.core.inputs.corpus import Corpus
from triage.core.measures.metrics import Means
from triage.core.measures.paired import mcnemar_exact
from triage.core.views.origin import OriginPart, origins, quote
from triage.report.model import (
    ArmMeans,
    ByArm,
    OriginQuote,
    OriginRow,
    OverlapGroup,
    OverlapSection,
    PairedSection,
    Spread,
)


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _means(m: Means) -> ArmMeans:
    return ArmMeans(m.n, _num(m.hit_rate), _num(m.recall), _num(m.mrr), _num(m.ndcg))


def _row(ev: Evaluation, part: OriginPart) -> OriginRow:
    p = part.paired
    regressions = part.mask & ev.a.judged.hit & ~ev.b.judged.hit & (ev.b.unjudged_top > 0)
    return OriginRow(
        part.origin,
        ByArm(_means(part.a), _means(part.b)),
        PairedSection(
            p.n,
            p.both_hit,
            p.both_miss,
            p.a_hit_b_miss,
            p.a_miss_b_hit,
            _num(mcnemar_exact(p.a_hit_b_miss, p.a_miss_b_hit)),
            p.reconciles(part.a.hit_rate, part.b.hit_rate),
            int(regressions.sum()),
        ),
    )


def origin_sections(ev: Evaluation) -> tuple[tuple[OriginRow, ...], OriginQuote | None]:
    parts = origins(ev)
    q = quote(parts)
    rows = tuple(_row(ev, p) for p in parts)
    if q is None:
        return rows, None
    return rows, OriginQuote(
        q.real.origin,
        q.real.n,
        q.generated.n,
        ByArm(_num(q.real.a.hit_rate), _num(q.real.b.hit_rate)),
        ByArm(_num(q.generated.a.hit_rate), _num(q.generated.b.hit_rate)),
        ByArm(_num(q.gap("a")), _num(q.gap("b"))),
    )


def _spread(values: np.ndarray) -> Spread:
    s = spread(values)
    return Spread(s.n, _num(s.q1), _num(s.median), _num(s.q3))


def _group(name: str, o: Overlap, mask: np.ndarray) -> OverlapGroup:
    m = mask & o.known
    return OverlapGroup(
        name, _spread(o.body[mask]), _spread(o.header[mask]), int((o.header[m] > o.body[m]).sum())
    )


def _unavailable(reason: str) -> OverlapSection:
    return OverlapSection(False, reason, GENERATED_LIKE, (), ByArm((), ()))


def overlap_section(ev: Evaluation, corpus: Corpus | None) -> tuple[OverlapSection, list[Check]]:
    """The overlap's distributions (all, per origin, per arm's hits and misses) and its checks."""
    reason = ""
    if corpus is None:
        reason = "no corpus given (or it cannot be opened)"
    elif ev.query_column("text").null_count == ev.n:
        reason = "no query text given"
    if reason:
        return _unavailable(reason), overlap_checks(None, [], reason)
    assert corpus is not None
    o = overlap(ev, corpus)
    scored = ev.scored
    groups = [("all", scored)] + [(f"origin:{p.origin}", p.mask) for p in origins(ev)]
    if len(groups) == 2:  # one origin: the same queries as the blend
        groups = groups[:1]
    by_arm: ByArm[tuple[OverlapGroup, ...]] = ByArm(
        *(
            (_group("hits", o, scored & arm.judged.hit), _group("misses", o, scored & ~arm.judged.hit))
            for arm in ev.arms
        )
    )
    section = OverlapSection(
        True, "", GENERATED_LIKE, tuple(_group(name, o, mask) for name, mask in groups), by_arm
    )
    labelled = [("queries" if name == "all" else f"queries of origin {name[7:]!r}", m) for name, m in groups]
    return section, overlap_checks(o, labelled)
