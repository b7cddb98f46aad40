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
