"""The query searcher (core/text/search.py): exact ids first, then id substrings, words in the texts,
a typo's close match, limits and ties."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from triage.core.text.search import Searcher

IDS = ["q1", "q100", "q10", "x-q1-y", "leave", "q2", "q3", "q4", "q5"]
TEXTS = [
    "how much parental leave do I get",
    "reset a password",
    "expense report deadline",
    "card reader declined",
    "office opening hours",
    "remote work days per week",
    "remote work days per week",
    "annual leave carry over",
    None,
]


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(pa.array(IDS), pa.array(TEXTS, pa.string()))


def names(hits: list[int]) -> list[str]:
    return [IDS[i] for i in hits]


def test_search_exact_id_first_then_id_substrings_by_length(searcher: Searcher) -> None:
    got = names(searcher.search("q1"))
    assert got[:4] == ["q1", "q10", "q100", "x-q1-y"]
    assert names(searcher.search("Q100")) == ["q100"]  # case does not matter; no text holds it


def test_search_word_matches_rank_texts(searcher: Searcher) -> None:
    # texts holding any of the needle's words, best first: both words, then one ("annual leave")
    assert names(searcher.search("parental leave")) == ["q1", "q4"]
    # an id holding the needle comes before every text match
    assert names(searcher.search("leave")) == ["leave", "q1", "q4"]
    assert names(searcher.search("leave", limit=2)) == ["leave", "q1"]


def test_search_falls_back_to_qratio_on_a_typo(searcher: Searcher) -> None:
    # no word of these is in any text (or id): QRatio over every text ranks them instead
    for typo, want in (
        ("pasword resett", "q100"),
        ("expnse reprot dedline", "q10"),
        ("ofice opning", "leave"),
    ):
        assert not any(w in t for w in typo.split() for t in TEXTS if t)
        assert names(searcher.search(typo))[0] == want, typo


def test_search_within_limits_the_queries(searcher: Searcher) -> None:
    within = np.array([IDS.index("q10"), IDS.index("q4"), IDS.index("q3")])
    got = names(searcher.search("q1", within=within))
    assert got[0] == "q10" and set(got) <= {"q10", "q4", "q3"}
    assert names(searcher.search("remote work", within=np.array([IDS.index("q3")]))) == ["q3"]
    assert searcher.search("   ") == [] and searcher.search("") == []


def test_search_prefer_breaks_ties(searcher: Searcher) -> None:
    q2, q3 = IDS.index("q2"), IDS.index("q3")  # the very same text: an equal score
    assert names(searcher.search("remote work days", prefer=np.array([q3])))[:2] == ["q3", "q2"]
    assert names(searcher.search("remote work days", prefer=np.array([q2])))[:2] == ["q2", "q3"]
    assert names(searcher.search("remote work days"))[:2] == ["q2", "q3"]  # no preference: universe order
    assert len(searcher.search("remote work days", limit=1)) == 1
