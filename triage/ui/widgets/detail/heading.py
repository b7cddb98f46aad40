"""The top of the detail: the title line, the status line (what a decision did) and the query."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from triage.core.measures.paired import Outcome
from triage.core.views.hints import Hint
from triage.ui.literal import line
from triage.ui.widgets.redraw import OneLayout, redraw
from triage.workspace.detail import QueryDetail

TAGS = {Outcome.HIT_TO_MISS: "$text-error", Outcome.MISS_TO_HIT: "$text-success"}


class DetailTitle(OneLayout, Static):
    """ "regression 2 of 6  q113  hit→miss   k = 5"."""

    def show(self, d: QueryDetail, label: str) -> None:
        tag = TAGS.get(d.outcome, "")
        redraw(
            self,
            line(
                (label, "bold $text-accent"),
                "  ",
                (d.query_id, "bold"),
                "  ",
                (d.outcome.label, f"bold {tag}".strip()),
                f"   k = {d.k}",
            ),
        )


class StatusLine(OneLayout, Static):
    """One line saying what the last key did (an amendment, or why nothing happened)."""

    def say(self, content: Content) -> None:
        redraw(self, content)

    def clear(self) -> None:
        redraw(self, Content())


class QueryText(OneLayout, Static):
    """The query's text and its slice fields."""

    def show(self, d: QueryDetail) -> None:
        fields = "   ".join(f"{k} {v}" for k, v in d.fields.items())
        redraw(
            self,
            line(
                ("query  ", "bold"),
                d.text if d.text is not None else "(no query text)",
                "\n",
                (fields, "$text-muted"),
            ),
        )


class HintLine(OneLayout, Static):
    """The likely cause of the loss: the first hint's kind and evidence, then the other kinds."""

    def show(self, hints: tuple[Hint, ...], note: str) -> None:
        """`note`: why text hints are missing (no corpus, or not loaded yet); empty when not. Said
        once: not again when a hint's evidence already says it."""
        said = any(note in h.evidence for h in hints)
        later = f"  ({note})" if note and not said else ""
        if not hints:
            redraw(self, line(("hint  ", "bold"), ("none: no rule explains it" + later, "$text-muted")))
            return
        first, *rest = hints
        also = f"   also: {', '.join(h.kind.value for h in rest)}" if rest else ""
        redraw(
            self,
            line(
                ("hint  ", "bold"),
                (f"{first.kind.value} ({first.arm.upper()})  ", "bold $text-warning"),
                first.evidence,
                (also + later, "$text-muted"),
            ),
        )
