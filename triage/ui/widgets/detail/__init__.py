"""The detail screen's regions, one widget each, drawn from a `QueryDetail`:

- `heading`: the title line (position, query id, outcome, k), the query text with its fields, and
  the hint line (the likely cause of the loss, with its evidence);
- `arms`: the two arm summaries (hit or miss, where the gold sits, plan and counts);
- `gold`: the gold pane (each gold chunk's header apart from its body, with token counts);
- `ranked`: the two ranked lists, each a title over a `VirtualTable`;
- `preview`: the selected row in full, or what to select;
- `verdicts`: the reviewers' verdicts on the query (cause, note), hidden when there are none.

The screen composes them, routes keys and owns no drawing of its own.
"""

from triage.ui.widgets.detail.arms import ArmSummaries, ArmSummary
from triage.ui.widgets.detail.gold import GoldPane
from triage.ui.widgets.detail.heading import DetailTitle, HintLine, QueryText, StatusLine
from triage.ui.widgets.detail.preview import Preview
from triage.ui.widgets.detail.ranked import RankedList, RankedLists
from triage.ui.widgets.detail.verdicts import VerdictLine

__all__ = [
    "ArmSummaries",
    "ArmSummary",
    "DetailTitle",
    "GoldPane",
    "HintLine",
    "Preview",
    "QueryText",
    "RankedList",
    "RankedLists",
    "StatusLine",
    "VerdictLine",
]
