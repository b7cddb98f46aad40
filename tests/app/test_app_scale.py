"""The app at scale: what a key in the detail screen computes must not grow with the number of
queries or flips, and start-up work the first screen does not need stays off the UI thread.

Each rule is checked on small evaluations where it can fail: the per-query readings the detail
uses are compared with the label state's own (whole-table) answers, with and without
amendments, and the keys are driven with the whole-table readings made to fail."""

from __future__ import annotations

import io
import threading
from functools import cached_property
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from textual.widgets import Static

from triage.core.checks.suite import PENDING_CORPUS
from triage.core.evaluation import Evaluation
from triage.core.inputs.manifest import from_manifest
from triage.core.measures.paired import Outcome
from triage.labels.state import LabelState
from triage.workspace.detail import build_detail, judged_grades
from triage.workspace.session import open_session

from app_helpers import open_flips, wait_loaded
from conftest import manifest, write_parquet


def drawn(screen, selector: str) -> str:  # type: ignore[no-untyped-def]
    """What a Static shows, as plain text."""
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(screen.query_one(selector, Static).content)
    return console.export_text()


def test_detail_grades_are_the_label_states_with_and_without_amendments(tiny: Path) -> None:
    s = open_session(tiny)
    ev = s.ev
    before = {ev.query_ids[q].as_py(): judged_grades(ev, q) for q in range(ev.n)}
    assert before == {qid: s.labels.judged_for(qid) for qid in before}
    assert before["q4"] == {"x8": 0}  # the frozen file's own "not relevant"
    s.add("q2", "x4", 0, evidence={"arm": "b", "rank": 2})  # judged not relevant
    s.add("q2", "x3", 1, evidence={"arm": "b", "rank": 1})  # new gold
    s.add("q3", "x6", 2, evidence={"arm": "a", "rank": 2})
    ev = s.ev
    after = {ev.query_ids[q].as_py(): judged_grades(ev, q) for q in range(ev.n)}
    assert after == {qid: s.labels.judged_for(qid) for qid in after}
    assert after["q2"] == {"g2": 2, "x3": 1, "x4": 0} and after["q3"] == {"g3": 1, "x6": 2}
    d = build_detail(s.snapshot, ev.query_index("q2"), None)
    marks = {r.chunk_id: r.judgement.value for r in d.b.rows}
    assert marks == {"x3": "gold", "x4": "not relevant", "g2": "gold"}


def test_detail_query_fields_come_from_the_queries_files_row_of_that_query(tiny: Path) -> None:
    folder = tiny.parent
    write_parquet(
        folder / "queries.parquet",
        [  # q2 and q1 in another order than the runs; q3 absent
            {"query_id": "q2", "text": "refund window", "tenant": "acme", "owner": "ops"},
            {"query_id": "q1", "text": "parental leave", "tenant": "globex", "owner": None},
        ],
    )
    manifest(folder, "a.parquet", "b.parquet", "labels.parquet", k=None, queries="queries.parquet")
    s = open_session(from_manifest(folder / "triage.toml"))
    ev = s.ev
    d1, d2, d3 = (build_detail(s.snapshot, ev.query_index(q), None) for q in ("q1", "q2", "q3"))
    assert (d1.text, d1.fields.get("tenant"), "owner" in d1.fields) == ("parental leave", "globex", False)
    assert (d2.text, d2.fields.get("tenant"), d2.fields.get("owner")) == ("refund window", "acme", "ops")
    assert d3.text is None and "tenant" not in d3.fields and "owner" not in d3.fields


def test_flip_positions_and_the_regression_count_follow_each_new_version() -> None:
    s = open_session(None)  # the bundled sample, its amendments in this test's own data folder
    flips = s.flips
    assert [s.flip_position(int(q)) for q in flips] == list(range(len(flips)))
    not_flips = np.setdiff1d(np.arange(s.ev.n), flips)
    assert {s.flip_position(int(q)) for q in not_flips} == {-1}
    assert s.n_regressions == 6 and s.flip_label(0) == "regression 1 of 6"
    # A gold id found in B's own top k makes the first regression a hit in both arms.
    q = int(flips[0])
    assert s.outcomes[q] == Outcome.HIT_TO_MISS
    top = s.ev.b.retrieved(q)[0]
    s.add(s.query_id(q), top, 1, evidence={"arm": "b", "rank": 1})
    assert s.outcomes[q] == Outcome.BOTH_HIT
    assert s.n_regressions == 5 and s.flip_label(0) == "regression 1 of 5"
    assert s.flip_position(q) == -1 and s.flip_position(int(s.flips[0])) == 0


@pytest.mark.slow
async def test_n_and_p_read_one_query_not_every_label_or_flip(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from triage.core.views import hints as hints_mod
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen
    from triage.workspace import session as session_mod

    made = {"positions": 0, "flip_hints": 0}
    positions, table = Evaluation.flip_positions.func, session_mod.flip_hint_table

    def counted_positions(ev):  # type: ignore[no-untyped-def]
        made["positions"] += 1
        return positions(ev)

    def counted_hints(*args):  # type: ignore[no-untyped-def]
        made["flip_hints"] += 1
        return table(*args)

    counted = cached_property(counted_positions)
    counted.__set_name__(Evaluation, "flip_positions")
    monkeypatch.setattr(Evaluation, "flip_positions", counted)
    monkeypatch.setattr(session_mod, "flip_hint_table", counted_hints)
    monkeypatch.setattr(hints_mod, "TEXT_FLIPS", 2)  # the 3rd regression's text is read when opened
    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await open_flips(pilot)

        def scan(*_: object) -> object:
            raise AssertionError("a key scanned every label row")

        monkeypatch.setattr(LabelState, "judged_for", scan)
        monkeypatch.setattr(LabelState, "gold_for", scan)
        counts = dict(made)
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        labels = []
        for key in "nnnnpp":
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            labels.append(str(screen.query_one("#detail-title").render()))
        assert [next(w for w in ("1 of", "2 of", "3 of", "4 of", "5 of") if w in t) for t in labels] == [
            "2 of",
            "3 of",
            "4 of",
            "5 of",
            "4 of",
            "3 of",
        ]
        assert made == counts  # no flip-position table, no flips' hints built again per key
        # The 3rd regression is past the flips whose text was read: its hint line reads it now
        # (a text hint), while the flips' own hints for it are the text-free rules alone.
        s = app.session
        assert s is not None and screen.position == 2
        hint = str(screen.query_one("#hint-line").render())
        ready = s.hints_ready()
        assert ready is not None and len(ready.read) == 2
        plain = {h.kind.code for h in ready.of(2)}
        assert "header" in hint and "header" not in plain


def builds_on_the_ui_thread(monkeypatch) -> list[bool]:  # type: ignore[no-untyped-def]
    """From now on, each report the app's screens build appends whether the UI thread built it."""
    from triage.ui.screens import live

    where: list[bool] = []
    build = live.report_of

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        where.append(threading.current_thread() is threading.main_thread())
        return build(*args, **kwargs)

    monkeypatch.setattr(live, "report_of", recorded)
    return where


@pytest.mark.slow
async def test_the_overviews_report_is_built_off_the_ui_thread(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from triage.ui.app import TriageApp

    where = builds_on_the_ui_thread(monkeypatch)
    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.session is not None and app.session.corpus is not None
        assert all(c.code != PENDING_CORPUS for c in app.session.checks)
        title = str(app.screen.query_one("#title").render())
        assert "at k = 5" in title and "loading" not in title  # the numbers are drawn
    # the first report, the one after the corpus check, and the one with the corpus loaded
    assert len(where) >= 2 and not any(where)


@pytest.mark.slow
async def test_background_workers_start_after_the_numbers_are_drawn(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from triage.ui.app import TriageApp
    from triage.ui.screens.overview import OverviewScreen

    seen: dict[str, object] = {}
    ready, background = TriageApp.on_session_ready, TriageApp._background

    def on_ready(self, message):  # type: ignore[no-untyped-def]
        ready(self, message)
        seen["at_ready"] = {w.group for w in self.workers}

    def started(self, session):  # type: ignore[no-untyped-def]
        overview = self.screen_stack[0]
        assert isinstance(overview, OverviewScreen)
        seen["drawn"] = overview.shown_version == session.version
        background(self, session)
        seen["after"] = {w.group for w in self.workers}

    monkeypatch.setattr(TriageApp, "on_session_ready", on_ready)
    monkeypatch.setattr(TriageApp, "_background", started)
    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        assert app.session is not None and app.session.corpus is not None
    assert not {"prepare", "corpus", "corpus-check"} & seen["at_ready"]  # type: ignore[operator]
    assert seen["drawn"] is True
    assert {"prepare", "corpus", "corpus-check"} <= seen["after"]  # type: ignore[operator]


@pytest.mark.slow
async def test_back_on_the_overview_after_an_amendment_the_numbers_are_rebuilt_off_the_ui_thread(
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from triage.ui.app import TriageApp

    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        s = app.session
        assert s is not None
        before = drawn(app.screen, "#summary")
        where = builds_on_the_ui_thread(monkeypatch)
        await pilot.press("f")
        q = int(s.flips[0])  # a regression; B's own first id made gold turns it into a hit in both
        s.add(s.query_id(q), s.ev.b.retrieved(q)[0], 1, evidence={"arm": "b", "rank": 1})
        await pilot.press("o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert where == [False]  # one build, in a worker
        title = str(app.screen.query_one("#title").render())
        assert "at k = 5" in title and "updating" not in title
        assert app.screen.shown_version == s.version  # type: ignore[attr-defined]
        after = drawn(app.screen, "#summary")
        assert "hit rate" in before and after != before  # B's hit rate moved


def test_results_of_the_evaluation_outlive_the_corpus_check_and_the_report_does_not() -> None:
    from triage.core.checks.suite import check_corpus
    from triage.ui.screens.live import report, report_ready

    s = open_session(None)  # the corpus check deferred, as the app opens it
    hints, slices, tenants, n_reg = s.hints(), s.slices, s.tenants, s.n_regressions
    report(s)
    before = s.version
    s.corpus_checked(check_corpus(s.ev.inputs))
    assert s.version != before  # a new version: the checks are in
    assert s.hints_ready() is hints and s.slices is slices and s.tenants is tenants
    assert s.n_regressions == n_reg
    assert not report_ready(s)  # the report shows the checks: built again
    q = int(s.flips[0])
    s.prefetch(q)
    s.corpus_checked(check_corpus(s.ev.inputs))
    assert s.detail(q) is s.detail(q)  # the detail built ahead still serves the key
    s.add(s.query_id(q), s.ev.b.retrieved(q)[0], 1, evidence={"arm": "b", "rank": 1})
    assert s.hints_ready() is None and s.slices is not slices  # a decision: computed again


def test_two_asking_for_one_result_at_once_compute_it_once() -> None:
    s = open_session(None)
    started, release, calls = threading.Event(), threading.Event(), []

    def slow(snapshot):  # type: ignore[no-untyped-def]
        calls.append(threading.current_thread().name)
        started.set()
        release.wait(5)
        return object()

    got: list[object] = []
    first = threading.Thread(target=lambda: got.append(s.cached("x", slow)), name="first")
    first.start()
    assert started.wait(5)
    second = threading.Thread(target=lambda: got.append(s.cached("x", slow)), name="second")
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting for the first's result, not computing its own
    release.set()
    first.join(5)
    second.join(5)
    assert calls == ["first"] and len(got) == 2 and got[0] is got[1]


@pytest.mark.slow
async def test_the_flips_hints_are_computed_before_the_list_is_first_opened(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from triage.ui.app import TriageApp
    from triage.workspace import session as session_mod

    made: list[bool] = []
    table = session_mod.flip_hint_table

    def counted(ev, flips, corpus):  # type: ignore[no-untyped-def]
        made.append(corpus is not None)
        return table(ev, flips, corpus)

    monkeypatch.setattr(session_mod, "flip_hint_table", counted)
    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await app.workers.wait_for_complete()
        s = app.session
        assert s is not None and s.corpus is not None
        assert s.hints_ready() is not None and made[-1] is True  # with the corpus's text
        n = len(made)
        await pilot.press("f")
        await pilot.pause()
        assert len(made) == n  # nothing computed on `f`
        assert app.screen.drawn_hints is s.hints_ready()  # type: ignore[attr-defined]


@pytest.mark.slow
async def test_hints_that_come_in_under_the_detail_are_drawn_when_the_list_is_back(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.lists import FlipsScreen
    from triage.workspace import session as session_mod

    gate, table = threading.Event(), session_mod.flip_hint_table

    def gated(*args):  # type: ignore[no-untyped-def]
        gate.wait(10)
        return table(*args)

    monkeypatch.setattr(TriageApp, "hints_ahead", lambda self, session: None)  # the list computes them
    monkeypatch.setattr(session_mod, "flip_hint_table", gated)
    fills: list[str] = []
    fill = FlipsScreen.fill

    def counted_fill(self, cursor=None):  # type: ignore[no-untyped-def]
        fills.append(type(self.app.screen).__name__)
        return fill(self, cursor)

    monkeypatch.setattr(FlipsScreen, "fill", counted_fill)
    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        await pilot.pause()
        flips = app.screen
        assert isinstance(flips, FlipsScreen) and flips.drawn_hints is None  # "…": being computed
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        drawn = len(fills)
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(fills) == drawn  # the hidden list is left alone while the detail has the keys
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is flips and flips.drawn_hints is not None and len(fills) == drawn + 1


@pytest.mark.slow
async def test_a_list_drawn_before_the_corpus_shows_its_text_hints_when_it_is_back(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from triage.core.inputs import corpus as corpus_mod
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.lists import FlipsScreen

    gate, real = threading.Event(), corpus_mod.open_corpus

    def gated(*args, **kwargs):  # type: ignore[no-untyped-def]
        gate.wait(20)
        return real(*args, **kwargs)

    monkeypatch.setattr(corpus_mod, "open_corpus", gated)

    async def until(ok, what: str) -> None:  # type: ignore[no-untyped-def]
        for _ in range(1000):
            if ok():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"never: {what}")

    app = TriageApp()
    async with app.run_test(size=(120, 36)) as pilot:
        await until(lambda: app.session is not None, "loaded")
        s = app.session
        assert s is not None and s.corpus is None
        await pilot.press("f")
        flips = app.screen
        assert isinstance(flips, FlipsScreen)
        await until(lambda: flips.drawn_hints is not None, "the hints without the corpus drawn")
        plain = flips.drawn_hints
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        gate.set()
        await until(lambda: s.corpus is not None and s.hints_ready() is not None, "the text hints")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is flips and flips.drawn_hints is s.hints_ready() and flips.drawn_hints is not plain
        q = int(s.flips[0])
        first = s.first_hint(q)
        assert first is not None and first.kind.code == "window"  # the sample's first regression
