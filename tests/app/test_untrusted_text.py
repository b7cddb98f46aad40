"""Untrusted text (docs/app.md "The app": shown as typed): every string that comes from the data —
query ids and texts, tenants, plans, arm names, chunk ids, headers and bodies, error messages —
is shown literally on every screen and runs nothing.

Hostile payloads: Rich/Textual markup (`[bold]`, `A[/foo]Z` MarkupError bait, `[@click=…]`
actions, `[link=…]`, `[CLS]`, `[$accent]`), terminal escape sequences (CSI 2J, OSC 52, OSC 8,
OSC 0, C1 CSI), bidi controls, and a 50 MB chunk. On each screen we check

* the app still runs (no MarkupError, no quit from a clicked `@click`, return code unset);
* the payload's literal text is on screen, with control characters shown as tokens (`␛`, `␇`,
  `<U+202E>`) — if markup were parsed, `[bold]` or `[CLS]` would vanish from the screen;
* the bytes Textual would write to the terminal hold no data-borne control character: the only
  escape sequences left are Textual's own colour (SGR) and cursor moves.

"What is on screen" is the compositor's rendered rows (`screen_lines`); "what reaches the terminal"
is that same frame rendered through a Rich console as the driver would write it (`terminal_output`).
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console
from textual import events
from textual.errors import NoWidget
from textual.widget import Widget

from triage.cli.main import main
from triage.core.checks.suite import PENDING_CORPUS
from triage.ui.app import TriageApp
from triage.ui.screens.amendments import AmendmentsScreen
from triage.ui.screens.chunk import ChunkScreen
from triage.ui.screens.detail import DetailScreen
from triage.ui.screens.help import HelpScreen
from triage.ui.screens.lists import AllQueriesScreen, FlipsScreen
from triage.ui.screens.note import NoteScreen
from triage.ui.screens.overview import OverviewScreen
from triage.ui.screens.search import SearchScreen
from triage.ui.screens.slices import SliceQueries, SlicesScreen, TenantsScreen
from triage.ui.table import VirtualTable

pytestmark = pytest.mark.slow  # whole-app Pilot runs: left out of the quick loop (README, Development)

SIZE = (120, 36)

# -- payloads ------------------------------------------------------------------------------------
BOLD = "[bold]x[/bold]"
BAIT = "A[/foo]Z"  # closing tag with no opening one: MarkupError if parsed
QUIT = "[@click=app.quit]click me[/]"
KEY_Q = "[@click=app.simulate_key('q')]x[/]"  # would fire the app's own `q` (quit) binding
LINK = "[link='file:///etc/passwd']x[/link]"
CLS = "[CLS] token [SEP]"
VAR = "[$accent]styled"
CLEAR = "\x1b[2J"  # CSI 2J: clear screen
OSC52 = "\x1b]52;c;aGVsbG8=\x07"  # clipboard write
OSC8 = "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"  # hyperlink
OSC0 = "\x1b]0;pwned\x07"  # window title
C1 = "\x9b2J"  # 8-bit CSI
RLO = "\u202e"  # bidi override
LRI = "\u2066"  # bidi isolate

EVIL_DIR = "A[/foo]Z " + OSC0 + RLO  # "/" makes it two folders: "A[" and "foo]Z …"

# -- the evaluation ------------------------------------------------------------------------------
NAME_A = "[bold]A[/bold]" + OSC0
NAME_B = "[@click=app.quit]B[/]" + RLO

Q1, Q5 = "q[/x]", "[@click=app.quit]q5[/]"  # query ids that are payloads
Q1_TEXT = f"{BOLD} {BAIT} {QUIT} {CLEAR} end"
Q2_TEXT = f"{KEY_Q} {LINK} {OSC52}"
Q3_TEXT = f"{CLS} {OSC8} {OSC0} {C1} {RLO}rev {LRI}iso"
QTYPE = "[@click=app.quit]howto[/]" + OSC0  # a slice value (slices screen, key query_type)
QUERIES = [  # query_id, text, tenant, query_type
    (Q1, Q1_TEXT, VAR, QTYPE),
    ("q2", Q2_TEXT, CLS, "faq"),
    ("q3", Q3_TEXT, BAIT + "|pipe", "faq"),
    ("q4", "plain annual leave", "acme", "faq"),
    (Q5, "unlabelled " + OSC0, "acme", "faq"),
]

BIG = "c[/big]"  # the 50 MB chunk: gold of Q1, rank 1 in A, rank 7 (> k) in B
BIG_HEADER = "[@click=app.quit]Leave[/] > " + OSC0 + "Annual"
BIG_HEAD = f"{BOLD} {CLEAR} "
BIG_LEN = len(BIG_HEAD) + 50_000_000
C1_HEADER, C1_TEXT = f"[bold]H1[/bold] > {BAIT}", f"{CLEAR} one {QUIT}"
C2 = "c[/2]"
G2_HEADER, G2_TEXT = f"{CLS} > {C1}", f"gold two {OSC8} {LRI}isolate"
CHUNKS = [  # chunk_id, header, text (the 50 MB one is added when written)
    ("g2", G2_HEADER, G2_TEXT),
    ("g3", VAR, "gold three " + BOLD),
    ("g4", "plain", "plain"),
    ("c1", C1_HEADER, C1_TEXT),
    (C2, VAR, OSC52 + " clip"),
    ("c3", RLO + "evil", C1 + " c1 control"),
    *[(f"f{i}", f"filler {i}", f"filler text {i}") for i in range(1, 4)],
]
GONE = "[@click=app.quit]gone[/]"  # retrieved by B, absent from the corpus: named by a check
PLAN_A2 = OSC52 + "plan"
RUN_A = {  # query_id: (retrieved, plan)
    Q1: ([BIG, "c1", C2, "c3", "f1", "f2"], "ann"),
    "q2": (["g2", "c1", "c3"], PLAN_A2),
    "q3": (["c1", C2, "c3", "f1", "f2", "g3"], "ann"),
    "q4": (["g4"], "ann"),
    Q5: (["f1"], "ann"),
}
RUN_B = {
    Q1: (["c1", C2, "c3", "f1", "f2", "f3", BIG], LINK),
    "q2": (["c3", "c1", GONE], "[$accent]postfilter"),
    "q3": (["g3", "c1", C2], "ann"),
    "q4": (["g4"], "ann"),
    Q5: (["f1"], "ann"),
}
LABELS = [(Q1, BIG, 2), ("q2", "g2", 1), ("q3", "g3", 1), ("q4", "g4", 1)]  # Q5: unlabelled


def table(columns: tuple[str, ...], rows: list[tuple]) -> pa.Table:
    return pa.table({name: [r[i] for r in rows] for i, name in enumerate(columns)})


def run_table(rows: dict[str, tuple[list[str], str]]) -> pa.Table:
    return pa.table(
        {
            "query_id": list(rows),
            "retrieved": [ids for ids, _ in rows.values()],
            "scores": [[float(10 - i) for i in range(len(ids))] for ids, _ in rows.values()],
            "plan": [plan for _, plan in rows.values()],
        }
    )


def toml_str(s: str) -> str:
    """A TOML basic string; control and bidi characters as \\u escapes (TOML forbids them raw)."""
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in s) + '"'


def write_manifest(folder: Path, **paths: str) -> Path:
    lines = ["k = 5"]
    for section, path in paths.items():
        if section not in ("a", "b"):
            lines += [f"[{section}]", f"path = {toml_str(path)}"]
    lines += ["[arms.a]", f"name = {toml_str(NAME_A)}", f"path = {toml_str(paths['a'])}"]
    lines += ["[arms.b]", f"name = {toml_str(NAME_B)}", f"path = {toml_str(paths['b'])}"]
    out = folder / "triage.toml"
    out.write_text("\n".join(lines) + "\n", "utf-8")
    return out


def write_evaluation(
    folder: Path, corpus: pa.Table | None = None, corpus_dir: str = ".", big: bool = True
) -> Path:
    """Runs A and B, labels, queries and chunks as Parquet, plus a manifest naming the arms.
    `big`: the gold chunk BIG holds 50 MB of text (else a few characters)."""
    pq.write_table(run_table(RUN_A), folder / "a.parquet")
    pq.write_table(run_table(RUN_B), folder / "b.parquet")
    pq.write_table(table(("query_id", "chunk_id", "relevance"), LABELS), folder / "labels.parquet")
    pq.write_table(table(("query_id", "text", "tenant", "query_type"), QUERIES), folder / "queries.parquet")
    if corpus is None:
        body = BIG_HEAD + ("x" * 50_000_000 if big else "xxxx")
        corpus = table(("chunk_id", "header", "text"), [(BIG, BIG_HEADER, body), *CHUNKS])
    (folder / corpus_dir).mkdir(parents=True, exist_ok=True)
    pq.write_table(corpus, folder / corpus_dir / "chunks.parquet", compression="zstd")
    return write_manifest(
        folder,
        labels="labels.parquet",
        queries="queries.parquet",
        corpus=f"{corpus_dir}/chunks.parquet",
        a="a.parquet",
        b="b.parquet",
    )


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_evaluation(tmp_path_factory.mktemp("hostile"))


# -- what the user sees, what the terminal receives ----------------------------------------------
TOKENS = {"\x1b": "␛", "\x07": "␇"}


def shown(raw: str) -> str:
    """How data must look on screen: the contract docs/app.md "The app" states, written out independently
    of the app — ESC as ␛, BEL as ␇, other controls and bidi characters as <U+XXXX>."""
    out = []
    for c in raw:
        if c in TOKENS:
            out.append(TOKENS[c])
        elif re.match(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", c):
            out.append(f"<U+{ord(c):04X}>")
        else:
            out.append(c)
    return "".join(out)


def screen_lines(app: TriageApp) -> list[str]:
    """The current screen as rendered: one string per terminal row."""
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


def visible_text(app: TriageApp, widget: Widget | None = None) -> str:
    """The screen's text, or the part of it `widget`'s content occupies (inside border and
    padding, clipped by any scrolling container)."""
    lines = screen_lines(app)
    if widget is None:
        return "\n".join(lines)
    r = widget.content_region.intersection(app.screen.find_widget(widget).clip)
    return "\n".join(line[r.x : r.right] for line in lines[r.y : r.bottom])


def squash(text: str) -> str:
    """Without whitespace: a payload wrapped over two rows still reads as one."""
    return "".join(text.split())


def assert_shows(app: TriageApp, *payloads: str, widget: Widget | None = None) -> None:
    """Each payload appears literally (its visible form), in `widget` or anywhere on screen."""
    seen = squash(visible_text(app, widget))
    for p in payloads:
        assert squash(shown(p)) in seen, f"{shown(p)!r} not on screen:\n{visible_text(app, widget)}"


def terminal_output(app: TriageApp) -> str:
    """The full frame (modal backgrounds included) as the driver would write it to a terminal."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.file.getvalue()  # type: ignore[attr-defined]


OWN_SEQUENCES = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\d+;\d+H")  # Textual's colours and cursor moves
CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def assert_terminal_clean(app: TriageApp) -> None:
    out = terminal_output(app)
    assert "\x1b]" not in out, "an OSC sequence (title, clipboard, hyperlink) reached the terminal"
    stray = CONTROLS.findall(OWN_SEQUENCES.sub("", out))
    assert not stray, f"raw control characters reached the terminal: {sorted(set(stray))!r}"


def assert_alive(app: TriageApp) -> None:
    assert app.is_running and app.return_code is None, "the app quit"


def check_screen(app: TriageApp, *payloads: str, widget: Widget | None = None) -> None:
    """The three checks of every screen: running, payloads literal, terminal clean."""
    assert_alive(app)
    assert_shows(app, *payloads, widget=widget)
    assert_terminal_clean(app)


# -- driving the app -------------------------------------------------------------------------------
@asynccontextmanager
async def running(manifest: Path, **options: object) -> AsyncIterator[tuple[TriageApp, object]]:
    """The app at 120×36, its evaluation and corpus loaded and the corpus checked (thread workers:
    the checks come after the first paint, later still on a busy machine)."""
    app = TriageApp(manifest, **options)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts shown
        for _ in range(200):
            await app.workers.wait_for_complete()
            await pilot.pause()
            s = app.session
            if (
                s is not None
                and not s.corpus_note.startswith(("corpus loading", "indexing"))
                and not any(c.code == PENDING_CORPUS for c in s.checks)
            ):
                await app.workers.wait_for_complete()  # the overview redrawn with the corpus checks
                await pilot.pause()
                break
            if isinstance(app.screen, OverviewScreen) and app.screen.query_one("#numbers").display is False:
                break  # the evaluation could not be loaded: the overview shows why
        yield app, pilot
        assert_alive(app)


async def press(pilot, *keys: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*keys)
    await pilot.pause()


async def type_text(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*text)  # one key per character: "[", "/", "q" …
    await pilot.pause()


async def wait_for(pilot, app: TriageApp, needle: str, tries: int = 100) -> None:  # type: ignore[no-untyped-def]
    """Pause until `needle` (its visible form) is on screen; workers and timers may be behind."""
    for _ in range(tries):
        if squash(shown(needle)) in squash(visible_text(app)):
            return
        await pilot.pause(0.05)
    raise AssertionError(f"{shown(needle)!r} never appeared:\n{visible_text(app)}")


async def toast(pilot, app: TriageApp, needle: str) -> Widget:  # type: ignore[no-untyped-def]
    """The notification showing `needle`, once it is up (toasts mount a moment after `notify`)."""
    for _ in range(100):
        for widget in app.screen.query("Toast"):
            try:
                if squash(shown(needle)) in squash(visible_text(app, widget)):
                    return widget
            except NoWidget:  # mounted, not yet laid out
                pass
        await pilot.pause(0.05)
    raise AssertionError(f"no notification shows {shown(needle)!r}:\n{visible_text(app)}")


async def click_on(pilot, app: TriageApp, literal: str, at: str) -> None:  # type: ignore[no-untyped-def]
    """Click the characters `at` inside the literal `literal` where it is on screen; if the data
    had been parsed as markup, this is where its `@click` action would sit."""
    literal, at = shown(literal), shown(at)
    for y, line in enumerate(screen_lines(app)):
        x = line.find(literal)
        if x >= 0:
            await pilot.click(offset=(x + literal.index(at), y))
            await pilot.pause()
            return
    raise AssertionError(f"{literal!r} not on screen:\n{visible_text(app)}")


async def focus(pilot, app: TriageApp, widget_id: str) -> None:  # type: ignore[no-untyped-def]
    """Tab until the widget `widget_id` has the focus (the detail's panes)."""
    for _ in range(6):
        if app.focused is not None and app.focused.id == widget_id:
            return
        await press(pilot, "tab")
    raise AssertionError(f"tab never reached #{widget_id}")


async def open_flip(pilot, app: TriageApp, query_id: str) -> None:  # type: ignore[no-untyped-def]
    """From anywhere: `f`, move the cursor to `query_id`'s row with j, `enter`."""
    await press(pilot, "f")
    s = app.session
    assert s is not None
    position = [s.query_id(q) for q in s.flips.tolist()].index(query_id)
    await press(pilot, *["j"] * position, "enter")
    assert isinstance(app.screen, DetailScreen)
    assert app.screen.detail is not None and app.screen.detail.query_id == query_id


# -- the screens -----------------------------------------------------------------------------------
async def test_overview_shows_arm_names_and_check_messages_literally(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        assert isinstance(app.screen, OverviewScreen) and app.session is not None
        check_screen(app, NAME_A, NAME_B)  # title, report head, metrics columns
        # check messages naming an unlabelled query and a missing chunk, both payloads
        check_screen(app, Q5, GONE, widget=app.screen.query_one("#checks"))
        await click_on(pilot, app, Q5, "q5")
        await click_on(pilot, app, NAME_B, "B")
        assert_alive(app)


async def test_flips_and_all_queries_lists_show_every_column_literally(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        await press(pilot, "f")
        assert isinstance(app.screen, FlipsScreen)
        rows = app.screen.query_one(VirtualTable)
        # ids and tenants fit their columns whole; plans and texts are cut to the column width
        # (the flips list's text column is what the hint column leaves: 10 characters at 120)
        check_screen(app, Q1, VAR, CLS, BAIT + "|pipe", widget=rows)
        check_screen(app, LINK[:8], PLAN_A2[:8], Q1_TEXT[:10], Q2_TEXT[:10], widget=rows)
        await click_on(pilot, app, Q2_TEXT[:10], "[@click")
        await press(pilot, "a")
        assert isinstance(app.screen, AllQueriesScreen)
        check_screen(app, Q1, Q5, "unlabelled ␛]0;", widget=app.screen.query_one(VirtualTable))
        await press(pilot, "3")  # hit→miss only
        check_screen(app, Q1, "q2")
        assert Q5 not in visible_text(app)
        await press(pilot, "0")
        order = [app.session.query_id(q) for q in app.screen.order.tolist()]
        await press(pilot, "home", *["j"] * order.index(Q5), "enter")  # Q5: not a flip, not scored
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.detail is not None and app.screen.detail.query_id == Q5
        check_screen(app, Q5, "unlabelled " + OSC0, NAME_A, NAME_B)
        await click_on(pilot, app, Q5, "q5")
        await press(pilot, "o")
        assert isinstance(app.screen, OverviewScreen)


async def test_detail_shows_query_arms_gold_and_lists_literally(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        await open_flip(pilot, app, Q1)
        screen = app.screen
        check_screen(app, Q1, widget=screen.query_one("#detail-title"))
        check_screen(app, Q1_TEXT, "tenant " + VAR, widget=screen.query_one("#query-text"))
        check_screen(app, NAME_A, "plan ann", widget=screen.query_one("#arm-a"))
        check_screen(app, NAME_B, "plan " + LINK, widget=screen.query_one("#arm-b"))
        check_screen(app, BIG, BIG_HEADER, BIG_HEAD + "xxxx", widget=screen.query_one("#gold-text"))
        list_a, list_b = screen.query_one("#list-a"), screen.query_one("#list-b")
        # a row shows the last part of its heading path, then the start of its text
        check_screen(app, BIG, "c1", C2, BAIT[:6], "[$accen", "␛]52", widget=list_a)
        check_screen(app, "<U+202E", "<U+009B>2", widget=list_b)
        # list B has the focus: the preview shows its first row, c1, in full
        check_screen(app, "c1", C1_HEADER, C1_TEXT, widget=screen.query_one("#preview"))
        await click_on(pilot, app, Q1_TEXT, "click me")  # in the query text
        await click_on(pilot, app, C1_TEXT, "click me")  # in the preview
        await click_on(pilot, app, BIG_HEADER, "Leave")  # in the gold pane

        await press(pilot, "n")  # q2: the other regression
        assert screen.detail is not None and screen.detail.query_id == "q2"
        check_screen(app, Q2_TEXT, "tenant " + CLS, widget=screen.query_one("#query-text"))
        check_screen(app, "plan " + PLAN_A2, widget=screen.query_one("#arm-a"))
        check_screen(app, "plan [$accent]postfilter", widget=screen.query_one("#arm-b"))
        check_screen(app, "g2", G2_HEADER, G2_TEXT, widget=screen.query_one("#gold-text"))
        check_screen(app, GONE, widget=screen.query_one("#list-b"))  # absent from the corpus
        await click_on(pilot, app, KEY_Q, "x[/]")  # this `x` would press `q`: quit

        await press(pilot, "n")  # q3: the win
        assert screen.detail is not None and screen.detail.query_id == "q3"
        check_screen(app, Q3_TEXT, "tenant " + BAIT + "|pipe", widget=screen.query_one("#query-text"))
        check_screen(app, "g3", VAR, "gold three " + BOLD, widget=screen.query_one("#gold-text"))
        await press(pilot, "n")  # past the end: a notice, nothing else
        assert screen.detail.query_id == "q3"
        await press(pilot, "p", "p")
        assert screen.detail is not None and screen.detail.query_id == Q1
        check_screen(app, Q1_TEXT)

        # tab between the panes; on list A the preview follows its cursor (row 1: the 50 MB chunk)
        await focus(pilot, app, "golds")
        check_screen(app, BIG_HEADER)
        await focus(pilot, app, "list-a")
        check_screen(app, BIG, BIG_HEADER, BIG_HEAD, widget=screen.query_one("#preview"))
        await press(pilot, "j", "j")
        check_screen(app, C2, VAR, OSC52 + " clip", widget=screen.query_one("#preview"))


async def test_chunk_screen_shows_id_header_and_body_literally(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        await open_flip(pilot, app, Q1)
        await focus(pilot, app, "list-b")
        await press(pilot, "j", "enter")  # B's rank 2: c[/2]
        assert isinstance(app.screen, ChunkScreen) and app.screen.chunk_id == C2
        check_screen(app, "chunk " + C2, "for " + Q1, widget=app.screen.query_one("#chunk-title"))
        check_screen(app, "header", VAR, "body", OSC52 + " clip")
        await press(pilot, "escape", "k", "enter")  # back; B's rank 1: c1
        assert isinstance(app.screen, ChunkScreen) and app.screen.chunk_id == "c1"
        check_screen(app, C1_HEADER, C1_TEXT)
        await click_on(pilot, app, C1_TEXT, "click me")
        await press(pilot, "m")  # short text: "the whole text is shown"
        check_screen(app, C1_TEXT)
        await press(pilot, "escape")
        assert isinstance(app.screen, DetailScreen)
        await press(pilot, "n", "enter")  # q2, list B rank 1: c3 (C1 control, bidi override)
        assert isinstance(app.screen, ChunkScreen) and app.screen.chunk_id == "c3"
        check_screen(app, RLO + "evil", C1 + " c1 control")


async def test_50mb_chunk_opens_capped_without_freezing(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        started = time.perf_counter()
        await open_flip(pilot, app, Q1)
        await focus(pilot, app, "list-a")
        await press(pilot, "enter")  # A's rank 1: the 50 MB gold chunk
        screen = app.screen
        assert isinstance(screen, ChunkScreen) and screen.chunk_id == BIG
        check_screen(app, "chunk " + BIG, "gold, grade 2", widget=screen.query_one("#chunk-title"))
        check_screen(app, BIG_HEADER, BIG_HEAD + "xxxx")
        await press(pilot, "end")
        await wait_for(pilot, app, f"({BIG_LEN - 20_000:,} more characters)")
        assert_terminal_clean(app)
        await press(pilot, "m")  # four times as much
        await press(pilot, "end")
        await wait_for(pilot, app, f"({BIG_LEN - 80_000:,} more characters)")
        assert_terminal_clean(app)
        await press(pilot, "escape")
        await focus(pilot, app, "golds")
        await press(pilot, "enter")  # the gold pane opens the first gold: the same chunk
        assert isinstance(app.screen, ChunkScreen) and app.screen.chunk_id == BIG
        check_screen(app, BIG_HEADER, BIG_HEAD)
        await press(pilot, "escape", "escape")
        elapsed = time.perf_counter() - started
        assert isinstance(app.screen, FlipsScreen)
        assert elapsed < 20, f"visiting the 50 MB chunk took {elapsed:.1f} s: a freeze"


async def test_search_box_takes_payloads_literally(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        await press(pilot, "slash")  # from the overview
        assert isinstance(app.screen, SearchScreen)
        await type_text(pilot, "[CLS] token")
        await wait_for(pilot, app, Q3_TEXT[:25])
        check_screen(app, "[CLS] token", "q3", Q3_TEXT[:25])
        await press(pilot, "escape")
        assert isinstance(app.screen, OverviewScreen)

        await press(pilot, "f", "slash")  # from the flips
        assert isinstance(app.screen, SearchScreen)
        await type_text(pilot, Q1)  # "q" is typed, not the quit key
        await wait_for(pilot, app, Q1_TEXT[:30])
        check_screen(app, Q1, Q1_TEXT[:30])
        await press(pilot, "escape")
        assert isinstance(app.screen, FlipsScreen)

        await press(pilot, "slash")
        await type_text(pilot, "[bold]x[/bold] click me")
        await wait_for(pilot, app, Q1_TEXT[:30])
        check_screen(app, "[bold]x[/bold] click me", Q1)
        await press(pilot, "enter")  # the best match
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.detail is not None and app.screen.detail.query_id == Q1
        check_screen(app, Q1_TEXT)


async def test_help_screen_opens_and_closes(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        await open_flip(pilot, app, "q2")
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        check_screen(app, "Detail — keys here")
        await press(pilot, "escape")
        assert isinstance(app.screen, DetailScreen)
        check_screen(app, Q2_TEXT)


async def test_command_palette_hits_render_literally(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        await press(pilot, "ctrl+p")
        await wait_for(pilot, app, Q1_TEXT[:30])  # discovery: the flips
        check_screen(app, Q1, "q2", Q2_TEXT[:40])
        await type_text(pilot, "[/x]")
        await wait_for(pilot, app, "open query")
        check_screen(app, Q1, Q1_TEXT[:40])
        await press(pilot, "enter")
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.detail is not None and app.screen.detail.query_id == Q1
        check_screen(app, Q1_TEXT)


async def test_pasted_escapes_reach_no_input_raw(evaluation: Path) -> None:
    # A clipboard is data too: bracketed paste hands it to the focused Input, which draws its value
    # as it is. Posted to the app, as the driver does.
    pasted = "leave " + OSC0 + RLO + CLEAR + C1
    async with running(evaluation) as (app, pilot):
        await press(pilot, "f", "slash")
        app.post_message(events.Paste(pasted))
        await pilot.pause()
        check_screen(app, pasted, widget=app.screen.query_one("Input"))
        await press(pilot, "escape")
        await press(pilot, "ctrl+p")
        app.post_message(events.Paste(pasted))
        await pilot.pause()
        check_screen(app, pasted)
        await press(pilot, "escape")
        assert isinstance(app.screen, FlipsScreen)


async def test_tenants_and_slices_show_values_literally(evaluation: Path) -> None:
    async with running(evaluation) as (app, pilot):
        s = app.session
        assert s is not None and s.tenants is not None
        await press(pilot, "t")
        assert isinstance(app.screen, TenantsScreen)
        rows = app.screen.query_one(VirtualTable)
        check_screen(app, VAR, CLS, BAIT + "|pipe", LINK[:10], widget=rows)  # tenant, B's plan
        await press(pilot, "b")  # bars
        check_screen(app, VAR, CLS, BAIT + "|pipe", widget=rows)
        position = [t.name for t in s.tenants.rows].index(VAR)
        await press(pilot, "home", *["j"] * position, "enter")
        assert isinstance(app.screen, SliceQueries)
        check_screen(app, f"tenant {VAR}:", widget=app.screen.query_one("#list-title"))
        check_screen(app, Q1, widget=app.screen.query_one(VirtualTable))
        await press(pilot, "enter")
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.detail is not None and app.screen.detail.query_id == Q1
        check_screen(app, Q1_TEXT)

        await press(pilot, "s")
        screen = app.screen
        assert isinstance(screen, SlicesScreen)
        check_screen(app, "by plan", "[$accent]postfilt", LINK[:16])  # the first key: B's plan
        for _ in range(len(s.slices)):
            if screen.current()[0] == "query_type":
                break
            await press(pilot, "right_square_bracket")
        check_screen(app, "by query_type", QTYPE[:17], "faq")
        position = [x.value for x in screen.current()[1]].index(QTYPE)
        await press(pilot, "home", *["j"] * position, "enter")
        assert isinstance(app.screen, SliceQueries)
        check_screen(app, f"query_type {QTYPE}:", widget=app.screen.query_one("#list-title"))
        await click_on(pilot, app, QTYPE, "howto")


async def test_amending_shows_reviewer_note_and_ids_literally(tmp_path: Path) -> None:
    write_evaluation(tmp_path, big=False)
    labels = tmp_path / EVIL_DIR / "labels.parquet"  # a hostile path: named when a write is refused
    labels.parent.mkdir(parents=True)
    (tmp_path / "labels.parquet").rename(labels)
    manifest = write_manifest(
        tmp_path,
        labels=f"{EVIL_DIR}/labels.parquet",
        queries="queries.parquet",
        corpus="chunks.parquet",
        a="a.parquet",
        b="b.parquet",
    )
    # a damaged amendment file whose very name is hostile: listed as a problem on the L screen
    folder = labels.with_name("labels.amendments")
    folder.mkdir()
    damaged = "[@click=app.quit]bad " + OSC0 + RLO + "[$accent].jsonl"  # no "/" in a file name
    (folder / damaged).write_text("{not json\n", "utf-8")
    reviewer = BAIT + RLO
    note = OSC0 + RLO + " [bold]n[/bold] " + QUIT
    async with running(manifest, reviewer=reviewer) as (app, pilot):
        await open_flip(pilot, app, Q1)
        detail = app.screen
        await focus(pilot, app, "list-b")  # B's rank 1: c1, not gold
        await press(pilot, "G")
        assert isinstance(app.screen, NoteScreen)
        box = app.screen.query_one("Input")
        await type_text(pilot, "[bold]n[/bold] ")
        app.post_message(events.Paste(OSC0 + QUIT))
        await pilot.pause()
        check_screen(app, "[bold]n[/bold] " + OSC0 + QUIT, widget=box)
        box.value = note  # as if it came in whole: stored as given, shown made visible
        await press(pilot, "enter")
        assert app.screen is detail
        check_screen(app, Q1 + ": regression resolved", widget=detail.query_one("#status"))
        check_screen(app, "added by amendment (" + reviewer + ")", widget=detail.query_one("#gold-text"))
        await press(pilot, "2")  # the grade of the amendment just made
        check_screen(app, Q1 + ": graded 2", widget=detail.query_one("#status"))

        await press(pilot, "L")
        assert isinstance(app.screen, AmendmentsScreen)
        rows = app.screen.query_one(VirtualTable)
        check_screen(app, shown(reviewer)[:11], Q1, "c1", shown(note)[:12], widget=rows)
        check_screen(app, damaged, widget=app.screen.query_one("#amend-problems"))
        check_screen(app, EVIL_DIR, widget=app.screen.query_one("#amend-title"))  # the folder
        await click_on(pilot, app, damaged, "bad")
        await press(pilot, "enter")  # the newest amendment's query
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.detail is not None and app.screen.detail.query_id == Q1
        await press(pilot, "u")  # undo: names the query and the chunk
        check_screen(app, Q1 + ": amendment undone (c1)", widget=app.screen.query_one("#status"))

        labels.write_bytes(labels.read_bytes() + b"\0")  # the frozen file changes: writes refused
        await focus(pilot, app, "list-b")
        await press(pilot, "g")
        refused = await toast(pilot, app, "NOT SAVED")  # the error names the frozen file's path
        check_screen(app, Q1, EVIL_DIR + "/labels.parquet", widget=refused)
        check_screen(app, "NOT SAVED", EVIL_DIR, widget=app.screen.query_one("#status"))
    written = [
        line for f in folder.glob("*.jsonl") if f.name != damaged for line in f.read_text().splitlines()
    ]
    assert any(json.loads(line)["note"] == note for line in written)  # the note itself is kept


# -- error messages carry data too: a path, an id --------------------------------------------------


async def test_load_error_names_the_file_literally(tmp_path: Path) -> None:
    write_evaluation(tmp_path, corpus=table(("chunk_id", "header", "text"), CHUNKS))
    (tmp_path / EVIL_DIR).mkdir(parents=True)
    dup = run_table({**RUN_A, Q5: (["f1"], "ann")})
    dup = pa.concat_tables([dup, dup.slice(4, 1)])  # Q5 twice: an input error naming it
    pq.write_table(dup, tmp_path / EVIL_DIR / "a.parquet")
    manifest = write_manifest(
        tmp_path,
        labels="labels.parquet",
        corpus="chunks.parquet",
        a=f"{EVIL_DIR}/a.parquet",
        b="b.parquet",
    )
    async with running(manifest) as (app, pilot):
        assert app.session is None
        check_screen(app, "could not load the evaluation")
        check_screen(app, EVIL_DIR, Q5, widget=app.screen.query_one("#summary"))
        await click_on(pilot, app, "q5", "q5")
        await press(pilot, "f")  # disabled until loaded: nothing happens
        assert isinstance(app.screen, OverviewScreen)
        check_screen(app, EVIL_DIR)


async def test_unreadable_corpus_notice_is_literal(tmp_path: Path) -> None:
    # the corpus's ids read fine (the evaluation loads); its `text` column does not (list of ints)
    rows = [(BIG, BIG_HEADER, [1]), *[(c, h, [2]) for c, h, _ in CHUNKS]]
    manifest = write_evaluation(tmp_path, table(("chunk_id", "header", "text"), rows), EVIL_DIR)
    async with running(manifest) as (app, pilot):
        assert app.session is not None and app.session.corpus is None
        notice = await toast(pilot, app, "corpus unavailable")  # it names the file
        check_screen(app, EVIL_DIR + "/chunks.parquet", "column 'text'", widget=notice)
        await open_flip(pilot, app, Q1)
        note = "text unavailable: " + app.session.corpus_note
        check_screen(app, note, widget=app.screen.query_one("#gold-text"))
        await press(pilot, "enter")
        assert isinstance(app.screen, ChunkScreen)
        check_screen(app, EVIL_DIR, widget=app.screen.query_one("#chunk-body"))


async def test_a_corpus_that_fails_unexpectedly_leaves_a_notice_not_a_dead_worker(
    tmp_path: Path, monkeypatch
) -> None:
    from triage.core.inputs import corpus as corpus_mod

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValueError("Needed to copy 1 chunks with 1 nulls")  # as Arrow words one

    monkeypatch.setattr(corpus_mod, "open_corpus", broken)
    rows = [(c, h, t) for c, h, t in CHUNKS]
    manifest = write_evaluation(tmp_path, table(("chunk_id", "header", "text"), rows), EVIL_DIR)
    async with running(manifest) as (app, pilot):
        assert app.session is not None
        notice = await toast(pilot, app, "corpus unavailable")
        check_screen(app, "ValueError: Needed to copy", widget=notice)
        assert app.session.corpus is None and "ValueError" in app.session.corpus_note


# -- `triage report` -------------------------------------------------------------------------------
# How the Markdown report must write the payloads, spelled out by hand: control characters as
# tokens (␛, ␇, <U+202E>), then every Markdown special (\ | ` * _ [ ] < >) escaped with a backslash
# — the token `<U+202E>` included, its angle brackets being specials too.
MD_NAME_A = r"\[bold\]A\[/bold\]␛\]0;pwned␇"
MD_NAME_B = r"\[@click=app.quit\]B\[/\]\<U+202E\>"
MD_Q1, MD_Q5 = r"q\[/x\]", r"\[@click=app.quit\]q5\[/\]"
MD_GONE = r"\[@click=app.quit\]gone\[/\]"
MD_VAR, MD_CLS, MD_PIPE = r"\[$accent\]styled", r"\[CLS\] token \[SEP\]", r"A\[/foo\]Z\|pipe"
MD_LINK, MD_PLAN_A2 = r"\[link='file:///etc/passwd'\]x\[/link\]", r"␛\]52;c;aGVsbG8=␇plan"
MD_POSTFILTER = r"\[$accent\]postfilter"
MD_QTYPE = r"\[@click=app.quit\]howto\[/\]␛\]0;pwned␇"


def md_tables(out: str) -> dict[str, list[list[str]]]:
    """The Markdown report's tables by the `## ` section (or the `**…**` title) holding them: rows
    of cells, split on unescaped pipes (the header row included, the `|---|` rule left out)."""
    found: dict[str, list[list[str]]] = {}
    section = ""
    for line in out.splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif line.startswith("**") and line.endswith("**") and len(line) > 4:
            section = line[2:-2]
        elif line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            found.setdefault(section, []).append(cells)
    return found


def test_markdown_report_escapes_payloads_in_their_cells(evaluation: Path, capsys) -> None:
    assert main(["report", str(evaluation), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert not CONTROLS.findall(out.replace("\n", "")), "raw control characters in the report"
    assert not re.search(r"(?<!\\)[\[\]]", out), "an unescaped bracket: Markdown link syntax"
    assert out.splitlines()[0] == f"# triage report: {MD_NAME_A} → {MD_NAME_B} at k = 5"
    tables = md_tables(out)
    assert tables["Metrics"][0] == ["metric", f"A {MD_NAME_A}", f"B {MD_NAME_B}", "B − A"]
    messages = {row[1]: row[2] for row in tables["Checks"][1:]}
    assert messages["`labels.unlabelled`"].endswith(f"are not scored: {MD_Q5}")
    assert messages["`corpus.retrieved`"] == (
        f"1 ids retrieved by {MD_NAME_B} are absent from the corpus: {MD_GONE}"
    )
    # The flips, whole rows: # | query | direction | tenant | gold rank A | gold rank B | plan A |
    # plan B | unjudged in the top 5 A/B (q1: A's top 5 holds 4 ids besides its gold, B's 5 not gold)
    # (the query's text and the hint codes, columns 3 and 11, are checked apart below)
    flips = tables["Flips (hit→miss first)"]
    assert flips[0][2] == "text" and flips[0][-1] == "hints"
    assert [row[:2] + row[3:-1] for row in flips[1:]] == [
        ["1", MD_Q1, "hit→miss", MD_VAR, "1", "7 (>k)", "ann", MD_LINK, "4/5"],
        ["2", "q2", "hit→miss", MD_CLS, "1", "absent", MD_PLAN_A2, MD_POSTFILTER, "2/3"],
        ["3", "q3", "miss→hit", MD_PIPE, "6 (>k)", "1", "ann", "ann", "5/2"],
    ]
    assert flips[1][2].startswith(r"\[bold\]x\[/bold\] A\[/foo\]Z") and flips[1][2].endswith("…")
    # q3: A ranks gold 6, k 5
    assert [row[-1] for row in flips[1:]] == [
        "plan (B)",
        "short plan (B)",
        "pushed (A)",
    ]  # q3: A ranks gold 6, k 5
    assert [row[1] for row in tables["Tenants, worst first by B"][1:]] == [MD_VAR, MD_CLS, MD_PIPE, "acme"]
    assert {row[0] for row in tables["By plan"][1:]} == {"ann", MD_POSTFILTER, MD_LINK}
    assert {row[0] for row in tables["By query_type"][1:]} == {"faq", MD_QTYPE}
    for section, rows in tables.items():  # a pipe from the data adds no column to any table
        assert len({len(r) for r in rows}) == 1, (section, rows)


def test_text_report_shows_payloads_as_visible_tokens(evaluation: Path, capsys) -> None:
    assert main(["report", str(evaluation), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert not CONTROLS.findall(out.replace("\n", "")), "raw control characters in the report"
    assert "triage report: [bold]A[/bold]␛]0;pwned␇ → [@click=app.quit]B[/]<U+202E> at k = 5" in out
    for literal in [
        "q[/x]",
        "[@click=app.quit]q5[/]",
        "[@click=app.quit]gone[/]",
        "[$accent]styled",
        "[CLS] token [SEP]",
        "A[/foo]Z|pipe",
        "␛]52;c;aGVsbG8",  # plan A of q2, cut to its column
        "[link='file:///",  # plan B of q1, cut to its column
    ]:
        assert literal in out, literal


async def test_a_corpus_cache_that_cannot_be_written_is_a_notice_and_the_text_still_comes(
    tmp_path: Path, monkeypatch
) -> None:
    from triage.core.inputs import corpus as corpus_mod

    monkeypatch.setattr(corpus_mod, "SMALL", 0)  # this small corpus goes through the cache
    (tmp_path / "root").write_text("a file where the cache folder would be")
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "root"))
    rows = [(c, h, t) for c, h, t in CHUNKS]
    manifest = write_evaluation(tmp_path, table(("chunk_id", "header", "text"), rows), EVIL_DIR)
    async with running(manifest) as (app, pilot):
        assert app.session is not None
        notice = await toast(pilot, app, "corpus cache")
        check_screen(app, "read directly", widget=notice)
        assert app.session.corpus is not None and len(app.session.corpus) == len(rows)


# -- invisible marks: `q150` and `q150` + U+061C never print alike --------------------------------
# Marks that render as nothing: each is shown as the token <U+XXXX> wherever the data is.
# MARK, the property itself, comes from the `regex` package's Unicode tables (tests/invisible_marks.py).
INVISIBLE = ["\u061c", "\u00ad", "\ufe0f", "\u3164", "\u034f", "\u115f", "\u180e", "\ufe00", "\U000e0041"]
Q150 = ["q150", *(f"q150{m}" for m in INVISIBLE)]  # eleven queries that would all print as q150


def token(mark: str) -> str:
    return f"<U+{ord(mark):04X}>"


def tokens(text: str) -> str:
    """`text` as it must be shown: each invisible mark of INVISIBLE as its token."""
    return "".join(token(c) if c in INVISIBLE else c for c in text)


def write_marked(folder: Path) -> Path:
    """Every query regresses (gold g… at rank 1 in A, absent from B's list); the query ids, texts,
    tenants, plans, gold and retrieved chunk ids, headers and arm names all end in a mark."""
    pairs = list(zip(Q150, ["", *INVISIBLE], strict=True))
    pq.write_table(run_table({q: ([f"g{m}", "c1"], f"ann{m}") for q, m in pairs}), folder / "a.parquet")
    pq.write_table(run_table({q: (["c1", f"gone{m}"], "ann") for q, m in pairs}), folder / "b.parquet")
    labels = [(q, f"g{m}", 1) for q, m in pairs]
    pq.write_table(table(("query_id", "chunk_id", "relevance"), labels), folder / "labels.parquet")
    queries = [(q, f"text{m}", f"acme{m}") for q, m in pairs]
    pq.write_table(table(("query_id", "text", "tenant"), queries), folder / "queries.parquet")
    chunks = [(f"g{m}", f"head{m}", f"body{m}") for _, m in pairs] + [("c1", "h", "t")]
    pq.write_table(table(("chunk_id", "header", "text"), chunks), folder / "chunks.parquet")
    lines = (
        ["k = 5"]
        + [f"[{s}]\npath = {toml_str(s + '.parquet')}" for s in ("labels", "queries")]
        + ['[corpus]\npath = "chunks.parquet"']
    )
    lines += ["[arms.a]", f"name = {toml_str('base' + chr(0x3164))}", 'path = "a.parquet"']
    lines += ["[arms.b]", f"name = {toml_str('new' + chr(0xFE0F))}", 'path = "b.parquet"']
    out = folder / "triage.toml"
    out.write_text("\n".join(lines) + "\n", "utf-8")
    return out


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_marked(tmp_path_factory.mktemp("marks"))


def assert_no_raw_mark(out: str, own: str = "") -> None:
    """No invisible mark reaches the reader; `own`: triage's own text holding one (⚠️), taken out first."""
    from invisible_marks import MARK

    stray = MARK.findall(out.replace(own, "").replace("\n", ""))
    assert not stray, f"raw invisible marks shown: {sorted({f'U+{ord(c):04X}' for c in stray})}"


def test_text_report_shows_each_invisible_mark_as_a_token(marked: Path, capsys) -> None:
    assert main(["report", str(marked), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert_no_raw_mark(out)
    assert f"triage report: base{token(chr(0x3164))} → new{token(chr(0xFE0F))} at k = 5" in out
    flips = re.findall(r"│\s+\d+ │ (q150\S*) ", out)  # the flips table's query column
    assert sorted(flips) == sorted(map(tokens, Q150)), "two queries printed alike"
    for q in Q150:
        m = q[4:]
        for shown in (f"text{m}", f"acme{m}", f"ann{m}"):  # text, tenant, plan: in the flips and the tenants
            assert tokens(shown) in out
    assert (
        f"gone, gone{token(INVISIBLE[0])}, gone{token(INVISIBLE[1])}" in out
    )  # B's ids absent from the corpus


def test_markdown_report_shows_each_invisible_mark_as_a_token(marked: Path, capsys) -> None:
    assert main(["report", str(marked), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert_no_raw_mark(out, own="⚠️")  # the report's own warning sign carries U+FE0F
    md = lambda s: tokens(s).replace("<", "\\<").replace(">", "\\>")  # noqa: E731
    flips = md_tables(out)["Flips (hit→miss first)"]
    assert sorted(row[1] for row in flips[1:]) == sorted(map(md, Q150))
    assert sorted(row[4] for row in flips[1:]) == sorted(md(f"acme{q[4:]}") for q in Q150)
    tenants = md_tables(out)["Tenants, worst first by B"]
    assert len({row[1] for row in tenants[1:]}) == len(Q150)
    assert (
        out.splitlines()[0]
        == f"# triage report: {md('base' + chr(0x3164))} → {md('new' + chr(0xFE0F))} at k = 5"
    )


def test_html_report_shows_each_invisible_mark_as_a_token(marked: Path, capsys) -> None:
    import html

    assert main(["report", str(marked), "--format", "html"]) == 0
    out = capsys.readouterr().out
    assert_no_raw_mark(out)
    text = html.unescape(out)
    for q in Q150:
        m = q[4:]
        assert f">{html.escape(tokens(q))}<" in out  # a cell of its own
        assert tokens(f"acme{m}") in text and tokens(f"text{m}") in text
    assert tokens(f"gone{INVISIBLE[0]}") in text


def test_json_report_keeps_the_marks_as_data(marked: Path, capsys) -> None:
    """JSON is data, not display: ids are written as they are, to be read back as they are."""
    assert main(["report", str(marked), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(f["query_id"] for f in doc["flips"]) == sorted(Q150)


def test_error_messages_show_the_marks_in_paths_and_ids(marked: Path, capsys) -> None:
    """A duplicated query id in a run whose folder and name hold marks: the error names both,
    and the message for q150 + U+3164 is not the one for q150."""
    folder = marked.parent / f"runs{chr(0x3164)}{chr(0x061C)}"
    folder.mkdir(exist_ok=True)
    said = {}
    for q in ("q150", f"q150{chr(0x3164)}"):
        runs = pq.read_table(marked.parent / "a.parquet")
        dup = runs.filter(pa.compute.equal(runs["query_id"], q))
        path = folder / f"a{chr(0x00AD)}.parquet"
        pq.write_table(pa.concat_tables([runs, dup]), path)
        argv = ["report", str(path), str(marked.parent / "b.parquet"), "--labels"]
        assert main([*argv, str(marked.parent / "labels.parquet")]) == 2
        said[q] = capsys.readouterr().err
        assert_no_raw_mark(said[q])
        assert "runs<U+3164><U+061C>/a<U+00AD>.parquet" in said[q]
    assert "duplicate query_id 'q150<U+3164>'" in said[f"q150{chr(0x3164)}"]
    assert said["q150"] != said[f"q150{chr(0x3164)}"]
    with pytest.raises(SystemExit):  # a flag's value, quoted back by the parser
        main(["report", str(marked), "--format", f"json{chr(0x3164)}"])
    err = capsys.readouterr().err
    assert_no_raw_mark(err)
    assert "'json<U+3164>'" in err


async def test_the_app_shows_each_invisible_mark_as_a_token(marked: Path) -> None:
    async with running(marked) as (app, pilot):
        check_screen(app, f"base{token(chr(0x3164))}", f"new{token(chr(0xFE0F))}")
        await press(pilot, "f")
        assert isinstance(app.screen, FlipsScreen)
        rows = app.screen.query_one(VirtualTable)
        # the query column is 8 wide at 120 columns: every marked id reads "q150<U+…", none as q150
        listed = re.findall(r"q150\S*", visible_text(app, rows))
        assert sorted(listed) == ["q150", *["q150<U+…"] * len(INVISIBLE)], listed
        assert_no_raw_mark(OWN_SEQUENCES.sub("", terminal_output(app)))
        m = chr(0x3164)  # the Hangul filler: the detail shows the id, its text and tenant whole
        await open_flip(pilot, app, f"q150{m}")
        check_screen(app, tokens(f"q150{m}"), tokens(f"text{m}"), tokens(f"acme{m}"), tokens(f"head{m}"))
        assert_no_raw_mark(OWN_SEQUENCES.sub("", terminal_output(app)))
