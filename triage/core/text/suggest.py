"""Retrieved passages that are likely also gold: near-duplicates of a query's gold chunk.

Scorer: rapidfuzz `fuzz.ratio` (normalised Indel similarity, 0–100) on texts lower-cased and
stripped of punctuation (`utils.default_process`). A retrieved non-gold chunk is flagged when its
body scores at least `THRESHOLD` against a gold chunk's body *and* its heading path does too
(when both have one): the same passage in another edition of the same document. The same
paragraph in the 2023 and 2024 handbook scores ~98 on both; a boilerplate clause repeated in two
customers' contracts scores 100 on the body but ~85 on the heading path, and is not flagged.

Bounded work: bodies whose lengths differ so much that their similarity cannot reach THRESHOLD are
not compared (Indel similarity ≤ 2·min/(min + max) of the lengths); longer texts are compared on
their first COMPARE characters, so a 20 MB chunk costs what a 4,000-character one does.
"""

from __future__ import annotations

from dataclasses import dataclass

THRESHOLD = 90.0
MIN_CHARS = 40  # texts shorter than this are too short to call duplicates
COMPARE = 4_000  # characters of each text compared at most (a prefix: the same passage starts alike)


@dataclass(frozen=True)
class Suggestion:
    query_id: str
    chunk_id: str  # the retrieved, non-gold passage
    gold_id: str  # the gold chunk it nearly duplicates
    similarity: float  # body similarity, 0–100
    rank_a: int | None  # where each arm ranked the passage (None: not stored)
    rank_b: int | None


HeadedText = tuple[str | None, str | None]  # (heading path, body)


def similarity(a: str | None, b: str | None) -> float:
    """fuzz.ratio (0–100) of the two texts' first COMPARE characters, lower-cased, punctuation out."""
    from rapidfuzz import fuzz, utils  # here, not above: only chunk text needs it (imported 0.05 s)

    return float(
        fuzz.ratio(utils.default_process((a or "")[:COMPARE]), utils.default_process((b or "")[:COMPARE]))
    )


def _lengths_allow(a: str, b: str) -> bool:
    """Whether texts of these lengths can reach THRESHOLD at all: 2·short/(short + long) ≥ it,
    with a margin for what `default_process` removes."""
    short, long = sorted((len(a), len(b)))
    return 200 * short / (short + long) >= THRESHOLD - 5


def near_duplicates(
    golds: dict[str, HeadedText], candidates: dict[str, HeadedText]
) -> dict[str, tuple[str, float]]:
    """For each candidate chunk id: (the gold id it nearly duplicates, body similarity 0–100)."""
    out: dict[str, tuple[str, float]] = {}
    for cid, (header, text) in candidates.items():
        if cid in golds or not text or len(text) < MIN_CHARS:
            continue
        best: tuple[str, float] | None = None
        for gid, (g_header, g_text) in golds.items():
            if not g_text or len(g_text) < MIN_CHARS or not _lengths_allow(text, g_text):
                continue
            score = similarity(text, g_text)
            if score < THRESHOLD or (header and g_header and similarity(header, g_header) < THRESHOLD):
                continue
            if best is None or score > best[1]:
                best = (gid, score)
        if best is not None:
            out[cid] = best
    return out
