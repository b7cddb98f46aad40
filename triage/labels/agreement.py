"""How far reviewers agree: per pair of reviewers, the (query, chunk) pairs both judged
and Cohen's kappa on relevant (grade ≥ 1) against not relevant (grade 0).

Each reviewer counts with their latest judgement in force on a pair (retracted adds do not count;
a judgement another one resolved still does: a resolution settles the labels, not who said what),
on every pair, the frozen file's included. With the 2×2 table of the pairs both judged

                 B relevant   B not
    A relevant       a          b
    A not            c          d          n = a + b + c + d

p_o = (a + d) / n, p_e = ((a + b)(a + c) + (c + d)(b + d)) / n², κ = (p_o − p_e) / (1 − p_e).
κ is undefined when n = 0 (nothing both judged) or p_e = 1 (both gave one and the same class
only: agreement by chance is already certain). Computed in exact fractions: one reviewer pair at a
time, nothing here is large.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from triage.labels.records import Record
from triage.labels.state import LabelState


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of one 2×2 table: `value` None when undefined, `reason` saying why."""

    p_o: Fraction | None
    p_e: Fraction | None
    value: Fraction | None
    reason: str = ""


def cohen_kappa(a: int, b: int, c: int, d: int) -> Kappa:
    """κ of the table [[a, b], [c, d]]: a both relevant, b only the first reviewer's relevant, c only
    the second's, d both not relevant."""
    if min(a, b, c, d) < 0:
        raise ValueError("counts cannot be negative")
    n = a + b + c + d
    if n == 0:
        return Kappa(None, None, None, "no pairs both judged")
    p_o = Fraction(a + d, n)
    p_e = Fraction((a + b) * (a + c) + (c + d) * (b + d), n * n)
    if p_e == 1:
        only = "relevant" if a == n else "not relevant"
        return Kappa(p_o, p_e, None, f"both reviewers judged every shared pair {only}: chance agreement is 1")
    return Kappa(p_o, p_e, (p_o - p_e) / (1 - p_e))


@dataclass(frozen=True)
class Shared:
    """One (query, chunk) pair both reviewers judged, with each one's latest judgement."""

    query_id: str
    chunk_id: str
    first: Record
    second: Record


@dataclass(frozen=True)
class Agreement:
    """Two reviewers (in name order), the pairs both judged, and their table and kappa."""

    first: str
    second: str
    shared: tuple[Shared, ...]

    @property
    def table(self) -> tuple[int, int, int, int]:
        """(both relevant, first only relevant, second only relevant, both not relevant)."""
        a = b = c = d = 0
        for s in self.shared:
            one, two = s.first.relevance >= 1, s.second.relevance >= 1
            if one and two:
                a += 1
            elif one:
                b += 1
            elif two:
                c += 1
            else:
                d += 1
        return a, b, c, d

    @property
    def kappa(self) -> Kappa:
        return cohen_kappa(*self.table)


def latest_by_reviewer(state: LabelState) -> dict[str, dict[tuple[str, str], Record]]:
    """Reviewer → (query, chunk) → their latest judgement in force (merge order, as `state` does)."""
    out: dict[str, dict[tuple[str, str], Record]] = {}
    for r in state.in_force:
        out.setdefault(r.reviewer, {})[(r.query_id, r.chunk_id)] = r
    return out


def agreement(state: LabelState) -> list[Agreement]:
    """Every pair of reviewers with judgements in force, in name order; those who share no pair
    are listed too (their kappa is undefined)."""
    latest = latest_by_reviewer(state)
    out = []
    for one, two in combinations(sorted(latest), 2):
        mine, theirs = latest[one], latest[two]
        shared = tuple(
            Shared(q, c, mine[(q, c)], theirs[(q, c)]) for (q, c) in sorted(mine.keys() & theirs.keys())
        )
        out.append(Agreement(one, two, shared))
    return out
