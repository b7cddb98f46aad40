"""The two arm summaries: hit or miss, where the gold sits, the plan and the counts; against exact
truth, the arm's recall@k and the true neighbours it missed, with their rank and score in the truth."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from triage.ui.literal import line
from triage.ui.widgets.redraw import OneLayout, redraw
from triage.workspace.detail import ArmView, QueryDetail


def _known(value: object) -> str:
    return "–" if value is None else str(value)


MISSED_SHOWN = 5  # missed neighbours named on the summary; the rest counted


def missed_line(arm: ArmView, k: int, exact_eligible: int | None) -> list[str | tuple[str, str]]:
    """ "recall@10 0.30 (exact n_eligible 1500) · missed 7: d12 (truth rank 1, 0.912) …"."""
    head: list[str | tuple[str, str]] = [
        (f"recall@{k} ", "$text-muted"),
        ("–" if arm.recall is None else f"{arm.recall:.2f}", "bold"),
        ("   exact n_eligible ", "$text-muted"),
        _known(exact_eligible),
    ]
    tied = (
        f"   {arm.stand_ins} tied neighbour{'s' if arm.stand_ins != 1 else ''} credited"
        if arm.stand_ins
        else ""
    )
    if not arm.missed:
        return [*head, ("   missed no true neighbour", "$text-success"), tied]
    named = [
        f"{m.chunk_id} (truth rank {m.truth_rank}, {m.truth_score:.4g}"
        + (f", here {m.rank})" if m.rank is not None else ")")
        for m in arm.missed[:MISSED_SHOWN]
    ]
    more = f" … (+{len(arm.missed) - MISSED_SHOWN})" if len(arm.missed) > MISSED_SHOWN else ""
    return [*head, tied, "\n", (f"missed {len(arm.missed)}: ", "$text-error bold"), ", ".join(named) + more]


def arm_summary(arm: ArmView, k: int, movement: int | None, exact_eligible: int | None = None) -> Content:
    """`exact_eligible`: judged against exact truth, the query's exact n_eligible (the recall line and
    the missed neighbours are shown); None: other labels."""
    side = arm.side.upper()
    if not arm.present:
        return line(
            (f"{side} {arm.name}", "bold"), ("  did not answer this query (scored as a miss)", "$text-error")
        )
    if arm.gold_rank is None:
        where = "absent from the stored list"
    elif arm.inside(k):
        where = f"rank {arm.gold_rank}, inside k"
    else:
        where = f"rank {arm.gold_rank}, outside k = {k}"
    outcome = ("hit", "$text-success bold") if arm.hit else ("miss", "$text-error bold")
    moved = ""
    if arm.side == "b" and movement is not None and movement != 0:
        moved = f"  ({'down' if movement > 0 else 'up'} {abs(movement)} from A)"
    answer: list[str | tuple[str, str]] = []
    if arm.graded:  # the harness's verdict on the answer (core/views/answers.py), on a line of its own
        said = {True: ("correct", "$text-success bold"), False: ("wrong", "$text-error bold")}
        verdict = said.get(arm.answer_correct) if arm.answer_correct is not None else None
        answer = [("answer ", "$text-muted"), verdict or "not graded"]
    short: list[str | tuple[str, str]] = []
    if arm.short(k):
        short = [(f"returned {arm.n_returned} of k = {k} · short list", "$text-warning bold")]
    third = [*answer, *(["   "] if answer and short else []), *short]
    if exact_eligible is not None:
        third = [*third, *(["\n"] if third else []), *missed_line(arm, k, exact_eligible)]
    return line(
        (f"{side} {arm.name}  ", "bold"),
        outcome,
        f"  gold {where}{moved}\n",
        ("plan ", "$text-muted"),
        _known(arm.plan),
        ("   n_returned ", "$text-muted"),
        _known(arm.n_returned),
        ("   n_eligible ", "$text-muted"),
        _known(arm.n_eligible),
        ("   stored depth ", "$text-muted"),
        str(arm.depth),
        *(["\n", *third] if third else []),
    )


class ArmSummary(OneLayout, Static):
    """One arm's summary (`side` "a" or "b")."""

    def __init__(self, side: str) -> None:
        super().__init__(id=f"arm-{side}", classes="arm")
        self.side = side

    def show(self, d: QueryDetail) -> None:
        redraw(self, arm_summary(d.a if self.side == "a" else d.b, d.k, d.movement, d.exact_eligible))


class ArmSummaries(OneLayout, Horizontal):
    """A's summary beside B's."""

    def __init__(self) -> None:
        super().__init__(id="arms")

    def compose(self) -> ComposeResult:
        yield ArmSummary("a")
        yield ArmSummary("b")

    def show(self, d: QueryDetail) -> None:
        for arm in self.query(ArmSummary):
            arm.show(d)
