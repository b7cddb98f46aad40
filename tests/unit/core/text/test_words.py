"""Content words, highlights and the token estimate (triage/core/text/words.py)."""

from __future__ import annotations

from triage.core.text.words import STOP, normal, shared, spans, token_estimate, words


def test_stop_words_and_single_letters_are_not_content_words() -> None:
    assert words("how do I book a day off") == {"book", "day", "off"} - STOP
    assert words("A b c") == set()
    assert words("") == set() and words(None) == set()


def test_plurals_and_possessives_fold_to_one_word() -> None:
    assert normal("Policies") == "policy"
    assert normal("weeks") == "week"
    assert normal("doctor's") == "doctor"
    for kept in ("class", "status", "analysis", "bus", "gas"):  # not plurals, or too short to tell
        assert normal(kept) == kept
    assert words("Parental leave: 14 weeks") == words("parental leaves 14 week")


def test_unicode_letters_are_words_and_underscores_split() -> None:
    assert words("Kündigungsfrist für Verträge") == {"kündigungsfrist", "für", "verträge"}
    assert words("rollback_window") == {"rollback", "window"}


def test_shared_is_the_query_words_a_text_holds() -> None:
    query = words("how many weeks of paid leave for adoptive parents")
    assert shared("Adoptive and foster parents: 14 weeks of paid leave per child.", query) == {
        "adoptive",
        "parent",
        "week",
        "paid",
        "leave",
    }
    assert shared("Retirement plan", query) == set()
    assert shared("anything", set()) == set()


def test_spans_mark_query_words_only() -> None:
    text = "The leave lasts 12 weeks; the leave is paid."
    got = [text[a:b] for a, b in spans(text, words("how long is paid leave in weeks"))]
    assert got == ["leave", "weeks", "leave", "paid"]
    assert spans(text, {"the"}) == []  # a stop word is never highlighted, even when asked for
    assert spans(text, set()) == []


def test_token_estimate_is_four_tokens_per_three_words_rounded_up() -> None:
    assert token_estimate("") == 0
    assert token_estimate("one") == 2
    assert token_estimate("one two three") == 4
    assert token_estimate(" ".join(["w"] * 378)) == 504  # the sample's q046 gold body fits 512
    assert token_estimate(" ".join(["w"] * 390)) == 520
