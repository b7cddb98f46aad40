"""Judgements, not only additions: grade 0 is judged not relevant, frozen judgements
stand, reviewers who disagree make a conflict that keeps the pair unjudged until a judgement
naming it resolves it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from triage.core.bundled import bundled
from triage.core.inputs.manifest import from_manifest
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from sample_story import NEAR_DUP_CHUNK as NEAR_DUPLICATE
from sample_story import NEAR_DUP_QUERY as REGRESSION_NEAR_DUPLICATE


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundled("sample_runs"), tmp_path / "sample"))


def session(copy: Path, reviewer: str) -> Session:
    return Session(open_snapshot(from_manifest(copy)), reviewer=reviewer)


def test_grade_zero_is_judged_not_relevant_never_gold(copy: Path) -> None:
    s = session(copy, "ana")
    ev = s.ev
    q = ev.query_index(REGRESSION_NEAR_DUPLICATE)
    before_judged = int(ev.b.judged_top[q])
    change = s.add(REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE, 0, evidence={"arm": "b", "rank": 1})
    assert change.saved and change.after == change.before  # no gold: the outcome stays
    assert (REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE) in s.labels.not_relevant
    assert NEAR_DUPLICATE not in dict(s.ev.gold_of(q))
    assert int(s.ev.b.judged_top[q]) == before_judged + 1  # judged now, and not gold
    again = session(copy, "ana")  # from disk
    assert int(again.ev.b.judged_top[q]) == before_judged + 1
    assert again.labels.by_arm() == {"a": 0, "b": 0, "none": 0}  # not relevant adds no gold


def test_two_reviewers_who_disagree_make_a_conflict_kept_unjudged_until_resolved(copy: Path) -> None:
    ana, bo = session(copy, "ana"), session(copy, "bo")
    assert ana.add(REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE, 1).saved
    assert bo.add(REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE, 0).saved
    both = session(copy, "cy")
    (conflict,) = both.labels.conflicts
    assert conflict.grades == {"ana": 1, "bo": 0}
    pair = (REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE)
    assert pair not in both.labels.added and pair not in both.labels.not_relevant  # frozen state
    assert both.ev.paired().a_hit_b_miss == 6  # the regression stands: neither arm favoured
    check = next(c for c in both.checks if c.code == "labels.conflicts")
    assert check.facts["count"] == 1 and "ana: 1" in check.message and "bo: 0" in check.message
    resolved = both.add(*pair, 1, resolves=tuple(r.id for r in conflict.judgements))
    assert resolved.saved and both.labels.conflicts == [] and pair in both.labels.added
    assert session(copy, "dee").ev.paired().a_hit_b_miss == 5


def test_a_reviewer_changing_their_mind_is_no_conflict(copy: Path) -> None:
    ana = session(copy, "ana")
    ana.add(REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE, 0)
    ana.add(REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE, 1)
    fresh = session(copy, "x")
    assert fresh.labels.conflicts == [] and (REGRESSION_NEAR_DUPLICATE, NEAR_DUPLICATE) in fresh.labels.added
