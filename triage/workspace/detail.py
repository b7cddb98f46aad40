"""Everything the detail screen shows about one query, assembled headless (no UI code here).

Ranks are 1-based. A row's `other_rank` is where the same chunk sits in the other arm's stored
list (None: absent). Token counts are the hints' estimate (`core.text.words.token_estimate`: 4 tokens
per 3 whitespace words), so the gold pane and a `window` hint never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from triage.core.evaluation import Arm, Evaluation
from triage.core.inputs.corpus import Chunk, Corpus
from triage.core.measures.paired import Outcome
from triage.core.text.suggest import near_duplicates
from triage.core.text.words import token_estimate
from triage.workspace.snapshot import Snapshot

MIN_ROWS = 10  # rows shown per arm: at least max(k, MIN_ROWS)
QUERY_FIELDS = ("tenant", "query_type", "source_type", "language", "filter", "selectivity")


TOKEN_SCAN = 100_000  # characters counted at most (~1 ms); beyond, a count is a lower bound


def token_count(text: str | None) -> int:
    """Estimated model tokens of the first TOKEN_SCAN characters of `text`."""
    return token_estimate(text[:TOKEN_SCAN]) if text else 0


def token_label(text: str | None) -> str:
    """ "~12 tokens", or "≥ ~180,000 tokens" when the text is longer than TOKEN_SCAN."""
    n = token_count(text)
    return f"≥ ~{n:,} tokens" if text and len(text) > TOKEN_SCAN else f"~{n:,} tokens"


class Judgement(Enum):
    """What the labels in force say of a retrieved passage for its query (frozen file and
    judgements in force; a pair in conflict is unjudged until resolved)."""

    GOLD = "gold"  # relevance ≥ 1
    NOT_RELEVANT = "not relevant"  # judged, relevance 0
    UNJUDGED = "unjudged"  # nobody judged it: the hit rate takes it as not relevant


def judgement(grade: int | None) -> Judgement:
    """The judgement of a grade from `LabelState.judged_for` (None: the pair is not there)."""
    if grade is None:
        return Judgement.UNJUDGED
    return Judgement.GOLD if grade >= 1 else Judgement.NOT_RELEVANT


@dataclass(frozen=True)
class Row:
    rank: int
    chunk_id: str
    score: float | None
    grade: int  # 0: not gold
    other_rank: int | None
    chunk: Chunk | None
    judgement: Judgement


@dataclass(frozen=True)
class Missed:
    """A true neighbour (of the first min(k, n_eligible) in the truth) an arm did not return in its
    top k: its rank and score in the truth, and where the arm ranked it (None: not in its list)."""

    chunk_id: str
    truth_rank: int
    truth_score: float
    rank: int | None


@dataclass(frozen=True)
class ArmView:
    side: str  # "a" | "b"
    name: str
    present: bool
    hit: bool
    gold_rank: int | None
    depth: int
    plan: str | None
    n_returned: int | None
    n_eligible: int | None
    rows: list[Row]  # the first max(k, 10), then any deeper row holding gold
    graded: bool = False  # the run carries answer_correct (core/views/answers.py)
    answer_correct: bool | None = None  # the harness's verdict on this query's answer (None: not graded)
    recall: float | None = None  # recall@k (against exact truth over min(k, n_eligible)); None: undefined
    missed: tuple[Missed, ...] = ()  # against exact truth: the true neighbours not in its top k
    stand_ins: int = 0  # of the neighbours tied with the k-th past min(k, n_eligible), those in its top k

    def inside(self, k: int) -> bool:
        return self.gold_rank is not None and self.gold_rank <= k

    def short(self, k: int) -> bool:
        """A short list: fewer than k ids returned (`n_returned`, else the stored depth)."""
        return self.present and self.n_returned is not None and self.n_returned < k


@dataclass(frozen=True)
class GoldView:
    chunk_id: str
    grade: int
    chunk: Chunk | None
    rank_a: int | None
    rank_b: int | None


@dataclass(frozen=True)
class QueryDetail:
    q: int
    query_id: str
    text: str | None
    k: int
    outcome: Outcome
    a: ArmView
    b: ArmView
    golds: list[GoldView]
    fields: dict[str, object] = field(default_factory=dict)
    # retrieved non-gold chunk id -> (the gold id its text nearly duplicates, similarity 0–100)
    suggestions: dict[str, tuple[str, float]] = field(default_factory=dict)
    amended: dict[str, str] = field(default_factory=dict)  # gold chunk id -> reviewer who added it
    # judged against exact truth: the truth's n_eligible (the runs' own are each arm's `n_eligible`)
    exact_eligible: int | None = None
    # chunk id judged not relevant by a judgement in force -> its reviewer (absent: the frozen file)
    not_relevant: dict[str, str] = field(default_factory=dict)

    @property
    def movement(self) -> int | None:
        """B's gold rank minus A's (positive: B ranked the gold lower); None if either is absent."""
        if self.a.gold_rank is None or self.b.gold_rank is None:
            return None
        return self.b.gold_rank - self.a.gold_rank


def _query_row(ev: Evaluation, q: int) -> dict[str, object]:
    """Query index `q`'s row of the queries file ({} without one, or when the file lacks it): one
    take per column through the evaluation's row map (no search over the file's rows)."""
    if ev.queries is None:
        return {}
    at = np.array([q], np.int64)
    row = {name: ev.queries_aligned(name, at) for name in ev.queries.column_names}
    if row["query_id"] is None or not row["query_id"].is_valid()[0].as_py():
        return {}
    return {name: None if v is None else v[0].as_py() for name, v in row.items()}


def judged_grades(ev: Evaluation, q: int) -> dict[str, int]:
    """Query index `q`'s judged chunks in force: chunk id → grade (0: judged not relevant), read
    from the evaluation's sorted pair keys (the labels' own `judged_for` scans every label row)."""
    grades = {c: 0 for c in ev.not_relevant.chunks_of(q)}
    grades.update(ev.gold_of(q))
    return grades


def _arm_view(
    ev: Evaluation,
    arm: Arm,
    side: str,
    q: int,
    other: list[str],
    gold: dict[str, int],
    judged: dict[str, int],
    chunks: dict[str, Chunk],
) -> ArmView:
    ranked = arm.retrieved(q)
    scores = arm.value("scores", q) or [None] * len(ranked)
    where_other = {c: i + 1 for i, c in reversed(list(enumerate(other)))}
    show = max(ev.k, MIN_ROWS)
    keep = [i for i, c in enumerate(ranked) if i < show or c in gold]
    rank = int(arm.judged.gold_rank[q])
    present = int(arm.row[q]) >= 0  # not `arm.present`: that is an array over every query
    n_elig = arm.value("n_eligible", q)
    n_ret = arm.value("n_returned", q)
    recall = float(arm.judged.recall[q])
    return ArmView(
        side=side,
        name=arm.name,
        present=present,
        hit=bool(arm.judged.hit[q]),
        gold_rank=rank or None,
        depth=len(ranked),
        plan=arm.value("plan", q),
        n_returned=n_ret if n_ret is not None else (len(ranked) if present else None),
        n_eligible=n_elig,
        rows=[
            Row(
                i + 1,
                ranked[i],
                scores[i],
                gold.get(ranked[i], 0),
                where_other.get(ranked[i]),
                chunks.get(ranked[i]),
                judgement(judged.get(ranked[i])),
            )
            for i in keep
        ],
        graded="answer_correct" in arm.run.table.column_names,
        answer_correct=arm.value("answer_correct", q),
        recall=None if np.isnan(recall) else recall,
        missed=_missed(ev, q, ranked, gold),
        stand_ins=_stand_ins(ev, q, ranked, gold),
    )


def _missed(ev: Evaluation, q: int, ranked: list[str], gold: dict[str, int]) -> tuple[Missed, ...]:
    """Against exact truth, query `q`'s first min(k, n_eligible) true neighbours not in the arm's top
    k (`ranked`), in the truth's order; () against other labels."""
    if ev.truth is None:
        return ()
    where = {c: i + 1 for i, c in reversed(list(enumerate(ranked)))}
    full = min(ev.k, int(ev.truth.n_eligible[q]))  # past it, the neighbours tied with the last
    return tuple(
        Missed(n.chunk_id, n.rank, n.score, where.get(n.chunk_id))
        for n in ev.truth.neighbours(q)
        if n.rank <= full and n.chunk_id in gold and where.get(n.chunk_id, ev.k + 1) > ev.k
    )


def _stand_ins(ev: Evaluation, q: int, ranked: list[str], gold: dict[str, int]) -> int:
    """Against exact truth, the neighbours tied with the k-th (past min(k, n_eligible)) the arm
    returned in its top k: each is credited in place of a neighbour it ties with."""
    if ev.truth is None:
        return 0
    full = min(ev.k, int(ev.truth.n_eligible[q]))
    top = set(ranked[: ev.k])
    return sum(
        1 for n in ev.truth.neighbours(q) if n.rank > full and n.chunk_id in gold and n.chunk_id in top
    )


def flat_fields(name: str, value: object) -> dict[str, object]:
    """A column's value as the fields a detail shows: an object's keys as `name.key` (nested ones
    likewise), a list without its empty items; nothing for an empty one (BEIR's `metadata: {}`)."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, inner in value.items():
            out.update(flat_fields(f"{name}.{key}", inner))
        return out
    if isinstance(value, list):
        items = [v for v in value if v is not None and v != {} and v != []]
        return {name: items} if items else {}
    return {} if value is None else {name: value}


def shown_ids(ev: Evaluation, q: int) -> tuple[list[str], list[str]]:
    """The retrieved ids a detail shows first for query `q`, per arm: the first max(k, MIN_ROWS)."""
    show = max(ev.k, MIN_ROWS)
    return ev.a.retrieved(q)[:show], ev.b.retrieved(q)[:show]


def build_detail(snapshot: Snapshot, q: int, corpus: Corpus | None) -> QueryDetail:
    """The detail of query index `q`; chunk text from `corpus` when there is one."""
    ev = snapshot.ev
    query_id = ev.query_ids[q].as_py()
    gold = dict(ev.gold_of(q))
    decided = snapshot.labels.decided_for(query_id)  # its amendments in force
    judged = judged_grades(ev, q)
    list_a, list_b = ev.a.retrieved(q), ev.b.retrieved(q)
    show = max(ev.k, MIN_ROWS)
    wanted = list(gold) + list_a[:show] + list_b[:show] + [c for c in list_a + list_b if c in gold]
    chunks = corpus.get(wanted) if corpus is not None else {}
    row = _query_row(ev, q)
    fields = {k: row[k] for k in QUERY_FIELDS if row.get(k) is not None}
    for arm in ev.arms:  # slice columns a run carries and the queries file does not
        for k in ("tenant", "filter", "selectivity"):
            if k not in fields and arm.value(k, q) is not None:
                fields[k] = arm.value(k, q)
    for k, v in row.items():
        if k not in fields and k not in ("query_id", "text"):
            fields.update(flat_fields(k, v))
    rank_a = {c: i + 1 for i, c in reversed(list(enumerate(list_a)))}
    rank_b = {c: i + 1 for i, c in reversed(list(enumerate(list_b)))}
    shown = list_a[:show] + list_b[:show]
    suggestions = near_duplicates(
        {c: (chunks[c].header, chunks[c].text) for c in gold if c in chunks},
        {c: (chunks[c].header, chunks[c].text) for c in shown if c in chunks and c not in gold},
    )
    return QueryDetail(
        q=q,
        query_id=query_id,
        text=row.get("text"),  # type: ignore[arg-type]
        k=ev.k,
        outcome=Outcome(int(ev.outcomes[q])),
        a=_arm_view(ev, ev.a, "a", q, list_b, gold, judged, chunks),
        b=_arm_view(ev, ev.b, "b", q, list_a, gold, judged, chunks),
        golds=[GoldView(c, g, chunks.get(c), rank_a.get(c), rank_b.get(c)) for c, g in gold.items()],
        fields=fields,
        suggestions=suggestions,
        amended={c: r.reviewer for c, r in decided.items() if r.relevance >= 1},
        exact_eligible=None if ev.truth is None or not ev.truth.listed[q] else int(ev.truth.n_eligible[q]),
        not_relevant={c: r.reviewer for c, r in decided.items() if r.relevance == 0},
    )
