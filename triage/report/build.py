"""The report's model filled from computed results: `report_of` maps what the workspace computed
from a snapshot (workspace/results.py `Results`, the gate's verdicts included) into the `model.Report`,
each section by its own module's builder (`sections/`), and computes nothing (undefined numbers
become None). `build` is the one call for a snapshot: the workspace's results, mapped."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from triage import __version__
from triage.core.checks.overlap import GENERATED_LIKE
from triage.core.views.slices import DEFAULT_FLOOR
from triage.report.arms import ByArm
from triage.report.model import Report, TruthSection
from triage.report.sections.answers import answers_section
from triage.report.sections.cost import cost_section
from triage.report.sections.flips import flips_of
from triage.report.sections.gate import gate_section
from triage.report.sections.holdout import holdout_section
from triage.report.sections.labels import frozen_view, labels_section
from triage.report.sections.measures import MeasureComparison
from triage.report.sections.metrics import arm_section, k_cells_of
from triage.report.sections.origins import origins_of, overlap_section
from triage.report.sections.paired import paired_section
from triage.report.sections.queries import QueryTable
from triage.report.sections.ranks import ranks_section
from triage.report.sections.slices import slices_of
from triage.report.sections.tenants import TenantOrder, tenants_section
from triage.workspace.results import compute

if TYPE_CHECKING:
    from triage.core.inputs.corpus import Corpus
    from triage.workspace.results import Results
    from triage.workspace.snapshot import Snapshot


def report_of(r: Results, tenant_order: TenantOrder = TenantOrder.HIT_RATE) -> Report:
    """The report of computed results `r`; tenants listed in `tenant_order`."""
    ev, labels = r.ev, r.labels
    scored = ev.scored
    n_scored = int(scored.sum())
    slice_rows, partition = slices_of(r, n_scored)
    arms = ByArm(arm_section(ev.a, r.arms[0]), arm_section(ev.b, r.arms[1]))
    frozen = frozen_view(ev, r.frozen)
    by_origin, origin_quote = origins_of(r.origins, r.quote)
    report = Report(
        triage=__version__,
        k=ev.k,
        n_queries=ev.n,
        n_scored=n_scored,
        n_unlabelled=int((~scored).sum()),
        unlabelled=tuple(ev.ids_where(~scored)),
        missing=ByArm(tuple(ev.ids_where(~ev.a.present)), tuple(ev.ids_where(~ev.b.present))),
        labels=labels_section(labels, arms, frozen),
        arms=arms,
        paired=paired_section(r.paired),
        frozen=frozen,
        k_cells=k_cells_of(arms),
        slices=slice_rows,
        partition=partition,
        tenants=tenants_section(r.tenants, r.tenant_tests, r.decision),
        flips=flips_of(ev, r.hints),
        ranks=ranks_section(ev, r.ranks),
        checks=r.checks,
        gate=None if r.gate is None else gate_section(r.gate, _truth_rate(r)),
        ks=ev.cutoffs,
        holdout=holdout_section(r.holdout),
        origins=by_origin,
        origin_quote=origin_quote,
        overlap=None if r.overlap is None else overlap_section(r.overlap, GENERATED_LIKE),
        cost=cost_section(r.cost),
        answers=answers_section(r.answers),
        notices=r.notices,
        compare={name: MeasureComparison.of(c) for name, c in r.compare.items()},
        queries=None if r.queries is None else QueryTable(r.queries),
        unjudged_same_depth=r.unjudged_same_depth,
        truth=_truth(r),
    )
    return report if tenant_order is TenantOrder.HIT_RATE else report.with_tenant_order(tenant_order)


def _truth_rate(r: Results) -> str | None:
    """What the gate's floors read against exact truth (the decision measure); None: the hit rate."""
    return r.decision if r.ev.truth is not None else None


def _truth(r: Results) -> TruthSection | None:
    """The exact truth judged against (None: other labels)."""
    t = r.ev.truth
    if t is None:
        return None
    f = t.folder
    no_eligible = int((t.listed & (t.n_eligible == 0)).sum())
    return TruthSection(f.path, f.k, f.metric, f.tolerance, r.decision, no_eligible)


def build(
    snapshot: Snapshot,
    floor: float = DEFAULT_FLOOR,
    corpus: Corpus | None | Literal["open"] = "open",
    cost_corpus: Corpus | None | Literal["same"] = "same",
    flips: bool = True,
    overlap_corpus: Corpus | None | Literal["same", "skip"] = "same",
    per_query: bool = False,
    gate: Path | None = None,
) -> Report:
    """The report of `snapshot`: the workspace's results (workspace/results.py `compute`, which
    says what each argument asks for), mapped."""
    return report_of(compute(snapshot, floor, corpus, cost_corpus, flips, overlap_corpus, per_query, gate))
