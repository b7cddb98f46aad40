"""The review document (`triage review export`): the regressions (or every flip), each with what a
reader needs to judge it, built once as a typed `ReviewDocument` that the Markdown and HTML renderers draw.

Per query: its text and slice fields, each gold chunk's heading path and opening lines, both arms'
top k with what the labels say of each passage, the gold's rank and plan per arm, the hints
(`core.views.hints.hints_for`) and the reviewers' verdicts. Above them: the label state, the checks that
are not ok, the paired table with McNemar's p, k and the arm names.

Strings here are data as read (capped in length, never escaped): each renderer makes them visible
and escapes them for its format. The few shared wordings (marks, ranks, field values) are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from triage import __version__
from triage.core.checks.model import Check, Level
from triage.core.inputs.corpus import Corpus
from triage.core.measures.paired import Outcome
from triage.core.views.hints import Hint, HintKind, hints_for
from triage.labels.verdicts import Verdict
from triage.report import cells
from triage.report.arms import ByArm
from triage.report.build import build
from triage.report.sections.paired import PairedSection
from triage.report.sections.tenants import selectivity
from triage.workspace.detail import QUERY_FIELDS, ArmView, Judgement, QueryDetail, build_detail
from triage.workspace.snapshot import Snapshot

OPENING_LINES = 3  # a gold chunk's opening: its first 3 non-blank lines …
OPENING_CHARS = 300  # … and at most 300 characters of them
HEADER_CHARS = 300  # a heading path is cut after 300 characters
MORE = "…"  # marks a cut text
TEXT_CAP = 2_000  # characters of one data string a renderer shows in a paragraph
CELL_CAP = 300  # characters of one data string a renderer shows in a table cell


class Scope(Enum):
    REGRESSIONS = "regressions"  # hit→miss flips only (the default)
    FLIPS = "flips"  # every flip, hit→miss first (--all)


@dataclass(frozen=True)
class RankedPassage:
    """One retrieved passage in an arm's top k."""

    rank: int  # 1-based
    chunk_id: str
    header: str | None  # heading path (cut at HEADER_CHARS); None: none known
    in_corpus: bool  # the corpus holds the chunk (False too when there is no corpus)
    judgement: Judgement
    grade: int  # gold grade (0: not gold)
    judged_by: str | None  # the reviewer whose judgement in force says so; None: the frozen file


@dataclass(frozen=True)
class ArmTop:
    name: str
    present: bool  # the run holds the query (absent: scored as an empty list)
    gold_rank: int | None  # best-ranked gold in the stored depth (None: absent)
    depth: int  # ids stored for the query
    plan: str | None
    n_returned: int | None
    rows: tuple[RankedPassage, ...]  # the top k (fewer when the list is shorter)

    def short(self, k: int) -> bool:
        """The arm returned fewer than k ids."""
        return self.n_returned is not None and self.n_returned < k


@dataclass(frozen=True)
class GoldChunk:
    chunk_id: str
    grade: int
    header: str | None  # None: no corpus, or the chunk is not in it
    opening: str | None  # first OPENING_LINES lines, at most OPENING_CHARS characters
    in_corpus: bool
    rank: ByArm[int | None]  # this chunk's rank per arm (None: absent from the stored depth)
    added_by: str | None  # reviewer of the amendment that made it gold; None: frozen gold
    cut_off: str | None = None  # a `window` hint's lost words: the body's last words, ≤ OPENING_CHARS


@dataclass(frozen=True)
class Query:
    query_id: str
    direction: Outcome  # HIT_TO_MISS or MISS_TO_HIT
    text: str | None
    fields: tuple[tuple[str, object], ...]  # every slice column there is, None where unknown
    golds: tuple[GoldChunk, ...]
    arms: ByArm[ArmTop]
    hints: tuple[Hint, ...]
    verdicts: tuple[Verdict, ...]


@dataclass(frozen=True)
class ReviewDocument:
    triage: str  # the version that wrote it
    label_state: str  # as the report shows it: "frozen <sha12> + N amendments …"
    k: int
    arms: ByArm[str]  # the arms' names
    paired: PairedSection
    checks: tuple[Check, ...]  # the checks that are not ok, errors first
    scope: Scope
    n_regressions: int
    n_flips: int
    corpus: Path | None  # None: no corpus, chunk text unavailable
    queries: tuple[Query, ...]


def cut(text: str | None, chars: int) -> str | None:
    """`text` cut after `chars` characters, MORE marking the cut."""
    if text is None or len(text) <= chars:
        return text
    return text[:chars].rstrip() + MORE


def opening(text: str | None, lines: int = OPENING_LINES, chars: int = OPENING_CHARS) -> str | None:
    """The first `lines` non-blank lines of `text` (each stripped), at most `chars` characters;
    MORE where anything was left out. Only the first 10 × `chars` characters are read."""
    if text is None:
        return None
    head = text[: 10 * chars]
    kept = [line.strip() for line in head.splitlines() if line.strip()]
    out = "\n".join(kept[:lines])
    more = len(kept) > lines or len(text) > len(head)
    if len(out) > chars:
        out, more = out[:chars].rstrip(), True
    return out + MORE if more else out


def _fields(snapshot: Snapshot, d: QueryDetail) -> tuple[tuple[str, object], ...]:
    """Every slice column the queries file or a run holds, in QUERY_FIELDS order then the queries
    file's others; None where this query has no value."""
    ev = snapshot.ev
    names = list(ev.queries.column_names) if ev.queries is not None else []
    for arm in ev.arms:
        names += [c for c in ("tenant", "filter", "selectivity") if c in arm.run.table.column_names]
    names = [n for n in names if n not in ("query_id", "text")]
    ordered = [n for n in QUERY_FIELDS if n in names] + [n for n in names if n not in QUERY_FIELDS]
    return tuple((n, d.fields.get(n)) for n in dict.fromkeys(ordered))


def _arm(view: ArmView, k: int, d: QueryDetail) -> ArmTop:
    by = {**d.not_relevant, **d.amended}
    return ArmTop(
        name=view.name,
        present=view.present,
        gold_rank=view.gold_rank,
        depth=view.depth,
        plan=view.plan,
        n_returned=view.n_returned,
        rows=tuple(
            RankedPassage(
                r.rank,
                r.chunk_id,
                cut(r.chunk.header, HEADER_CHARS) if r.chunk else None,
                r.chunk is not None,
                r.judgement,
                r.grade,
                by.get(r.chunk_id),
            )
            for r in view.rows
            if r.rank <= k
        ),
    )


def ending(text: str | None, words: int, chars: int = OPENING_CHARS) -> str | None:
    """The last `words` whitespace words of `text`, at most `chars` characters (MORE in front
    where cut); only the last 10 × `chars` characters are read."""
    if not text or words <= 0:
        return None
    tail = " ".join(text[-10 * chars :].split()[-words:])
    return tail if len(tail) <= chars else MORE + tail[-chars:].lstrip()


def _cut_off(hints: tuple[Hint, ...], chunk_id: str, text: str | None) -> str | None:
    """What a `window` hint on this gold says was cut off: the body's last words."""
    for h in hints:
        if h.kind is HintKind.WINDOW and h.facts.get("gold") == chunk_id:
            n = h.facts.get("words_cut")
            return ending(text, n) if isinstance(n, int) else None
    return None


def _query(snapshot: Snapshot, d: QueryDetail, hints: tuple[Hint, ...]) -> Query:
    k = d.k
    return Query(
        query_id=d.query_id,
        direction=d.outcome,
        text=d.text,
        fields=_fields(snapshot, d),
        golds=tuple(
            GoldChunk(
                g.chunk_id,
                g.grade,
                cut(g.chunk.header, HEADER_CHARS) if g.chunk else None,
                opening(g.chunk.text) if g.chunk else None,
                g.chunk is not None,
                ByArm(g.rank_a, g.rank_b),
                d.amended.get(g.chunk_id),
                _cut_off(hints, g.chunk_id, g.chunk.text) if g.chunk else None,
            )
            for g in d.golds
        ),
        arms=ByArm(_arm(d.a, k, d), _arm(d.b, k, d)),
        hints=hints,
        verdicts=snapshot.verdicts.for_query(d.query_id),
    )


def build_review(
    snapshot: Snapshot, corpus: Corpus | None, scope: Scope = Scope.REGRESSIONS
) -> ReviewDocument:
    """The review of `snapshot`'s regressions (or, for Scope.FLIPS, every flip), in flip order."""
    report = build(snapshot)
    ev = snapshot.ev
    flips = ev.flips
    regression = ev.outcomes[flips] == Outcome.HIT_TO_MISS
    chosen = flips if scope is Scope.FLIPS else flips[regression]
    qs = [int(q) for q in chosen]
    hints = hints_for(ev, qs, corpus)
    details = [build_detail(snapshot, q, corpus) for q in qs]  # a handful: one query at a time
    return ReviewDocument(
        triage=__version__,
        label_state=report.labels.state,
        k=ev.k,
        arms=ByArm(ev.a.name, ev.b.name),
        paired=report.paired,
        checks=tuple(c for c in report.checks if c.level is not Level.OK),
        scope=scope,
        n_regressions=int(regression.sum()),
        n_flips=len(flips),
        corpus=snapshot.spec.corpus if corpus is not None else None,
        queries=tuple(_query(snapshot, d, hints.get(q, ())) for q, d in zip(qs, details, strict=True)),
    )


# -- wordings both renderers share ---------------------------------------------------------------

NO_CORPUS = "chunk text unavailable: the evaluation names no corpus"
NOT_IN_CORPUS = "not in the corpus"
NO_HINTS = "no hints"
NO_VERDICTS = "no verdict yet"


def passage_mark(p: RankedPassage | GoldChunk) -> str:
    """What the labels in force say of a passage: "★2 gold", "+1 gold (amended by ann)",
    "✗ judged not relevant", "· unjudged"."""
    if isinstance(p, GoldChunk):
        grade, by, judgement = p.grade, p.added_by, Judgement.GOLD
    else:
        grade, by, judgement = p.grade, p.judged_by, p.judgement
    if judgement is Judgement.GOLD or grade:
        return f"+{grade} gold (amended by {by})" if by else f"★{grade} gold"
    if judgement is Judgement.NOT_RELEVANT:
        return f"✗ judged not relevant (by {by})" if by else "✗ judged not relevant"
    return "· unjudged"


def header(p: RankedPassage, corpus: bool) -> str:
    """A passage's heading path; cells.NONE without a corpus or a header, NOT_IN_CORPUS when the
    corpus lacks the chunk."""
    if corpus and not p.in_corpus:
        return f"({NOT_IN_CORPUS})"
    return p.header if p.header is not None else cells.NONE


def field_value(name: str, value: object) -> str:
    """A slice field's value: selectivity as a percentage, an unknown one as cells.NONE."""
    if value is None:
        return cells.NONE
    if name == "selectivity" and isinstance(value, int | float):
        return selectivity(float(value))
    return cells.text(value)


def arm_line(arm: ArmTop, k: int) -> str:
    """ "gold rank 3, plan ann" with the list's length where shorter than k."""
    if not arm.present:
        return "not answered by this arm (scored as an empty list)"
    rank = "gold not in the stored list"
    if arm.gold_rank is not None:
        rank = f"gold rank {cells.rank(arm.gold_rank, k)}"
    parts = [rank, f"plan {arm.plan or cells.NONE}"]
    if arm.short(k):
        parts.append(f"n_returned {arm.n_returned} < k = {k}")
    return ", ".join(parts)


def scope_line(r: ReviewDocument) -> str:
    if r.scope is Scope.FLIPS:
        return f"Every flip: {r.n_flips} ({r.n_regressions} hit→miss first, then miss→hit)."
    return f"The {r.n_regressions} regressions (hit→miss) of {r.n_flips} flips."


def verdict_line(v: Verdict) -> tuple[str, str, str]:
    """(reviewer, cause, note)."""
    return v.reviewer, str(v.cause), v.note
