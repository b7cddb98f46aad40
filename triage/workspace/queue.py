"""The judging queue: every unjudged passage in either arm's top k, one at a time, ordered by what
deciding it can change.

Candidates are (query, chunk) pairs, each once however many arms retrieved it, that no judgement
(frozen or in force) decides. One query's candidates come together: queries by the best tier any of
their candidates has (then flips first, in flip order), and within a query by tier. The tiers:

1. near-duplicates of a gold chunk of that query (`core.text.suggest.near_duplicates`, the rule behind
   the detail's `≈`), for the queries some arm misses: the likeliest missing labels. Bounded: the
   comparison runs for at most `NEAR_LIMIT` such queries (flips first), corpus look-ups batched per
   query; without a corpus this tier is empty, and `near_note` says so;
2. the other passages in the top k of a query some arm misses (flips first, in flip order, then the
   queries both arms miss), taken from A's and B's results in turn (a, b, a, b, … while both
   have some), so the evidence does not favour one arm;
3. the rest, by best rank (then the same query order).

A pair both arms retrieved is taken from the arm that ranked it better (a tie: arm a for an even
query index, b for an odd one); with the arm filter set, from that arm. The candidate list is built
once, vectorised over the arms' top-k lists, and kept per session (`queue_for`): a decision moves
a cursor, it does not rebuild anything. Skip puts a candidate at the end (nothing is written); a
decision is one judgement through `Session.add` (written and fsync'd before it returns); undo
retracts the last decision (`Session.undo`) and brings its candidate back first. A candidate that
was judged elsewhere meanwhile (the detail's `g`, another reviewer's file) is passed over.
"""

from __future__ import annotations

import re
import weakref
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.evaluation import Arm, Evaluation
from triage.core.ids import codes
from triage.core.inputs.corpus import Chunk, Corpus
from triage.core.measures.gold import KEY, contains, pairs_of
from triage.core.measures.hits import positions_in_runs
from triage.core.measures.paired import Outcome
from triage.core.text.suggest import near_duplicates
from triage.workspace.review import Change
from triage.workspace.session import Session
from triage.workspace.snapshot import Snapshot

NEAR_LIMIT = 2_000  # queries with a miss compared for near-duplicates at most (flips first)
TIERS = {1: "near-duplicate of a gold passage", 2: "top k of a query an arm misses", 3: "top k"}
ARMS = ("a", "b")

PENDING, DECIDED, SKIPPED, ELSEWHERE = 0, 1, 2, 3

STOPWORDS = frozenset(
    """a an and are as at be by can do does for from has have how i in is it its my of on or our
    the to was we what when where which who why will with you your""".split()
)


def content_words(text: str | None) -> list[str]:
    """The query's words worth highlighting: `\\w+` runs of two or more characters that are not
    stop words, lower-cased, each once."""
    words = re.findall(r"\w+", (text or "").lower())
    return list(dict.fromkeys(w for w in words if len(w) > 1 and w not in STOPWORDS))


def words_pattern(words: list[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching any of `words` as a whole word; None without words."""
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    index: int  # position in the queue's candidate arrays
    q: int
    query_id: str
    chunk_id: str
    tier: int  # 1, 2, 3 (see TIERS)
    arm: str  # "a" | "b": the arm it is taken from (the evidence)
    rank: int  # its rank in that arm
    rank_a: int | None  # its rank in each arm's top k (None: not in that top k)
    rank_b: int | None

    @property
    def evidence(self) -> dict[str, object]:
        return {"arm": self.arm, "rank": self.rank}


@dataclass(frozen=True)
class CandidateView:
    """What the queue screen shows of one candidate."""

    candidate: Candidate
    text: str | None  # the query's text
    outcome: Outcome
    k: int
    chunk: Chunk | None  # None: no corpus, or not in it
    golds: list[tuple[str, int, Chunk | None]]  # the query's gold: (id, grade, chunk)
    ranks: dict[str, int | None]  # where each arm ranked the passage in its whole stored list
    words: list[str] = field(default_factory=list)  # the query's content words
    similar_to: tuple[str, float] | None = None  # tier 1: (the gold id, body similarity)


@dataclass(frozen=True)
class Filters:
    regressions: bool = False
    tenant: str | None = None
    arm: str | None = None  # "a" | "b"

    def describe(self) -> str:
        parts = []
        if self.regressions:
            parts.append("regressions only")
        if self.tenant is not None:
            parts.append(f"tenant {self.tenant}")
        if self.arm is not None:
            parts.append(f"arm {self.arm.upper()}")
        return ", ".join(parts) or "no filter"


def _top(arm: Arm, ev: Evaluation, vocab_parts: list[pa.Array]) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Every unjudged (query, rank, chunk id) of the arm's top k, an id listed twice once."""
    run = arm.run
    row_query = codes.encode(run.table.column("query_id"), ev.query_ids).astype(np.int64)
    top = pc.list_slice(run.retrieved, 0, ev.k)
    if isinstance(top, pa.ChunkedArray):
        top = top.combine_chunks()
    flat = top.flatten()
    offsets = top.offsets.to_numpy().astype(np.int64)
    offsets -= offsets[0]
    pos = np.arange(len(flat), dtype=np.int64)
    row = np.searchsorted(offsets, pos, side="right") - 1
    q = row_query[row]
    rank = pos - offsets[row] + 1
    is_judged = contains(pairs_of(ev.gold), q, flat) | contains(ev.not_relevant, q, flat)
    keep = ~is_judged & flat.is_valid().to_numpy(zero_copy_only=False)
    where = pa.array(np.flatnonzero(keep))
    vocab_parts.append(flat.take(where))
    return q[keep], rank[keep], flat.take(where)


def _grouped_order(
    q: np.ndarray,
    tier: np.ndarray,
    prio: np.ndarray,
    from_b: np.ndarray,
    rank_a: np.ndarray,
    rank_b: np.ndarray,
    best: np.ndarray,
) -> np.ndarray:
    """The queue's order: one query's candidates together, a query never coming back once the queue
    has moved on. Queries by their best (lowest) tier, then in query order (`prio`); within one
    query, tier 1 by best rank, then tier 2 taken from A's and B's results in turn (each arm's by
    its rank: a, b, a, b, … while both have some), tier 3 by best rank."""
    n = len(q)
    if n == 0:
        return np.zeros(0, np.int64)
    query_tier = np.full(int(q.max()) + 1, 3, np.int8)
    np.minimum.at(query_tier, q, tier)
    # each tier-2 candidate's place among its query's candidates from the same arm, by rank
    own_rank = np.where(from_b, rank_b, rank_a)
    turn = np.zeros(n, np.int64)
    two = np.flatnonzero(tier == 2)
    if len(two):
        group = q[two] * 2 + from_b[two]
        by = two[np.lexsort((own_rank[two], group))]
        place = positions_in_runs(q[by] * 2 + from_b[by]) - 1
        turn[by] = 2 * place + from_b[by]
    return np.lexsort((best, turn, tier, prio[q], query_tier[q]))


class JudgingQueue:
    """The candidates of one session, and where the reviewer is among them."""

    def __init__(self, session: Session, corpus: Corpus | None, near_limit: int = NEAR_LIMIT) -> None:
        self.session = session
        snapshot = session.snapshot
        ev = snapshot.ev
        self.k = ev.k
        self._build(snapshot, corpus, near_limit)
        n = len(self.q)
        self.state = np.zeros(n, np.int8)
        self.grades: dict[int, int] = {}  # candidate index -> grade, for the judged ones
        self.front: list[int] = []  # brought back by undo: shown first (last undone first)
        self.tail: deque[int] = deque()  # skipped, in skip order
        self.decisions: list[int] = []  # the queue's decisions in force, in order (undo pops)
        self.filters = Filters()
        self._mask = np.ones(n, bool)
        self._cursor = 0
        self.regressions_at_open = np.flatnonzero(ev.outcomes == Outcome.HIT_TO_MISS)
        self.refusal = ""

    # -- building ----------------------------------------------------------------------------
    def _build(self, snapshot: Snapshot, corpus: Corpus | None, near_limit: int) -> None:
        ev = snapshot.ev
        parts: list[pa.Array] = []
        qa, ra, ca = _top(ev.a, ev, parts)
        qb, rb, cb = _top(ev.b, ev, parts)
        vocabulary = codes.distinct(pa.chunked_array(parts, pa.string()))
        code_a = codes.encode(ca, vocabulary).astype(np.int64)
        code_b = codes.encode(cb, vocabulary).astype(np.int64)
        keys, inverse = np.unique(np.concatenate([qa * KEY + code_a, qb * KEY + code_b]), return_inverse=True)
        big = np.iinfo(np.int64).max
        rank_a = np.full(len(keys), big, np.int64)
        rank_b = np.full(len(keys), big, np.int64)
        np.minimum.at(rank_a, inverse[: len(qa)], ra)
        np.minimum.at(rank_b, inverse[len(qa) :], rb)
        rank_a[rank_a == big] = 0
        rank_b[rank_b == big] = 0
        q = keys // KEY
        code = keys % KEY
        # the arm it is taken from: the better rank; a tie by the query index's parity
        in_a, in_b = rank_a > 0, rank_b > 0
        from_b = ~in_a | (in_b & ((rank_b < rank_a) | ((rank_b == rank_a) & (q % 2 == 1))))
        best = np.where(from_b, rank_b, rank_a)
        # the query order: flips in flip order, then every other query by index
        prio = ev.n + np.arange(ev.n, dtype=np.int64)
        prio[ev.flips] = np.arange(len(ev.flips), dtype=np.int64)
        hit_a, hit_b = ev.a.judged.hit, ev.b.judged.hit
        some_miss = ev.scored & ~(hit_a & hit_b)
        tier = np.where(some_miss[q], 2, 3).astype(np.int8)
        self.vocabulary = vocabulary
        self.near_note, near = self._near(ev, corpus, q, code, tier, prio, some_miss, near_limit)
        tier[near] = 1

        order = _grouped_order(q, tier, prio, from_b, rank_a, rank_b, best)
        self.q = q[order]
        self.code = code[order]
        self.tier = tier[order]
        self.rank_a = rank_a[order]
        self.rank_b = rank_b[order]
        self.from_b = from_b[order]
        self.counts = {t: int((self.tier == t).sum()) for t in (1, 2, 3)}
        self.tenant_of = ev.query_column("tenant")
        present = pc.unique(self.tenant_of.take(pa.array(np.unique(self.q)))).drop_null().to_pylist()
        self.tenants: list[str] = sorted(str(t) for t in present)

    def _near(
        self,
        ev: Evaluation,
        corpus: Corpus | None,
        q: np.ndarray,
        code: np.ndarray,
        tier: np.ndarray,
        prio: np.ndarray,
        some_miss: np.ndarray,
        limit: int,
    ) -> tuple[str, np.ndarray]:
        """Tier 1: the candidates that nearly duplicate a gold chunk of their query."""
        if corpus is None:
            return "no corpus: no near-duplicates looked for (tier 1 empty)", np.zeros(0, np.int64)
        with_miss = np.unique(q[tier == 2])
        with_miss = with_miss[np.argsort(prio[with_miss], kind="stable")]
        looked = with_miss[:limit]
        order = np.argsort(q, kind="stable")
        starts = np.searchsorted(q[order], looked)
        ends = np.searchsorted(q[order], looked, side="right")
        found: list[int] = []
        for qi, lo, hi in zip(looked.tolist(), starts.tolist(), ends.tolist(), strict=True):
            gold = [c for c, _ in ev.gold_of(qi)]
            members = order[lo:hi]
            names = self.vocabulary.take(pa.array(code[members])).to_pylist()
            chunks = corpus.get(gold + names)  # one look-up per query
            near = near_duplicates(
                {c: (chunks[c].header, chunks[c].text) for c in gold if c in chunks},
                {c: (chunks[c].header, chunks[c].text) for c in names if c in chunks},
            )
            found.extend(int(m) for m, c in zip(members.tolist(), names, strict=True) if c in near)
        note = f"near-duplicates looked for in {len(looked):,} of {len(with_miss):,} queries with a miss"
        if len(looked) < len(with_miss):
            note += " (flips first)"
        return note, np.array(found, np.int64)

    # -- candidates ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.q)

    def candidate(self, i: int) -> Candidate:
        ra, rb = int(self.rank_a[i]), int(self.rank_b[i])
        arm = self.filters.arm or ("b" if self.from_b[i] else "a")
        q = int(self.q[i])
        return Candidate(
            i,
            q,
            self.session.ev.query_ids[q].as_py(),
            self.vocabulary[int(self.code[i])].as_py(),
            int(self.tier[i]),
            arm,
            rb if arm == "b" else ra,
            ra or None,
            rb or None,
        )

    def _judged_elsewhere(self, i: int) -> bool:
        """Whether a judgement not made here now decides the candidate (kept as judged)."""
        c = self.candidate(i)
        record = self.session.labels.decided.get((c.query_id, c.chunk_id))
        if record is None:
            return False
        self.state[i] = ELSEWHERE
        self.grades[i] = record.relevance
        return True

    def _usable(self, i: int) -> bool:
        return bool(self.state[i] == PENDING and self._mask[i]) and not self._judged_elsewhere(i)

    def current(self) -> Candidate | None:
        """The candidate on screen: one brought back by undo, else the next in order, else the
        skipped ones in the order they were skipped; None when none is left."""
        while self.front:
            i = self.front[-1]
            if self._usable(i):
                return self.candidate(i)
            self.front.pop()
        pending = self.state == PENDING
        while self._cursor < len(self.q):
            ahead = np.flatnonzero(pending[self._cursor :] & self._mask[self._cursor :])
            if not len(ahead):
                self._cursor = len(self.q)
                break
            i = self._cursor + int(ahead[0])
            self._cursor = i
            if self._usable(i):
                return self.candidate(i)
            self._cursor = i + 1
        for _ in range(len(self.tail)):
            i = self.tail[0]
            if self.state[i] == SKIPPED and self._mask[i]:
                c = self.candidate(i)
                record = self.session.labels.decided.get((c.query_id, c.chunk_id))
                if record is None:
                    return c
                self.tail.popleft()
                self.state[i], self.grades[i] = ELSEWHERE, record.relevance
                continue
            if self.state[i] != SKIPPED:
                self.tail.popleft()
            else:
                self.tail.rotate(-1)
        return None

    # -- decisions -------------------------------------------------------------------------------
    def decide(self, candidate: Candidate, relevance: int, note: str = "") -> Change:
        """One judgement of `candidate` (grade ≥ 1 relevant, 0 not), written before it returns."""
        session = self.session
        change = session.add(
            candidate.query_id, candidate.chunk_id, relevance, note, evidence=candidate.evidence
        )
        session.review.close()  # a digit next is a new decision here, not a regrade
        i = candidate.index
        if self.front and self.front[-1] == i:
            self.front.pop()
        if self.tail and self.state[i] == SKIPPED:
            self.tail.remove(i)
        self.state[i] = DECIDED
        self.grades[i] = relevance
        self.decisions.append(i)
        self.refusal = "" if change.saved else change.error
        return change

    def skip(self, candidate: Candidate) -> None:
        """Put `candidate` at the end of the queue (nothing is written)."""
        i = candidate.index
        if self.front and self.front[-1] == i:
            self.front.pop()
        if self.state[i] == SKIPPED:
            self.tail.remove(i)
        self.state[i] = SKIPPED
        self.tail.append(i)

    def undo(self) -> tuple[Change | None, str]:
        """Retract the queue's last decision in force and bring its candidate back: (the change,
        "" ) or (None, why nothing was undone)."""
        if not self.decisions:
            return None, "no decision made here yet (a skip is none: its candidate comes again at the end)"
        i = self.decisions[-1]
        c = self.candidate(i)
        session = self.session
        mine = [r for r in session.labels.in_force if r.reviewer == session.review.reviewer]
        if not mine or (mine[-1].query_id, mine[-1].chunk_id) != (c.query_id, c.chunk_id):
            return None, "your last judgement was not made here: undo it where you made it (u in the detail)"
        change = session.undo()
        self.decisions.pop()
        self.state[i] = PENDING
        self.grades.pop(i, None)
        self.front.append(i)
        return change, ""

    # -- filters ---------------------------------------------------------------------------------
    def set_filters(self, filters: Filters) -> None:
        """Show only the candidates `filters` let through (regressions as they stand now)."""
        self.filters = filters
        mask = np.ones(len(self.q), bool)
        if filters.regressions:
            mask &= self.session.ev.outcomes[self.q] == Outcome.HIT_TO_MISS
        if filters.tenant is not None:
            tenants = self.tenant_of.take(pa.array(self.q))
            mask &= pc.fill_null(pc.equal(tenants, filters.tenant), False).to_numpy(zero_copy_only=False)
        if filters.arm is not None:
            mask &= (self.rank_b if filters.arm == "b" else self.rank_a) > 0
        self._mask = mask
        self._cursor = 0

    # -- progress --------------------------------------------------------------------------------
    def progress(self) -> str:
        """ "37 of 412 judged · 12 gold added · 2 regressions resolved"; with a filter, "3 of 39
        judged here · this session 37 judged · 12 gold added · …": the session's counts are the
        whole session's whatever the filter (a filter changes what is left, not what was done)."""
        total = int(self._mask.sum())
        judged = list(self.grades.values())
        gold = sum(1 for g in judged if g >= 1)
        resolved = int((self.session.ev.outcomes[self.regressions_at_open] != Outcome.HIT_TO_MISS).sum())
        done = f"{gold:,} gold added · {resolved:,} regression{'' if resolved == 1 else 's'} resolved"
        if self._mask.all():
            return f"{len(judged):,} of {total:,} judged · {done}"
        here = sum(1 for i in self.grades if self._mask[i])
        return f"{here:,} of {total:,} judged here · this session {len(judged):,} judged · {done}"

    def position(self) -> int:
        """Candidates still to judge within the filter (the one on screen included)."""
        return int(((self.state == PENDING) | (self.state == SKIPPED))[self._mask].sum())

    # -- what the screen shows -------------------------------------------------------------------
    def view(self, c: Candidate, corpus: Corpus | None) -> CandidateView:
        ev = self.session.ev
        gold = ev.gold_of(c.q)
        chunks = corpus.get([c.chunk_id] + [g for g, _ in gold]) if corpus is not None else {}
        ranks: dict[str, int | None] = {}
        for side, arm in zip(ARMS, ev.arms, strict=True):
            listed = arm.retrieved(c.q)
            ranks[side] = listed.index(c.chunk_id) + 1 if c.chunk_id in listed else None
        text = self.session.texts[c.q].as_py()
        similar = None
        chunk = chunks.get(c.chunk_id)
        if c.tier == 1 and chunk is not None:
            found = near_duplicates(
                {g: (chunks[g].header, chunks[g].text) for g, _ in gold if g in chunks},
                {c.chunk_id: (chunk.header, chunk.text)},
            )
            similar = found.get(c.chunk_id)
        if similar is not None:  # the gold it resembles first, for comparison
            gold = sorted(gold, key=lambda g: g[0] != similar[0])
        return CandidateView(
            c,
            text,
            Outcome(int(ev.outcomes[c.q])),
            ev.k,
            chunk,
            [(g, grade, chunks.get(g)) for g, grade in gold],
            ranks,
            content_words(text),
            similar,
        )


_QUEUES: weakref.WeakKeyDictionary[Session, JudgingQueue] = weakref.WeakKeyDictionary()


def corpus_settled(session: Session) -> bool:
    """Whether the corpus is ready, failed, or was never given (not still loading)."""
    note = session.corpus_note
    return session.corpus is not None or not (
        note.startswith("corpus loading") or note.startswith("indexing")
    )


def queue_built(session: Session) -> bool:
    """Whether the session's queue exists already (else `queue_for` builds it: a worker's job)."""
    return session in _QUEUES


def queue_for(session: Session) -> JudgingQueue:
    """The session's queue, built on first use and kept: the same queue (and position) each time
    it is asked for. Ask once the corpus has settled (`corpus_settled`), or tier 1 stays empty."""
    queue = _QUEUES.get(session)
    if queue is None:
        queue = _QUEUES[session] = JudgingQueue(session, session.corpus)
    return queue
