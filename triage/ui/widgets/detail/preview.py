"""The preview: the selected row of a list in full (the query's content words highlighted), or —
with no row selected — what `g` needs."""

from __future__ import annotations

from textual.widgets import Static

from triage.core.text.words import words
from triage.ui.literal import Part, heading, line, marked
from triage.ui.widgets.detail.text import clip
from triage.ui.widgets.redraw import OneLayout, redraw
from triage.workspace.detail import ArmView, Judgement, QueryDetail

TEXT = 700  # characters of the selected chunk shown here (enter opens the whole chunk)
SELECT = "select a retrieved passage in arm A's or B's list first (tab), then g marks it gold"


class Preview(OneLayout, Static):
    """Always about the query on screen: `shown` names what it shows, (query id, side, rank) for
    a row, (query id, "", 0) for the hint."""

    shown: tuple[str, str, int] | None = None

    def show_row(self, d: QueryDetail, arm: ArmView, index: int, corpus_note: str) -> None:
        """Row `index` of `arm`: id, whether gold, heading path, the start of its text."""
        r = arm.rows[index]
        if r.judgement is Judgement.GOLD:
            who = f" (amended by {d.amended[r.chunk_id]}; u undoes yours)" if r.chunk_id in d.amended else ""
            gold = (f"  ★ gold, grade {r.grade}{who}", "$text-warning bold")
        elif r.judgement is Judgement.NOT_RELEVANT:
            by = d.not_relevant.get(r.chunk_id)
            who = f"by {by}" if by else "in the frozen labels"
            gold = (f"  ✗ judged not relevant ({who})   g marks it gold", "$text-muted")
        elif r.chunk_id in d.suggestions:
            twin, sim = d.suggestions[r.chunk_id]
            gold = (f"  ≈ likely also gold: {sim:.0f}% like gold {twin}   g marks it gold", "$text-warning")
        else:
            gold = ("  · unjudged (counted as not relevant)   g marks it gold, G with a note", "$text-muted")
        if r.chunk is None:
            body: list[Part] = [(f"text unavailable: {corpus_note}", "$text-muted")]
        else:
            query = words(d.text)
            body = [
                heading(r.chunk.header, query, "(no header)"),
                "\n",
                marked(clip(r.chunk.text, TEXT), query),
            ]
        self.shown = (d.query_id, arm.side, r.rank)
        redraw(
            self,
            line(
                (f"{arm.side.upper()} #{r.rank}  ", "bold"),
                (r.chunk_id, "bold"),
                gold,
                "   enter: full text\n",
                *body,
            ),
        )

    def show_hint(self, d: QueryDetail, where: str) -> None:
        """No row is selected (`where` says what has the focus): say what g would need."""
        self.shown = (d.query_id, "", 0)
        first = f"{len(d.golds)} gold" if d.golds else "no gold"
        redraw(
            self,
            line(
                (f"{d.query_id}  ", "bold"),
                (f"{where}: no retrieved passage selected", "$text-warning"),
                "\n",
                (SELECT, "$text-muted"),
                "\n",
                (f"{first} for this query; enter on the gold pane opens the first in full", "$text-muted"),
            ),
        )
