"""The Markdown and HTML reports' sections, once, as blocks: a heading, a paragraph, a list, a
table. `markdown` and `html` each render the same list (`sections`), so the page carries every
section the Markdown carries, in the same order; the HTML adds its summary table and its charts.

Every string is plain text. The HTML escapes all of it (`e`). The Markdown escapes data (names,
ids, query text, messages) and leaves triage's own words and figures as they are: a block says
which of its strings hold no data (`own`), and `code` spans in backticks in those are code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triage.core.measures.paired import Outcome
from triage.report import cells
from triage.report.columns import (
    SLICES,
    FlipLine,
    cells_of,
    flip_columns,
    tenant_columns,
    tenant_lines,
    titles,
)
from triage.report.model import Report


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2  # 2: a section; 3: a table's title within one
    own: bool = True  # triage's own words and figures, no data


@dataclass(frozen=True)
class Para:
    text: str
    strong: bool = False
    note: bool = False  # a legend or footnote (the HTML greys it)
    own: bool = False  # triage's own words and figures, no data (`code` spans shown as code)
    lead: str = ""  # a word in bold before the text ("Gate")


@dataclass(frozen=True)
class Items:
    lines: list[str]


@dataclass(frozen=True)
class Table:
    head: list[str]
    rows: list[list[str]]
    numeric: frozenset[int] = frozenset()  # columns of figures (the HTML aligns them right)
    own: frozenset[int] = frozenset()  # columns of triage's own words and figures, no data
    classes: list[str] | None = None  # per row (the HTML marks hit→miss and miss→hit)
    code: frozenset[int] = frozenset()  # columns of codes (`k.default`)
    level: int | None = None  # the column holding a check's level
    prose: frozenset[int] = frozenset()  # columns of sentences, never cut short (a check's message)


Block = Heading | Para | Items | Table


@dataclass(frozen=True)
class Section:
    id: str  # the HTML's section id; stable
    blocks: list[Block] = field(default_factory=list)


def _nums(head: list[str], first: int = 1) -> frozenset[int]:
    return frozenset(range(first, len(head)))


def _all(head: list[str]) -> frozenset[int]:
    return frozenset(range(len(head)))


def _but(head: list[str], data: int) -> frozenset[int]:
    """Every column but `data` (a name or id) holds triage's own words and figures."""
    return _all(head) - {data}


def _gate(r: Report) -> Section:
    g = r.gate
    out: list[Block] = []
    if not g:
        return Section("gate", out)
    failed = g.broken
    empty = cells.nothing_evaluated(g)
    if empty is not None:
        out.append(Para(f"{empty}.", lead="Gate"))
    if g.floors:
        out.append(Para(f"{len(failed)} of {len(g.floors)} floors broken by B.", own=True, lead="Gate"))
    shown = failed + [f for f in g.floors if f.holds and f.noisy]
    if shown:
        verdict = {True: "holds", False: "below"}
        rows = [
            [*cells.floor_cells(f), verdict[f.holds] + (", fires on noise" if f.noisy else "")] for f in shown
        ]
        head = [*cells.FLOOR_HEAD, ""]
        out.append(Table(head, rows, frozenset({1, 2, 3, 5}), _but(head, 0)))
    if g.measures:
        out.append(Para(f"{cells.measure_gate_line(g)}.", lead="Gate"))
        head = [*cells.MEASURE_GATE_HEAD, ""]
        rows = [[*cells.measure_gate_cells(m), cells.measure_verdict(m)] for m in g.measures]
        out.append(Table(head, rows, frozenset(range(1, len(head) - 1))))
    return Section("gate", out)


def _summary(r: Report) -> Section:
    """The labels and the queries in a line (the HTML shows them as its summary table)."""
    line = (
        f"Labels: {cells.labels_line(r)}. Queries: {r.n_queries}, scored {r.n_scored}, "
        f"unlabelled {r.n_unlabelled}; missing from A {len(r.missing.a)}, from B {len(r.missing.b)}."
    )
    return Section("summary", [Para(line, own=True)])


def _checks(r: Report) -> Section:
    rows = [[level, code, message] for level, code, message in cells.check_rows(r.checks)]
    return Section("checks", [Heading("Checks"), _checks_table(rows) if rows else Para("No checks.")])


def _checks_table(rows: list[list[str]]) -> Table:
    """(level, code, message) rows: the level marked, the code as code, the message never cut."""
    return Table(["level", "code", "message"], rows, code=frozenset({1}), level=0, prose=frozenset({2}))


def _measures(r: Report) -> Section:
    """Metrics at k, the paired tests per measure, each arm at each k."""
    a, b = r.arms.a, r.arms.b
    head = ["metric", f"A {a.name}", f"B {b.name}", "B − A"]
    out: list[Block] = [Heading("Metrics"), Table(head, cells.metric_rows(r), _nums(head), _all(head))]
    out.append(Para(cells.metrics_note(r)))
    if r.compare:
        head = cells.compare_head(r)
        out += [Heading(cells.compare_title(r), 3), Table(head, cells.compare_rows(r), _nums(head))]
        if notes := cells.compare_notes(r):
            out.append(Items(notes))
    at_k = cells.at_k_rows(r)
    if at_k is not None:
        names = {"a": a.name, "b": b.name}
        head = cells.at_k_head(r)
        rows = [
            [f"{side.upper()} {names[side]}" if metric == cells.AT_K_METRICS[0] else "", metric, *row]
            for side, (metric, *row) in at_k
        ]
        out += [Heading(cells.at_k_title(r), 3), Table(head, rows, _nums(head, 2), _but(head, 0))]
    return Section("measures", out)


def _paired(r: Report) -> Section:
    p = r.paired
    out: list[Block] = [Heading("Paired outcomes")]
    out.append(Table(["", "B hit", "B miss"], cells.paired_rows(p), frozenset({1, 2}), frozenset({0, 1, 2})))
    out.append(Para(f"n = {p.n}; {cells.mcnemar(p)}; flips: {cells.flip_counts(p)}.", own=True))
    out.append(Para(f"{cells.unjudged_regressions(r)} (each a possible false regression).", own=True))
    if why := cells.unjudged_why(r):
        out.append(Para(why[:1].upper() + why[1:] + ".", note=True, own=True))
    states = cells.label_state_rows(r)
    if states:
        out.append(Heading(f"Frozen labels beside amended ({r.labels.state})", own=False))
        rows = [list(row) for row in states]
        out.append(Table(["", "frozen", "amended"], rows, frozenset({1, 2}), frozenset({1, 2})))
    return Section("paired", out)


def _origins(r: Report) -> Section:
    """Per query origin beside the blend, which figure to quote, and the lexical overlap."""
    out: list[Block] = []
    rows = cells.origin_rows(r)
    if rows:
        head = cells.ORIGIN_HEAD
        out += [Heading("By query origin"), Table(head, rows, _nums(head), _but(head, 0))]
        if r.origin_quote is not None:
            out.append(Para(cells.quote_line(r.origin_quote), strong=True))
    o = r.overlap
    if o is not None and not o.available:
        out.append(Para(cells.overlap_unavailable(o)))
    elif o is not None:
        out += [Heading("Lexical overlap with the gold")]
        head = cells.OVERLAP_HEAD
        out += [Table(head, cells.overlap_rows(o), _nums(head), _but(head, 0))]
        out.append(Para(cells.OVERLAP_NOTE, note=True))
    return Section("origins", out)


def _holdout(r: Report) -> Section:
    rows, line = cells.holdout_rows(r), cells.holdout_line(r)
    if rows is None or line is None:
        return Section("holdout")
    head = cells.HOLDOUT_HEAD
    return Section(
        "holdout", [Heading("Held-out documents"), Table(head, rows, _nums(head), _all(head)), Para(line)]
    )


def _answers(r: Report) -> Section:
    """Evidence × answer per arm, and answer accuracy beside the hit rate."""
    x = r.answers
    if x is None:
        return Section("answers", [Para(cells.unfilled(r)["answers"], own=True)])
    out: list[Block] = [Heading("Evidence × answer")]
    for side, arm_cells in x.cells.items():
        name = (r.arms.a if side == "a" else r.arms.b).name
        if arm_cells is None:
            out.append(Para(f"{side.upper()} {name}: no answer_correct column."))
            continue
        head = cells.ANSWER_HEAD
        out += [
            Heading(f"{side.upper()} {name}", 3, own=False),
            Table(head, cells.answer_rows(arm_cells), own=_all(head)),
        ]
    out.append(Para(cells.answer_change(x) + "."))
    return Section("answers", out)


def _flips(r: Report) -> Section:
    shown, hidden = cells.capped_flips(r.flips)
    out: list[Block] = [Heading("Flips (hit→miss first)")]
    if not shown:
        return Section("flips", [*out, Para("No flips.")])
    columns = flip_columns(r)
    head = titles(columns)
    rows = [cells_of(columns, FlipLine(i, f, r.k)) for i, f in enumerate(shown, 1)]
    names = {"gold A": "gold rank A", "gold B": "gold rank B", "unjudged A/B": f"unjudged in top {r.k} A/B"}
    numeric = frozenset(i for i, h in enumerate(head) if h in ("#", "gold A", "gold B"))
    classes = ["h2m" if f.direction is Outcome.HIT_TO_MISS else "m2h" for f in shown]
    own = frozenset(i for i, h in enumerate(head) if h not in ("query", "text", "tenant", "plan A", "plan B"))
    out.append(Table([names.get(h, h) for h in head], rows, numeric, own, classes))
    if hidden:
        out.append(Para(f"… {hidden} more flips (`--format json` lists them all).", own=True))
    if "text" in (missing := cells.unfilled(r)):
        out.append(Para(missing["text"], note=True, own=True))
    return Section("flips", out)


def _ranks(r: Report) -> Section:
    """B's wins, ties and losses per query, then the both-hit queries whose gold fell (capped)."""
    x = r.ranks
    out: list[Block] = [Heading(f"Per query, B against A (n = {x.n})")]
    out.append(
        Table(cells.WTL_HEAD, cells.win_tie_loss_rows(x, r.k), _nums(cells.WTL_HEAD), _all(cells.WTL_HEAD))
    )
    shown, hidden = cells.capped_drops(x.drops)
    out += [
        Heading("Rank drops (both arms hit, the gold lower in B)"),
        Para(f"{cells.drops_line(x, r.k)}:", own=True),
    ]
    head = cells.drop_head(r)
    rows = [cells.drop_row(i, d, head) for i, d in enumerate(shown, 1)]
    out += [Table(head, rows, frozenset({0}))] if rows else []
    if hidden:
        out.append(Para(f"… and {hidden} more (`--format json` lists them all).", own=True))
    return Section("ranks", [*out, Para(cells.histogram_line(x.histogram))])


def _tenants(r: Report) -> Section:
    t = r.tenants
    if t is None:
        return Section("tenants", [Para(cells.unfilled(r)["tenants"], own=True)])
    out: list[Block] = [Heading(f"Tenants, {t.order.label}"), Para(cells.tenant_summary(t))]
    shown = tenant_columns(t)
    rows = [cells_of(shown, x) for x in tenant_lines(t, cells.SLICE_CAP)]
    # the HTML aligns the counts and rates right; the interval, the selectivity and Δ q read as text
    numeric = [c.right and c.title not in ("B 95%", "sel.", "Δ q") for c in shown]
    out.append(Table(titles(shown), rows, frozenset(i for i, right in enumerate(numeric) if right)))
    if len(t.rows) > cells.SLICE_CAP:
        more = len(t.rows) - cells.SLICE_CAP
        out.append(Para(f"… {more} more tenants (`--format json` lists them all).", own=True))
    return Section("tenants", out if r.slices else [*out, *_legend(r)])


def _slices(r: Report) -> Section:
    if not r.slices:
        return Section("slices", [Para(cells.unfilled(r)["slices"], own=True)])
    out: list[Block] = []
    for key, rows in r.slices.items():
        part = r.partition[key]
        out.append(Heading(f"By {key}"))
        ok = "." if part.ok else ": these slices do not partition the scored queries."
        out.append(Para(f"n sums to {part.sum} of {part.scored} scored{ok}", own=True))
        out.append(Table(titles(SLICES), [cells_of(SLICES, s) for s in rows[: cells.SLICE_CAP]]))
    return Section("slices", [*out, *_legend(r)] if out else out)


def _legend(r: Report) -> list[Block]:
    """What the slice and tenant columns mean, and which slices moved beyond noise."""
    line = cells.decision_line(r)
    return [Para(cells.LEGEND, note=True), *([Para(line)] if line else [])]


def _cost(r: Report) -> Section:
    """What the change cost, each figure with its source, its checks, and latency by slice."""
    c = r.cost
    if c is None or not cells.cost_recorded(c):
        return Section("cost", [Para(cells.unfilled(r)["cost"], own=True)])
    out: list[Block] = [Heading("What the change cost")]
    out.append(Table(cells.COST_HEAD, cells.cost_rows(c, r.k), frozenset({1, 2, 3}), frozenset({0, 1, 2, 3})))
    out.append(Para(cells.COST_NOTE, note=True))
    found = cells.cost_checks(r.checks)
    if found:
        out.append(Heading("The cost's checks", 3))
        out.append(_checks_table([[check.level, check.code, check.message] for check in found]))
    latency = cells.latency_rows(c)
    if latency:
        out.append(Heading("Latency by slice (ms; each slice's own percentiles)", 3))
        head = ["key", *cells.LATENCY_HEAD]
        out.append(Table(head, [[key, *row] for key, row in latency], _nums(head, 2), _but(head, 1)))
    return Section("cost", out)


def sections(r: Report) -> list[Section]:
    """Every section after the title, in the order both renderers show them."""
    parts = (
        _gate,
        _summary,
        _checks,
        _measures,
        _paired,
        _origins,
        _holdout,
        _answers,
        _flips,
        _ranks,
        _tenants,
        _slices,
        _cost,
    )
    return [part(r) for part in parts]
