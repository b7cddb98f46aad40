"""The passage finder (core/words.passages, best_passages): paragraphs, windows of sentences, and
the passage sharing the most query words, on generated text with the answer placed at the start,
in the middle and at the end."""

from __future__ import annotations

import random

import pytest

from triage.core.text.words import PASSAGE_WORDS, best_passages, passages, words

QUERY = "how long after a deploy can I still roll back without being asked to confirm"
ANSWER = "Rollback: you can still roll back a deploy for 30 minutes without being asked to confirm."
FILLER = "alpha beta gamma delta epsilon zeta theta iota kappa lambda omicron sigma".split()


def filler_sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(n)).capitalize() + "."


def paragraphs_with_answer(where: int, n: int = 9, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    out = [" ".join(filler_sentence(rng, rng.randint(6, 14)) for _ in range(3)) for _ in range(n)]
    out[where] = out[where] + " " + ANSWER
    return out


@pytest.mark.parametrize("where", [0, 4, 8])
def test_the_best_passage_is_the_paragraph_holding_the_answer(where: int) -> None:
    text = "\n\n".join(paragraphs_with_answer(where))
    found = passages(text, words(QUERY))
    assert len(found) == 9
    best = best_passages(found)
    assert best[0].index == where
    assert ANSWER in text[best[0].start : best[0].end]
    assert best[0].shared == words(QUERY) & words(ANSWER)
    assert len(best) == 1  # no other paragraph shares a query word


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_a_long_paragraph_is_cut_into_windows_of_sentences_and_the_answer_found(where: str) -> None:
    rng = random.Random(7)
    sentences = [filler_sentence(rng, rng.randint(5, 12)) for _ in range(40)]
    at = {"start": 0, "middle": 20, "end": 40}[where]
    sentences.insert(at, ANSWER)
    text = " ".join(sentences)  # one paragraph, no blank line
    found = passages(text, words(QUERY))
    assert len(found) > 5
    for p in found:
        piece = text[p.start : p.end]
        assert len(piece.split()) <= PASSAGE_WORDS
        assert piece.endswith(".")  # whole sentences only
    assert " ".join(text[p.start : p.end] for p in found) == text  # nothing lost, in order
    best = best_passages(found)[0]
    assert ANSWER in text[best.start : best.end]
    assert best.index == {"start": 0, "middle": best.index, "end": len(found) - 1}[where]
    if where == "middle":
        assert 0 < best.index < len(found) - 1


def test_ties_go_to_the_first_and_fewer_shared_words_rank_lower() -> None:
    text = "deploy here.\n\nnothing.\n\ndeploy again.\n\nroll back a deploy."
    found = passages(text, words("roll back a deploy"))
    assert [p.index for p in best_passages(found)] == [3, 0, 2]  # 3 words, then the 1-word tie in order
    assert found[1].shared == frozenset()


def test_blank_lines_with_spaces_separate_paragraphs_and_outer_whitespace_is_left_out() -> None:
    text = "  first line\nstill first  \n \t \nsecond\n\n\n\nthird  "
    found = passages(text)
    assert [text[p.start : p.end] for p in found] == ["first line\nstill first", "second", "third"]
    assert passages("") == [] and passages("\n\n  \n") == []


def test_a_sentence_longer_than_the_window_is_cut_every_n_words() -> None:
    text = " ".join(f"w{i}" for i in range(25))  # no sentence end at all
    found = passages(text, size=10)
    assert [len(text[p.start : p.end].split()) for p in found] == [10, 10, 5]


def test_stop_words_never_count_as_shared() -> None:
    found = passages("how can I do it\n\nthe deploy", words("how do I deploy"))
    assert [p.shared for p in found] == [frozenset(), frozenset({"deploy"})]
