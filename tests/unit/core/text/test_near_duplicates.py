"""The near-duplicate rule (core/text/suggest.py `near_duplicates`): the same passage in another
edition flagged; boilerplate, short texts and the golds themselves not."""

from __future__ import annotations

from triage.core.text.suggest import MIN_CHARS, THRESHOLD, near_duplicates

PARA_2024 = (
    "Employees may work from home up to three days a week, agreed in advance with their manager's "
    "approval and recorded in the team calendar."
)
PARA_2023 = PARA_2024.replace("manager's", "line manager's")
CLAUSE = (
    "Neither party shall be liable for any indirect or consequential loss arising out of or in "
    "connection with this agreement, however caused."
)


def test_the_same_passage_in_another_edition_is_flagged() -> None:
    golds = {"hb-2024#009": ("Handbook 2024 > Working hours > Remote work", PARA_2024)}
    candidates = {
        "hb-2023#009": ("Handbook 2023 > Working hours > Remote work", PARA_2023),
        "hb-2024#010": ("Handbook 2024 > Working hours > Overtime", "Overtime is paid at 1.5x " * 4),
    }
    got = near_duplicates(golds, candidates)
    assert set(got) == {"hb-2023#009"}
    gold, score = got["hb-2023#009"]
    assert gold == "hb-2024#009" and THRESHOLD <= score < 100


def test_a_boilerplate_clause_under_another_heading_path_is_not_flagged() -> None:
    golds = {"acme/msa#12": ("Acme master services agreement > Liability > Exclusions", CLAUSE)}
    other = {"fjord/msa#30": ("Fjord support contract > Termination > Effect of termination", CLAUSE)}
    assert near_duplicates(golds, other) == {}
    # the same body with no heading path on one side: the body alone decides
    assert near_duplicates(golds, {"x#1": (None, CLAUSE)}) == {"x#1": ("acme/msa#12", 100.0)}


def test_short_texts_are_not_flagged() -> None:
    short = "Paid leave: 14 weeks."
    assert len(short) < MIN_CHARS
    same_header = "Handbook > Leave"
    assert near_duplicates({"g": (same_header, short)}, {"c": (same_header, short)}) == {}
    # a long candidate against a short gold, and the other way round
    assert near_duplicates({"g": (same_header, short)}, {"c": (same_header, short + " " * 40)}) == {}
    long_text = "x" * (MIN_CHARS - 1)
    assert near_duplicates({"g": (None, long_text)}, {"c": (None, long_text)}) == {}
    exactly = "y" * MIN_CHARS
    # one character short of the minimum, against a gold of exactly the minimum (similarity ~99)
    assert near_duplicates({"g": (None, exactly)}, {"c": (None, exactly[1:])}) == {}
    assert near_duplicates({"g": (None, exactly[1:])}, {"c": (None, exactly)}) == {}
    assert near_duplicates({"g": (None, exactly)}, {"c": (None, exactly)}) == {"c": ("g", 100.0)}


def test_the_best_of_several_golds_is_chosen_and_golds_are_not_candidates() -> None:
    header = "Handbook > Working hours > Remote work"
    near = PARA_2024.replace("three", "two")  # one word off PARA_2024, further off PARA_2023
    golds = {"g-2023": (header, PARA_2023), "g-2024": (header, PARA_2024)}
    got = near_duplicates(golds, {"c": (header, near), "g-2023": (header, PARA_2024)})
    assert set(got) == {"c"}  # a gold id is never its own suggestion
    assert got["c"][0] == "g-2024"
    golds_reversed = dict(reversed(golds.items()))  # whichever gold comes first
    assert near_duplicates(golds_reversed, {"c": (header, near)})["c"][0] == "g-2024"
