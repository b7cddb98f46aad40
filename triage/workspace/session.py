"""The headless application state the UI reads: the current snapshot, the corpus, the reviewer's
decisions, and every result computed from a snapshot, cached under that snapshot's version.

Screens read from a Session and never compute a metric. A decision swaps in a new snapshot (one
assignment: a thread holding the old one keeps consistent numbers). A result computed elsewhere (a
worker) is `offer`ed with the version it was computed for, and kept only while that version is
current: a stale result never reaches a screen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from triage.core.checks.model import Check
from triage.core.evaluation import Cutoffs, Evaluation
from triage.core.inputs.corpus import Corpus
from triage.core.inputs.manifest import Spec
from triage.core.text.search import Searcher
from triage.core.views.hints import FlipHints, Hint, flip_hint_table, hints_for
from triage.core.views.slices import DEFAULT_FLOOR, Slice, Tenants, all_slices, tenants
from triage.labels.records import JUDGEMENT_OPS, Record
from triage.labels.state import LabelState, Pair
from triage.labels.verdicts import Cause, Verdicts
from triage.workspace.detail import QueryDetail, build_detail
from triage.workspace.folder import Folder
from triage.workspace.results import Results, compute
from triage.workspace.review import QUEUED, Change, Review
from triage.workspace.snapshot import Snapshot, open_snapshot

T = TypeVar("T")

# Results read from the evaluation of a label state and nothing else: the deferred corpus check
# (a new snapshot version) does not change them.
OF_THE_LABELS = ("hints:", "slices", "tenants", "n_regressions", "detail", "deltas:")


class Session:
    def __init__(self, snapshot: Snapshot, reviewer: str | None = None, floor: float = DEFAULT_FLOOR) -> None:
        self._snapshot = snapshot
        self.reviewer = reviewer  # --reviewer; else TRIAGE_REVIEWER or the login name
        self.floor = floor  # tenant hit-rate floor (--floor)
        self.corpus: Corpus | None = snapshot.inputs.chunks  # a corpus given as a table is ready
        self.corpus_note = (
            "corpus loading…"
            if snapshot.spec.corpus is not None and self.corpus is None
            else "ready"
            if snapshot.spec.corpus is not None or "corpus" in snapshot.inputs.given
            else "no corpus given; the runs' own texts stand in, and neither arm retrieved this one"
            if self.corpus is not None
            else "no corpus given"
        )
        ev = snapshot.ev  # what follows does not depend on the labels
        self.texts: pa.Array = ev.query_column("text")
        self.tenant_of: pa.Array = ev.query_column("tenant")
        self.searcher = Searcher(ev.query_ids, self.texts)
        self._review: Review | None = None
        self.refusal = ""  # why the disk refused the last decision held in memory
        self._cache: dict[str, tuple[str, Any]] = {}  # name -> (version, value)
        self._lock = threading.Lock()
        self._computing: dict[str, threading.Lock] = {}  # name -> held while one computes it
        self._folder = Folder(snapshot.labels)  # the review folder as last read (`look`)
        self._looking = threading.Lock()  # one look at a time
        self._offered: Synced | None = None  # the last look's result, until a look finds it shown

    # -- the current snapshot --------------------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def ev(self) -> Evaluation:
        return self._snapshot.ev

    @property
    def labels(self) -> LabelState:
        return self._snapshot.labels

    @property
    def checks(self) -> list[Check]:
        return self._snapshot.checks

    @property
    def version(self) -> str:
        return self._snapshot.version

    @property
    def flips(self) -> np.ndarray:
        return self.ev.flips

    @property
    def outcomes(self) -> np.ndarray:
        return self.ev.outcomes

    # -- results cached by version ---------------------------------------------------------------
    def _version(self, name: str, snapshot: Snapshot) -> str:
        """What result `name` of `snapshot` is computed on: the label state alone for a result of
        the evaluation (the corpus check finishing leaves it as it was), else the whole version."""
        return snapshot.labels.version if name.startswith(OF_THE_LABELS) else snapshot.version

    def offer(self, name: str, snapshot: Snapshot, value: object) -> bool:
        """Keep `value`, computed on `snapshot`, if that is what the current snapshot shows."""
        version = self._version(name, snapshot)
        with self._lock:
            if version != self._version(name, self._snapshot):
                return False
            self._cache[name] = (version, value)
            return True

    def cached(self, name: str, compute: Callable[[Snapshot], T]) -> T:
        """The result `name` for the current snapshot, computed now if no one offered it. One
        computation of a name at a time: a second caller (a worker started ahead, a screen that
        needs it now) waits for the first's result instead of computing it beside it."""
        snapshot = self._snapshot
        version = self._version(name, snapshot)
        hit = self._cache.get(name)
        if hit is not None and hit[0] == version:
            return hit[1]  # type: ignore[no-any-return]
        with self._lock:
            computing = self._computing.setdefault(name, threading.Lock())
        with computing:
            hit = self._cache.get(name)
            if hit is not None and hit[0] == version:
                return hit[1]  # type: ignore[no-any-return]
            value = compute(snapshot)
            self.offer(name, snapshot, value)
        return value

    def ready(self, name: str) -> Any:
        """The result `name` if computed for the current snapshot, else None (nothing computed)."""
        hit = self._cache.get(name)
        return hit[1] if hit is not None and hit[0] == self._version(name, self._snapshot) else None

    def slices_of(self, snapshot: Snapshot) -> dict[str, list[Slice]]:
        return all_slices(snapshot.ev)

    def tenants_of(self, snapshot: Snapshot) -> Tenants | None:
        return tenants(snapshot.ev, self.floor)

    @property
    def slices(self) -> dict[str, list[Slice]]:
        return self.cached("slices", self.slices_of)

    @property
    def tenants(self) -> Tenants | None:
        return self.cached("tenants", self.tenants_of)

    def results_of(self, snapshot: Snapshot, corpus: Corpus | None) -> Results:
        """What the app's screens of numbers show of `snapshot`: the call `triage report` and the
        API's `report()` make (`workspace.results.compute`), with the app's choices: the session's
        floor; no flip rows and so no hints (the screens list flips, and read their hints, from the
        session); the cost section's heading paths from `corpus` (None: not loaded yet); the lexical
        overlap and its checks once the corpus is settled (loaded, or none). The UI keeps the
        report made of them per version and corpus state (`ui/screens/live.py` `report`)."""
        return compute(
            snapshot,
            self.floor,
            corpus=None,
            cost_corpus=corpus,
            flips=False,
            overlap_corpus=corpus if snapshot.corpus_checks is not None else "skip",
        )

    def prepare(self, snapshot: Snapshot) -> None:
        """Compute the slices and tenants of `snapshot` (a worker's job) and offer them."""
        self.offer("slices", snapshot, self.slices_of(snapshot))
        self.offer("tenants", snapshot, self.tenants_of(snapshot))

    # -- changes ---------------------------------------------------------------------------------
    def look(self) -> Synced | None:
        """What other processes (the CLI, a second app, another reviewer) wrote to the review folder
        since the last look, read and applied to a new snapshot without changing the session (a
        worker's job: `take` swaps it in). Only the bytes appended since are read (`read_log(...,
        since=)`); the queries whose judgements in force moved are judged again. None: nothing
        changed, or a look is under way."""
        if self._folder.labels.log.folder == Path() or not self._looking.acquire(blocking=False):
            return None
        try:
            return self._look()
        finally:
            self._looking.release()

    def _look(self) -> Synced | None:
        base, folder = self._snapshot, self._folder  # the snapshot first: what is read is at least as new
        if not folder.read() and self._offered is None:  # else: perhaps dropped, or never taken
            return None
        disk, labels = folder.labels, base.labels
        came, went = folder.changes(labels.saved)
        if not came and not went and disk.log.problems == labels.log.problems:
            self._offered = None
            return None
        fresh = disk
        for r in labels.unsaved:  # held in memory: applied after every saved record, as before
            fresh = fresh.with_unsaved(r)
        moved, decided = _moved(labels.decided, fresh.decided)
        judged = any(r.op in JUDGEMENT_OPS for r in came + went)
        if moved or judged or disk.log.problems != labels.log.problems:
            snapshot = base.with_labels(fresh, sorted(moved))
        else:
            snapshot = base.with_verdicts(fresh)
        # What the UI thread reads first of a new snapshot, computed here: its version (the head
        # hashes every record id), the verdicts (every record read), the flips and their order.
        _ = snapshot.version, snapshot.verdicts, snapshot.ev.flip_positions, snapshot.ev.outcomes
        touched = frozenset({r.query_id for r in came + went} | decided)
        self._offered = Synced(base, snapshot, len(came), len(went), touched)
        return self._offered

    def take(self, synced: Synced) -> bool:
        """Swap in what a look built, unless the session moved on from the snapshot it was built on
        meanwhile (a decision, the corpus check): then it is dropped, and the next look builds it
        again on the session as it is then. Whether it was taken. A detail built ahead is kept when
        its query is not one the look touched (its numbers and labels are as they were)."""
        if self._snapshot is not synced.base:
            return False
        with self._lock:
            hit = self._cache.get("detail")
            self._snapshot = synced.snapshot
            if hit is not None and hit[0] == self._version("detail", synced.base):
                if hit[1][1].query_id not in synced.touched:
                    self._cache["detail"] = (self._version("detail", synced.snapshot), hit[1])
        return True

    def sync(self) -> int:
        """`look` and `take` at once, on this thread: how many records other sessions wrote since
        the last look (0: nothing new)."""
        found = self.look()
        return found.new if found is not None and self.take(found) else 0

    def corpus_checked(self, checks: list[Check]) -> None:
        """The deferred corpus check finished (it does not depend on the labels)."""
        self._snapshot = self._snapshot.with_corpus_checks(checks)

    @property
    def review(self) -> Review:
        if self._review is None:
            self._review = Review(self._snapshot, self.reviewer)
        return self._review

    def _decided(self, result: tuple[Snapshot, Change] | None) -> Change | None:
        if result is None:
            return None
        self._snapshot, change = result
        if not change.saved and (change.error != QUEUED or not self.refusal):
            self.refusal = change.error  # the disk's own words; a change queued behind keeps them
        return change

    def add(
        self,
        query_id: str,
        chunk_id: str,
        relevance: int = 1,
        note: str = "",
        evidence: dict | None = None,
        resolves: tuple[str, ...] | None = None,
    ) -> Change:
        """A judgement (grade ≥ 1: gold; 0: judged not relevant), written at once."""
        change = self._decided(
            self.review.add(self._snapshot, query_id, chunk_id, relevance, note, evidence, resolves)
        )
        assert change is not None
        return change

    def verdict(self, query_id: str, cause: Cause, note: str = "") -> Change:
        """The reader's verdict on a query, written at once; when the disk refuses, held in memory
        like a judgement (counted by `unsaved`, written by `retry`). No label or number changes."""
        change = self._decided(self.review.verdict(self._snapshot, query_id, cause, note))
        assert change is not None
        return change

    @property
    def verdicts(self) -> Verdicts:
        return self._snapshot.verdicts

    def hinted_causes(self, q: int) -> tuple[Cause, ...]:
        """The causes the core's hints name for query index `q`, in hint order (a verdict's first
        choices)."""
        hints = hints_for(self.ev, [q], self.corpus).get(q, ())
        return tuple(dict.fromkeys(Cause(h.kind.value) for h in hints))

    def regrade(self, relevance: int) -> Change | None:
        return self._decided(self.review.regrade(self._snapshot, relevance))

    @property
    def grade_window(self) -> bool:
        """Whether a grade given now applies to the add just made (see `Review.grade_window`)."""
        return self._review is not None and self._review.grade_window

    def undo(self) -> Change | None:
        self.review.close()
        return self._decided(self.review.undo(self._snapshot))

    def retry(self) -> int:
        self._snapshot, written = self.review.retry(self._snapshot)
        return written

    @property
    def unsaved(self) -> int:
        """Decisions (judgements and verdicts) applied but not on disk (the disk refused them)."""
        return len(self.labels.unsaved)

    def write_elsewhere(self, folder: Path) -> Path:
        """Write the unsaved decisions to a new session file in `folder`; the file written."""
        self._snapshot, path = self.review.write_elsewhere(self._snapshot, folder)
        return path

    def discard_unsaved(self) -> None:
        self._snapshot = self.review.discard(self._snapshot)

    # -- reading ---------------------------------------------------------------------------------
    @property
    def n_regressions(self) -> int:
        """Hit→miss flips (against exact truth: recall falls): counted once per snapshot version
        (read on every key of a flip list)."""
        return self.cached("n_regressions", lambda snapshot: snapshot.ev.regressions_in_flips)

    def flip_position(self, q: int) -> int:
        """Where query index `q` stands in the flip order (-1: not a flip), from a position per
        query built once per snapshot version: a look-up, not a search of the flips."""
        return int(self.ev.flip_positions[q])

    def flip_label(self, position: int) -> str:
        """ "regression 2 of 6" or "win 3 of 40" for position `position` of the flip order."""
        return flip_label(position, self.n_regressions, len(self.flips))

    def query_id(self, q: int) -> str:
        return self.ev.query_ids[q].as_py()

    def detail(self, q: int) -> QueryDetail:
        """Query `q`'s detail; one prepared ahead by `prefetch` is used while still current."""
        snapshot, corpus = self._snapshot, self.corpus
        key = f"detail:{q}:{corpus is not None}"
        hit = self._cache.get("detail")
        if hit is not None and hit[0] == self._version("detail", snapshot) and hit[1][0] == key:
            return hit[1][1]  # type: ignore[no-any-return]
        return build_detail(snapshot, q, corpus)

    # -- cause hints ---------------------------------------------------------------------------
    def _hints_name(self, corpus: Corpus | None) -> str:
        return f"hints:{corpus is not None}"

    def hints(self) -> FlipHints:
        """Every flip's cause hints (in flip order; chunk text read for the first TEXT_FLIPS), for
        the current snapshot, cached by its version and by whether the corpus is loaded (text
        hints need it): a worker's job at thousands of flips. Columns: a flip's `Hint` values
        are made only when it is read (`FlipHints.of`)."""
        corpus = self.corpus  # read once: the name says what the hints were computed with

        return self.cached(
            self._hints_name(corpus),
            lambda snapshot: flip_hint_table(snapshot.ev, snapshot.ev.flips, corpus),
        )

    def hints_ready(self) -> FlipHints | None:
        """The flips' hints if computed for the current snapshot and corpus state, else None."""
        return self.ready(self._hints_name(self.corpus))  # type: ignore[no-any-return]

    def first_hint(self, q: int, hints: FlipHints | None = None) -> Hint | None:
        """Flip `q`'s first (most specific) hint from `hints` (default: the flips' hints computed
        for the session as it is now); None when it has none or they are not computed yet."""
        ready, at = hints if hints is not None else self.hints_ready(), self.flip_position(q)
        found = ready.of(at) if ready is not None and at >= 0 else ()
        return found[0] if found else None

    def hints_of(self, q: int) -> tuple[Hint, ...]:
        """Query `q`'s hints: the flips' when computed, else computed now for `q` alone (cheap);
        with the corpus, its text is read now when the flips' hints did not read it."""
        ready, at = self.hints_ready(), self.flip_position(q)
        if ready is not None and at >= 0 and (self.corpus is None or at < len(ready.read)):
            return ready.of(at)
        return hints_for(self.ev, [q], self.corpus)[q]

    def prefetch(self, q: int) -> None:
        """Build query `q`'s detail ahead (in a worker): its chunks' pages are read meanwhile."""
        snapshot, corpus = self._snapshot, self.corpus  # read once: the key names what it was built on
        key = f"detail:{q}:{corpus is not None}"
        self.offer("detail", snapshot, (key, build_detail(snapshot, q, corpus)))


@dataclass(frozen=True)
class Synced:
    """What a look at the review folder built on `base`, the session's snapshot then: `snapshot`,
    with `new` records other sessions wrote and without `gone` ones no file holds any more;
    `touched`: the queries whose records or decided judgements changed (the others' details stand)."""

    base: Snapshot
    snapshot: Snapshot
    new: int
    gone: int
    touched: frozenset[str] = frozenset()


def _moved(before: dict[Pair, Record], after: dict[Pair, Record]) -> tuple[set[str], set[str]]:
    """The queries with a pair whose grade in force moved (judged again), and those with a pair
    decided by another record (its reviewer may be another)."""
    other = before.keys() ^ after.keys()
    grades = set(other)
    for pair, r in after.items():
        was = before.get(pair)
        if was is not None and was is not r:
            other.add(pair)
            if was.relevance != r.relevance:
                grades.add(pair)
    return {q for q, _ in grades}, {q for q, _ in other}


def flip_label(position: int, n_regressions: int, n_flips: int) -> str:
    if position < n_regressions:
        return f"regression {position + 1} of {n_regressions}"
    return f"win {position - n_regressions + 1} of {n_flips - n_regressions}"


Source = Spec | Path | Snapshot | Callable[[], Spec | Snapshot] | None


def open_session(
    source: Source, k: Cutoffs = None, reviewer: str | None = None, floor: float = DEFAULT_FLOOR
) -> Session:
    """A Spec, a manifest path, a snapshot already open (the Python API's; `k` is then its own), a
    callable giving a Spec or a snapshot, or None (the bundled sample). The corpus check (every
    retrieved id against the corpus) is left for after the first paint."""
    from triage.workspace.spec import evaluation_spec

    if callable(source):
        source = source()
    if isinstance(source, Snapshot):
        return Session(source, reviewer=reviewer, floor=floor)
    spec = source if isinstance(source, Spec) else evaluation_spec(source or None)
    return Session(open_snapshot(spec, k, corpus_check=False), reviewer=reviewer, floor=floor)
