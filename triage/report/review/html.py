"""The review as one self-contained HTML file: a small inline stylesheet, no script, no external
resource (a Content-Security-Policy says so to the browser too), readable printed.

Every data string is made visible (`core.text.sanitize.visible`) and then `html.escape`d, quotes too:
no tag, entity or attribute from the data is ever interpreted.
"""

from __future__ import annotations

import html

from triage.core.text.sanitize import visible
from triage.report import cells
from triage.report.review.document import (
    CELL_CAP,
    NO_CORPUS,
    NO_HINTS,
    NO_VERDICTS,
    NOT_IN_CORPUS,
    TEXT_CAP,
    ArmTop,
    GoldChunk,
    Query,
    ReviewDocument,
    arm_line,
    field_value,
    header,
    passage_mark,
    scope_line,
    verdict_line,
)
from triage.report.sections.paired import flip_counts, mcnemar, paired_rows
from triage.workspace.detail import Judgement

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; color: #111; background: #fff; max-width: 72rem;
  margin: 1.5rem auto; padding: 0 1rem; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; border-top: 1px solid #999; padding-top: .8rem; }
table { border-collapse: collapse; margin: .4rem 0 .8rem; }
th, td { border: 1px solid #bbb; padding: .15rem .45rem; text-align: left; vertical-align: top; }
th { background: #eee; }
.id { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; border-left: 3px solid #bbb;
  padding-left: .6rem; margin: .3rem 0 .8rem; }
.gold { background: #fff6d5; } .not-relevant { color: #666; }
.arms { display: flex; gap: 1.2rem; flex-wrap: wrap; } .arms > div { flex: 1 1 28rem; }
.muted { color: #555; }
@media print { body { margin: 0; max-width: none; font-size: 11px; }
  section { break-inside: avoid-page; } h2 { break-after: avoid; } .gold { background: none;
  font-weight: bold; } }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"


def e(value: object, cap: int = TEXT_CAP, newlines: bool = False) -> str:
    """Data as literal HTML text (quotes escaped: safe in an attribute too)."""
    return html.escape(visible(value, cap=cap, newlines=newlines), quote=True)


def _table(header: list[str], rows: list[list[str]], classes: list[str] | None = None) -> list[str]:
    """A table of cells already escaped; `classes`: one class per row ("" for none)."""
    out = ["<table>", "<tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    return [*out, "</table>"]


def _head(r: ReviewDocument) -> list[str]:
    a, b = e(r.arms.a), e(r.arms.b)
    out = [f"<h1>triage review: {a} → {b} at k = {r.k}</h1>"]
    out.append(f"<p>Labels: {e(r.label_state)}. Arms: A {a}, B {b}; k = {r.k}. triage {e(r.triage)}.</p>")
    out.append(f"<p>{e(scope_line(r))}</p>")
    if r.corpus is None:
        out.append(f"<p><strong>Note:</strong> {e(NO_CORPUS)}.</p>")
    out.append("<h2>Checks not ok</h2>")
    if r.checks:
        rows = [[e(c.level), f'<span class="id">{e(c.code)}</span>', e(c.message)] for c in r.checks]
        out += _table(["level", "code", "message"], rows)
    else:
        out.append("<p>Every check is ok.</p>")
    p = r.paired
    out.append("<h2>Paired outcomes</h2>")
    out += _table(["", "B hit", "B miss"], [[e(c) for c in row] for row in paired_rows(p)])
    out.append(f"<p>n = {p.n}; {e(mcnemar(p))}; flips: {e(flip_counts(p))}.</p>")
    return out


def _gold(i: int, n: int, g: GoldChunk, k: int, corpus: bool) -> list[str]:
    ranks = f"rank A {cells.rank(g.rank.a, k)}, B {cells.rank(g.rank.b, k)}"
    out = [
        f'<p><strong>Gold {i} of {n}:</strong> <span class="id">{e(g.chunk_id)}</span> — '
        f"{e(passage_mark(g))} — {e(ranks)}</p>"
    ]
    if not corpus:
        return out
    if not g.in_corpus:
        return [*out, f'<p class="muted">({e(NOT_IN_CORPUS)})</p>']
    out.append(f"<p>Heading path: {e(g.header) if g.header is not None else cells.NONE}</p>")
    out.append(f'<div class="text">{e(g.opening or "", newlines=True)}</div>')
    if g.cut_off is not None:
        out.append("<p>Past the embedding window (cut off where the heading path is prepended):</p>")
        out.append(f'<div class="text">{e(g.cut_off, newlines=True)}</div>')
    return out


def _arm(side: str, arm: ArmTop, k: int, corpus: bool) -> list[str]:
    out = ["<div>", f"<p><strong>{side} {e(arm.name)}:</strong> {e(arm_line(arm, k))}</p>"]
    if not arm.rows:
        return [*out, '<p class="muted">(nothing retrieved)</p>', "</div>"]
    rows = [
        [
            str(p.rank),
            f'<span class="id">{e(p.chunk_id, CELL_CAP)}</span>',
            e(header(p, corpus), CELL_CAP),
            e(passage_mark(p)),
        ]
        for p in arm.rows
    ]
    nothing = Judgement.NOT_RELEVANT
    classes = ["gold" if p.grade else "not-relevant" if p.judgement is nothing else "" for p in arm.rows]
    return [*out, *_table(["rank", "chunk id", "heading path", "labels"], rows, classes), "</div>"]


def _query(i: int, q: Query, r: ReviewDocument) -> list[str]:
    k, corpus = r.k, r.corpus is not None
    out = [
        "<section>",
        f'<h2>{i}. <span class="id">{e(q.query_id)}</span> · {e(cells.outcome(q.direction))}</h2>',
        f"<p><strong>Query:</strong> {e(q.text) if q.text is not None else cells.NONE}</p>",
    ]
    if q.fields:
        out += _table(
            ["field", "value"], [[e(n, CELL_CAP), e(field_value(n, v), CELL_CAP)] for n, v in q.fields]
        )
    for j, g in enumerate(q.golds, 1):
        out += _gold(j, len(q.golds), g, k, corpus)
    out += ['<div class="arms">', *_arm("A", q.arms.a, k, corpus), *_arm("B", q.arms.b, k, corpus), "</div>"]
    if q.hints:
        out += ["<p><strong>Hints:</strong></p>", "<ul>"]
        out += [f"<li>{e(h.kind)} (arm {e(h.arm.upper())}): {e(h.evidence)}</li>" for h in q.hints]
        out.append("</ul>")
    else:
        out.append(f"<p><strong>Hints:</strong> {NO_HINTS}</p>")
    if q.verdicts:
        out += ["<p><strong>Verdicts:</strong></p>", "<ul>"]
        for v in q.verdicts:
            reviewer, cause, note = verdict_line(v)
            out.append(f"<li>{e(reviewer)}: {e(cause)}" + (f" — {e(note)}" if note else "") + "</li>")
        out.append("</ul>")
    else:
        out.append(f"<p><strong>Verdicts:</strong> {NO_VERDICTS}</p>")
    return [*out, "</section>"]


def page_start(title: str, style: str = STYLE) -> list[str]:
    """A self-contained page's opening up to <body>: its Content-Security-Policy (no script, no
    request), `title` escaped, `style` inline. Shared by the review and the report pages."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>",
        f"<style>{style}</style>",
        "</head>",
        "<body>",
    ]


def render_review_html(r: ReviewDocument) -> str:
    out = [
        *page_start(e(f"triage review: {r.arms.a} → {r.arms.b} at k = {r.k}")),
        *_head(r),
    ]
    for i, q in enumerate(r.queries, 1):
        out += _query(i, q, r)
    return "\n".join([*out, "</body>", "</html>", ""])
