"""`J`: the judging queue — one unjudged passage of a top k at a time, judged with one key.

The candidates and their order are the headless queue's (`triage.workspace.queue`); this screen
draws the one on screen (the query, the passage with the query's words highlighted, its query's
gold beside it, where it ranked in each arm) and maps keys to decisions. A decision is written (and
fsync'd) by `Session.add` before the next candidate is drawn.
"""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import visible
from triage.report import cells as fmt
from triage.ui.glossary import Topic
from triage.ui.keys import Keys
from triage.ui.literal import line, plain
from triage.ui.messages import announce
from triage.ui.screens.help import HELP_KEY
from triage.ui.widgets.detail.text import clip
from triage.workspace.queue import (
    TIERS,
    CandidateView,
    Filters,
    JudgingQueue,
    corpus_settled,
    queue_built,
    queue_for,
    words_pattern,
)
from triage.workspace.review import Change
from triage.workspace.session import Session

BODY = 1_500  # characters of the candidate's body shown
GOLD_BODY = 700  # of each gold body
HIGHLIGHT = "bold underline $text-warning"


def highlighted(text: str | None, view: CandidateView, n: int) -> Content:
    """Data text as literal Content, the query's content words highlighted (case-insensitive)."""
    content = plain(clip(text, n) if text else "(no text)")
    pattern = words_pattern(view.words)
    return content.highlight_regex(pattern, style=HIGHLIGHT) if pattern is not None else content


def candidate_pane(view: CandidateView, corpus_note: str) -> Content:
    c = view.candidate
    ranks = "   ".join(f"{side.upper()} {fmt.rank(view.ranks[side], view.k)}" for side in ("a", "b"))
    parts: list[str | Content | tuple[str, str]] = [
        ("candidate  ", "bold"),
        (visible(c.chunk_id), "bold $text-accent"),
        "\n",
        (f"ranked  {ranks}   (k = {view.k}; taken from arm {c.arm.upper()}, rank {c.rank})", "$text-muted"),
        "\n",
        (f"tier {c.tier}: {TIERS[c.tier]}", "$text-muted"),
    ]
    if c.tier == 2 and view.outcome is Outcome.BOTH_HIT:  # the tier is the queue's, built at open
        parts += [("  (when the queue was built; both arms hit it now)", "$text-warning")]
    if view.similar_to is not None:
        parts += [("  ≈ ", "bold $text-warning"), (visible(view.similar_to[0]), "$text-warning")]
        parts += [(f" (body {view.similar_to[1]:.0f}/100 similar)", "$text-muted")]
    parts.append("\n\n")
    if view.chunk is None:
        parts += [("text unavailable: " + corpus_note, "$text-muted")]
    else:
        parts += [
            ("heading  ", "$text-muted"),
            highlighted(view.chunk.header, view, 400).stylize("$text-accent"),
            "\n\n",
            highlighted(view.chunk.text, view, BODY),
        ]
    return Content.assemble(*parts)


def gold_pane(view: CandidateView, corpus_note: str) -> Content:
    if not view.golds:
        return line(("no gold for this query: it is not scored", "$text-warning"))
    parts: list[str | Content | tuple[str, str]] = [("the query's gold, for comparison", "bold"), "\n"]
    for chunk_id, grade, chunk in view.golds:
        parts += [
            "\n",
            ("★ ", "$text-warning"),
            (visible(chunk_id), "bold"),
            (f"   grade {grade}", "$text-muted"),
        ]
        parts.append("\n")
        if chunk is None:
            parts += [("text unavailable: " + corpus_note, "$text-muted"), "\n"]
            continue
        parts += [
            ("heading  ", "$text-muted"),
            highlighted(chunk.header, view, 400).stylize("$text-accent"),
            "\n",
            highlighted(chunk.text, view, GOLD_BODY),
            "\n",
        ]
    return Content.assemble(*parts)


NOTED = "relevant / not relevant, after asking for a note"


class QueueScreen(Screen[None]):
    DEFAULT_CSS = """
    #queue-title { height: auto; padding: 0 1; background: $panel; }
    #queue-progress, #queue-status { height: auto; padding: 0 1; }
    #queue-query { height: auto; max-height: 4; padding: 0 1; border-top: solid $primary 40%; }
    #queue-panes { height: 1fr; }
    #queue-candidate-pane { width: 1fr; padding: 0 1; border: round $accent 60%; }
    #queue-gold-pane { width: 1fr; padding: 0 1; border: round $warning 40%; }
    """

    TOPIC = Topic(
        "Judging queue",
        (
            "candidate",
            "tier 1",
            "body … similar",
            "tier 2",
            "tier 3",
            "≈",
            "taken from arm",
            "grade",
            "★",
            "heading path",
            "query words",
            "regressions resolved",
        ),
    )
    # The filters are capitals: r, t and a keep their meaning everywhere (rank drops, tenants, all queries).
    # Those not shown are in `?`, so the footer fits 80 columns.
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_KEY,
        Binding(
            "y",
            "decide(1)",
            "relevant",
            tooltip="relevant (grade 1), written at once; the next candidate follows",
        ),
        *[
            Binding(
                str(g),
                f"decide({g})",
                f"grade {g}",
                show=False,
                tooltip="relevant with that grade instead",
            )
            for g in range(1, 10)
        ],
        Binding("n", "decide(0)", "irrelevant", tooltip="not relevant (grade 0)"),
        Binding("G", "decide_note(1)", "relevant + note", show=False, tooltip=NOTED),
        Binding("N", "decide_note(0)", "not + note", show=False, tooltip=NOTED),
        Binding(
            "space",
            "skip",
            "skip",
            tooltip="skip: the candidate goes to the end of the queue (nothing written)",
        ),
        Binding(
            "backspace", "undo", "undo", tooltip="undo the last decision made here; its candidate comes back"
        ),
        Binding("escape", "leave", "back", tooltip="leave; J brings you back where you were"),
        Binding("R", "regressions", "regressions", tooltip="filter: regressions only (on / off)"),
        Binding(
            "T",
            "tenant",
            "tenant",
            show=False,
            tooltip="filter: cycle the tenant — every tenant, then each in turn",
        ),
        Binding(
            "A",
            "arm",
            "arm",
            show=False,
            tooltip="filter: cycle the arm — both, A's top k only, B's top k only",
        ),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.queue: JudgingQueue | None = None
        self.view: CandidateView | None = None
        self._building = False
        # Keys pressed before the queue is ready: (action, its argument), applied in order when it is
        self._kept: list[tuple[str, tuple[int, ...]]] = []

    def compose(self) -> ComposeResult:
        yield Static(line(("Judging queue", "bold $text-accent")), id="queue-title")
        yield Static(id="queue-progress")
        yield Static(id="queue-status")
        yield Static(id="queue-query")
        with Horizontal(id="queue-panes"):
            with VerticalScroll(id="queue-candidate-pane"):
                yield Static(id="queue-candidate")
            with VerticalScroll(id="queue-gold-pane"):
                yield Static(id="queue-gold")
        yield Keys()

    def on_mount(self) -> None:
        self.show()

    def _static(self, name: str) -> Static:
        return self.query_one(f"#{name}", Static)

    # -- drawing -------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="queue")
    def build(self) -> None:
        queue_for(self.session)  # vectorised, plus the bounded near-duplicate tier
        self.app.call_from_thread(self.show)

    def show(self) -> None:
        """Draw the candidate (building the queue first, in a worker, if need be); once the queue is
        ready, apply the keys pressed while it was not, in the order pressed."""
        self._draw()
        if self.queue is not None and self._kept:
            kept, self._kept = self._kept, []
            for action, args in kept:
                getattr(self, f"action_{action}")(*args)

    def _later(self, action: str, *args: int) -> bool:
        """Keep a key pressed before the queue is ready (True), saying so; False: the queue is here."""
        if self.queue is not None:
            return False
        self._kept.append((action, args))
        n = len(self._kept)
        self._say(
            line((f"{n} key{'' if n == 1 else 's'} kept: applied when the queue is ready", "$text-muted"))
        )
        return True

    def _draw(self) -> None:
        session = self.session
        if self.queue is None:
            if not corpus_settled(session):
                self._static("queue-progress").update(
                    line(("waiting for the corpus: ", "$text-muted"), session.corpus_note)
                )
                return
            if not queue_built(session):
                self._static("queue-progress").update(line(("building the judging queue…", "$text-muted")))
                if not self._building:
                    self._building = True
                    self.build()
                return
            self.queue = queue_for(session)
        queue = self.queue
        counts = queue.counts
        near = f"{counts[1]:,} near-duplicate{'' if counts[1] == 1 else 's'}"
        title = (
            f"   {len(queue):,} candidates: {near} · {counts[2]:,} where an arm misses · "
            f"{counts[3]:,} other   ({queue.filters.describe()})"
        )
        self._static("queue-title").update(
            line(
                ("Judging queue", "bold $text-accent"),
                (title, "$text-muted"),
                "\n",
                (queue.near_note, "$text-muted"),
            )
        )
        self._static("queue-progress").update(line((queue.progress(), "bold")))
        c = queue.current()
        if c is None:
            self.view = None
            self._static("queue-query").update(
                line(
                    ("nothing left to judge here", "bold $text-success"),
                    ("  (filters: R T A)", "$text-muted"),
                )
            )
            self._static("queue-candidate").update("")
            self._static("queue-gold").update("")
            return
        view = self.view = queue.view(c, session.corpus)
        tenant = session.tenant_of[c.q].as_py()
        self._static("queue-query").update(
            line(
                ("query  ", "bold"),
                (c.query_id, "bold"),
                "  ",
                (view.outcome.label, "$text-error" if view.outcome.name == "HIT_TO_MISS" else "$text-muted"),
                (f"   tenant {tenant}" if tenant is not None else "", "$text-muted"),
                "\n",
                view.text if view.text is not None else "(no query text)",
            )
        )
        note = session.corpus_note
        self._static("queue-candidate").update(candidate_pane(view, note))
        self._static("queue-gold").update(gold_pane(view, note))
        self.query_one("#queue-candidate-pane", VerticalScroll).scroll_home(animate=False)
        self.query_one("#queue-gold-pane", VerticalScroll).scroll_home(animate=False)

    def _say(self, content: Content) -> None:
        self._static("queue-status").update(content)

    def _said(self, change: Change | None, what: str) -> None:
        if change is None:
            return
        self._say(announce(self, change, what))

    # -- decisions -----------------------------------------------------------------------------
    def _decide(self, relevance: int, note: str = "") -> None:
        if self._later("decide", relevance) or self.queue is None or self.view is None:
            return
        c = self.view.candidate
        change = self.queue.decide(c, relevance, note)  # on disk (fsync) before the next is drawn
        what = f"{c.chunk_id}: relevant (grade {relevance})" if relevance else f"{c.chunk_id}: not relevant"
        self._said(change, what)
        self.show()

    def action_decide(self, relevance: int) -> None:
        self._decide(relevance)

    def action_decide_note(self, relevance: int) -> None:
        if self._later("decide_note", relevance) or self.view is None:
            return
        from triage.ui.screens.note import NoteScreen

        def with_note(note: str | None) -> None:
            if note is not None:
                self._decide(relevance, note)

        self.app.push_screen(NoteScreen(relevant=relevance > 0), with_note)

    def action_skip(self) -> None:
        if self._later("skip") or self.queue is None or self.view is None:
            return
        self.queue.skip(self.view.candidate)
        self._say(
            line(
                ("skipped  ", "bold"),
                self.view.candidate.chunk_id,
                ("  (at the end of the queue)", "$text-muted"),
            )
        )
        self.show()

    def action_undo(self) -> None:
        if self._later("undo") or self.queue is None:
            return
        change, why = self.queue.undo()
        if change is None:  # said where every outcome is said, not in a toast that fades
            self._say(line(("nothing undone  ", "bold"), why))
            return
        self._said(change, "undone")
        self.show()

    # -- filters -------------------------------------------------------------------------------
    def _filter(self, filters: Filters) -> None:
        if self.queue is None:
            return
        self.queue.set_filters(filters)
        self._say(line(("filter  ", "bold"), filters.describe()))
        self.show()

    def action_regressions(self) -> None:
        if not self._later("regressions") and self.queue is not None:
            f = self.queue.filters
            self._filter(Filters(not f.regressions, f.tenant, f.arm))

    def action_tenant(self) -> None:
        if not self._later("tenant") and self.queue is not None:
            f, tenants = self.queue.filters, self.queue.tenants
            cycle: list[str | None] = [None, *tenants]
            nxt = cycle[(cycle.index(f.tenant) + 1) % len(cycle)] if f.tenant in cycle else None
            self._filter(Filters(f.regressions, nxt, f.arm))

    def action_arm(self) -> None:
        if not self._later("arm") and self.queue is not None:
            f = self.queue.filters
            nxt = {None: "a", "a": "b", "b": None}[f.arm]
            self._filter(Filters(f.regressions, f.tenant, nxt))

    def action_leave(self) -> None:
        self.dismiss(None)
