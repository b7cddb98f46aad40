"""The verdicts on the query shown: each reviewer's latest cause and note (hidden when none)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import Static

from triage.labels.verdicts import Verdict
from triage.ui.literal import line
from triage.ui.widgets.redraw import OneLayout, redraw


class VerdictLine(OneLayout, Static):
    """ "verdicts  ana: header-dominates — the header is 40 tokens · bo: label-error   disagree"
    (each reviewer's name, then the cause)."""

    def show(self, verdicts: Sequence[Verdict]) -> None:
        self.display = bool(verdicts)
        parts: list[str | tuple[str, str]] = [("verdicts  ", "bold")]
        for i, v in enumerate(verdicts):
            if i:
                parts.append(("  ·  ", "$text-muted"))
            parts += [(f"{v.reviewer}: ", "$text-muted"), (v.cause, "bold $text-warning")]
            if v.note:
                parts += [(" — ", "$text-muted"), v.note]
            if not v.saved:
                parts.append(("  NOT SAVED", "bold $text-error"))
        if len({v.cause for v in verdicts}) > 1:
            parts.append(("   reviewers disagree", "bold $text-error"))
        redraw(self, line(*parts))
