"""The report as Markdown, for pasting into a review. Data text is escaped for table cells."""

from __future__ import annotations

from triage.core.text.sanitize import one_line
from triage.report import cells
from triage.report.model import Report

LEVEL = {"error": "❌ error", "warning": "⚠️ warning", "ok": "ok"}


def cell(value: object, width: int = 200) -> str:
    """Data as one table cell: control characters visible, pipes and markup characters escaped."""
    text = one_line("" if value is None else value, width)
    for ch in "\\|`*_[]<>":
        text = text.replace(ch, "\\" + ch)
    return text


def prose(value: object) -> str:
    """A sentence of the report as Markdown: as `cell`, but never cut short."""
    return cell(value, 4000)


def indented(value: str) -> str:
    """A row name; one indented by leading spaces is a sub-row naming a query (data text)."""
    body = value.lstrip(" ")
    return value if body == value else value[: len(value) - len(body)] + cell(body)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out + [""]


def _gate(r: Report) -> list[str]:
    g = r.gate
    if not g:
        return []
    failed = g.broken
    out = [f"**Gate**: {len(failed)} of {len(g.floors)} floors broken by B.", ""] if g.floors else []
    empty = cells.nothing_evaluated(g)
    if empty is not None:
        out = [f"**Gate**: {prose(empty)}.", "", *out]
    shown = failed + [f for f in g.floors if f.holds and f.noisy]
    if shown:
        rows = [
            [
                cell(name),
                *figures,
                ("below" if not f.holds else "holds") + (", fires on noise" if f.noisy else ""),
            ]
            for f, (name, *figures) in zip(shown, map(cells.floor_cells, shown), strict=True)
        ]
        out += _table([*cells.FLOOR_HEAD, ""], rows)
    if g.measures:
        out += [f"**Gate**: {prose(cells.measure_gate_line(g))}.", ""]
        out += _table(
            [*cells.MEASURE_GATE_HEAD, ""],
            [[cell(c) for c in cells.measure_gate_cells(m)] + [cells.measure_verdict(m)] for m in g.measures],
        )
    return out


def _holdout(r: Report) -> list[str]:
    rows, line = cells.holdout_rows(r), cells.holdout_line(r)
    if rows is None or line is None:
        return []
    return ["## Held-out documents", "", *_table(cells.HOLDOUT_HEAD, rows), prose(line), ""]


def _numbers(r: Report) -> list[str]:
    """Metrics, each arm at each k, the paired table, frozen beside amended."""
    a, b, p = r.arms.a, r.arms.b, r.paired
    out = ["## Metrics", ""]
    out += _table(["metric", f"A {cell(a.name)}", f"B {cell(b.name)}", "B − A"], cells.metric_rows(r))
    out += [prose(cells.metrics_note(r)), ""]
    if r.compare:
        out += [f"**{cells.compare_title(r)}**", ""]
        out += _table(cells.compare_head(r), [[cell(x) for x in row] for row in cells.compare_rows(r)])
        notes = cells.compare_notes(r)
        out += [*(f"- {prose(note)}" for note in notes), ""] if notes else []
    at_k = cells.at_k_rows(r)
    if at_k is not None:
        names = {"a": a.name, "b": b.name}
        out += [f"**{cells.at_k_title(r)}**", ""]
        out += _table(
            cells.at_k_head(r),
            [
                [
                    f"{side.upper()} {cell(names[side])}" if metric == cells.AT_K_METRICS[0] else "",
                    metric,
                    *row,
                ]
                for side, (metric, *row) in at_k
            ],
        )
    out += ["## Paired outcomes", ""]
    out += _table(["", "B hit", "B miss"], cells.paired_rows(p))
    out += [f"n = {p.n}; {cells.mcnemar(p)}; flips: {cells.flip_counts(p)}.", ""]
    out += [f"{cells.unjudged_regressions(p, r.k)} (each a possible false regression).", ""]
    states = cells.label_state_rows(r)
    if states:
        out += [f"## Frozen labels beside amended ({cell(r.labels.state)})", ""]
        out += _table(["", "frozen", "amended"], [[indented(x), y, z] for x, y, z in states])
    return out


def _origins(r: Report) -> list[str]:
    """Per query origin beside the blend, which figure to quote, and the lexical overlap."""
    out = []
    rows = cells.origin_rows(r)
    if rows:
        out += ["## By query origin", ""]
        out += _table(cells.ORIGIN_HEAD, [[cell(name), *figures] for name, *figures in rows])
        if r.origin_quote is not None:
            out += [f"**{prose(cells.quote_line(r.origin_quote))}**", ""]
    o = r.overlap
    if o is not None and not o.available:
        out += [prose(cells.overlap_unavailable(o)), ""]
    elif o is not None:
        out += ["## Lexical overlap with the gold", ""]
        out += _table(
            cells.OVERLAP_HEAD, [[cell(name), *figures] for name, *figures in cells.overlap_rows(o)]
        )
        out += [prose(cells.OVERLAP_NOTE), ""]
    return out


def _answers(r: Report) -> list[str]:
    """Evidence × answer per arm, and answer accuracy beside the hit rate."""
    out: list[str] = []
    x = r.answers
    if x is not None:
        out += ["## Evidence × answer", ""]
        for side, arm_cells in x.cells.items():
            name = cell((r.arms.a if side == "a" else r.arms.b).name)
            if arm_cells is None:
                out += [f"{side.upper()} {name}: no answer_correct column.", ""]
                continue
            out += [f"**{side.upper()} {name}**", ""]
            out += _table(cells.ANSWER_HEAD, cells.answer_rows(arm_cells))
        out += [cell(cells.answer_change(x), 1000) + ".", ""]
    return out


def _cost(r: Report) -> list[str]:
    """What the change cost, each figure with its source, its checks, and latency by slice."""
    out: list[str] = []
    c = r.cost
    if c is None:
        return out
    out += ["## What the change cost", ""]
    rows = [[*row[:4], cell(row[4]), cell(row[5])] for row in cells.cost_rows(c, r.k)]
    out += _table(cells.COST_HEAD, rows)
    out += [prose(cells.COST_NOTE), ""]
    for check in cells.cost_checks(r.checks):
        out += [f"- {LEVEL[check.level]} `{check.code}`: {cell(check.message, 1000)}"]
    out += [""]
    latency = cells.latency_rows(c)
    if latency:
        out += ["**Latency by slice** (ms; each slice's own percentiles)", ""]
        out += _table(["key", *cells.LATENCY_HEAD], [[key, cell(row[0]), *row[1:]] for key, row in latency])
    return out


def _flips(r: Report) -> list[str]:
    shown, hidden = cells.capped_flips(r.flips)
    out = ["## Flips (hit→miss first)", ""]
    head = cells.flip_head(r)
    data = {"query", "text", "tenant", "plan A", "plan B"}  # data text: escaped
    rows = []
    for i, f in enumerate(shown, 1):
        row = cells.flip_cells(i, f, r.k)
        rows.append([cell(row[h]) if h in data else row[h] for h in head])
    names = {"gold A": "gold rank A", "gold B": "gold rank B", "unjudged A/B": f"unjudged in top {r.k} A/B"}
    out += _table([names.get(h, h) for h in head], rows)
    if hidden:
        out += [f"… {hidden} more flips (`--format json` lists them all).", ""]
    return out


def _ranks(r: Report) -> list[str]:
    """B's wins, ties and losses per query, then the both-hit queries whose gold fell (capped)."""
    x = r.ranks
    out = [f"## Per query, B against A (n = {x.n})", ""]
    out += _table(cells.WTL_HEAD, cells.win_tie_loss_rows(x, r.k))
    shown, hidden = cells.capped_drops(x.drops)
    out += ["## Rank drops (both arms hit, the gold lower in B)", "", f"{cells.drops_line(x, r.k)}:", ""]
    out += _table(
        [*cells.DROP_HEAD, "text"],
        [[cell(c) for c in [*cells.drop_cells(i, d), cells.drop_text(d)]] for i, d in enumerate(shown, 1)],
    )
    if hidden:
        out += [f"… and {hidden} more (`--format json` lists them all).", ""]
    return out + [cell(cells.histogram_line(x.histogram)), ""]


def _slices(r: Report) -> list[str]:
    out = []
    t = r.tenants
    if t is not None:
        out += [f"## Tenants, {t.order.label}", "", cell(cells.tenant_summary(t)), ""]
        out += _table(
            cells.TENANT_HEAD,
            [
                [cell(c) for c in cells.tenant_cells(i, x, t.floor)]
                for i, x in enumerate(t.rows[: cells.SLICE_CAP], 1)
            ],
        )
    for key, rows in r.slices.items():
        part = r.partition[key]
        out += [
            f"## By {key}",
            "",
            f"n sums to {part.sum} of {part.scored} scored"
            + ("." if part.ok else ": these slices do not partition the scored queries."),
            "",
        ]
        out += _table(
            cells.SLICE_HEAD, [[cell(c) for c in cells.slice_cells(s)] for s in rows[: cells.SLICE_CAP]]
        )
    if r.slices or t is not None:
        out += [prose(cells.LEGEND), ""]
        if line := cells.decision_line(r):
            out += [prose(line), ""]
    return out


def render(r: Report) -> str:
    a, b = r.arms.a, r.arms.b
    out = [f"# triage report: {cell(a.name)} → {cell(b.name)} at k = {r.k}", ""]
    out += _gate(r)
    out += [
        f"Labels: {cells.labels_line(r)}. Queries: {r.n_queries}, scored {r.n_scored}, "
        f"unlabelled {r.n_unlabelled}; missing from A {len(r.missing.a)}, "
        f"from B {len(r.missing.b)}.",
        "",
        "## Checks",
        "",
    ]
    out += _table(
        ["level", "code", "message"],
        [[LEVEL[level], f"`{code}`", prose(message)] for level, code, message in cells.check_rows(r.checks)],
    )
    out += (
        _numbers(r) + _origins(r) + _holdout(r) + _answers(r) + _flips(r) + _ranks(r) + _slices(r) + _cost(r)
    )
    return "\n".join(out)
