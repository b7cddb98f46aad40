"""Words and token estimates: what "shares the query's words" means, for the hints and the highlights.

A word is a maximal run of Unicode letters and digits (`\\w` without `_`), lower-cased, with a
possessive `'s` dropped and one plural ending folded (`policies` → `policy`, `weeks` → `week`; a
word of three letters or fewer, or ending in `ss`, `us` or `is`, is kept as it is). Stop words
(`STOP`: English function words, such as "the", "how", "do", "my") and words of one character are
not content words: they never count as shared and are never highlighted.

Tokens are estimated, not counted: `TOKENS_PER_WORD` (4/3) tokens per whitespace-separated word,
rounded up — the common rule of thumb for English subword tokenisers (BERT-style WordPiece and
BPE alike average 1.2–1.4 tokens per English word).

A passage is a paragraph, or a window of whole sentences of a long paragraph (`passages`);
`best_passages` ranks them by how many of the query's content words each holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

TOKENS_PER_WORD = 4 / 3

STOP = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    get got had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves
    many much per also i'm i've i'd i'll can't don't doesn't isn't aren't
    """.split()
)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def normal(word: str) -> str:
    """One word as it is compared: lower-cased, `'s` dropped, one plural ending folded."""
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _content(w: str) -> bool:
    return len(w) > 1 and w not in STOP


def words(text: str | None) -> set[str]:
    """The distinct content words of `text`, normalised."""
    if not text:
        return set()
    out = set()
    for m in _WORD.finditer(text):
        raw = m.group().lower()
        if raw in STOP:
            continue
        w = normal(raw)
        if _content(w):
            out.add(w)
    return out


def shared(text: str | None, query: set[str]) -> set[str]:
    """The query's content words that `text` also holds."""
    return words(text) & query if query else set()


def spans(text: str, query: Iterable[str]) -> list[tuple[int, int]]:
    """(start, end) character offsets of every word of `text` whose normal form is in `query`."""
    wanted = set(query)
    if not wanted:
        return []
    out = []
    for m in _WORD.finditer(text):
        w = normal(m.group())
        if w in wanted and _content(w):
            out.append(m.span())
    return out


def token_estimate(text: str | None) -> int:
    """Estimated model tokens of `text`: ⌈words × 4/3⌉, words split on whitespace."""
    return math.ceil(len((text or "").split()) * TOKENS_PER_WORD)


def word_count(text: str | None) -> int:
    """Whitespace-separated words (the unit the token estimate scales)."""
    return len((text or "").split())


# -- passages: where in a long text the query's words gather ------------------------------------

PASSAGE_WORDS = 60  # a passage holds at most this many whitespace-separated words

_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_TOKEN = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]»”’]*$")


@dataclass(frozen=True)
class Passage:
    """Characters `start`..`end` (end exclusive) of a text; `index` its 0-based place in the text;
    `shared` the query's content words it holds."""

    index: int
    start: int
    end: int
    shared: frozenset[str]


def _windows(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """One paragraph cut into windows of whole sentences, at most `size` words each."""
    tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text, start, end)]
    if len(tokens) <= size:
        return [(tokens[0][0], tokens[-1][1])] if tokens else []
    sentences: list[list[tuple[int, int, str]]] = [[]]
    for t in tokens:
        sentences[-1].append(t)
        if _SENTENCE_END.search(t[2]):
            sentences.append([])
    out: list[tuple[int, int]] = []
    window: list[tuple[int, int, str]] = []
    for sentence in (s for s in sentences if s):
        if window and len(window) + len(sentence) > size:
            out.append((window[0][0], window[-1][1]))
            window = []
        for t in sentence:  # a sentence longer than `size` is cut every `size` words
            window.append(t)
            if len(window) == size:
                out.append((window[0][0], window[-1][1]))
                window = []
    if window:
        out.append((window[0][0], window[-1][1]))
    return out


def passages(text: str, query: Iterable[str] = (), size: int = PASSAGE_WORDS) -> list[Passage]:
    """`text` cut into passages, in order. A paragraph is a run of text between blank lines (lines
    holding only whitespace), its outer whitespace left out. A paragraph of at most `size` words is
    one passage; a longer one is cut into windows of consecutive whole sentences (a sentence ends
    with a word ending in `.`, `!` or `?`, closing quotes or brackets allowed), each holding as many
    sentences as fit in `size` words; a sentence longer than `size` words is cut every `size` words."""
    wanted = set(query)
    out: list[Passage] = []
    pos = 0
    for gap in [*_BLANK_LINE.finditer(text), None]:
        stop = len(text) if gap is None else gap.start()
        for s, e in _windows(text, pos, stop, size):
            found = frozenset(words(text[s:e]) & wanted) if wanted else frozenset()
            out.append(Passage(len(out), s, e, found))
        pos = len(text) if gap is None else gap.end()
    return out


def best_passages(found: list[Passage]) -> list[Passage]:
    """The passages sharing at least one query word, most shared words first; ties in text order."""
    return sorted((p for p in found if p.shared), key=lambda p: (-len(p.shared), p.index))


# Python's str.split() whitespace, spelled for RE2: a word is a maximal run of anything else.
_SPLIT_WORD = (
    r"[^\t\n\x{0b}\x{0c}\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
    r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+"
)


# The ASCII bytes `str.split()` splits on; a text holding other bytes goes through `_SPLIT_WORD`.
_SPACE = np.zeros(256, bool)
_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


def _word_counts(a: pa.Array) -> np.ndarray:
    """Whitespace-separated words per string of one string array (int64; 0 for null): the ASCII
    texts by one numpy pass over the bytes (a word starts at a non-space byte after a space or at
    the text's start), the others by the regex."""
    a = a.cast(pa.large_string()) if a.type != pa.large_string() else a
    n = len(a)
    if n == 0:
        return np.zeros(0, np.int64)
    offsets = np.frombuffer(a.buffers()[1], np.int64)[a.offset : a.offset + n + 1]
    data = a.buffers()[2]
    raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    seg, off = raw[offsets[0] : offsets[-1]], offsets - offsets[0]
    space = _SPACE[seg]
    start = ~space
    start[1:] &= space[:-1]
    first = off[:-1][off[1:] > off[:-1]]  # each non-empty text's first byte
    start[first] = ~space[first]
    # Words per text: the word starts between its offsets (no running count over every byte).
    words = np.diff(np.searchsorted(np.flatnonzero(start), off))
    other = ~pc.fill_null(pc.string_is_ascii(a), True).to_numpy(zero_copy_only=False)
    if other.any():
        where = np.flatnonzero(other)
        words[where] = pc.count_substring_regex(a.take(pa.array(where)), _SPLIT_WORD).to_numpy(
            zero_copy_only=False
        )
    words[a.is_null().to_numpy(zero_copy_only=False)] = 0
    return words


def token_estimates(texts: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """`words.token_estimate` of every text at once (int64; 0 for null): ⌈words × 4/3⌉, words
    split on whitespace as `str.split()` does."""
    parts = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
    words = np.concatenate([_word_counts(p) for p in parts]) if parts else np.zeros(0, np.int64)
    return np.ceil(words * TOKENS_PER_WORD).astype(np.int64)
