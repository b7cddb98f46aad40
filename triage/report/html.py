"""The report as one self-contained HTML page (`triage report --format html`): a summary table,
every section of the Markdown report (`sections`: the checks, the measures and their paired tests,
the paired table, the flips, wins, ties and losses, the rank drops, the slices, the tenants, the
cost, …), and three charts drawn as inline SVG (`report.svg`). An inline stylesheet, no script, no
external resource: the review export's Content-Security-Policy says so to the browser too.

Figures come from `cells`, as in the text and Markdown reports, so the page cannot disagree with
them. Every data string (names, ids, query text, check messages, tenants, plans) is made visible
and escaped exactly as the review export does (`review.html.e`): none of it is ever markup.
"""

from __future__ import annotations

import re

from triage.report import cells, svg
from triage.report.blocks import Block, Heading, Items, Para, Section, Table
from triage.report.model import Report
from triage.report.page import at_k, sections
from triage.report.review.html import STYLE, e, page_start
from triage.report.sections.labels import labels_line
from triage.report.sections.paired import mcnemar
from triage.report.sections.ranks import change, histogram_line, histogram_rows
from triage.report.sections.tenants import tenant_summary

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
    return f"triage report: {r.arms.a.name} → {r.arms.b.name} {at_k(r)}"


def _summary(r: Report) -> list[str]:
    a, b = r.arms.a, r.arms.b
    rows = [
        ["arm A", f'{e(a.name, CELL)} <span class="muted id">{e(a.path, CELL)}</span>'],
        ["arm B", f'{e(b.name, CELL)} <span class="muted id">{e(b.path, CELL)}</span>'],
        ["k", str(r.k) + (f" (also {', '.join(map(str, r.ks[1:]))})" if len(r.ks) > 1 else "")],
        ["labels", e(labels_line(r), CELL)],
        ["queries", f"{r.n_queries}: scored {r.n_scored}, {r.not_scored}"],
        ["missing", f"from A {len(r.missing.a)}, from B {len(r.missing.b)}"],
        ["triage", e(r.triage)],
    ]
    out = ['<section id="summary">', '<table class="summary">']
    out += [f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows]
    out.append("</table>")
    return [*out, "</section>"]


def _cell(value: str, column: int, t: Table) -> str:
    if column == t.level:
        return f'<span class="level-{e(value)}">{e(value)}</span>'
    if column in t.code:
        return f'<span class="id">{e(value, CELL)}</span>'
    return e(value, PROSE if column in t.prose else CELL)


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return [f"<h{b.level}>{e(b.text, CELL)}</h{b.level}>"]
    if isinstance(b, Para):
        text = re.sub(r"`([^`]*)`", r"<code>\1</code>", e(b.text, PROSE)) if b.own else e(b.text, PROSE)
        text = f"<strong>{text}</strong>" if b.strong else text
        text = f"<strong>{e(b.lead)}:</strong> {text}" if b.lead else text
        return [f'<p class="muted">{text}</p>' if b.note else f"<p>{text}</p>"]
    if isinstance(b, Items):
        return ["<ul>", *(f"<li>{e(line, PROSE)}</li>" for line in b.lines), "</ul>"]
    rows = [[_cell(c, i, b) for i, c in enumerate(row)] for row in b.rows]
    return _table([e(h, CELL) for h in b.head], rows, set(b.numeric), b.classes)


def _section(section: Section) -> list[str]:
    if not section.blocks:
        return []
    return [f'<section id="{section.id}">', *(x for b in section.blocks for x in _block(b)), "</section>"]


# -- the charts ------------------------------------------------------------------------------------


def _figure(chart: str, caption: str) -> list[str]:
    return ["<figure>", chart, f"<figcaption>{caption}</figcaption>", "</figure>"]


def _rank_chart(r: Report) -> list[str]:
    h = r.ranks.histogram
    line = e(histogram_line(h), PROSE)
    every = [c for c, _ in histogram_rows(h)]
    if not every:
        return [f"<p>Gold-rank change: no scored query has a gold id in both stored lists. {line}.</p>"]
    parts = "; ".join(f"{change(c)}: {h.changes.get(c, 0)}" for c in every if h.changes.get(c, 0))
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
        f"{p.a_miss_b_hit} at +1 (miss→hit); mean difference {cells.signed(mean)}; {mcnemar(p)}"
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
    desc = e(f"{tenant_summary(t)}. {each}.", PROSE * 4)
    chart = svg.tenant_floor("chart-tenants", marks, t.floor, desc, e(title))
    return _figure(chart, e(tenant_summary(t), PROSE) + ".")


def _charts(r: Report) -> list[str]:
    return [
        '<section id="charts">',
        "<h2>Charts</h2>",
        *_rank_chart(r),
        *_delta_chart(r),
        *_tenant_chart(r),
        "</section>",
    ]


def render_html(r: Report) -> str:
    """The whole page, ending in a newline: the summary, then every section the Markdown report
    has (`sections`), the charts after the paired outcomes."""
    out = [*page_start(e(_title(r), CELL), STYLE + PAGE_STYLE), f"<h1>{e(_title(r), CELL)}</h1>"]
    for section in sections(r):
        out += _summary(r) if section.id == "summary" else _section(section)
        if section.id == "paired":
            out += _charts(r)
    return "\n".join([*out, "</body>", "</html>", ""])
