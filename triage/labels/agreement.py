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

Grades are compared too, by Cohen's weighted kappa with linear weights over the grades either
reviewer gave on the shared pairs, g_1 < … < g_m: with o_ij the share of pairs the first graded
g_i and the second g_j, e_ij the product of the two marginal shares and w_ij = |i − j| / (m − 1),
κ_w = 1 − Σ w·o / Σ w·e. Two reviewers who grade one pair 1 and 2 agree it is relevant (κ counts
it as agreement) and differ in grade (κ_w counts it as a partial disagreement). κ_w is undefined
when n = 0 or Σ w·e = 0 (one grade only). With two grades it equals κ.
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


def weighted_kappa(pairs: list[tuple[int, int]]) -> Kappa:
    """Linear-weighted κ of (first grade, second grade) pairs; `p_o`, `p_e` are the weighted
    observed and chance disagreements (Σ w·o, Σ w·e)."""
    n = len(pairs)
    if n == 0:
        return Kappa(None, None, None, "no pairs both judged")
    grades = sorted({g for pair in pairs for g in pair})
    if len(grades) == 1:
        return Kappa(Fraction(0), Fraction(0), None, f"both reviewers gave one grade only ({grades[0]})")
    at = {g: i for i, g in enumerate(grades)}
    m = len(grades) - 1
    first = [0] * len(grades)
    second = [0] * len(grades)
    observed = Fraction(0)
    for one, two in pairs:
        first[at[one]] += 1
        second[at[two]] += 1
        observed += Fraction(abs(at[one] - at[two]), m)
    observed /= n
    chance = sum(
        (
            Fraction(abs(i - j), m) * first[i] * second[j]
            for i in range(len(grades))
            for j in range(len(grades))
        ),
        Fraction(0),
    ) / (n * n)
    return Kappa(observed, chance, 1 - observed / chance)


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

    @property
    def weighted(self) -> Kappa:
        """Linear-weighted κ over the grades of the pairs both judged."""
        return weighted_kappa([(s.first.relevance, s.second.relevance) for s in self.shared])

    @property
    def grade_differences(self) -> int:
        """Pairs both judged relevant at different grades."""
        return sum(
            1
            for s in self.shared
            if s.first.relevance >= 1 and s.second.relevance >= 1 and s.first.relevance != s.second.relevance
        )


def latest_by_reviewer(state: LabelState) -> dict[str, dict[tuple[str, str], Record]]:
    """Reviewer → (query, chunk) → their latest judgement in force (merge order, as `state` does)."""
    out: dict[str, dict[tuple[str, str], Record]] = {}
    for r in state.in_force:
        out.setdefault(r.reviewer, {})[(r.query_id, r.chunk_id)] = r
    return out


def reviewer_agreement(state: LabelState) -> list[Agreement]:
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
