"""The measures section: each measure named (`--measures`), B against A over the scored queries
paired by query id: Δ, its interval, each paired test's p, the corrected p and the MDE."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from triage.core.measures.corrections import Correction
from triage.core.measures.significance import MeasureTest, NoTest, PairedTest
from triage.report.arms import ByArm
from triage.report.blocks import Block, Heading, Items, Table, numeric
from triage.report.cells import NONE, p_value, rate, signed
from triage.report.sections.metrics import ArmSection


@dataclass(frozen=True, slots=True)
class TestPs:
    """Each paired test's two-sided p (docs/measures.md "Paired tests per measure"); null when it was not
    asked for, or not run (the comparison's `reason` says why)."""

    t: float | None
    wilcoxon: float | None
    randomization: float | None
    mcnemar: float | None  # a binary measure's (every value 0 or 1) exact McNemar p


@dataclass(frozen=True, slots=True)
class Randomization:
    """The randomisation test's rounds and seed (the same seed gives the same p)."""

    rounds: int
    seed: int


@dataclass(frozen=True, slots=True)
class MeasureComparison:
    """One named measure, B against A, over the scored queries paired by query id (`significance.
    MeasureTest.json()` spelled as a type): the fields and their order are that contract's."""

    n: int  # scored queries compared
    delta: float | None  # mean(B − A)
    ci95: tuple[float, float] | None  # [low, high]: the t interval of delta
    d_z: float | None  # delta / sd of the differences
    p: TestPs
    p_holm: float | None  # the p of `test` adjusted by `correction` over the named measures
    correction: Correction
    test: PairedTest  # the test the correction adjusts (the first asked for)
    randomization: Randomization | None  # None: the randomisation test was not asked for
    mde80: float | None  # the minimum detectable effect at 80% power, two-sided α = 0.05
    reason: NoTest | None  # why there is no p; None when tested

    @classmethod
    def of(cls, c: MeasureTest) -> MeasureComparison:
        return cls(
            c.n,
            c.delta,
            c.ci95,
            c.d_z,
            TestPs(c.p_t, c.p_wilcoxon, c.p_randomization, c.p_mcnemar),
            c.p_holm,
            c.correction,
            c.test,
            None if c.rounds is None or c.seed is None else Randomization(c.rounds, c.seed),
            c.mde80,
            c.reason,
        )

    @property
    def unseen(self) -> bool:
        """The query set cannot see a change the size of the one observed: mde80 > |delta|."""
        return self.mde80 is not None and self.delta is not None and self.mde80 > abs(self.delta)


class CompareSource(Protocol):
    """What the measures' cells read of the report."""

    @property
    def arms(self) -> ByArm[ArmSection]: ...
    @property
    def compare(self) -> Mapping[str, MeasureComparison]: ...


def compare_tests(r: CompareSource) -> list[str]:
    """The tests whose p the comparisons hold (the t-test always; the others when asked for and run;
    McNemar for a binary measure), in the JSON's order."""
    ps = [c.p for c in r.compare.values()]
    asked = {"wilcoxon": any(p.wilcoxon is not None for p in ps)}
    asked["randomization"] = any(c.randomization is not None for c in r.compare.values())
    asked["mcnemar"] = any(p.mcnemar is not None for p in ps)
    return ["t", *(t for t, on in asked.items() if on)]


def compare_head(r: CompareSource) -> list[str]:
    """[measure, Δ B − A, 95% interval, p <test> …, p <correction>, MDE 80%]."""
    first = next(iter(r.compare.values()))
    corrected = f"p {first.test.value}, {first.correction.value}"
    return ["measure", "Δ B − A", "95% interval", *(f"p {t}" for t in compare_tests(r)), corrected, "MDE"]


def compare_rows(r: CompareSource) -> list[list[str]]:
    """Each named measure: its Δ, 95% interval, the p of each test, the corrected p and the MDE."""
    tests = compare_tests(r)
    rows = []
    for name, c in r.compare.items():
        interval_text = NONE if c.ci95 is None else f"[{c.ci95[0]:+.3f}, {c.ci95[1]:+.3f}]"
        ps = [_test_p(c, t) for t in tests]
        rows.append([name, signed(c.delta), interval_text, *ps, p_value(c.p_holm), rate(c.mde80)])
    return rows


def _test_p(c: MeasureComparison, test: str) -> str:
    """One test's p; the randomisation p at its floor, 1/(rounds + 1), as the bound it is: no
    round's sum was as large, so the p is below it, by how much the rounds cannot tell."""
    p = getattr(c.p, test)
    if test == "randomization" and c.randomization is not None and p is not None:
        floor = 1 / (c.randomization.rounds + 1)
        if p <= floor * (1 + 1e-9):
            return f"< 1/{c.randomization.rounds + 1:,}"
    return p_value(p)


def compare_title(r: CompareSource) -> str:
    n = next(iter(r.compare.values())).n
    return f"Paired tests per measure over {n} scored queries (pairs by query id)"


def compare_notes(r: CompareSource) -> list[str]:
    """A line for each measure the query set cannot see a change of its size in (MDE > |Δ|), and
    for each one without a test (why)."""
    out = []
    for name, c in r.compare.items():
        if c.reason is not None:
            out.append(f"{name}: no test ({_NO_TEST[c.reason.value]})")
        elif c.unseen and c.mde80 is not None:
            out.append(f"this query set cannot see a change of {c.mde80:.3f} in {name} (MDE at 80% power)")
    floored = [n for n, c in r.compare.items() if _test_p(c, "randomization").startswith("<")]
    if floored:
        rounds = next(iter(r.compare.values())).randomization.rounds  # type: ignore[union-attr]
        out.append(
            f"randomisation p < 1/{rounds + 1:,} ({', '.join(floored)}): not one of {rounds:,} rounds of "
            "random sign flips gave a sum as large; more rounds (--rounds) bound it lower"
        )
    return out


_NO_TEST = {
    "fewer_than_2_scored_queries": "fewer than 2 scored queries",
    "all_differences_zero": "every difference is 0",
    "constant_difference": "every difference is the same",
}


def compare_overview_rows(r: CompareSource) -> list[list[str]]:
    """[measure, A, B, Δ, 95% interval, p, MDE] per named measure, compact (the app's overview):
    p is the corrected one."""
    a, b = r.arms.a.measures, r.arms.b.measures
    rows = []
    for name, c in r.compare.items():
        interval_text = NONE if c.ci95 is None else f"[{c.ci95[0]:+.3f},{c.ci95[1]:+.3f}]"
        rows.append(
            [
                name,
                rate(a.get(name)),
                rate(b.get(name)),
                signed(c.delta),
                interval_text,
                p_value(c.p_holm),
                rate(c.mde80),
            ]
        )
    return rows


def compare_overview_head() -> list[str]:
    """The overview's columns (each in the app's glossary; the correction is in the title)."""
    return ["measure", "A", "B", "Δ", "95% interval", "p corr.", "MDE"]


def compare_blocks(r: CompareSource) -> list[Block]:
    """The paired tests per measure, and what they cannot see (none without a measure named)."""
    if not r.compare:
        return []
    head = compare_head(r)
    out: list[Block] = [Heading(compare_title(r), 3), Table(head, compare_rows(r), numeric(head))]
    if notes := compare_notes(r):
        out.append(Items(notes))
    return out
