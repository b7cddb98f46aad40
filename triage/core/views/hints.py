"""Cause hints for a flip: what in the data likely made the losing arm miss, with its evidence.

The rules are defined in docs/hints.md "Cause hints"; in short, for query q and the arm L that lost:

- the losing arm is the one whose best gold rank is worse (absent counts as worst), B on a tie:
  for a flip, the arm that missed;
- the reference gold g is the gold id the other arm W ranked best (else the best-graded gold);
- words are content words (`triage.core.text.words`); tokens are `token_estimate` (4 per 3 words).

Hints come in the fixed order of `HintKind` (most specific first). The per-query facts (list
lengths, plans, ranks) are numpy over every asked query at once; text rules read the corpus only
for the asked queries' chunks, in one batched look-up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.evaluation import Arm, Evaluation
from triage.core.inputs.corpus import Chunk, Corpus
from triage.core.text.suggest import near_duplicates
from triage.core.text.words import TOKENS_PER_WORD, shared, token_estimate, word_count, words

MIN_SHARED = 2  # misleading-path: query words the gold's body must share (all of a shorter query's)
PUSHED_BELOW = 2  # pushed-out: the best gold rank is in k+1 .. PUSHED_BELOW·k
NO_HEADERS = "none"  # header_mode of an arm that embeds bodies only
PREPEND = "prepend"  # header_mode of an arm that embeds heading path + body


class HintKind(StrEnum):
    """The JSON values of `flips[].hints[].kind`, most specific first."""

    SHORT_LIST = "short-list"
    PLAN_CHANGE = "plan-change"
    HEADER_DOMINATES = "header-dominates"
    MISLEADING_PATH = "misleading-path"
    LIKELY_UNLABELLED = "likely-unlabelled"
    WINDOW = "window"
    PUSHED_OUT = "pushed-out"
    DROPPED = "dropped"

    @property
    def code(self) -> str:
        """The short code a list column shows."""
        return _CODES[self]


_CODES = {
    HintKind.SHORT_LIST: "short",
    HintKind.PLAN_CHANGE: "plan",
    HintKind.HEADER_DOMINATES: "header",
    HintKind.MISLEADING_PATH: "path",
    HintKind.LIKELY_UNLABELLED: "unlab",
    HintKind.WINDOW: "window",
    HintKind.PUSHED_OUT: "pushed",
    HintKind.DROPPED: "dropped",
}
ORDER = {kind: i for i, kind in enumerate(HintKind)}
NO_CORPUS = "no corpus"  # why text was not read, as pushed-out / dropped evidence says it
# Chunk text is read for this many flips, in flip order (~0.3 ms a flip); the rest get the hints
# that need no text (the app reads any one flip's text when it is opened).
TEXT_FLIPS = 500


@dataclass(frozen=True)
class Hint:
    kind: HintKind
    arm: str  # "a" or "b": the arm that lost (for a miss→hit flip, A)
    evidence: str  # one sentence with its numbers, for people
    facts: dict[str, object] = field(default_factory=dict)  # the same numbers, for programs


def losing_arms(ev: Evaluation, qs: np.ndarray) -> np.ndarray:
    """Per query of `qs`: True where B lost (its best gold rank is worse, absent counting as
    worst; B on a tie), False where A did. For a flip this is the arm that missed."""
    worst = np.iinfo(np.int64).max
    ra, rb = (np.where(r[qs] > 0, r[qs], worst) for r in (ev.a.judged.gold_rank, ev.b.judged.gold_rank))
    return np.asarray(rb >= ra)


def _best_gold(ev: Evaluation, arm: Arm, qs: np.ndarray) -> list[str | None]:
    """Per query: the gold id `arm` ranked best, else the query's best-graded gold (None: no gold)."""
    h, sets = arm.hits, ev.gold.sets
    code = np.full(len(qs), -1, np.int64)
    lo, hi = np.searchsorted(h.query, qs), np.searchsorted(h.query, qs, side="right")
    ranked = lo < hi  # hits are sorted by (query, rank): the first is the best-ranked
    code[ranked] = h.code[lo[ranked]]
    glo, ghi = np.searchsorted(sets.query, qs), np.searchsorted(sets.query, qs, side="right")
    graded = ~ranked & (glo < ghi)  # sets are sorted by (query, grade descending)
    code[graded] = sets.code[glo[graded]]
    names = (
        ev.gold.vocabulary.take(pa.array(np.maximum(code, 0))).to_pylist() if len(ev.gold.vocabulary) else []
    )
    return [names[i] if c >= 0 else None for i, c in enumerate(code.tolist())]


def _meta_int(arm: Arm, key: str) -> int | None:
    """A positive whole number from run metadata ("512", "512.0"); None when absent or not one."""
    try:
        value = float(str(arm.run.meta.get(key, "")).strip())
    except ValueError:
        return None
    return int(value) if value.is_integer() and 0 < value < 2**53 else None


def _header_mode(arm: Arm) -> str | None:
    mode = arm.run.meta.get("header_mode")
    return mode.strip().lower() if mode is not None and mode.strip() else None


@dataclass(frozen=True)
class _Query:
    """What the rules read of one asked query: the losing arm's side of it."""

    q: int
    arm: str  # "a" or "b": the loser
    name: str  # the loser's name as evidence shows it ("A", "B")
    k: int
    top: list[str]  # the loser's first k ids
    rank: int  # the loser's best gold rank (0: absent)
    depth: int
    golds: list[str]
    gold: str | None  # the reference gold
    text: str | None  # the query's text
    header_mode: str | None
    max_tokens: int | None


def hints_for(
    ev: Evaluation, qs: Sequence[int] | np.ndarray, corpus: Corpus | None, unread: str = NO_CORPUS
) -> dict[int, tuple[Hint, ...]]:
    """The hints of each query index in `qs`, for the arm that lost, in `HintKind` order.

    Without a corpus, only the hints that need no chunk text are given (short-list, plan-change,
    pushed-out, dropped), and pushed-out / dropped say that text causes were not examined and
    why (`unread`). A query without gold gets none (nothing was lost)."""
    idx = np.asarray(list(dict.fromkeys(int(q) for q in qs)), np.int64)
    out: dict[int, tuple[Hint, ...]] = {int(q): () for q in qs}
    idx = idx[ev.scored[idx]] if len(idx) else idx
    if not len(idx):
        return out
    if corpus is None:
        table = plain_hints(ev, idx, unread)
        return out | dict(zip(idx.tolist(), table.every(), strict=True))
    lost = np.where(losing_arms(ev, idx), "b", "a").tolist()
    queries = _queries(ev, idx, lost)
    chunks = corpus.get(c for x in queries for c in [*x.golds, *x.top])
    texts = [_text_hints(ev, x, chunks) for x in queries]
    table = plain_hints(ev, idx, None, explained=np.array([bool(t) for t in texts], bool))
    for q, plain, text in zip(idx.tolist(), table.every(), texts, strict=True):
        found = [*plain, *text]
        out[q] = tuple(sorted(found, key=lambda h: ORDER[h.kind])) if len(found) > 1 else tuple(found)
    return out


# The facts of the hints that read no text, by kind, in the order JSON spells them, and their types.
FACTS = {
    HintKind.SHORT_LIST: ("n_returned", "k", "plan", "n_eligible"),
    HintKind.PLAN_CHANGE: ("plan_a", "plan_b"),
    HintKind.PUSHED_OUT: ("rank", "k", "text_examined"),
    HintKind.DROPPED: ("depth", "text_examined"),
}
FACT_TYPES = {
    "n_returned": pa.int64(),
    "k": pa.int64(),
    "plan": pa.string(),
    "n_eligible": pa.int64(),
    "plan_a": pa.string(),
    "plan_b": pa.string(),
    "rank": pa.int64(),
    "depth": pa.int64(),
    "text_examined": pa.bool_(),
}
KINDS = tuple(HintKind)  # a HintKind by its ORDER


@dataclass(frozen=True)
class HintTable:
    """The hints that read no text, as columns: one row per hint, sorted by query, then by
    `HintKind` order."""

    n: int  # queries asked
    at: np.ndarray  # int64: the hint's query, as a position among the asked queries
    kind: np.ndarray  # int64: the ORDER of its HintKind
    b: np.ndarray  # bool: B lost (the hint's arm), else A
    evidence: pa.Array  # string: the sentence of `Hint.evidence`
    facts: dict[str, pa.Array]  # every FACT_TYPES column, null where a row's kind lacks the fact

    @property
    def starts(self) -> np.ndarray:
        """Row range of each asked query's hints: rows starts[i] .. starts[i + 1] (int64, n + 1)."""
        return np.searchsorted(self.at, np.arange(self.n + 1))

    def of(self, i: int) -> tuple[Hint, ...]:
        """The hints of the asked query at position `i`."""
        lo, hi = np.searchsorted(self.at, [i, i + 1]).tolist()
        return tuple(self._hint(r) for r in range(lo, hi))

    def every(self) -> list[tuple[Hint, ...]]:
        """The hints of every asked query, in asked order."""
        cuts = self.starts.tolist()
        return [tuple(self._hint(r) for r in range(cuts[i], cuts[i + 1])) for i in range(self.n)]

    def _hint(self, r: int) -> Hint:
        kind = KINDS[int(self.kind[r])]
        facts = {name: self.facts[name][r].as_py() for name in FACTS[kind]}
        return Hint(kind, "b" if self.b[r] else "a", self.evidence[r].as_py(), facts)


def join_text(*parts: pa.Array | str) -> pa.Array:
    """Strings joined element-wise (an Arrow kernel: no per-row Python)."""
    return pc.binary_join_element_wise(
        *(text_scalar(p) if isinstance(p, str) else p for p in parts), text_scalar("")
    )


def text_scalar(text: str) -> pa.Scalar:
    """A typed string scalar: Arrow infers an untyped one's type, and without python-dateutil
    installed that costs a failed import each time (~80 µs against ~2 µs; one flip's hints pay it
    dozens of times)."""
    return pa.scalar(text, pa.string())


def _text(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(values), pa.string())


def plain_hints(
    ev: Evaluation, qs: np.ndarray, unread: str | None, explained: np.ndarray | None = None
) -> HintTable:
    """The rules that read no text (docs/hints.md "Cause hints") over every query of `qs` at once:
    short-list and plan-change, then pushed-out / dropped for the queries none of those — nor a
    text hint, where `explained` says one was found — explains. `unread`: why chunk text was not
    examined (None: it was). Queries without gold get none."""
    idx = np.asarray(qs, np.int64)
    k = ev.k
    live = ev.scored[idx] if len(idx) else np.zeros(0, bool)
    b_lost = losing_arms(ev, idx)
    side = pa.array(b_lost)
    name = pc.if_else(side, text_scalar("B"), text_scalar("A"))
    plan_a, plan_b = ev.a.text_at("plan", idx), ev.b.text_at("plan", idx)
    plan = pc.if_else(side, plan_b, plan_a)
    ret_a, ret_b = _returned(ev.a, idx), _returned(ev.b, idx)
    n_ret, n_elig = np.where(b_lost, ret_b[0], ret_a[0]), np.where(b_lost, ret_b[1], ret_a[1])
    rank = np.where(b_lost, ev.b.judged.gold_rank[idx], ev.a.judged.gold_rank[idx])
    depth = np.where(b_lost, ev.b.depth[idx], ev.a.depth[idx])
    short = live & (n_ret < k) & ((n_elig < 0) | (n_ret < n_elig))
    differ = pc.fill_null(pc.not_equal(plan_a, plan_b), pa.scalar(False))
    change = live & differ.to_numpy(zero_copy_only=False)
    free = live & ~short & ~change & (True if explained is None else ~explained)
    note = "" if unread is None else f" ({unread}: text causes not examined)"
    examined = unread is None
    parts: list[tuple[HintKind, np.ndarray, pa.Array, dict[str, pa.Array]]] = []

    w = np.flatnonzero(short)
    said = pc.if_else(
        pc.is_valid(plan.take(w)), join_text("plan ", plan.take(w)), text_scalar("plan not recorded")
    )
    elig = n_elig[w]
    eligible_said = join_text(", ", _text(elig), " eligible")
    said = join_text(said, pc.if_else(pa.array(elig >= 0), eligible_said, text_scalar("")))
    evidence = join_text(name.take(w), " returned ", _text(n_ret[w]), f" of k={k} ids (", said, ")")
    eligible = pa.array(elig, pa.int64(), mask=elig < 0)
    facts = {"n_returned": pa.array(n_ret[w]), "k": _full(k, w), "plan": plan.take(w), "n_eligible": eligible}
    parts.append((HintKind.SHORT_LIST, w, evidence, facts))

    w = np.flatnonzero(change)
    a, b = plan_a.take(w), plan_b.take(w)
    parts.append(
        (HintKind.PLAN_CHANGE, w, join_text("A used plan ", a, ", B plan ", b), {"plan_a": a, "plan_b": b})
    )

    w = np.flatnonzero(free & (k < rank) & (rank <= PUSHED_BELOW * k))
    evidence = join_text(
        name.take(w),
        " ranks its best gold ",
        _text(rank[w]),
        f", just below k={k} (ranks {k + 1}–{PUSHED_BELOW * k}){note}",
    )
    facts = {"rank": pa.array(rank[w]), "k": _full(k, w), "text_examined": _full(examined, w)}
    parts.append((HintKind.PUSHED_OUT, w, evidence, facts))

    w = np.flatnonzero(free & (rank == 0))
    evidence = join_text("no gold id is among ", name.take(w), "'s ", _text(depth[w]), f" stored ids{note}")
    parts.append(
        (HintKind.DROPPED, w, evidence, {"depth": pa.array(depth[w]), "text_examined": _full(examined, w)})
    )

    at = np.concatenate([w for _, w, _, _ in parts]).astype(np.int64)
    kind = np.concatenate([np.full(len(w), ORDER[kd], np.int64) for kd, w, _, _ in parts])
    order = np.lexsort((kind, at))
    take = pa.array(order)
    columns = {
        fact: pa.concat_arrays(
            [f[fact].cast(typ) if fact in f else pa.nulls(len(w), typ) for _, w, _, f in parts]
        ).take(take)
        for fact, typ in FACT_TYPES.items()
    }
    evidence = pa.concat_arrays([e.cast(pa.string()) for _, _, e, _ in parts]).take(take)
    return HintTable(len(idx), at[order], kind[order], b_lost[at[order]], evidence, columns)


def _full(value: int | bool, rows: np.ndarray) -> pa.Array:
    return pa.array(np.full(len(rows), value))


@dataclass(frozen=True)
class FlipHints:
    """The hints of the flips, in flip order: chunk text was read for the first `len(read)`, the
    rest were judged over arrays by the rules that read no text."""

    read: tuple[tuple[Hint, ...], ...]
    rest: HintTable  # its positions count from len(read)

    def of(self, i: int) -> tuple[Hint, ...]:
        """The hints of the flip at position `i` of the flip order."""
        return self.read[i] if i < len(self.read) else self.rest.of(i - len(self.read))

    def kinds(self) -> pa.ListArray:
        """Each flip's hint kinds (`HintKind` values, most specific first), in flip order."""
        read = pa.array([[h.kind.value for h in found] for found in self.read], pa.list_(pa.string()))
        names = pa.array([k.value for k in KINDS], pa.string()).take(pa.array(self.rest.kind))
        rest = pa.ListArray.from_arrays(pa.array(self.rest.starts, pa.int32()), names)
        return pa.concat_arrays([read, rest])


def flip_hint_table(ev: Evaluation, order: np.ndarray, corpus: Corpus | None) -> FlipHints:
    """The hints of the flips `order` (flip order), chunk text read for the first TEXT_FLIPS only;
    the rest say why text was not examined."""
    if corpus is None:
        return FlipHints((), plain_hints(ev, order, NO_CORPUS))
    head = order[:TEXT_FLIPS]
    found = hints_for(ev, head, corpus)
    rest = plain_hints(ev, order[TEXT_FLIPS:], f"past the first {TEXT_FLIPS} flips")
    return FlipHints(tuple(found[q] for q in head.tolist()), rest)


def _queries(ev: Evaluation, idx: np.ndarray, lost: list[str]) -> list[_Query]:
    """What the text rules read of each query of `idx`: the losing arm's side of it."""
    k = ev.k
    sides = (("a", ev.a), ("b", ev.b))
    rank = {side: arm.judged.gold_rank[idx].tolist() for side, arm in sides}
    depth = {side: arm.depth[idx].tolist() for side, arm in sides}
    mode = {side: _header_mode(arm) for side, arm in sides}
    window = {side: _meta_int(arm, "embedding_max_tokens") for side, arm in sides}
    lists = {side: _lists(arm, idx) for side, arm in sides}
    best = {"a": _best_gold(ev, ev.b, idx), "b": _best_gold(ev, ev.a, idx)}  # by the winner
    texts = ev.query_column("text", idx).to_pylist()
    golds = _golds(ev, idx)
    out = []
    for i, q in enumerate(idx.tolist()):
        side = lost[i]
        other = "a" if side == "b" else "b"
        out.append(
            _Query(
                q,
                side,
                side.upper(),
                k,
                lists[side][i],
                rank[side][i],
                depth[side][i],
                golds[i],
                best[side][i],
                texts[i],
                mode[side],
                window[side] or window[other],  # the model is held still between the arms
            )
        )
    return out


def _golds(ev: Evaluation, qs: np.ndarray) -> list[list[str]]:
    """Each query's gold ids, best grade first (one take over the gold vocabulary)."""
    sets = ev.gold.sets
    lo, hi = np.searchsorted(sets.query, qs), np.searchsorted(sets.query, qs, side="right")
    count = hi - lo
    rows = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    names = ev.gold.vocabulary.take(pa.array(sets.code[rows])).to_pylist() if len(rows) else []
    ends = np.cumsum(count).tolist()
    return [names[e - c : e] for e, c in zip(ends, count.tolist(), strict=True)]


def _lists(arm: Arm, qs: np.ndarray) -> list[list[str]]:
    """Each query's first k stored ids in `arm` (empty where the run lacks the query)."""
    rows = arm.row[qs]
    table = arm.run.retrieved
    if len(table) == 0:
        return [[] for _ in qs]
    taken = table.take(pa.array(np.maximum(rows, 0)))
    top = pc.list_slice(taken, 0, arm.judged.k).to_pylist()
    return [t if r >= 0 and t is not None else [] for t, r in zip(top, rows.tolist(), strict=True)]


def _returned(arm: Arm, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n_returned, n_eligible) per query (int64): `n_returned` where the run records it, else the
    stored list length, 0 where the run lacks the query; `n_eligible` -1 where unrecorded."""
    n_ret = arm.depth[qs].copy()
    values = arm.at("n_returned", qs)
    if values is not None:
        recorded = values.is_valid().to_numpy(zero_copy_only=False)
        given = values.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        n_ret = np.where(recorded, given, n_ret)
    return np.where(arm.row[qs] >= 0, n_ret, 0), arm.n_eligible[qs]


def _text_hints(ev: Evaluation, x: _Query, chunks: dict[str, Chunk]) -> list[Hint]:
    out: list[Hint] = []
    query = words(x.text)
    gold = chunks.get(x.gold) if x.gold is not None else None
    # The ids above the loser's best gold within its top k (for a miss: the whole top k).
    # Ids the corpus lacks stay in: a rule over "the ids above" cannot vouch for text it cannot read.
    above = list(x.top if not 0 < x.rank <= x.k else x.top[: x.rank - 1])
    embeds_headers = x.header_mode is not None and x.header_mode != NO_HEADERS  # recorded, not none
    if gold is not None and query and embeds_headers:
        hint = _header_dominates(x, gold, query, above, chunks)
        if hint is not None:
            out.append(hint)
        hint = _misleading(x, gold, query, above, chunks)
        if hint is not None:
            out.append(hint)
    hint = _unlabelled(ev, x, chunks)
    if hint is not None:
        out.append(hint)
    if gold is not None:
        hint = _window(x, gold)
        if hint is not None:
            out.append(hint)
    return out


def _lifted(chunk: Chunk, query: set[str]) -> set[str]:
    """The query's words the chunk's heading path holds and its body does not."""
    return shared(chunk.header, query) - shared(chunk.text, query)


def _header_dominates(
    x: _Query, gold: Chunk, query: set[str], above: list[str], chunks: dict[str, Chunk]
) -> Hint | None:
    head, body = token_estimate(gold.header), token_estimate(gold.text)
    if head <= body or not above:
        return None
    lifted = {c: sorted(_lifted(chunks[c], query)) for c in above if c in chunks}
    lifted = {c: w for c, w in lifted.items() if w}
    if 2 * len(lifted) < len(above):  # "filled": at least half of the chunks above the gold
        return None
    first, why = next(iter(lifted.items()))
    return Hint(
        HintKind.HEADER_DOMINATES,
        x.arm,
        f"gold {gold.chunk_id}'s heading path (~{head} tokens) is longer than its body (~{body}), and "
        f"{len(lifted)} of the {len(above)} ids above it in {x.name}'s top {x.k} have headings holding "
        f"query words their bodies lack (first: {first}, '{' '.join(why)}')",
        {
            "gold": gold.chunk_id,
            "header_tokens": head,
            "body_tokens": body,
            "lifted": list(lifted),
            "n_above": len(above),
        },
    )


def _misleading(
    x: _Query, gold: Chunk, query: set[str], above: list[str], chunks: dict[str, Chunk]
) -> Hint | None:
    in_body = shared(gold.text, query)
    if not (gold.header or "").strip() or not above:  # no heading path: nothing to mislead
        return None
    if len(in_body) < min(MIN_SHARED, len(query)) or shared(gold.header, query):
        return None
    headed, weaker = [], []
    for c in above:
        ch = chunks.get(c)
        if ch is None:
            return None  # an id above it the corpus lacks: unread, so unexplained
        if shared(ch.header, query):
            headed.append(c)
        elif len(shared(ch.header, query) | shared(ch.text, query)) < len(in_body):
            weaker.append(c)
        else:
            return None  # a chunk above out-matches the gold by its body: not the heading's doing
    if not headed:
        return None  # nothing above was drawn by its heading: the path is not shown to mislead
    return Hint(
        HintKind.MISLEADING_PATH,
        x.arm,
        f"gold {gold.chunk_id}'s body shares {len(in_body)} query words ({', '.join(sorted(in_body))}) "
        f"but its heading path none; of the {len(above)} ids above it in {x.name}'s top {x.k}, "
        f"{len(headed)} have headings sharing query words and {len(weaker)} share fewer query words "
        "than the gold's body",
        {
            "gold": gold.chunk_id,
            "body_shared": sorted(in_body),
            "header": gold.header,
            "above_with_heading": headed,
            "above_weaker": weaker,
        },
    )


def _unlabelled(ev: Evaluation, x: _Query, chunks: dict[str, Chunk]) -> Hint | None:
    golds = {g: (chunks[g].header, chunks[g].text) for g in x.golds if g in chunks}
    zero = set(ev.not_relevant.chunks_of(x.q))
    candidates = {c: (chunks[c].header, chunks[c].text) for c in x.top if c in chunks and c not in zero}
    if not golds or not candidates:
        return None
    dups = near_duplicates(golds, candidates)
    if not dups:
        return None
    cid = next(c for c in x.top if c in dups)  # the best-ranked one
    gid, score = dups[cid]
    rank = x.top.index(cid) + 1
    return Hint(
        HintKind.LIKELY_UNLABELLED,
        x.arm,
        f"{x.name}'s rank {rank}, {cid}, nearly duplicates gold {gid} (similarity {score:.0f}/100) "
        "and is not labelled: the miss may be a missing label",
        {"chunk": cid, "gold": gid, "rank": rank, "similarity": round(score, 1), "n_duplicates": len(dups)},
    )


def _window(x: _Query, gold: Chunk) -> Hint | None:
    limit = x.max_tokens
    if limit is None or x.header_mode != PREPEND:
        return None
    body = token_estimate(gold.text)
    both = token_estimate(f"{gold.header or ''}\n{gold.text or ''}")
    if not body <= limit < both:
        return None
    fit = math.floor(limit / TOKENS_PER_WORD)  # words that fit the window
    cut = word_count(gold.header) + word_count(gold.text) - fit
    return Hint(
        HintKind.WINDOW,
        x.arm,
        f"{x.name} prepends headers: gold {gold.chunk_id}'s heading path + body (~{both} tokens) exceed "
        f"embedding_max_tokens {limit} while its body alone (~{body}) fits, so the body's last ~{cut} "
        "words were cut off (tokens estimated at 4 per 3 words)",
        {
            "gold": gold.chunk_id,
            "embedding_max_tokens": limit,
            "header_body_tokens": both,
            "body_tokens": body,
            "words_cut": cut,
            "estimate": "token_estimate: ceil(words x 4/3), words split on whitespace",
        },
    )
