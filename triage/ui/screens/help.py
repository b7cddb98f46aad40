"""`?`: every key, by where it applies."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from triage.ui.literal import line

KEYS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Anywhere",
        [
            ("f", "the flips, hit→miss first"),
            ("a", "all queries"),
            ("o", "the overview"),
            (
                "t",
                "tenants, worst first by B's hit rate (b: bars A beside B; l: by the low end of B's "
                "95% interval instead)",
            ),
            ("s", "slices: plan, selectivity band, tenant, query type, source type, filter shape, language"),
            ("L", "the amendments: who added which gold, when, with what note and evidence; the verdicts"),
            ("J", "the judging queue: every unjudged passage of a top k, one at a time"),
            (
                "r",
                "rank drops: both-hit queries whose gold B ranked lower; the rank-change histogram",
            ),
            ("/", "fuzzy search over query ids and texts (in a list)"),
            ("ctrl+p", "command palette: jump to a query by id or text; switch theme"),
            ("?", "this help"),
            ("escape", "back"),
            ("q", "quit (except while typing in a search box)"),
        ],
    ),
    (
        "Lists (flips, all queries)",
        [
            ("j / k, ↓ / ↑", "move"),
            ("pgdn / pgup, home / end", "move by a page, to the ends"),
            ("enter", "open the query's detail"),
            ("0 1 2 3 4", "all queries only: every / both hit / both miss / hit→miss / miss→hit"),
            (
                "hint",
                "flips: the likely cause of the loss — short (short list), plan (plan change), header "
                "(header dominates), path (misleading path), unlab (likely unlabelled), window, pushed "
                "(just below k), dropped; the detail shows its evidence (README: Cause hints)",
            ),
            ("verdict", "the cause a reviewer recorded with v (real, label, other, or a hint's code)"),
        ],
    ),
    (
        "Detail",
        [
            ("n / p", "next / previous query of the list you came from"),
            ("tab / shift+tab", "move the focus: gold pane, arm A's list, arm B's list"),
            ("j / k", "move the selection in the focused list (scroll the gold pane)"),
            ("enter", "open the selected chunk's full text (in the gold pane: the first gold)"),
            ("g", "mark the selected passage as additional gold (written at once, grade 1)"),
            ("1 … 9", "right after g: the grade of that amendment"),
            ("G", "the same, after asking for a note"),
            ("u", "undo your last amendment (a retract record: nothing is deleted)"),
            ("v", "your verdict on the query: its cause (one key each, hinted first), then an optional note"),
        ],
    ),
    (
        "Judging queue (J)",
        [
            ("y", "relevant (grade 1), written at once; the next candidate follows"),
            ("1 … 9", "relevant with that grade instead"),
            ("n", "not relevant (grade 0)"),
            ("G / N", "relevant / not relevant, after asking for a note"),
            ("space", "skip: the candidate goes to the end of the queue (nothing written)"),
            ("backspace", "undo the last decision made here; its candidate comes back"),
            ("r", "regressions only (on / off)"),
            ("t", "cycle the tenant: every tenant, then each in turn"),
            ("a", "cycle the arm: both, A's top k only, B's top k only"),
            ("escape", "leave; J brings you back where you were"),
        ],
    ),
    (
        "Chunk",
        [
            ("j / k", "scroll"),
            ("w", "the passage holding the most query words; again: the next best"),
            ("W", "back to the previous best passage"),
            ("m", "show more of a very long text"),
        ],
    ),
    (
        "Tenants (t) and slices (s)",
        [
            ("enter", "the tenant's or slice's queries, flips first; enter again for the detail"),
            ("b", "tenants: bars of A's and B's hit rate, ┃ marks the floor"),
            ("← / →, [ / ]", "slices: the previous / next slice key"),
        ],
    ),
    (
        "Rank drops (r)",
        [
            ("enter", "open the query's detail; n / p walk the drops"),
        ],
    ),
    (
        "Amendments (L)",
        [
            ("enter", "open the amended query"),
        ],
    ),
    (
        "Search",
        [
            ("type", "results update as you type"),
            ("↓ / ↑", "choose a result"),
            ("enter", "open the best (or chosen) match"),
        ],
    ),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "app.pop_screen", "close"),
        Binding("q", "app.quit", "quit"),  # a modal screen does not see the app's bindings
    ]

    def compose(self) -> ComposeResult:
        parts: list[str | tuple[str, str]] = [("triage — keys", "bold $text-accent"), "\n"]
        for section, keys in KEYS:
            parts += ["\n", (section, "bold"), "\n"]
            for key, what in keys:
                parts += [(f"  {key:<26}", "$text-warning"), what, "\n"]
        parts += ["\n", ("escape or ? closes this help", "$text-muted")]
        with VerticalScroll(id="help"):
            yield Static(line(*parts))
