"""Reviewers who grade one pair 1 and 2 agree that it is relevant: the pair is gold in force at the
lower grade, the difference is listed (not a conflict), and weighted kappa counts it; only relevant
against not relevant is a conflict."""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.labels.agreement import cohen_kappa, reviewer_agreement, weighted_kappa
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from sample_story import NEAR_DUP_CHUNK as CHUNK
from sample_story import NEAR_DUP_QUERY as QUERY


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def session(copy: Path, reviewer: str) -> Session:
    return Session(open_snapshot(from_manifest(copy)), reviewer=reviewer)


@pytest.mark.parametrize("grades", [(1, 2), (2, 1), (3, 1, 2)])
def test_relevant_at_different_grades_is_gold_at_the_lowest_grade_and_no_conflict(
    copy: Path, grades: tuple[int, ...]
) -> None:
    for i, g in enumerate(grades):
        assert session(copy, f"r{i}").add(QUERY, CHUNK, g).saved
    s = session(copy, "reader")
    pair = (QUERY, CHUNK)
    assert s.labels.conflicts == []
    assert s.labels.added[pair].relevance == min(grades)
    (diff,) = s.labels.grade_differences
    assert sorted(diff.grades.values()) == sorted(grades)
    assert dict(s.ev.gold_of(s.ev.query_index(QUERY)))[CHUNK] == min(grades)
    assert s.ev.paired().a_hit_b_miss == 5  # the near-duplicate regression is resolved
    assert not any(c.code == "labels.conflicts" for c in s.checks)


def test_relevant_against_not_relevant_stays_a_conflict_whatever_the_grades(copy: Path) -> None:
    for reviewer, g in (("ana", 2), ("bo", 1), ("cy", 0)):
        assert session(copy, reviewer).add(QUERY, CHUNK, g).saved
    s = session(copy, "reader")
    (conflict,) = s.labels.conflicts
    assert conflict.grades == {"ana": 2, "bo": 1, "cy": 0}
    assert s.labels.grade_differences == []
    assert (QUERY, CHUNK) not in s.labels.added and s.ev.paired().a_hit_b_miss == 6


def test_a_resolving_judgement_settles_a_grade_difference(copy: Path) -> None:
    session(copy, "ana").add(QUERY, CHUNK, 1)
    session(copy, "bo").add(QUERY, CHUNK, 3)
    cy = session(copy, "cy")
    (diff,) = cy.labels.grade_differences
    assert cy.add(QUERY, CHUNK, 3, resolves=tuple(r.id for r in diff.judgements)).saved
    fresh = session(copy, "reader")
    assert fresh.labels.grade_differences == [] and fresh.labels.added[(QUERY, CHUNK)].relevance == 3


def test_agreement_counts_a_grade_difference_as_agreement_and_weighted_kappa_as_partial(copy: Path) -> None:
    session(copy, "ana").add(QUERY, CHUNK, 1)
    session(copy, "bo").add(QUERY, CHUNK, 2)
    (pair,) = reviewer_agreement(session(copy, "reader").labels)
    assert pair.table == (1, 0, 0, 0) and pair.grade_differences == 1
    assert pair.weighted.p_o == 1 and pair.weighted.value is not None  # observed disagreement 1 of 1


def test_weighted_kappa_by_hand() -> None:
    # grades 0, 1, 2 (m = 2, weights 0, 1/2, 1); pairs (first, second):
    pairs = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (2, 0)]
    k = weighted_kappa(pairs)
    # observed: (1/2 + 1/2 + 1) / 6 = 1/3; marginals: first 2,2,2  second 2,2,2 → e_ij = 4/36;
    # Σ w·e = (4/36)·(0+½+1 + ½+0+½ + 1+½+0) = (4/36)·4 = 4/9; κ_w = 1 − (1/3)/(4/9) = 1/4
    assert (k.p_o, k.p_e, k.value) == (Fraction(1, 3), Fraction(4, 9), Fraction(1, 4))


@pytest.mark.parametrize("table", [(5, 2, 1, 7), (3, 0, 4, 1), (0, 3, 3, 0), (9, 1, 1, 1)])
def test_weighted_kappa_over_two_grades_is_cohens_kappa(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    pairs = [(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d
    assert weighted_kappa(pairs).value == cohen_kappa(*table).value


def test_weighted_kappa_is_undefined_without_pairs_or_with_one_grade() -> None:
    assert weighted_kappa([]).value is None
    one = weighted_kappa([(2, 2), (2, 2)])
    assert one.value is None and "one grade" in one.reason


def test_labels_conflicts_lists_a_grade_difference_without_exit_1_and_agreement_weighs_it(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from triage.cli.main import main

    session(copy, "ana").add(QUERY, CHUNK, 1)
    session(copy, "bo").add(QUERY, CHUNK, 2)
    assert main(["labels", "conflicts", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "no conflicts" in out and "1 grade difference" in out and "lowest grade" in out
    assert "ana" in out and "bo" in out and CHUNK in out
    assert main(["labels", "agreement", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "Cohen's kappa" in out and "weighted kappa" in out
    assert "1 pair both relevant at different grades" in out
    session(copy, "cy").add(QUERY, CHUNK, 0)  # now relevant against not relevant: a conflict
    assert main(["labels", "conflicts", str(copy)]) == 1
    assert "1 conflict" in capsys.readouterr().out
