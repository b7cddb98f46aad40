"""Lexical overlap of each query with its gold: how much of the query's wording the gold already holds.

For one query and one gold chunk, the body overlap is the share of the query's distinct content
words (core/text/words.py: stop words and one-letter words out, `'s` dropped, one plural ending folded)
that the chunk's body also holds; the heading-path overlap the same share against its `header`.
A query with several gold chunks takes, for each of the two, the maximum over its gold chunks
found in the corpus (the gold closest to the query's wording). Undefined (NaN) for a query with
no content word, no gold or no gold chunk in the corpus.

Everything is vectorised with Arrow string kernels and numpy: the words of every query and of
every gold chunk are cut in one pass each (`tokens`, the same rule as `words.words`), and the gold
chunks are fetched from the corpus in one batched look-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.checks.model import OK, WARNING, Check
from triage.core.evaluation import Evaluation
from triage.core.inputs.corpus import Corpus
from triage.core.measures.gold import KEY
from triage.core.text.words import STOP

_STOP = pa.array(sorted(STOP), pa.string())
_ALNUM = r"\p{L}\p{N}"


@dataclass(frozen=True)
class Tokens:
    """Content words of a string array: occurrence i is word `words[index[i]]` of row `owner[i]`."""

    owner: np.ndarray  # int64
    index: np.ndarray  # int64, into `words`
    words: pa.Array  # string, normalised (may repeat)

    @property
    def word(self) -> pa.Array:
        return self.words.take(pa.array(self.index))

    def codes(self, vocabulary: pa.Array) -> np.ndarray:
        """Each occurrence's place in `vocabulary` (int64; -1: not in it)."""
        code = pc.index_in(self.words, value_set=vocabulary).fill_null(-1).to_numpy()
        return code.astype(np.int64)[self.index]


def _distinct(x: np.ndarray) -> np.ndarray:
    """The sorted distinct values of `x`: a sort and a comparison (numpy's hashing `unique` is
    far slower on millions of int64 keys)."""
    a = np.sort(x)
    return a[np.r_[True, a[1:] != a[:-1]]] if len(a) else a


def _distinct_inverse(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_distinct(x)` and, per element of `x`, its place in it."""
    order = np.argsort(x, kind="stable")
    a = x[order]
    new = np.r_[True, a[1:] != a[:-1]] if len(a) else np.zeros(0, bool)
    inverse = np.empty(len(x), np.int64)
    inverse[order] = np.cumsum(new) - 1
    return a[new], inverse


def _split(texts: pa.Array, pattern: str) -> tuple[np.ndarray, pa.Array]:
    lists = pc.split_pattern_regex(texts, pattern)
    owner = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    return owner, lists.flatten()


def _content_words(pieces: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """The content words of each lower-cased string of `pieces`: (piece index, word) pairs."""
    owner, parts = _split(pieces, f"[^{_ALNUM}']+")  # letters, digits and apostrophes
    inner, parts = _split(parts, "'{2,}")  # a doubled apostrophe separates two words
    owner = owner[inner]
    raw = pc.utf8_trim(parts, "'")  # an apostrophe only joins: none at either end
    keep = pc.and_(pc.greater(pc.utf8_length(raw), 0), pc.invert(pc.is_in(raw, value_set=_STOP)))
    raw, owner = raw.filter(keep), owner[keep.to_numpy(zero_copy_only=False)]
    w = pc.if_else(pc.ends_with(raw, "'s"), pc.utf8_slice_codeunits(raw, 0, -2), raw)
    n = pc.utf8_length(w)
    ies = pc.and_(pc.greater(n, 4), pc.ends_with(w, "ies"))
    kept = pc.or_(pc.or_(pc.ends_with(w, "ss"), pc.ends_with(w, "us")), pc.ends_with(w, "is"))
    plural = pc.and_(pc.and_(pc.greater(n, 3), pc.ends_with(w, "s")), pc.invert(kept))
    w = pc.if_else(
        ies,
        pc.binary_join_element_wise(pc.utf8_slice_codeunits(w, 0, -3), "y", ""),
        pc.if_else(plural, pc.utf8_slice_codeunits(w, 0, -1), w),
    )
    content = pc.and_(pc.greater(pc.utf8_length(w), 1), pc.invert(pc.is_in(w, value_set=_STOP)))
    return owner[content.to_numpy(zero_copy_only=False)], w.filter(content)


def _pieces(texts: pa.Array) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """`texts` lower-cased and cut at whitespace: per piece its row, its code in the distinct
    pieces, and those distinct pieces."""
    lowered = pc.utf8_lower(pc.fill_null(texts.cast(pa.string()), ""))
    lists = pc.utf8_split_whitespace(lowered)
    owner = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    encoded = pc.dictionary_encode(lists.flatten())
    return owner, encoded.indices.to_numpy().astype(np.int64), encoded.dictionary


def _expand(
    owner: np.ndarray, piece: np.ndarray, of_piece: np.ndarray, n_pieces: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each occurrence of a piece, times the words `of_piece` gives it (sorted by piece): the
    occurrence's row and the word's place in that list."""
    count = np.bincount(of_piece, minlength=n_pieces)
    first = np.cumsum(count) - count
    n = count[piece]
    occurrence = np.repeat(np.arange(len(piece)), n)
    index = np.repeat(first[piece] - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
    return owner[occurrence], index


def tokens(texts: pa.Array) -> Tokens:
    """The content words of every string of `texts`, as `words.words` cuts them (a word is a run of
    letters and digits, inner apostrophes allowed; lower-cased; stop words and one-letter words
    out; `'s` dropped; `-ies` → `-y`, `-s` dropped beyond three letters unless `-ss`/`-us`/`-is`).
    Repeated words are kept. The text is cut at whitespace first and each distinct piece is cut
    into words once: a corpus repeats its pieces ("the", "leave.") millions of times."""
    owner, piece, distinct = _pieces(texts)
    of_piece, words = _content_words(distinct)
    rows, index = _expand(owner, piece, of_piece, len(distinct))
    return Tokens(rows, index, words)


def keys_in(texts: pa.Array, vocabulary: pa.Array, width: int) -> np.ndarray:
    """Sorted distinct keys row × width + code of the words of `texts` found in `vocabulary`:
    `tokens` without ever listing a word the vocabulary lacks (a body's many other words)."""
    owner, piece, distinct = _pieces(texts)
    of_piece, words = _content_words(distinct)
    code = pc.index_in(words, value_set=vocabulary).fill_null(-1).to_numpy().astype(np.int64)
    wanted = code >= 0
    rows, index = _expand(owner, piece, of_piece[wanted], len(distinct))
    return _distinct(rows * width + code[wanted][index])


def _keys(t: Tokens, vocabulary: pa.Array, width: int) -> np.ndarray:
    """Sorted distinct keys owner × width + word code, for the words found in `vocabulary`."""
    code = t.codes(vocabulary)
    ok = code >= 0
    return _distinct(t.owner[ok] * width + code[ok])


@dataclass(frozen=True)
class Overlap:
    """Per query of the universe (float64, NaN where undefined): `body` and `header` overlap with
    the query's closest gold; `n_words` its distinct content words."""

    body: np.ndarray
    header: np.ndarray
    n_words: np.ndarray

    @property
    def known(self) -> np.ndarray:
        return ~np.isnan(self.body)


def overlap(ev: Evaluation, corpus: Corpus) -> Overlap:
    """The body and heading-path overlap of every query with its gold in force (see the module)."""
    n = ev.n
    q_tokens = tokens(ev.query_column("text"))
    vocabulary = pc.unique(q_tokens.words)
    width = max(len(vocabulary), 1)
    q_keys = _keys(q_tokens, vocabulary, width)  # one per (query, distinct content word)
    q_of, code_of = q_keys // width, q_keys % width
    n_words = np.bincount(q_of, minlength=n).astype(np.int64)

    gold = ev.gold
    pair_q, pair_code = gold.keys // KEY, gold.keys % KEY
    vocab_rows = corpus.rows_of(gold.vocabulary)  # one batched look-up of every gold chunk
    chunk_row = vocab_rows[pair_code]
    found = chunk_row >= 0
    pair_q, chunk_row = pair_q[found], chunk_row[found]
    rows, chunk = _distinct_inverse(chunk_row)  # each gold chunk read once

    # The query's words, repeated for each of its gold pairs: (pair, word code) rows.
    starts = np.searchsorted(q_of, pair_q)
    counts = n_words[pair_q]
    pair_of = np.repeat(np.arange(len(pair_q)), counts)
    at = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    wanted = chunk[pair_of] * width + code_of[at]
    out = {}
    for column in ("text", "header"):
        texts = corpus.column_at(column, rows) if len(rows) else pa.array([], pa.string())
        have = keys_in(texts, vocabulary, width)  # (chunk, word code) the chunk holds
        j = np.minimum(np.searchsorted(have, wanted), max(len(have) - 1, 0))
        hit = have[j] == wanted if len(have) else np.zeros(len(wanted), bool)
        share = np.full(len(pair_q), np.nan)
        words = counts > 0
        share[words] = np.bincount(pair_of[hit], minlength=len(pair_q))[words] / counts[words]
        best = np.full(n, -np.inf)
        np.fmax.at(best, pair_q, share)  # NaN shares (no words) leave -inf
        best[~np.isfinite(best)] = np.nan
        out[column] = best
    return Overlap(out["text"], out["header"], n_words)


@dataclass(frozen=True)
class Quartiles:
    """The distribution of one overlap over some queries: n, quartiles (linear interpolation)."""

    n: int
    q1: float
    median: float
    q3: float


def spread(values: np.ndarray) -> Quartiles:
    v = values[~np.isnan(values)]
    if not len(v):
        return Quartiles(0, np.nan, np.nan, np.nan)
    q1, median, q3 = np.percentile(v, [25, 50, 75])
    return Quartiles(len(v), float(q1), float(median), float(q3))


# -- the checks: generated-like queries, queries in the header authors' vocabulary -----------------

GENERATED_LIKE = 0.6  # median body overlap at or above this: generated-like (tests/flows/test_overlap.py)
MIN_QUERIES = 10  # a group with fewer queries of known overlap is not judged


def _generated_like(o: Overlap, mask: np.ndarray, label: str) -> Check | None:
    s = spread(o.body[mask])
    if s.n < MIN_QUERIES:
        return None
    facts = {"group": label, "n": s.n, "median": s.median, "q1": s.q1, "q3": s.q3}
    evidence = f"median body overlap {s.median:.2f} (quartiles {s.q1:.2f}–{s.q3:.2f}) over {s.n} {label}"
    if s.median >= GENERATED_LIKE:
        return Check(
            WARNING,
            "queries.generated_like",
            f"{evidence}, at least {GENERATED_LIKE}: these queries reuse their gold chunk's own words, as "
            "questions generated from chunks do; their recall runs above that of real queries",
            facts,
        )
    return Check(OK, "queries.generated_like", f"{evidence}, below {GENERATED_LIKE}", facts)


def _header_vocabulary(o: Overlap, mask: np.ndarray, label: str) -> Check | None:
    both = mask & o.known & ~np.isnan(o.header)
    n = int(both.sum())
    if n < MIN_QUERIES:
        return None
    more = int((o.header[both] > o.body[both]).sum())
    head, body = float(np.median(o.header[both])), float(np.median(o.body[both]))
    facts = {"group": label, "n": n, "header_above_body": more, "median_header": head, "median_body": body}
    evidence = (
        f"for {more} of {n} {label} the gold's heading path shares more of the query's words than its body "
        f"(median overlap: heading path {head:.2f}, body {body:.2f})"
    )
    if 2 * more > n:
        return Check(
            WARNING,
            "queries.header_vocabulary",
            f"{evidence}: more than half, so the queries speak the header authors' vocabulary and "
            "measure how well headers match their own phrasing",
            facts,
        )
    return Check(OK, "queries.header_vocabulary", f"{evidence}: not more than half", facts)


def overlap_checks(o: Overlap | None, groups: list[tuple[str, np.ndarray]], reason: str = "") -> list[Check]:
    """Both checks over each group (label, mask): the blend first, then each origin. `o` None:
    the overlap could not be measured (`reason` says why)."""
    if o is None:
        return [Check(OK, "queries.overlap", f"lexical overlap not measured: {reason}")]
    out = []
    for label, mask in groups:
        for rule in (_generated_like, _header_vocabulary):
            got = rule(o, mask, label)
            if got is not None:
                out.append(got)
    return out
