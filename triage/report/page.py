"""The report's page: its title's cut-off, the sections its inputs cannot fill, and every section
after the title, in the order the Markdown and HTML reports show them, each made of its own
module's blocks (`sections/`)."""

from __future__ import annotations

from triage.report.blocks import Para, Section
from triage.report.model import Report
from triage.report.sections import answers, cost, flips, slices, tenants
from triage.report.sections.answers import answer_blocks
from triage.report.sections.checks import check_blocks
from triage.report.sections.cost import cost_blocks, cost_recorded
from triage.report.sections.flips import flip_blocks, text_unfilled
from triage.report.sections.gate import gate_blocks
from triage.report.sections.holdout import holdout_blocks
from triage.report.sections.labels import label_blocks, labels_line
from triage.report.sections.measures import compare_blocks
from triage.report.sections.metrics import at_k_blocks, metric_blocks
from triage.report.sections.origins import origin_blocks
from triage.report.sections.paired import paired_blocks
from triage.report.sections.ranks import rank_blocks
from triage.report.sections.slices import slice_blocks
from triage.report.sections.tenants import tenant_blocks


def at_k(r: Report) -> str:
    """The title's cut-off: "at k = 10", with "(the default: no k given)" when nothing named one."""
    defaulted = any(c.code == "k.default" for c in r.checks)
    return f"at k = {r.k}" + (" (the default: no k given)" if defaulted else "")


def unfilled(r: Report) -> dict[str, str]:
    """Each section the inputs cannot fill, by its id, as one line naming the input that would
    fill it, a sentence (every output shows it in the section's place, not an empty table)."""
    out = {}
    if text_unfilled(r.flips):
        out["text"] = flips.TEXT_UNFILLED
    if r.tenants is None:
        out["tenants"] = tenants.UNFILLED
    if not r.slices:
        out["slices"] = slices.unfilled_slices()
    if r.answers is None:
        out["answers"] = answers.UNFILLED
    if r.cost is None or not cost_recorded(r.cost):
        out["cost"] = cost.UNFILLED
    return out


def _summary(r: Report) -> Section:
    """The labels and the queries in a line (the HTML shows them as its summary table)."""
    line = (
        f"Labels: {labels_line(r)}. Queries: {r.n_queries}, scored {r.n_scored}, "
        f"{r.not_scored}; missing from A {len(r.missing.a)}, from B {len(r.missing.b)}."
    )
    return Section("summary", [Para(line, own=True)])


def sections(r: Report) -> list[Section]:
    """Every section after the title, in the order both renderers show them."""
    return [
        Section("gate", gate_blocks(r.gate)),
        _summary(r),
        Section("checks", check_blocks(r.checks)),
        Section("measures", [*metric_blocks(r), *compare_blocks(r), *at_k_blocks(r)]),
        Section("paired", [*paired_blocks(r), *label_blocks(r)]),
        Section("origins", origin_blocks(r)),
        Section("holdout", holdout_blocks(r)),
        Section("answers", answer_blocks(r)),
        Section("flips", flip_blocks(r)),
        Section("ranks", rank_blocks(r)),
        Section("tenants", tenant_blocks(r)),
        Section("slices", slice_blocks(r)),
        Section("cost", cost_blocks(r)),
    ]
