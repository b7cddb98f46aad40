"""Every result a report shows, computed from one snapshot, the gate's verdicts included: the one
place `triage report`, the Python API's `report()` and the app's screens of numbers compute them.

`compute` calls the core (the paired tests, slices and their comparisons, tenants, ranks, cause
hints, the frozen view, the held-out split, origins, overlap, cost, answers, the measures' tests,
the gate) and returns its results in the core's own types; `report/build.py` maps them into the
report's model and computes nothing. `open_results` is `triage report`'s one call: the gate file
read first, the inputs read and judged, then `compute`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa

from triage.core.checks.holdout import QuerySplit, held_out_means, query_split
from triage.core.checks.model import Check, worst_first
from triage.core.checks.overlap import Quartiles, overlap, overlap_checks, spread
from triage.core.errors import InputError
from triage.core.evaluation import Arm, Cutoffs, Evaluation
from triage.core.gate import apply
from triage.core.gate.apply import Floor, GateFile, MeasureVerdict, read_gate
from triage.core.gate.propose import floors_toml, suggest_floors
from triage.core.inputs.corpus import Corpus, open_corpus
from triage.core.inputs.manifest import Spec
from triage.core.measures.metrics import Means, means
from triage.core.measures.paired import Paired, mcnemar_exact, noise_band, outcome_codes, paired
from triage.core.measures.significance import MeasureTest, SliceComparisons, compare_all
from triage.core.views.answers import Answers, answers
from triage.core.views.cost import Cost, check_cost, cost
from triage.core.views.hints import FlipHints, flip_hint_table
from triage.core.views.origin import OriginPart, Quote, origins, quote
from triage.core.views.per_query import query_table
from triage.core.views.ranks import Ranks, ranks
from triage.core.views.slices import (
    DEFAULT_FLOOR,
    Slice,
    Tenants,
    all_slices,
    decision,
    slice_comparisons,
    tenants,
)
from triage.labels.state import LabelMode, LabelState
from triage.workspace.snapshot import Snapshot, open_snapshot


@dataclass(frozen=True)
class ArmFigures:
    """One arm's figures over the scored queries, at the decision k and at every cut-off shown."""

    means: Means
    wilson: tuple[float, float]  # the Wilson 95% interval of the hit rate
    noise_band: float
    judged_at_k: float
    unjudged_in_top_k: int
    hit_rate_upper: float
    missing_scored: int  # scored queries the arm did not answer
    at_k: dict[int, Means | None]  # None: a k the stored depth cannot show
    depth: int
    recall_at_depth: float
    named_means: dict[str, float]


@dataclass(frozen=True)
class PairedFigures:
    """B against A over one set of scored queries: each arm's means and the paired table."""

    a: Means
    b: Means
    paired: Paired
    mcnemar_p: float
    reconciles: bool  # the table's cells reproduce both hit rates
    regressions_with_unjudged: int  # A hit, B miss, with an unjudged id in B's top k


@dataclass(frozen=True)
class FrozenFigures:
    """The same numbers on the frozen labels alone (docs/labels.md "Label amendments")."""

    paired: PairedFigures
    before: np.ndarray  # each query's outcome code on the frozen labels
    changed: np.ndarray  # the query indices whose outcome the amendments changed, ascending


@dataclass(frozen=True)
class OriginFigures:
    part: OriginPart
    paired: PairedFigures  # McNemar's exact p


@dataclass(frozen=True)
class OverlapGroupFigures:
    name: str  # "all", "origin:<name>", "hits", "misses"
    body: Quartiles
    header: Quartiles
    header_above_body: int


@dataclass(frozen=True)
class OverlapFigures:
    """The lexical overlap's distributions; `reason`: why it was not measured ("" when it was)."""

    reason: str
    groups: tuple[OverlapGroupFigures, ...]  # "all", then one per origin
    by_arm: tuple[tuple[OverlapGroupFigures, ...], tuple[OverlapGroupFigures, ...]]  # hits, misses


@dataclass(frozen=True)
class HoldoutFigures:
    split: QuerySplit
    paired: PairedFigures  # over the held-out queries
    noise_band: tuple[float, float]  # √(p(1−p)/n) of each arm's held-out hit rate


@dataclass(frozen=True)
class GateVerdicts:
    """A gate file judged on this evaluation (core/gate/apply.py), in the file's order."""

    path: Path
    floors: list[Floor]
    measures: list[MeasureVerdict]
    nothing_evaluated: str | None  # why it evaluated nothing (it then fails)
    checks: list[Check]  # `gate.noise` (with floors) and `gate.mde`


@dataclass(frozen=True)
class Results:
    """Every result a report shows for `snapshot`, in the core's types."""

    snapshot: Snapshot
    cutoffs: list[int]  # each arm is shown at these
    arms: tuple[ArmFigures, ArmFigures]
    paired: PairedFigures
    frozen: FrozenFigures
    decision: str  # the measure slices and tenants are compared on
    slices: dict[str, list[Slice]]
    slice_tests: dict[str, SliceComparisons]
    tenants: Tenants | None
    tenant_tests: SliceComparisons | None  # Benjamini–Hochberg across the tenants
    ranks: Ranks
    hints: FlipHints | None  # the flips' cause hints; None: no flip rows asked for
    holdout: HoldoutFigures | None  # None: no tuning split named
    origins: tuple[OriginFigures, ...]
    quote: Quote | None
    overlap: OverlapFigures | None  # None: not asked for
    cost: Cost
    answers: Answers | None
    compare: dict[str, MeasureTest]  # each named measure, B against A
    queries: pa.Table | None  # the per-query table, when asked for
    unjudged_same_depth: tuple[int, int, int] | None
    gate: GateVerdicts | None
    checks: tuple[Check, ...]  # every check, errors first: the snapshot's, overlap's, cost's, gate's
    notices: tuple[str, ...]

    @property
    def ev(self) -> Evaluation:
        return self.snapshot.ev

    @property
    def labels(self) -> LabelState:
        return self.snapshot.labels


def shown_cutoffs(ev: Evaluation) -> list[int]:
    """The cut-offs each arm is shown at: every k asked for and each arm's own k, ascending."""
    return sorted(set(ev.cutoffs) | {arm.run.k for arm in ev.arms if arm.run.k is not None})


def _arm(ev: Evaluation, arm: Arm, ks: list[int]) -> ArmFigures:
    m = ev.means(arm)
    return ArmFigures(
        means=m,
        wilson=ev.wilson(arm),
        noise_band=ev.noise_band(arm),
        judged_at_k=ev.judged_at_k(arm),
        unjudged_in_top_k=ev.unjudged_in_top_k(arm),
        hit_rate_upper=ev.hit_rate_upper(arm),
        missing_scored=int((ev.scored & ~arm.present).sum()),
        at_k=ev.at_k(arm, ks),
        depth=ev.depth(arm),
        recall_at_depth=ev.recall_at_depth(arm),
        named_means=ev.named_means(arm),
    )


def _paired(
    p: Paired, a: Means, b: Means, regressions_with_unjudged: int, mcnemar_p: float | None = None
) -> PairedFigures:
    return PairedFigures(
        a,
        b,
        p,
        p.mcnemar_p if mcnemar_p is None else mcnemar_p,
        p.reconciles(a.hit_rate, b.hit_rate),
        regressions_with_unjudged,
    )


def _frozen_regressions_with_unjudged(ev: Evaluation, labels: LabelState, regressions: np.ndarray) -> int:
    """Of the frozen view's regressions, those with an id in B's top k the frozen labels leave
    unjudged: the ones unjudged now, and those whose top k holds a pair judged since."""
    unjudged = regressions & (ev.b.unjudged_top > 0)
    rest = set(ev.ids_where(regressions & ~unjudged))
    judged_since: dict[str, set[str]] = {}
    for qid, chunk in labels.decided:
        if qid in rest:
            judged_since.setdefault(qid, set()).add(chunk)
    b, k = ev.b, ev.k
    found = sum(
        1 for qid, chunks in judged_since.items() if chunks & set(b.retrieved(ev.query_index(qid))[:k])
    )
    return int(unjudged.sum()) + found


def _frozen(ev: Evaluation, labels: LabelState) -> FrozenFigures:
    ja, jb, scored = ev.frozen_view()
    ma, mb = means(ja, scored), means(jb, scored)
    before = outcome_codes(ja.hit, jb.hit, scored)
    regressions = scored & ja.hit & ~jb.hit
    return FrozenFigures(
        _paired(
            paired(ja.hit, jb.hit, scored), ma, mb, _frozen_regressions_with_unjudged(ev, labels, regressions)
        ),
        before,
        np.flatnonzero(before != ev.outcomes),
    )


def _holdout(ev: Evaluation) -> HoldoutFigures | None:
    """The numbers on the held-out queries alone (core/checks/holdout.py); None without a split."""
    qs = query_split(ev)
    if qs is None:
        return None
    ma, mb, p = held_out_means(ev, qs)
    a, b = ev.a, ev.b
    unjudged_regressions = a.judged.hit & ~b.judged.hit & (b.unjudged_top > 0)
    return HoldoutFigures(
        qs,
        _paired(p, ma, mb, int((unjudged_regressions & qs.held_out).sum())),
        (noise_band(ma.hit_rate, ma.n), noise_band(mb.hit_rate, mb.n)),
    )


def _origin(ev: Evaluation, part: OriginPart) -> OriginFigures:
    p = part.paired
    regressions = part.mask & ev.a.judged.hit & ~ev.b.judged.hit & (ev.b.unjudged_top > 0)
    exact = mcnemar_exact(p.a_hit_b_miss, p.a_miss_b_hit)
    return OriginFigures(part, _paired(p, part.a, part.b, int(regressions.sum()), exact))


def _group(
    name: str, body: np.ndarray, header: np.ndarray, known: np.ndarray, mask: np.ndarray
) -> OverlapGroupFigures:
    m = mask & known
    return OverlapGroupFigures(
        name, spread(body[mask]), spread(header[mask]), int((header[m] > body[m]).sum())
    )


def _overlap(
    ev: Evaluation, corpus: Corpus | None, parts: list[OriginPart]
) -> tuple[OverlapFigures, list[Check]]:
    """The overlap's distributions (all, per origin, per arm's hits and misses) and its checks."""
    reason = ""
    if corpus is None:
        reason = "no corpus given (or it cannot be opened)"
    elif ev.query_column("text").null_count == ev.n:
        reason = "no query text given"
    if reason:
        return OverlapFigures(reason, (), ((), ())), overlap_checks(None, [], reason)
    assert corpus is not None
    o = overlap(ev, corpus)
    scored = ev.scored
    groups = [("all", scored)] + [(f"origin:{p.origin}", p.mask) for p in parts]
    if len(groups) == 2:  # one origin: the same queries as the blend
        groups = groups[:1]
    a, b = (
        (
            _group("hits", o.body, o.header, o.known, scored & arm.judged.hit),
            _group("misses", o.body, o.header, o.known, scored & ~arm.judged.hit),
        )
        for arm in ev.arms
    )
    figures = OverlapFigures(
        "", tuple(_group(name, o.body, o.header, o.known, mask) for name, mask in groups), (a, b)
    )
    labelled = [("queries" if name == "all" else f"queries of origin {name[7:]!r}", m) for name, m in groups]
    return figures, overlap_checks(o, labelled)


def _compare(snapshot: Snapshot) -> dict[str, MeasureTest]:
    """Each named measure, B against A, over the scored queries paired by query id, with the spec's
    tests, correction, rounds and seed (docs/measures.md "Paired tests per measure"); {} when none is
    named (scipy is imported only then)."""
    ev, spec = snapshot.ev, snapshot.spec
    if not ev.measures:
        return {}
    scored = ev.scored
    ids = np.asarray(ev.query_ids.filter(pa.array(scored)).to_numpy(zero_copy_only=False))
    a = {name: v[scored] for name, v in ev.named(ev.a).items()}
    b = {name: v[scored] for name, v in ev.named(ev.b).items()}
    return compare_all(a, b, spec.tests, spec.correction, spec.rounds, spec.seed, query_ids=ids)


def judge_gate(
    ev: Evaluation,
    path: Path,
    gate: GateFile,
    cut: dict[str, list[Slice]] | None = None,
    found: Sequence[Check] = (),
) -> GateVerdicts:
    """The gate file `gate` (read from `path`) judged on `ev`; `cut`: the slices already computed,
    by key (core/gate/apply.py `judge_floors`); `found`: the evaluation's checks (a truth that fails
    its own fails the gate: `apply.nothing_evaluated_reason`)."""
    floors = apply.judge_floors(ev, gate.floors, path, cut)
    measured = apply.judge_measures(ev, gate.measures)
    checks = (apply.noise_checks(floors) if gate.floors else []) + apply.mde_checks(measured)
    why = apply.nothing_evaluated_reason(ev, floors, measured, found)
    return GateVerdicts(path, floors, measured, why, checks)


def report_corpus(snapshot: Snapshot) -> Corpus | None:
    """The corpus the spec names, opened for the flips' text hints (None: none named, or it cannot
    be opened: the hints that need no text are still given)."""
    if snapshot.inputs.chunks is not None:  # given as a table
        return snapshot.inputs.chunks
    path = snapshot.spec.corpus
    if path is None:
        return None
    try:  # the evaluation's corpus ids index the look-ups too (when they are the cache's)
        return open_corpus(path, fmt=snapshot.spec.corpus_format, known=snapshot.inputs.corpus)
    except (InputError, OSError):
        return None


def compute(
    snapshot: Snapshot,
    floor: float = DEFAULT_FLOOR,
    corpus: Corpus | None | Literal["open"] = "open",
    cost_corpus: Corpus | None | Literal["same"] = "same",
    flips: bool = True,
    overlap_corpus: Corpus | None | Literal["same", "skip"] = "same",
    per_query: bool = False,
    gate: Path | None = None,
) -> Results:
    """Every result of `snapshot`'s report. `floor`: the tenants' hit-rate floor. `corpus`: the
    chunks the flips' text hints read; "open" opens the one the spec names; None gives only the
    hints that need no text. `cost_corpus`: the chunks the cost section reads heading paths from
    ("same": `corpus`'s). `flips`: False leaves the flips' hints out (the app's screens list flips
    from the session, not from the report). `overlap_corpus`: the chunks the lexical overlap and its
    checks read ("same": `corpus`'s, when one is asked for; "skip": not measured, no check: the
    app's corpus is still loading). `per_query`: with the per-query table. `gate`: a gate file
    (FLOORS.toml), read and judged on the slices computed here; a bad one raises InputError."""
    limits = None if gate is None else read_gate(gate)
    return _results(snapshot, floor, corpus, cost_corpus, flips, overlap_corpus, per_query, gate, limits)


def open_results(
    spec: Spec,
    k: Cutoffs = None,
    mode: LabelMode = LabelMode.AMENDED,
    apply_stale: bool = False,
    floor: float = DEFAULT_FLOOR,
    per_query: bool = False,
    gate: Path | None = None,
) -> Results:
    """`triage report`'s results: the gate file read first (a bad one fails before any input is
    read), `spec`'s inputs read and judged (`open_snapshot`), then every result (`compute`).

    The scores are read only by measures by name (their order), the ids' fingerprints after the
    judging only by them and the corpus: without any named here or in the gate, they are let go
    once checked and once judged (docs/benchmarks.md "Memory at a million queries")."""
    limits = None if gate is None else read_gate(gate)
    named = _names_measures(spec, limits)
    snapshot = open_snapshot(spec, k, mode, apply_stale, scores=named, fingerprints=named)
    return _results(snapshot, floor, "open", "same", True, "same", per_query, gate, limits)


def _names_measures(spec: Spec, gate: GateFile | None) -> bool:
    """Whether the spec or the gate names a measure: only then are the runs' scores (their order)
    and the ids' fingerprints read after the judging."""
    return bool(spec.measures) or (gate is not None and bool(gate.measures))


def _results(
    snapshot: Snapshot,
    floor: float,
    corpus: Corpus | None | Literal["open"],
    cost_corpus: Corpus | None | Literal["same"],
    flips: bool,
    overlap_corpus: Corpus | None | Literal["same", "skip"],
    per_query: bool,
    gate: Path | None,
    limits: GateFile | None,
) -> Results:
    ev = snapshot.ev
    chunks = report_corpus(snapshot) if corpus == "open" else corpus
    priced = chunks if cost_corpus == "same" else cost_corpus
    c = cost(ev, priced)
    measure = decision(ev)
    cut = all_slices(ev)
    tests = {key: slice_comparisons(ev, rows, measure) for key, rows in cut.items()}
    t = tenants(ev, floor)
    # Benjamini–Hochberg across the tenants, as across a key's slices
    tenant_tests = None if t is None else slice_comparisons(ev, [x.slice for x in t.rows], measure)
    ks = shown_cutoffs(ev)
    parts = origins(ev)
    overlap_figures: OverlapFigures | None = None
    overlap_found: list[Check] = []
    if overlap_corpus == "same" and corpus is None:  # not asked for
        overlap_corpus = "skip"
    if overlap_corpus != "skip":
        overlap_figures, overlap_found = _overlap(
            ev, chunks if overlap_corpus == "same" else overlap_corpus, parts
        )
    found = [*snapshot.input_checks, *snapshot.own_checks]
    verdicts = None if gate is None or limits is None else judge_gate(ev, gate, limits, cut, found)
    arms = (_arm(ev, ev.a, ks), _arm(ev, ev.b, ks))
    frozen, holdout, rank_figures = _frozen(ev, snapshot.labels), _holdout(ev), ranks(ev)
    hints = flip_hint_table(ev, ev.flips, chunks) if flips else None
    compared, table = _compare(snapshot), query_table(ev) if per_query else None
    by_origin, answered = tuple(_origin(ev, p) for p in parts), answers(ev)
    both = _paired(ev.paired(), arms[0].means, arms[1].means, ev.regressions_with_unjudged())
    same_depth = ev.unjudged_same_depth()
    # Read last: the corpus check may still be under way beside this work (`open_snapshot`).
    gate_checks = [] if verdicts is None else verdicts.checks
    checks = worst_first([*snapshot.checks, *overlap_found, *check_cost(ev, c), *gate_checks])
    return Results(
        snapshot=snapshot,
        cutoffs=ks,
        arms=arms,
        paired=both,
        frozen=frozen,
        decision=measure.name,
        slices=cut,
        slice_tests=tests,
        tenants=t,
        tenant_tests=tenant_tests,
        ranks=rank_figures,
        hints=hints,
        holdout=holdout,
        origins=by_origin,
        quote=quote(parts),
        overlap=overlap_figures,
        cost=c,
        answers=answered,
        compare=compared,
        queries=table,
        unjudged_same_depth=same_depth,
        gate=verdicts,
        checks=tuple(checks),
        notices=(
            *snapshot.inputs.notices,
            *(x.notice for x in (chunks, cost_corpus) if isinstance(x, Corpus) and x.notice),
        ),
    )


def suggested_floors(
    spec: Spec,
    k: Cutoffs,
    mode: LabelMode,
    apply_stale: bool,
    se: float,
    min_n: int,
    gate: Path | None = None,
) -> str:
    """`triage report --suggest-floors`: a FLOORS.toml proposed from `spec`'s numbers alone (no
    corpus check runs). A `gate` file given beside is read as a report reads it, so a bad one is
    refused the same way, though none is applied."""
    named = _names_measures(spec, None if gate is None else read_gate(gate))
    snapshot = open_snapshot(spec, k, mode, apply_stale, corpus_check=False, scores=named, fingerprints=named)
    ev = snapshot.ev
    what = f"k = {ev.k}, labels {snapshot.labels.describe()}"
    return floors_toml(suggest_floors(ev, se, min_n), se, min_n, what)
