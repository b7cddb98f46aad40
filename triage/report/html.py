"""The report as one self-contained HTML page (`triage report --format html`): the summary, the
checks, the measures, the paired table, three charts drawn as inline SVG (`report.svg`), the flips
and the tenants. An inline stylesheet, no script, no external resource: the review export's
Content-Security-Policy says so to the browser too.

Figures come from `cells`, as in the text and Markdown reports, so the page cannot disagree with
them. Every data string (names, ids, query text, check messages, tenants, plans) is made visible
and escaped exactly as the review export does (`review_html.e`): none of it is ever markup.
"""

from __future__ import annotations

from triage.core.measures.paired import Outcome
from triage.report import cells, svg
from triage.report.model import Report
from triage.report.review_html import STYLE, e, page_start

CELL = 200  # characters of a data cell
PROSE = 4000  # characters of a sentence holding data (a check's message)

PAGE_STYLE = """
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.h2m td:first-child { border-left: 4px solid #b3261e; }
tr.m2h td:first-child { border-left: 4px solid #2a7d2a; }
.level-error { color: #b3261e; font-weight: bold; } .level-warning { color: #8a5a00; font-weight: bold; }
figure { margin: .6rem 0 1.2rem; } figcaption { color: #444; max-width: 48rem; }
svg { max-width: 100%; height: auto; display: block; }
.summary td:first-child { font-weight: bold; }
#checks .id { overflow-wrap: normal; white-space: nowrap; }
"""


def _table(
    head: list[str], rows: list[list[str]], numeric: set[int] | None = None, classes: list[str] | None = None
) -> list[str]:
    """A table of cells already escaped; `numeric`: the columns right-aligned; `classes`: per row."""
    num = numeric or set()
    td = lambda i, tag: f'<{tag} class="num">' if i in num else f"<{tag}>"  # noqa: E731
    out = ["<table>", "<tr>" + "".join(f"{td(i, 'th')}{h}</th>" for i, h in enumerate(head)) + "</tr>"]
    for j, row in enumerate(rows):
        cls = f' class="{classes[j]}"' if classes and classes[j] else ""
        out.append(f"<tr{cls}>" + "".join(f"{td(i, 'td')}{c}</td>" for i, c in enumerate(row)) + "</tr>")
    return [*out, "</table>"]


def _title(r: Report) -> str:
    return f"triage report: {r.arms.a.name} → {r.arms.b.name} at k = {r.k}"


def _summary(r: Report) -> list[str]:
    a, b = r.arms.a, r.arms.b
    rows = [
        ["arm A", f'{e(a.name, CELL)} <span class="muted id">{e(a.path, CELL)}</span>'],
        ["arm B", f'{e(b.name, CELL)} <span class="muted id">{e(b.path, CELL)}</span>'],
        ["k", str(r.k) + (f" (also {', '.join(map(str, r.ks[1:]))})" if len(r.ks) > 1 else "")],
        ["labels", e(cells.labels_line(r), CELL)],
        ["queries", f"{r.n_queries}: scored {r.n_scored}, unlabelled {r.n_unlabelled}"],
        ["missing", f"from A {len(r.missing.a)}, from B {len(r.missing.b)}"],
        ["triage", e(r.triage)],
    ]
    out = ['<section id="summary">', f"<h1>{e(_title(r), CELL)}</h1>", '<table class="summary">']
    out += [f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows]
    out.append("</table>")
    g = r.gate
    if g is not None:
        empty = cells.nothing_evaluated(g)
        if empty is not None:
            out.append(f"<p><strong>Gate:</strong> {e(empty, PROSE)}.</p>")
        out.append(f"<p><strong>Gate:</strong> {len(g.broken)} of {len(g.floors)} floors broken by B.</p>")
        if g.broken:
            rows = [[e(x) for x in cells.floor_cells(f)] for f in g.broken]
            out += _table(cells.FLOOR_HEAD, rows, numeric={1, 2, 3, 5})
    return [*out, "</section>"]


def _checks(r: Report) -> list[str]:
    out = ['<section id="checks">', "<h2>Checks</h2>"]
    rows = [
        [
            f'<span class="level-{e(level)}">{e(level)}</span>',
            f'<span class="id">{e(code)}</span>',
            e(msg, PROSE),
        ]
        for level, code, msg in cells.check_rows(r.checks)
    ]
    out += _table(["level", "code", "message"], rows) if rows else ["<p>No checks.</p>"]
    return [*out, "</section>"]


def _measures(r: Report) -> list[str]:
    a, b = r.arms.a, r.arms.b
    out = ['<section id="measures">', f"<h2>Measures at k = {r.k}</h2>"]
    head = ["metric", f"A {e(a.name, CELL)}", f"B {e(b.name, CELL)}", "B − A"]
    out += _table(head, [[e(c) for c in row] for row in cells.metric_rows(r)], numeric={1, 2, 3})
    out.append(f'<p class="muted">{e(cells.metrics_note(r), PROSE)}</p>')
    at_k = cells.at_k_rows(r)
    if at_k is not None:
        names = {"a": a.name, "b": b.name}
        rows = [
            [
                f"{side.upper()} {e(names[side], CELL)}" if metric == cells.AT_K_METRICS[0] else "",
                e(metric),
                *(e(c) for c in row),
            ]
            for side, (metric, *row) in at_k
        ]
        width = len(cells.at_k_head(r))
        out += [f"<h3>{e(cells.at_k_title(r))}</h3>"]
        out += _table([e(h) for h in cells.at_k_head(r)], rows, numeric=set(range(2, width)))
    return [*out, "</section>"]


def _paired(r: Report) -> list[str]:
    p = r.paired
    out = ['<section id="paired">', "<h2>Paired outcomes</h2>"]
    out += _table(
        ["", "B hit", "B miss"], [[e(c) for c in row] for row in cells.paired_rows(p)], numeric={1, 2}
    )
    out.append(f"<p>n = {p.n}; {e(cells.mcnemar(p))}; flips: {e(cells.flip_counts(p))}.</p>")
    out.append(f"<p>{e(cells.unjudged_regressions(p, r.k))} (each a possible false regression).</p>")
    states = cells.label_state_rows(r)
    if states:
        out.append(f"<h3>Frozen labels beside amended ({e(r.labels.state, CELL)})</h3>")
        out += _table(
            ["", "frozen", "amended"], [[e(c, CELL) for c in row] for row in states], numeric={1, 2}
        )
    return [*out, "</section>"]


# -- the charts ------------------------------------------------------------------------------------


def _figure(chart: str, caption: str) -> list[str]:
    return ["<figure>", chart, f"<figcaption>{caption}</figcaption>", "</figure>"]


def _rank_chart(r: Report) -> list[str]:
    h = r.ranks.histogram
    line = e(cells.histogram_line(h), PROSE)
    every = [c for c, _ in cells.histogram_rows(h)]
    if not every:
        return [f"<p>Gold-rank change: no scored query has a gold id in both stored lists. {line}.</p>"]
    parts = "; ".join(f"{cells.change(c)}: {h.changes.get(c, 0)}" for c in every if h.changes.get(c, 0))
    desc = f"Queries per gold-rank change A − B ({parts}). {line}."
    return _figure(svg.rank_histogram("chart-ranks", h.changes, every, desc), line + ".")


def _delta_chart(r: Report) -> list[str]:
    """The decision measure, hit rate at k, per query: B − A is −1 (hit→miss), 0 or +1 (miss→hit),
    so the paired cells give every query's difference, sorted."""
    p, k = r.paired, r.k
    same = p.both_hit + p.both_miss
    runs = [(-1.0, p.a_hit_b_miss), (0.0, same), (1.0, p.a_miss_b_hit)]
    mean = (p.a_miss_b_hit - p.a_hit_b_miss) / p.n if p.n else None
    words = (
        f"{p.n} scored queries: {p.a_hit_b_miss} at −1 (hit→miss), {same} at 0, "
        f"{p.a_miss_b_hit} at +1 (miss→hit); mean difference {cells.signed(mean)}; {cells.mcnemar(p)}"
    )
    title = f"Per-query Δ hit rate@{k}, B − A, sorted"
    chart = svg.sorted_deltas("chart-delta", title, runs, e(words, PROSE), f"Δ hit@{k}")
    return _figure(chart, e(words, PROSE) + ".")


def _tenant_chart(r: Report) -> list[str]:
    t = r.tenants
    if t is None:
        return []
    shown = t.rows[: cells.SLICE_CAP]
    marks = [
        svg.TenantMark(
            x.tenant, x.n, x.hit_rate_a, x.hit_rate_b, x.wilson_low_b, x.wilson_high_b, x.below(t.floor)
        )
        for x in shown
    ]
    each = "; ".join(
        f"{cells.text(x.tenant)} (n {x.n}): "
        f"B {cells.rate_interval(x.hit_rate_b, x.wilson_low_b, x.wilson_high_b)}, "
        f"A {cells.rate(x.hit_rate_a)}" + (", below the floor" if x.below(t.floor) else "")
        for x in shown
    )
    more = f" (the first {len(shown)} of {len(t.rows)}, {t.order.label})" if len(t.rows) > len(shown) else ""
    title = f"Tenants against the floor {cells.floor(t.floor)}{more}"
    desc = e(f"{cells.tenant_summary(t)}. {each}.", PROSE * 4)
    chart = svg.tenant_floor("chart-tenants", marks, t.floor, desc, e(title))
    return _figure(chart, e(cells.tenant_summary(t), PROSE) + ".")


def _charts(r: Report) -> list[str]:
    return [
        '<section id="charts">',
        "<h2>Charts</h2>",
        *_rank_chart(r),
        *_delta_chart(r),
        *_tenant_chart(r),
        "</section>",
    ]


# -- rows --------------------------------------------------------------------------------------------


def _flips(r: Report) -> list[str]:
    shown, hidden = cells.capped_flips(r.flips)
    head = cells.flip_head(r)
    names = {"gold A": "gold rank A", "gold B": "gold rank B", "unjudged A/B": f"unjudged in top {r.k} A/B"}
    out = ['<section id="flips">', "<h2>Flips (hit→miss first)</h2>"]
    if not shown:
        return [*out, "<p>No flips.</p>", "</section>"]
    rows = [
        [e(c, CELL) for c in (cells.flip_cells(i, f, r.k)[h] for h in head)] for i, f in enumerate(shown, 1)
    ]
    classes = ["h2m" if f.direction is Outcome.HIT_TO_MISS else "m2h" for f in shown]
    numeric = {i for i, h in enumerate(head) if h in ("#", "gold A", "gold B")}
    out += _table([e(names.get(h, h)) for h in head], rows, numeric, classes)
    if hidden:
        out.append(f"<p>… {hidden} more flips (<code>--format json</code> lists them all).</p>")
    return [*out, "</section>"]


def _tenants(r: Report) -> list[str]:
    t = r.tenants
    if t is None:
        return []
    out = [
        '<section id="tenants">',
        f"<h2>Tenants, {e(t.order.label)}</h2>",
        f"<p>{e(cells.tenant_summary(t), PROSE)}.</p>",
    ]
    rows = [
        [e(c, CELL) for c in cells.tenant_cells(i, x, t.floor)]
        for i, x in enumerate(t.rows[: cells.SLICE_CAP], 1)
    ]
    out += _table([e(h) for h in cells.TENANT_HEAD], rows, numeric={0, 2, 3, 4, 5, 7, 8})
    if len(t.rows) > cells.SLICE_CAP:
        more = len(t.rows) - cells.SLICE_CAP
        out.append(f"<p>… {more} more tenants (<code>--format json</code> lists them all).</p>")
    out.append(f'<p class="muted">{e(cells.LEGEND, PROSE)}</p>')
    return [*out, "</section>"]


def render(r: Report) -> str:
    """The whole page, ending in a newline."""
    out = [
        *page_start(e(_title(r), CELL), STYLE + PAGE_STYLE),
        *_summary(r),
        *_checks(r),
        *_measures(r),
        *_paired(r),
        *_charts(r),
        *_flips(r),
        *_tenants(r),
    ]
    return "\n".join([*out, "</body>", "</html>", ""])
