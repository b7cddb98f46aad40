"""The triage app: paints at once, loads in a thread worker, then lets a reviewer read the flips."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

import numpy as np
from rich.text import Text
from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer

from triage.core.bundled import bundled
from triage.core.errors import InputError
from triage.core.evaluation import Cutoffs
from triage.core.text.sanitize import counted, visible
from triage.core.views.slices import DEFAULT_FLOOR
from triage.ui.collect import RestingCollector
from triage.ui.internals import freeze_garbage, prompt_frames
from triage.ui.messages import (
    Amended,
    CorpusChecked,
    CorpusProgress,
    CorpusReady,
    DetailClosed,
    LoadFailed,
    Looked,
    OpenQuery,
    SessionReady,
)
from triage.ui.palette import QueryCommands, ThemeCommands
from triage.ui.screens.overview import OverviewScreen
from triage.workspace.session import Session, Source, flip_label, open_session
from triage.workspace.snapshot import Snapshot

# Looks at the review folder for other sessions' records: every SYNC_EVERY seconds while the keys
# rest (no key for KEYS_REST s), and at least every SYNC_AT_MOST s while they do not (a look's work,
# off the UI thread, still shares the interpreter with it).
SYNC_EVERY, KEYS_REST, SYNC_AT_MOST = 1.0, 0.5, 3.0
NOTICE = 4.0  # seconds a notice of other sessions' records shows; at most one that often

# the keys that open a screen of the loaded evaluation: action -> what the notice calls it
SCREENS = {
    "flips": "flips",
    "all": "all queries",
    "overview": "overview",
    "tenants": "tenants",
    "slices": "slices",
    "amendments": "amendments",
    "queue": "judging queue",
    "ranks": "rank drops",
}


class TriageApp(App[None]):
    CSS_PATH = str(bundled("styles") / "triage.tcss")
    TITLE = "triage"
    COMMANDS = App.COMMANDS | {QueryCommands, ThemeCommands}
    # The keys that work anywhere, in the order `?` lists them (the footer orders its jumps by
    # FOOTER_JUMPS); each tooltip is what `?` says the key does.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "question_mark",
            "help",
            "keys",
            id="help",
            tooltip="this help: the keys and terms of the screen you are on",
        ),
        Binding("f", "flips", "flips", id="flips", tooltip="the flips, hit→miss first"),
        Binding("a", "all", "all queries", id="all", tooltip="all queries"),
        Binding("o", "overview", "overview", id="overview", tooltip="the overview"),
        Binding("t", "tenants", "tenants", id="tenants", tooltip="tenants, worst first by B's hit rate"),
        Binding(
            "s",
            "slices",
            "slices",
            id="slices",
            tooltip="slices: plan, selectivity band, tenant, query type, source type, filter shape, language",
        ),
        Binding(
            "r",
            "ranks",
            "rank drops",
            id="ranks",
            tooltip="rank drops: the queries by B − A of a chosen measure, worst first; the rank-change "
            "histogram",
        ),
        Binding(
            "L",
            "amendments",
            "amendments",
            id="amendments",
            tooltip="the amendments: who added which gold, when, with what note and evidence; the verdicts",
        ),
        Binding(
            "J",
            "queue",
            "judge",
            id="queue",
            tooltip="the judging queue: every unjudged passage of a top k, one at a time",
        ),
        # Textual's own palette key, said here with what the palette holds
        Binding(
            "ctrl+p",
            "command_palette",
            "palette",
            show=False,
            priority=True,
            tooltip="command palette: jump to a query by id or text; switch theme",
        ),
        Binding("q", "quit", "quit", id="quit", tooltip="quit (except while typing in a search box)"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]
    # a screen narrower than 100 cells has the class -narrow (styles: the overview's metrics and
    # paired tables stack); the detail screen has its own breakpoint
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    # the footer shows a screen's own keys, then these jumps in this order while they fit
    FOOTER_JUMPS = ("flips", "queue", "tenants", "slices", "ranks", "all", "amendments", "overview", "quit")

    def __init__(
        self,
        source: Source = None,
        k: Cutoffs = None,
        reviewer: str | None = None,
        floor: float = DEFAULT_FLOOR,
    ) -> None:
        super().__init__()
        self.source = source
        self.k = k
        self.reviewer = reviewer
        self.floor = floor
        self.session: Session | None = None
        self.load_failed = False  # then only the keys that still work are offered (q, ?)
        self.pending: str | None = None  # a screen's key pressed while loading: opened once loaded
        self.collector = RestingCollector()  # full garbage collections while the keys rest
        self._unsaid = (0, 0)  # records other sessions wrote, and took away, not noticed yet
        self._notice: Timer | None = None  # the next notice of them, due
        self._said_at = -NOTICE  # time.monotonic() of the last one
        self._looked_at = 0.0  # time.monotonic() of the last look at the review folder

    async def action_quit(self) -> None:
        """Quit; with decisions held in memory, first ask what to do with them."""
        session = self.session
        if session is None or not session.unsaved:
            self.exit()
            return
        from triage.ui.screens.unsaved import UnsavedScreen

        if isinstance(self.screen, UnsavedScreen):
            return

        screen = UnsavedScreen(session, session.refusal or "see the amendments screen (L)")

        def chosen(leave: bool | None) -> None:
            if leave:
                self.exit(message=Text(screen.farewell) if screen.farewell else None)

        self.push_screen(screen, chosen)

    def get_default_screen(self) -> Screen:
        return OverviewScreen()

    async def on_event(self, event: events.Event) -> None:
        # A clipboard is data too: Input shows pasted text as is, so an escape sequence pasted into
        # a search or note box would reach the terminal. Make control characters visible first.
        if isinstance(event, events.Paste) and not event.is_forwarded:
            event.text = visible(event.text, cap=None)
        elif isinstance(event, events.Key):
            self.collector.key()
        await super().on_event(event)

    def on_mount(self) -> None:
        self.collector.start()
        prompt_frames(self.screen)
        self.screen_change_signal.subscribe(self, prompt_frames, immediate=True)
        self.set_interval(self.collector.rest, self.collector.tick, name="rested collection")
        self.set_interval(KEYS_REST / 2, self.sync_reviews, name="review folder")
        # After the first refresh: the overview is composed by then, even when the session is ready
        # at once (a snapshot opened already, from the Python API).
        self.call_after_refresh(self.load)

    def on_unmount(self) -> None:
        self.collector.stop()  # Python's own collections again once the app is gone

    # -- loading (thread workers post messages; they never touch widgets) -------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load(self) -> None:
        from triage.ui.screens.live import report

        try:
            session = open_session(self.source, self.k, self.reviewer, self.floor)
            report(session)  # the overview's numbers, built here: the UI thread only draws them
        except InputError as e:
            self.post_message(LoadFailed(e.message))
            return
        except Exception as e:  # noqa: BLE001 - shown to the user, not a traceback
            self.post_message(LoadFailed(f"{type(e).__name__}: {e}"))
            return
        self.post_message(SessionReady(session))

    @work(thread=True, exclusive=True, exit_on_error=False, group="corpus")
    def load_corpus(self, path: Path, fmt: str | None = None) -> None:
        from triage.core.inputs.corpus import open_corpus

        def progress(fraction: float) -> None:
            self.post_message(CorpusProgress(fraction))

        try:
            corpus = open_corpus(path, progress, fmt=fmt)
        except InputError as e:
            self.post_message(CorpusReady(None, e.message))
            return
        except Exception as e:  # noqa: BLE001 - shown to the user, not a traceback
            self.post_message(CorpusReady(None, f"{type(e).__name__}: {e}"))
            return
        self.post_message(CorpusReady(corpus, ""))

    def on_amended(self, message: Amended) -> None:
        if not message.change.verdict:  # a verdict moves no number
            self.prepare_soon()  # tenants and slices, once the keys rest

    def sync_reviews(self) -> None:
        """A look at the review folder for what other processes wrote (the CLI, a second app), in a
        worker, when one is due: SYNC_EVERY s after the last while the keys rest, SYNC_AT_MOST s
        after it while they do not."""
        now = time.monotonic()
        since = now - self._looked_at
        rested = now - self.collector.last_key >= KEYS_REST
        if self.session is not None and (since >= SYNC_AT_MOST or (rested and since >= SYNC_EVERY)):
            self._looked_at = now
            self.look(self.session)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sync")
    def look(self, session: Session) -> None:
        """Read what was appended to the review folder since the last look and build the snapshot
        it gives, off the UI thread (its keys never wait for it): the UI thread only swaps it in."""
        found = session.look()
        if found is not None:
            self.post_message(Looked(session, found))

    def on_looked(self, message: Looked) -> None:
        """Another session's records applied: the numbers and the screen on view drawn again, and a
        notice says how many records came (or went). A look built on a snapshot a decision has
        replaced meanwhile is dropped; the next look builds it again."""
        session, found = self.session, message.found
        if session is not message.session or not session.take(found):
            return
        self._unsaid = (self._unsaid[0] + found.new, self._unsaid[1] + found.gone)
        wait = self._said_at + NOTICE - time.monotonic()
        if self._notice is None and any(self._unsaid):  # one notice at a time, counting all since
            if wait > 0:
                self._notice = self.set_timer(wait, self._say)
            else:
                self._say()
        self.prepare_soon()
        from triage.ui.screens.detail import DetailScreen
        from triage.ui.screens.live import LiveScreen
        from triage.ui.screens.queue import QueueScreen

        screen = self.screen
        if isinstance(screen, OverviewScreen):
            self.redraw_overview(session)
        elif isinstance(screen, LiveScreen):
            screen.draw()
        elif isinstance(screen, DetailScreen):
            if screen.detail is None or screen.detail.query_id in found.touched:  # else as it was
                screen.show()
        elif isinstance(screen, QueueScreen):
            screen.show()

    def _say(self) -> None:
        """The notice of the records other sessions wrote (or took away) since the last one."""
        (new, gone), self._unsaid, self._notice = self._unsaid, (0, 0), None
        said = [f"{counted(new, 'record')} from another session applied"] if new else []
        if gone:
            said.append(f"{counted(gone, 'record')} no longer in the review folder (see the amendments, L)")
        self.notify("; ".join(said), timeout=NOTICE, markup=False)
        self._said_at = time.monotonic()

    def prepare_soon(self, delay: float = 1.5) -> None:
        """Recompute tenants and slices after amendments, once no key came for `delay` seconds
        (a thread computing them while the reader presses keys would slow every key)."""
        timer = getattr(self, "_prepare_timer", None)
        if timer is not None:
            timer.stop()
        if self.session is not None:
            session = self.session

            def rested() -> None:  # a key came meanwhile: wait until none came for `delay` s
                wait = self.collector.last_key + delay - time.monotonic()
                if wait > 0:
                    self._prepare_timer = self.set_timer(wait, rested)
                else:
                    self.prepare(session, session.snapshot)

            self._prepare_timer = self.set_timer(delay, rested)

    @work(thread=True, exclusive=True, exit_on_error=False, group="prepare")
    def prepare(self, session: Session, snapshot: Snapshot) -> None:
        """Compute the slices and tenants of `snapshot` ahead of the first `t` or `s`; the session
        keeps them only if no decision has moved on from that snapshot meanwhile."""
        session.prepare(snapshot)

    @work(thread=True, exclusive=True, exit_on_error=False, group="corpus-check")
    def check_corpus(self, session: Session) -> None:
        from triage.core.checks.suite import check_corpus

        self.post_message(CorpusChecked(check_corpus(session.ev.inputs)))

    def on_corpus_checked(self, message: CorpusChecked) -> None:
        if self.session is not None:
            self.session.corpus_checked(message.checks)  # a new version: its numbers are rebuilt
            self.redraw_overview(self.session)

    @work(thread=True, exit_on_error=False, group="overview")  # not exclusive: each one is kept
    def redraw_overview(self, session: Session) -> None:
        """Build the overview's report for the session as it is now (its version, its corpus) off
        the UI thread, then draw it if the overview is on screen (a second at a million queries)."""
        from triage.ui.screens.live import report

        version, corpus = session.version, session.corpus is not None  # what the report is built on
        report(session)
        self.call_from_thread(self._overview_built, version, corpus)

    def _overview_built(self, version: str, corpus: bool) -> None:
        """Draw the report just built, unless the session moved on meanwhile (a new version or the
        corpus loaded: the change that moved it started its own worker)."""
        session, overview = self.session, self.screen_stack[0]
        if session is None or session.version != version or (session.corpus is not None) != corpus:
            return
        if self.screen is overview and isinstance(overview, OverviewScreen):
            overview.show(session)

    def on_session_ready(self, message: SessionReady) -> None:
        self.session = message.session
        overview = self.screen_stack[0]
        assert isinstance(overview, OverviewScreen)
        overview.show(message.session)
        self.refresh_bindings()
        if self.pending is not None:  # the key pressed while loading, applied now
            self.call_after_refresh(self.run_action, self.pending)
            self.pending = None
        self.call_after_refresh(freeze_garbage)
        for name in ("flips", "all", "tenants", "slices"):  # built now, composed when first shown
            self._install(name)
        # The workers start once the numbers are painted: threads holding the GIL would slow it.
        self.call_after_refresh(self._background, message.session)

    def _background(self, session: Session) -> None:
        """What the loaded session needs next, each in its worker: tenants and slices, the corpus
        look-ups, the corpus check."""
        self.prepare(session, session.snapshot)
        if session.snapshot.spec.corpus is not None and session.corpus is None:
            self.load_corpus(session.snapshot.spec.corpus, session.snapshot.spec.corpus_format)
        if session.snapshot.corpus_checks is None and session.ev.inputs.corpus is not None:
            self.check_corpus(session)
        if session.snapshot.spec.corpus is None:  # else once the corpus is in: its text hints
            self.hints_ahead(session)

    @work(thread=True, exclusive=True, exit_on_error=False, group="hints-ahead")
    def hints_ahead(self, session: Session) -> None:
        """The flips' cause hints before the flips list is first opened (0.7 s at a million
        queries): the list shows them at once, and its first keys do not share the CPU with them."""
        session.hints()
        self.call_from_thread(self._hints_in)

    def _hints_in(self) -> None:
        from triage.ui.screens.lists import QueryList

        if isinstance(self.screen, QueryList):
            self.screen.hints_in()

    def on_load_failed(self, message: LoadFailed) -> None:
        self.load_failed = True
        if self.pending is not None:
            self.notify(
                f"{self.pending}: not opened, the evaluation did not load", severity="warning", markup=False
            )
            self.pending = None
        self.refresh_bindings()
        overview = self.screen_stack[0]
        assert isinstance(overview, OverviewScreen)
        overview.show_error(message.message)

    def on_corpus_progress(self, message: CorpusProgress) -> None:
        if self.session is not None:
            self.session.corpus_note = f"indexing the corpus, {message.fraction:.0%}"

    def on_corpus_ready(self, message: CorpusReady) -> None:
        if self.session is None:
            return
        self.session.corpus = message.corpus
        self.session.corpus_note = message.note or "ready"
        self.hints_ahead(self.session)  # with the corpus's text now
        notice = message.corpus.notice if message.corpus is not None else None
        if notice:  # the cache could not be used: the same chunks, read directly
            self.notify(visible(notice), title="corpus cache", severity="information", markup=False)
        if message.note:
            # markup=False stops markup, not escape sequences: the note names a file path (data)
            self.notify(visible(message.note), title="corpus unavailable", severity="warning", markup=False)
        from triage.ui.screens.detail import DetailScreen
        from triage.ui.screens.lists import FlipsScreen
        from triage.ui.screens.queue import QueueScreen

        if isinstance(self.screen, OverviewScreen):  # the cost row reads the heading paths
            self.redraw_overview(self.session)
        elif isinstance(self.screen, (DetailScreen, QueueScreen)):
            self.screen.show()
        elif isinstance(self.screen, FlipsScreen):  # text hints can be computed now
            self.screen.fill()

    # -- navigation ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in SCREENS and self.session is None and self.load_failed:
            return False  # hidden after a failed load: only q and ? still work
        return True  # while loading, a screen's key is kept (`_loaded`) and applied once loaded

    def _loaded(self, action: str) -> bool:
        """Whether the evaluation is loaded; if it is still loading, `action` is kept (the last key
        wins), applied once it has loaded, and a notice says so: a key is never lost."""
        if self.session is not None:
            return True
        if not self.load_failed:
            self.pending = action
            self.notify(f"{SCREENS[action]}: opens once the evaluation has loaded", timeout=3, markup=False)
        return False

    def _to_base(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def action_overview(self) -> None:
        self._to_base()

    def _top(self, name: str) -> None:
        """Show one of the top-level screens over the overview. Each is built once and kept
        (installed), so it opens at once the next time, where the reader left it."""
        if not self._loaded(name):
            return
        self._to_base()
        self._install(name)
        self.push_screen(name)

    def _install(self, name: str) -> None:
        from triage.ui.screens.lists import AllQueriesScreen, FlipsScreen
        from triage.ui.screens.ranks import RankDropsScreen
        from triage.ui.screens.slices import SlicesScreen, TenantsScreen

        screens = {
            "flips": FlipsScreen,
            "all": AllQueriesScreen,
            "tenants": TenantsScreen,
            "slices": SlicesScreen,
            "ranks": RankDropsScreen,
        }
        if self.session is not None and not self.is_screen_installed(name):
            self.install_screen(screens[name](self.session), name)

    def action_flips(self) -> None:
        self._top("flips")

    def action_all(self) -> None:
        self._top("all")

    def action_tenants(self) -> None:
        self._top("tenants")

    def action_slices(self) -> None:
        self._top("slices")

    def action_ranks(self) -> None:
        self._top("ranks")

    def action_amendments(self) -> None:
        from triage.ui.screens.amendments import AmendmentsScreen

        if self._loaded("amendments") and not isinstance(self.screen, AmendmentsScreen):
            assert self.session is not None
            self.push_screen(AmendmentsScreen(self.session))

    def action_queue(self) -> None:
        """The judging queue, over whatever is on screen; the position is kept between visits."""
        from triage.ui.screens.queue import QueueScreen

        if self._loaded("queue") and not isinstance(self.screen, QueueScreen):
            assert self.session is not None
            self.push_screen(QueueScreen(self.session))

    def action_help(self) -> None:
        from triage.ui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            every = every_screen()
            here = type(self.screen)
            self.push_screen(HelpScreen(here if here in every else OverviewScreen, every))

    def on_open_query(self, message: OpenQuery) -> None:
        self.open_query(message.q)

    def on_detail_closed(self, message: DetailClosed) -> None:
        """Back from a detail: the list now on screen points at the query that was being read
        (n/p may have walked on from the row it was opened at)."""
        from triage.ui.screens.lists import QueryList
        from triage.ui.table import VirtualTable

        screen = self.screen
        if isinstance(screen, QueryList):
            where = np.flatnonzero(screen.rows() == message.q)  # the list as it is drawn now
            if len(where):
                screen.query_one(VirtualTable).cursor = int(where[0])

    def open_query(self, q: int) -> None:
        """Open query index `q`'s detail; n/p walk the flips when it is one, else nothing."""
        from triage.ui.screens.detail import DetailScreen

        if self.session is None:
            return
        s = self.session
        where = np.flatnonzero(s.flips == q)
        if len(where):
            n_reg, n = s.n_regressions, len(s.flips)
            self.push_screen(DetailScreen(s, s.flips, int(where[0]), lambda i: flip_label(i, n_reg, n)))
        else:
            self.push_screen(DetailScreen(s, np.array([q]), 0, lambda i: "query"))


def every_screen() -> list[type[Screen]]:
    """Every screen `?` explains, in the order it lists the other screens' keys."""
    from triage.ui.screens.amendments import AmendmentsScreen
    from triage.ui.screens.chunk import ChunkScreen
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.lists import AllQueriesScreen, FlipsScreen
    from triage.ui.screens.queue import QueueScreen
    from triage.ui.screens.ranks import RankDropsScreen
    from triage.ui.screens.search import SearchScreen
    from triage.ui.screens.slices import SliceQueries, SlicesScreen, TenantsScreen

    return [
        OverviewScreen,
        FlipsScreen,
        AllQueriesScreen,
        SliceQueries,
        RankDropsScreen,
        DetailScreen,
        TenantsScreen,
        SlicesScreen,
        AmendmentsScreen,
        QueueScreen,
        ChunkScreen,
        SearchScreen,
    ]


def run(
    source: Source = None, k: Cutoffs = None, reviewer: str | None = None, floor: float = DEFAULT_FLOOR
) -> int:
    TriageApp(source, k, reviewer, floor).run()
    return 0
