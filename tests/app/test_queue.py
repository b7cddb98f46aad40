"""The judging queue: headless order, filters, skip and undo; then the app."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import Static

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.corpus import open_corpus
from triage.core.measures.paired import Outcome
from triage.labels.records import ADD, RETRACT, read_file
from triage.ui.app import TriageApp
from triage.ui.screens.queue import QueueScreen
from triage.workspace.queue import Filters, JudgingQueue, content_words, queue_for
from triage.workspace.session import Session, open_session

from app_helpers import wait_loaded

NEAR_DUPLICATE = "driftwood/handbook-2023#009"
SIZE = (140, 45)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


@pytest.fixture
def session(copy: Path) -> Session:
    s = open_session(copy, reviewer="ana")
    assert s.snapshot.spec.corpus is not None
    s.corpus = open_corpus(s.snapshot.spec.corpus)
    return s


def pairs(queue: JudgingQueue) -> list[tuple[str, str]]:
    return [(c.query_id, c.chunk_id) for c in (queue.candidate(i) for i in range(len(queue)))]


def records(copy: Path) -> list:
    return [r for f in sorted((copy / "labels.amendments").glob("*.jsonl")) for r in read_file(f)[0]]


@pytest.mark.slow
def test_the_first_candidate_is_q150s_2023_copy_and_each_pair_is_there_once(session: Session) -> None:
    queue = JudgingQueue(session, session.corpus)
    first = queue.current()
    assert first is not None and (first.query_id, first.chunk_id, first.tier) == ("q150", NEAR_DUPLICATE, 1)
    assert first.evidence == {"arm": "b", "rank": 1} and (first.rank_a, first.rank_b) == (3, 1)
    assert queue.counts == {1: 1, 2: 631, 3: 752}
    found = pairs(queue)
    assert len(found) == len(set(found)) == 1384
    # every candidate is unjudged and in some arm's top k; every unjudged top-k pair is a candidate
    ev, labels = session.ev, session.labels
    expected = set()
    for q in range(ev.n):
        qid = ev.query_ids[q].as_py()
        judged = labels.judged_for(qid)
        for arm in ev.arms:
            expected |= {(qid, c) for c in arm.retrieved(q)[: ev.k] if c not in judged}
    assert set(found) == expected


def test_one_querys_candidates_come_together_by_tier_and_a_b_alternate_in_tier_2(session: Session) -> None:
    queue = JudgingQueue(session, session.corpus)
    qs = queue.q.tolist()
    runs = [q for i, q in enumerate(qs) if i == 0 or q != qs[i - 1]]
    assert len(runs) == len(set(runs))  # a query never comes back once the queue has moved on
    best_tier = [min(int(t) for t, q in zip(queue.tier, qs, strict=True) if q == r) for r in runs]
    assert best_tier == sorted(best_tier)  # queries by their best tier
    assert set(best_tier) >= {1, 2, 3}  # the sample has every tier: the checks above can fail
    alternating = 0
    for r in runs:
        rows = [i for i, q in enumerate(qs) if q == r]
        tiers = [int(queue.tier[i]) for i in rows]
        assert tiers == sorted(tiers)
        arms = "".join(queue.candidate(i).arm for i in rows if queue.tier[i] == 2)
        n_a, n_b = arms.count("a"), arms.count("b")
        both = 2 * min(n_a, n_b)
        assert arms[:both] == "ab" * min(n_a, n_b) and len(set(arms[both:])) <= 1
        alternating += both > 0
    assert alternating > 0
    ev = session.ev
    for i in range(len(queue)):
        c = queue.candidate(i)
        missed = not (ev.a.judged.hit[c.q] and ev.b.judged.hit[c.q])
        assert (c.tier in (1, 2)) == (missed and bool(ev.scored[c.q]))
    for r in runs:  # within a query, tier 3 by best rank
        best = [
            min(x for x in (c.rank_a, c.rank_b) if x)
            for c in map(queue.candidate, range(len(queue)))
            if c.tier == 3 and c.q == r
        ]
        assert best == sorted(best)


def test_without_a_corpus_tier_1_is_empty_and_says_so(copy: Path) -> None:
    queue = JudgingQueue(open_session(copy), None)
    assert queue.counts[1] == 0 and "no corpus" in queue.near_note
    first = queue.current()
    assert first is not None and first.tier == 2


def test_filters(session: Session) -> None:
    queue = JudgingQueue(session, session.corpus)
    regressions = set(session.ev.ids_where(session.outcomes == Outcome.HIT_TO_MISS))
    queue.set_filters(Filters(regressions=True))
    seen = []
    while (c := queue.current()) is not None and c.index not in {s.index for s in seen}:
        seen.append(c)
        queue.skip(c)
    assert seen and {c.query_id for c in seen} <= regressions
    assert len(seen) == len({c.index for c in seen})  # each once, then none left to show
    queue.set_filters(Filters(tenant="acme-legal", arm="a"))
    c = queue.current()
    assert c is not None and session.tenant_of[c.q].as_py() == "acme-legal"
    assert c.arm == "a" and c.rank_a is not None and c.rank == c.rank_a
    assert "0 of" in queue.progress() and "tenant acme-legal" in queue.filters.describe()


@pytest.mark.slow
def test_skip_goes_last_judged_never_appear_and_undo_brings_back(session: Session, copy: Path) -> None:
    queue = JudgingQueue(session, session.corpus)
    first = queue.current()
    assert first is not None
    queue.skip(first)
    second = queue.current()
    assert second is not None and second.index != first.index
    change = queue.decide(second, 0)
    assert change.saved
    third = queue.current()
    assert third is not None and third.index not in (first.index, second.index)
    change, why = queue.undo()
    assert change is not None and why == ""
    again = queue.current()
    assert again is not None and again.index == second.index  # brought back
    queue.decide(again, 0)
    # two more decisions, then walk the rest skipping: the first skipped comes after every other
    for _ in range(2):
        c = queue.current()
        assert c is not None
        queue.decide(c, 0)
    shown = []
    while (c := queue.current()) is not None and c.index not in shown:
        shown.append(c.index)
        queue.skip(c)
    assert second.index not in shown and shown[-1] == first.index  # skipped first: shown last
    assert len(shown) == 1384 - 3
    assert "3 of 1,384 judged · 0 gold added · 0 regressions resolved" == queue.progress()
    on_disk = records(copy)
    assert [r.op for r in on_disk] == [ADD, RETRACT, ADD, ADD, ADD]
    assert on_disk[0].evidence == second.evidence and on_disk[0].relevance == 0


def test_judged_elsewhere_is_passed_over_and_counted(session: Session) -> None:
    queue = JudgingQueue(session, session.corpus)
    first = queue.current()
    assert first is not None
    session.add(first.query_id, first.chunk_id, 1, evidence={"arm": "b", "rank": 1})  # the detail's g
    nxt = queue.current()
    assert nxt is not None and nxt.index != first.index
    assert queue.progress() == "1 of 1,384 judged · 1 gold added · 1 regression resolved"


def test_the_queue_is_kept_per_session(session: Session) -> None:
    queue = queue_for(session)
    c = queue.current()
    assert c is not None
    queue.decide(c, 1)
    assert queue_for(session) is queue  # a decision does not rebuild it


def test_content_words() -> None:
    assert content_words("How do I carry over Annual leave to the next year?") == [
        "carry",
        "over",
        "annual",
        "leave",
        "next",
        "year",
    ]


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def _open_queue(pilot) -> QueueScreen:
    await wait_loaded(pilot)
    await pilot.press("J")
    screen = pilot.app.screen
    assert isinstance(screen, QueueScreen)
    for _ in range(200):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if screen.view is not None:
            break
    assert screen.view is not None
    return screen


@pytest.mark.slow
async def test_the_issues_acceptance_in_the_app(copy: Path, capsys) -> None:
    labels = copy / "labels.parquet"
    before = hashlib.sha256(labels.read_bytes()).hexdigest()
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_queue(pilot)
        assert screen.view is not None
        assert (screen.view.candidate.query_id, screen.view.candidate.chunk_id) == ("q150", NEAR_DUPLICATE)
        assert "q150" in _text(screen, "#queue-query") and NEAR_DUPLICATE in _text(screen, "#queue-candidate")
        assert "driftwood/handbook-2024" in _text(screen, "#queue-gold")
        await pilot.press("y")
        assert "regression resolved" in _text(screen, "#queue-status")
        await pilot.press("n", "n", "n", "backspace")
        assert "undone" in _text(screen, "#queue-status")
        await pilot.press("n")
        assert _text(screen, "#queue-progress").startswith("4 of 1,384 judged · 1 gold added · 1 regression")
        await pilot.press("escape", "J")  # the position is kept
        assert isinstance(app.screen, QueueScreen) and app.screen.view is not None
        assert app.screen.view.candidate.index == screen.view.candidate.index
    on_disk = records(copy)
    assert [r.op for r in on_disk].count(ADD) == 5 and [r.op for r in on_disk].count(RETRACT) == 1
    retracted = {r.retracts for r in on_disk if r.op == RETRACT}
    in_force = [r for r in on_disk if r.op == ADD and r.id not in retracted]
    assert sorted(r.relevance for r in in_force) == [0, 0, 0, 1]
    assert in_force[0].chunk_id == NEAR_DUPLICATE and in_force[0].evidence == {"arm": "b", "rank": 1}
    assert main(["labels", "verify", str(copy)]) == 0
    capsys.readouterr()
    assert hashlib.sha256(labels.read_bytes()).hexdigest() == before
    assert main(["report", str(copy), "--format", "json"]) == 0
    p = json.loads(capsys.readouterr().out)["paired"]
    assert (p["both_hit"], p["both_miss"], p["a_miss_b_hit"], p["a_hit_b_miss"]) == (119, 36, 40, 5)


@pytest.mark.slow
async def test_a_note_is_asked_for_in_the_words_of_its_judgement(copy: Path) -> None:
    """`N` asks why the passage does not answer, `G` why it does; each note lands on its record."""
    from triage.ui.screens.note import NoteScreen

    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await _open_queue(pilot)
        asked = (("N", "does not answer", "wrong edition"), ("G", "answers the query", "same table"))
        for key, words, note in asked:
            await pilot.press(key)
            note_screen = app.screen
            assert isinstance(note_screen, NoteScreen)
            prompt = str(note_screen.query_one(Static).render())
            assert words in prompt and ("not relevant" in prompt) == (key == "N")
            await pilot.press(*note, "enter")
            assert not isinstance(app.screen, NoteScreen)
    on_disk = records(copy)
    assert [(r.relevance, r.note) for r in on_disk] == [(0, "wrong edition"), (1, "same table")]


@pytest.mark.slow
async def test_backspace_with_nothing_to_undo_says_so_where_outcomes_are_said(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_queue(pilot)
        await pilot.press("space", "backspace")  # a skip is no decision
        status = _text(screen, "#queue-status")
        assert "nothing undone" in status and "a skip is none" in status
    assert records(copy) == []


@pytest.mark.slow
async def test_fifty_decisions_take_fifty_keys(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await _open_queue(pilot)
        for _ in range(50):
            await pilot.press("n")
    on_disk = records(copy)
    assert len(on_disk) == 50 and all(r.op == ADD and r.relevance == 0 for r in on_disk)
    assert len({(r.query_id, r.chunk_id) for r in on_disk}) == 50


@pytest.mark.slow
async def test_a_refused_write_says_not_saved(copy: Path) -> None:
    (copy / "labels.amendments").write_text("not a folder")
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_queue(pilot)
        await pilot.press("y")
        assert "NOT SAVED" in _text(screen, "#queue-status")
        assert len(app.session.labels.unsaved) == 1
        assert app.session.ev.outcomes[app.session.ev.query_index("q150")] == Outcome.BOTH_HIT


@pytest.mark.slow
async def test_filter_keys_and_help(copy: Path) -> None:
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_queue(pilot)
        await pilot.press("R")
        assert "regressions only" in _text(screen, "#queue-title")
        await pilot.press("T")
        assert "tenant acme-legal" in _text(screen, "#queue-title")
        await pilot.press("A")
        assert "arm A" in _text(screen, "#queue-title")
        await pilot.press("question_mark")
        assert "Judging queue" in str(app.screen.query_one(Static).render())


@pytest.mark.slow
async def test_keys_pressed_while_the_queue_builds_are_kept_and_applied_in_order(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`J y n` typed at once: the build is held back until both keys are in; they are said to be
    kept, then applied to the first two candidates when the queue is ready — none is lost."""
    import threading

    from triage.ui.screens import queue as queue_screen

    ready, real = threading.Event(), queue_screen.queue_for

    def held(session: Session) -> JudgingQueue:
        assert ready.wait(10)
        return real(session)

    monkeypatch.setattr(queue_screen, "queue_for", held)
    app = TriageApp(copy, reviewer="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("J", "y", "n")
        screen = app.screen
        assert isinstance(screen, QueueScreen) and screen.queue is None
        assert "2 keys kept" in _text(screen, "#queue-status")
        ready.set()
        for _ in range(200):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if screen.queue is not None:
                break
        assert _text(screen, "#queue-progress").startswith("2 of 1,384 judged · 1 gold added")
    on_disk = records(copy)
    assert [(r.chunk_id, r.relevance) for r in on_disk][0] == (NEAR_DUPLICATE, 1)
    assert [r.relevance for r in on_disk] == [1, 0]
