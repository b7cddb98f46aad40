"""The report as Markdown, for pasting into a review: `sections` rendered, every string escaped
for Markdown (control characters visible, pipes and markup characters escaped)."""

from __future__ import annotations

from triage.core.text.sanitize import one_line
from triage.report.blocks import Block, Heading, Items, Para, Table
from triage.report.model import Report
from triage.report.page import at_k, sections

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


def _cell(value: str, column: int, t: Table) -> str:
    if column == t.level:
        return LEVEL.get(value, cell(value))
    if column in t.code:
        return f"`{one_line(value, 200).replace('`', '')}`"
    if column in t.own:
        return value.replace("|", "\\|")
    body = value.lstrip(" ")  # a sub-row (a query under its group) keeps its indent
    return value[: len(value) - len(body)] + (prose(body) if column in t.prose else cell(body))


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        text = b.text if b.own else cell(b.text)
        return [f"## {text}" if b.level == 2 else f"**{text}**", ""]
    if isinstance(b, Para):
        text = b.text if b.own else prose(b.text)
        text = f"**{text}**" if b.strong else text
        return [f"**{b.lead}**: {text}" if b.lead else text, ""]
    if isinstance(b, Items):
        return [*(f"- {prose(line)}" for line in b.lines), ""]
    out = ["| " + " | ".join(cell(h) for h in b.head) + " |", "|" + "|".join("---" for _ in b.head) + "|"]
    out += ["| " + " | ".join(_cell(c, i, b) for i, c in enumerate(row)) + " |" for row in b.rows]
    return [*out, ""]


def render_markdown(r: Report) -> str:
    a, b = r.arms.a, r.arms.b
    out = [f"# triage report: {cell(a.name)} → {cell(b.name)} {at_k(r)}", ""]
    for section in sections(r):
        for block in section.blocks:
            out += _block(block)
    return "\n".join(out)
