"""The review as Markdown (CommonMark with GitHub tables), for pasting into a pull request.

Every data string is first made visible (`core.text.sanitize.visible`: control and invisible characters
as tokens), then escaped so no Markdown or HTML in it is interpreted: backslash before each of
\\ ` * _ [ ] < > # | ~ & $ @, before the colon of "://" and the dot of "www." (GitHub's bare
links), and before a leading -, +, = or the dot of a leading "1."; line
breaks inside one line (headings, table cells, paragraphs) become spaces. A multi-line text (a
gold chunk's opening) is a block quote, one escaped line each.
"""

from __future__ import annotations

import re

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

_SPECIAL = re.compile(r"[\\`*_\[\]<>#|~&$@]")
_AUTOLINK = re.compile(r"(?<=\w):(?=//)|(?<=\bwww)\.", re.I)  # what GitHub would turn into a link
_LEADING_MARK = re.compile(r"^[-+=]")
_LEADING_NUMBER = re.compile(r"^(\d+)([.)])")


def md(value: object, cap: int = TEXT_CAP, start: bool = False) -> str:
    """Data as literal Markdown on one line; `start`: it opens a line of a block quote or a list
    item, where a leading "-", "+", "=" or "1." would begin a list or a heading."""
    s = " ".join(visible(value, cap=cap, newlines=False).split())
    s = _SPECIAL.sub(lambda m: "\\" + m.group(), s)
    s = _AUTOLINK.sub(lambda m: "\\" + m.group(), s)
    if start:
        s = _LEADING_MARK.sub(lambda m: "\\" + m.group(), s)
        s = _LEADING_NUMBER.sub(r"\1\\\2", s)
    return s


def md_cell(value: object) -> str:
    return md(value, CELL_CAP)


def block_quote(text: str) -> list[str]:
    """A multi-line data text as a block quote, each line literal, hard line breaks between."""
    lines = [md(line, start=True) for line in visible(text).splitlines()] or [""]
    return [f"> {line}\\" for line in lines[:-1]] + [f"> {lines[-1]}", ""]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def _head(r: ReviewDocument) -> list[str]:
    a, b = md(r.arms.a), md(r.arms.b)
    out = [f"# triage review: {a} → {b} at k = {r.k}", ""]
    out += [f"Labels: {md(r.label_state)}. Arms: A {a}, B {b}; k = {r.k}. triage {md(r.triage)}.", ""]
    out += [scope_line(r), ""]
    if r.corpus is None:
        out += [f"Note: {NO_CORPUS}.", ""]
    out += ["## Checks not ok", ""]
    if r.checks:
        out += _table(
            ["level", "code", "message"],
            [[str(c.level), md_cell(c.code), md_cell(c.message)] for c in r.checks],
        )
    else:
        out += ["Every check is ok.", ""]
    p = r.paired
    out += ["## Paired outcomes", ""]
    out += _table(["", "B hit", "B miss"], paired_rows(p))
    out += [f"n = {p.n}; {mcnemar(p)}; flips: {flip_counts(p)}.", ""]
    return out


def _gold(i: int, n: int, g: GoldChunk, k: int, corpus: bool) -> list[str]:
    ranks = f"rank A {cells.rank(g.rank.a, k)}, B {cells.rank(g.rank.b, k)}"
    out = [f"**Gold {i} of {n}:** {md(g.chunk_id)} — {md(passage_mark(g))} — {ranks}", ""]
    if not corpus:
        return out
    if not g.in_corpus:
        return [*out, f"({NOT_IN_CORPUS})", ""]
    out += [f"Heading path: {md(g.header) if g.header is not None else cells.NONE}", ""]
    out += block_quote(g.opening or "")
    if g.cut_off is not None:
        out += ["Past the embedding window (cut off where the heading path is prepended):", ""]
        out += block_quote(g.cut_off)
    return out


def _arm(side: str, arm: ArmTop, k: int, corpus: bool) -> list[str]:
    out = [f"**{side} {md(arm.name)}:** {md(arm_line(arm, k))}", ""]
    if not arm.rows:
        return [*out, "(nothing retrieved)", ""]
    rows = [
        [str(p.rank), md_cell(p.chunk_id), md_cell(header(p, corpus)), md_cell(passage_mark(p))]
        for p in arm.rows
    ]
    return out + _table(["rank", "chunk id", "heading path", "labels"], rows)


def _query(i: int, q: Query, r: ReviewDocument) -> list[str]:
    k, corpus = r.k, r.corpus is not None
    out = [f"## {i}. {md(q.query_id)} · {cells.outcome(q.direction)}", ""]
    out += [f"**Query:** {md(q.text) if q.text is not None else cells.NONE}", ""]
    if q.fields:
        out += _table(["field", "value"], [[md_cell(n), md_cell(field_value(n, v))] for n, v in q.fields])
    for j, g in enumerate(q.golds, 1):
        out += _gold(j, len(q.golds), g, k, corpus)
    out += _arm("A", q.arms.a, k, corpus) + _arm("B", q.arms.b, k, corpus)
    if q.hints:
        out += ["**Hints:**", ""]
        out += [f"- {md(h.kind, start=True)} (arm {h.arm.upper()}): {md(h.evidence)}" for h in q.hints] + [""]
    else:
        out += [f"**Hints:** {NO_HINTS}", ""]
    if q.verdicts:
        out += ["**Verdicts:**", ""]
        for v in q.verdicts:
            reviewer, cause, note = verdict_line(v)
            out.append(f"- {md(reviewer, start=True)}: {md(cause)}" + (f" — {md(note)}" if note else ""))
        out.append("")
    else:
        out += [f"**Verdicts:** {NO_VERDICTS}", ""]
    return out


def render_review_markdown(r: ReviewDocument) -> str:
    out = _head(r)
    for i, q in enumerate(r.queries, 1):
        out += _query(i, q, r)
    return "\n".join(out)
