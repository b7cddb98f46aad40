"""Words and token estimates: what "shares the query's words" means, for the hints and the highlights.

A word is a maximal run of Unicode letters and digits (`\\w` without `_`), lower-cased, with a
possessive `'s` dropped and one plural ending folded (`policies` → `policy`, `weeks` → `week`; a
word of three letters or fewer, or ending in `ss`, `us` or `is`, is kept as it is). Stop words
(`STOP`: English function words, such as "the", "how", "do", "my") and words of one character are
not content words: they never count as shared and are never highlighted.

Tokens are estimated, not counted: `TOKENS_PER_WORD` (4/3) tokens per whitespace-separated word,
rounded up — the common rule of thumb for English subword tokenisers (BERT-style WordPiece and
BPE alike average 1.2–1.4 tokens per English word).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

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
