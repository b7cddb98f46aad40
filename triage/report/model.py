"""Everything `triage report` says, as one typed `Report`. Text, Markdown and the app's screens
render its fields through `cells`, and `to_json` is its one JSON spelling, so no two can disagree.

Undefined numbers (nothing to judge) are None here and null in the JSON, never NaN.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import BinaryIO, ClassVar, Generic, TypeVar

import numpy as np
import pyarrow as pa

from triage.core.checks.model import Check
from triage.core.measures.corrections import Correction
from triage.core.measures.paired import Outcome
from triage.core.measures.significance import MeasureTest, NoTest, PairedTest
from triage.core.text.sanitize import bytes_shown
from triage.core.views.slices import RATE_DIGITS
from triage.labels import jsontext
from triage.report.rows import Drops, Flips, Rows

SCHEMA = 1  # `to_json()["schema"]`: raised when a key changes name or meaning
T = TypeVar("T")


@dataclass(frozen=True)
class ByArm(Generic[T]):
    """One value per arm: `{"a": …, "b": …}` in the JSON."""

    a: T
    b: T

    def items(self) -> Iterator[tuple[str, T]]:
        yield "a", self.a
        yield "b", self.b


@dataclass(frozen=True)
class LabelsSection:
    path: Path
    frozen_sha256: str
    amendments: int  # records merged from the amendment log
    in_force: int  # adds in force
    by_arm: Mapping[str, int]  # adds in force by the arm whose results they came from: a, b, none
    head: str | None
    applied: bool  # the numbers use the amendments (label state "amended")
    state: str  # "frozen <sha12> + N amendments (head <sha12>)"
    gold_added: int  # (query, chunk) pairs the judgements in force make gold
    not_relevant: int  # pairs the judgements in force judge not relevant
    conflicts: int  # pairs whose reviewers disagree (kept unjudged until resolved)
    reviewers: Mapping[str, int]  # reviewer → judgements in force
    moved: ByArm[float | None] | None  # each arm's hit rate, amended − frozen; None: no gold added


@dataclass(frozen=True)
class ArmMeans:
    n: int
    hit_rate: float | None
    recall: float | None
    mrr: float | None
    ndcg: float | None


@dataclass(frozen=True)
class AtK:
    """One arm's means at one cut-off (None: undefined, or `within_depth` is False: every stored
    list is shorter than that k, so it cannot be shown)."""

    hit_rate: float | None
    recall: float | None
    mrr: float | None
    ndcg: float | None
    within_depth: bool


@dataclass(frozen=True)
class ArmSection:
    name: str
    path: Path
    k: int | None  # the arm's own k, as its run records it
    n: int
    hit_rate: float | None
    recall: float | None
    mrr: float | None
    ndcg: float | None
    noise_band: float | None  # one standard error of the hit rate, √(p(1−p)/n)
    wilson_low: float | None  # Wilson 95% score interval of the hit rate (core/measures/intervals.py)
    wilson_high: float | None
    judged_at_k: float | None  # mean share of the top k judged (gold or not relevant)
    unjudged_in_top_k: int  # unjudged ids in the top k, over the scored queries
    hit_rate_upper: float | None  # the hit rate if every unjudged id in a top k were relevant
    n_recall_unscored: int  # scored queries without a recall (n_eligible = 0)
    n_missing_scored: int  # scored queries the arm did not answer (scored as misses)
    meta: Mapping[str, str]
    # Each cut-off asked for and each arm's own k, ascending: k (as text in the JSON) → means.
    at_k: Mapping[int, AtK] = field(default_factory=dict)
    depth: int = 0  # the stored depth: the arm's longest ranked list
    recall_at_depth: float | None = None  # recall@depth: the gold a reranker of every stored id can reach
    # Each measure asked for by name (docs/measures.md "Measures by name") → its mean over the scored queries;
    # left out of the JSON when none is asked for.
    measures: Mapping[str, float | None] = field(default_factory=dict, metadata={"omit_empty": True})


@dataclass(frozen=True)
class PairedSection:
    n: int
    both_hit: int
    both_miss: int
    a_hit_b_miss: int
    a_miss_b_hit: int
    mcnemar_p: float | None
    reconciles: bool  # the cells reproduce both hit rates
    regressions_with_unjudged: int  # a_hit_b_miss with an unjudged id in B's top k


@dataclass(frozen=True, slots=True)
class Changed:
    query_id: str
    frozen: Outcome
    amended: Outcome


@dataclass(frozen=True)
class FrozenView:
    """The numbers on the frozen labels alone, and the queries whose outcome amendments changed."""

    arms: ByArm[ArmMeans]
    paired: PairedSection
    changed: tuple[Changed, ...]


@dataclass(frozen=True)
class KCells:
    """Each arm's hit rate at each k asked for and each arm's own k (None: depth too short); k
    ascending. Present when there are several."""

    a: Mapping[int, float | None]
    b: Mapping[int, float | None]

    @property
    def ks(self) -> list[int]:
        return list(self.a)


@dataclass(frozen=True, slots=True)
class ArmSliceRow:
    hit_rate: float | None
    recall: float | None
    short_lists: int
    noise_band: float | None
    wilson_low: float | None  # Wilson 95% interval of the hit rate
    wilson_high: float | None
    n_eligible_zero: int


@dataclass(frozen=True, slots=True)
class SliceComparison:
    """B against A on one measure in one slice (core/views/slices.py `slice_comparisons`). A figure
    not computed is None (null), with `reason` saying why there is no p."""

    n: int  # the slice's queries both arms are compared on
    delta: float | None  # mean(B − A) over them
    p: float | None  # two-sided: the paired t-test, or exact McNemar for a binary measure (`test`)
    q_bh: float | None  # p adjusted by Benjamini–Hochberg across the slices of the same key
    test: str  # "t" | "mcnemar"
    reason: str | None  # why there is no p (significance.NoTest); None when tested

    @property
    def moved(self) -> bool:
        """Beyond noise: q < 0.05."""
        return self.q_bh is not None and self.q_bh < Q_MOVED


Q_MOVED = 0.05  # a slice whose BH q is below this moved beyond noise


@dataclass(frozen=True, slots=True)
class SliceRow:
    value: str
    n: int
    a: ArmSliceRow
    b: ArmSliceRow
    hit_to_miss: int
    miss_to_hit: int
    # The decision measure (docs/slices.md "Slices and tenants: which moved beyond noise") → B against A.
    compare: Mapping[str, SliceComparison] = field(default_factory=dict)

    @property
    def b_below_a(self) -> bool:
        a, b = self.a.hit_rate, self.b.hit_rate
        return a is not None and b is not None and b < a


@dataclass(frozen=True)
class Partition:
    sum: int  # the slices' n added up
    scored: int
    ok: bool  # sum == scored


@dataclass(frozen=True, slots=True)
class TenantRow:
    tenant: str
    n: int
    hit_rate_a: float | None
    hit_rate_b: float | None
    delta: float | None  # B − A
    hit_to_miss: int
    miss_to_hit: int
    plan: str | None  # B's most used plan for the tenant's queries
    plan_share: float  # that plan's share of the tenant's scored queries
    median_selectivity: float | None
    few: bool
    noise_band_b: float | None
    wilson_low_b: float | None  # Wilson 95% interval of B's hit rate
    wilson_high_b: float | None
    compare: Mapping[str, SliceComparison] = field(default_factory=dict)  # as SliceRow's
    # Against exact truth: each arm's recall at k over min(k, n_eligible), what tenants are ranked on
    recall: ByArm[float | None] | None = field(default=None, metadata={"omit_empty": True})

    @property
    def ranked_b(self) -> float | None:
        """B's figure the tenants are ranked and floored on: its recall against exact truth, else its
        hit rate; to RATE_DIGITS decimals (a mean of recalls is a sum of floats)."""
        rate = self.hit_rate_b if self.recall is None else self.recall.b
        return None if rate is None else round(rate, RATE_DIGITS)

    def below(self, floor: float) -> bool:
        return self.ranked_b is not None and self.ranked_b < floor


class TenantOrder(Enum):
    """How the tenants are listed, worst first (JSON `tenants.order`)."""

    # B's hit rate (against exact truth: recall) ascending, then more queries first, then the name
    HIT_RATE = "hit_rate_b"
    LOWER_BOUND = "wilson_low_b"  # the low end of B's 95% interval, then its high end, then the name

    @property
    def label(self) -> str:
        return _ORDER_LABELS[self]


_ORDER_LABELS = {
    TenantOrder.HIT_RATE: "worst first by B",
    TenantOrder.LOWER_BOUND: "worst first by the low end of B's 95% interval",
}


def _lower_bound_key(r: TenantRow) -> tuple[bool, float, float, str]:
    low, high = r.wilson_low_b, r.wilson_high_b
    return (low is None, low or 0.0, high or 0.0, r.tenant)


@dataclass(frozen=True)
class TenantsSection:
    floor: float
    below_floor: ByArm[int]
    p5: ByArm[float | None]
    worst: tuple[TenantRow, ...]  # the first three rows
    rows: tuple[TenantRow, ...]  # every tenant, worst first in `order`
    order: TenantOrder = TenantOrder.HIT_RATE
    # What `order`'s rate, the floor and the 5th percentile read: "recall@10" against exact truth
    # (each row's `recall`); None: the hit rate
    measure: str | None = field(default=None, metadata={"omit_empty": True})

    def below(self) -> list[TenantRow]:
        """Tenants whose B hit rate (against exact truth: recall) is below the floor, worst first."""
        return [r for r in self.rows if r.below(self.floor)]

    @cached_property
    def scored(self) -> int:
        """The scored queries of every tenant together: what a tenant's share is of."""
        return sum(r.n for r in self.rows)

    def ordered(self, order: TenantOrder) -> TenantsSection:
        """The same tenants listed in `order` (a tenant with nothing judged last)."""
        if order is self.order:
            return self
        if order is TenantOrder.LOWER_BOUND:
            rows = tuple(sorted(self.rows, key=_lower_bound_key))
        else:
            rows = tuple(
                sorted(self.rows, key=lambda r: (r.ranked_b is None, r.ranked_b or 0.0, -r.n, r.tenant))
            )
        return replace(self, rows=rows, worst=rows[: len(self.worst)], order=order)


@dataclass(frozen=True, slots=True)
class FloorRow:
    name: str
    floor: float
    hit_rate: float | None  # B's
    n: int
    noise_band: float | None
    wilson_low: float | None  # Wilson 95% interval of B's hit rate
    wilson_high: float | None
    holds: bool
    distance_se: float | None = None  # (hit_rate − floor) / noise_band; None: no rate or no band
    noisy: bool = False  # |hit_rate − floor| < gate.NOISE_SE standard errors: fires on noise


@dataclass(frozen=True)
class HoldoutSection:
    """The metrics on the held-out queries alone (core/checks/holdout.py), beside the blend (`arms`)."""

    rule: str  # "hash" | "tuned_docs"
    fraction: float | None  # the hash rule's held-out fraction
    tuned_docs: Path | None  # the tuned-docs file
    described: str  # the rule in words
    doc_ids: bool  # whether any chunk's document is known (else every count below is 0/unknown)
    n_held_out: int  # scored queries whose every gold chunk is from a held-out document
    n_tuned: int  # scored queries with a gold chunk from a tuned document
    n_unknown: int  # the rest: a gold chunk whose document is unknown
    docs: int  # distinct documents of the corpus
    held_out_docs: int
    arms: ByArm[ArmMeans]  # over the held-out queries
    paired: PairedSection  # A against B over the held-out queries
    noise_band: ByArm[float | None]  # √(p(1−p)/n) of each arm's held-out hit rate


@dataclass(frozen=True, slots=True)
class MeasureGateRow:
    """One `[measures."NAME"]` table of the gate file, judged (core/gate/apply.py)."""

    name: str  # the measure's canonical name
    floor: float | None  # B's mean must be at least this (None: no floor)
    max_drop: float | None  # B − A must not fall below −max_drop, significantly (None: no limit)
    n: int  # scored queries compared
    mean_a: float | None
    mean_b: float | None
    delta: float | None  # mean(B − A)
    p: float | None  # paired t-test, two-sided
    p_holm: float | None  # p adjusted by Holm across the measures with a max_drop
    mde80: float | None  # the smallest |Δ| the paired t-test finds 4 times in 5 (α = 0.05)
    floor_holds: bool
    drop_holds: bool
    blind: bool  # max_drop < mde80: the gate cannot see the drop it promises to stop
    reason: str | None  # why there is no p (significance.NoTest)

    @property
    def holds(self) -> bool:
        return self.floor_holds and self.drop_holds


@dataclass(frozen=True)
class GateSection:
    path: Path
    holds: bool  # something was evaluated, and every floor holds (and every measure's floor and drop limit)
    floors: tuple[FloorRow, ...]  # broken first
    measures: tuple[MeasureGateRow, ...] = field(default=(), metadata={"omit_empty": True})  # broken first
    evaluated: bool = True  # false: the gate evaluated nothing (no query scored, …), so it fails
    nothing_evaluated: str | None = None  # why it evaluated nothing (core/gate/apply.py)

    @property
    def broken(self) -> list[FloorRow]:
        return [f for f in self.floors if not f.holds]

    @property
    def broken_measures(self) -> list[MeasureGateRow]:
        return [m for m in self.measures if not m.holds]


@dataclass(frozen=True, slots=True)
class WinTieLossRow:
    """Scored queries where B's per-query value beats A's, ties it (within 1e-9), loses to it."""

    wins: int
    ties: int
    losses: int


@dataclass(frozen=True)
class RankHistogram:
    """Gold-rank change A − B over the scored queries with a gold id in both stored lists."""

    n: int  # queries in the histogram
    changes: Mapping[int, int]  # change → queries, ascending; only changes that occur
    fell: int  # change < 0: B ranked the gold lower
    same: int
    rose: int
    only_a: int  # scored queries with a gold id in A's stored list only (not in the histogram)
    only_b: int
    neither: int


@dataclass(frozen=True)
class RanksSection:
    """B against A per query beyond the flips (core/views/ranks.py)."""

    n: int  # scored queries compared
    mrr: WinTieLossRow
    ndcg: WinTieLossRow
    drops: Drops  # both arms hit, B's gold rank worse: largest drop first
    histogram: RankHistogram


@dataclass(frozen=True, slots=True)
class Sourced:
    """A figure and where it came from: a metadata key, a column, the corpus (None: unknown)."""

    value: float | None
    source: str


@dataclass(frozen=True)
class ArmCostSection:
    """One arm's cost (core/views/cost.py)."""

    n_chunks: Sourced
    latency_p50_ms: Sourced
    latency_p95_ms: Sourced
    latency_n: int  # answered queries with a latency_ms
    header_mode: str | None  # run metadata `header_mode`
    heading_tokens: Sourced  # mean tokens of the top-k chunks' heading paths, prepended or not
    header_tokens: Sourced  # the same as the arm prepends it (0 for header_mode none)
    header_tax: Sourced  # k × header_tokens: tokens added to each answered query
    top_k_chunks: int  # ids of the top k (over the answered queries) found in the corpus
    index_bytes: Sourced | None  # None: not in the run's metadata
    ingest_seconds: Sourced | None
    embed_input_tokens_mean: Sourced | None


@dataclass(frozen=True, slots=True)
class SliceLatencyRow:
    """One slice's own latency percentiles (ms) over its scored queries with a latency."""

    key: str
    value: str
    n: int
    n_a: int
    n_b: int
    p50_a: float | None
    p95_a: float | None
    p50_b: float | None
    p95_b: float | None


@dataclass(frozen=True)
class CostSection:
    arms: ByArm[ArmCostSection]
    corpus_header_tokens: Sourced  # mean header tokens over every corpus chunk (the closure check)
    slices: tuple[SliceLatencyRow, ...]  # every slice key, in the slices' order


@dataclass(frozen=True, slots=True)
class AnswerCellsRow:
    """Evidence × answer over an arm's scored queries with an answer_correct."""

    working: int  # hit, answer correct
    lucky: int  # miss, answer correct
    assembly: int  # hit, answer wrong: an assembly problem
    retrieval: int  # miss, answer wrong: a retrieval problem
    n: int


@dataclass(frozen=True)
class AnswersSection:
    """Answer accuracy beside the hit rate, on the queries scored and judged in both arms (`n`)."""

    cells: ByArm[AnswerCellsRow | None]  # None: that arm has no answer_correct column
    n: int
    accuracy: ByArm[float | None]
    wilson_low: ByArm[float | None]  # Wilson 95% interval of each arm's accuracy
    wilson_high: ByArm[float | None]
    hit_rate: ByArm[float | None]  # on the same n queries
    both_correct: int
    a_correct_b_wrong: int
    a_wrong_b_correct: int
    both_wrong: int
    mcnemar_p: float | None


@dataclass(frozen=True)
class OriginRow:
    """The headline numbers over the scored queries of one origin (core/views/origin.py)."""

    origin: str
    arms: ByArm[ArmMeans]
    paired: PairedSection  # its discordant cells are the origin's flips


@dataclass(frozen=True)
class OriginQuote:
    """Real and generated queries both present: quote the real figure (`quote`)."""

    quote: str  # the origin whose figure to quote: "real"
    n_real: int
    n_generated: int
    real: ByArm[float | None]  # hit rate per arm on the real queries
    generated: ByArm[float | None]
    gap: ByArm[float | None]  # generated − real hit rate, per arm


@dataclass(frozen=True)
class Spread:
    """A distribution over some queries: n, quartiles and median (linear interpolation)."""

    n: int
    q1: float | None
    median: float | None
    q3: float | None


@dataclass(frozen=True)
class OverlapGroup:
    """Lexical overlap of a group of queries with their gold (core/checks/overlap.py)."""

    group: str  # "all", "origin:<name>", "hits", "misses"
    body: Spread
    header: Spread
    header_above_body: int  # queries whose heading-path overlap exceeds their body overlap


@dataclass(frozen=True)
class OverlapSection:
    available: bool
    reason: str  # why not, when not available
    threshold: float  # `queries.generated_like` fires at a median body overlap at or above this
    groups: tuple[OverlapGroup, ...]  # "all", then one per origin
    by_arm: ByArm[tuple[OverlapGroup, ...]]  # the arm's hits, then its misses


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


@dataclass(frozen=True, slots=True)
class QueryRow:
    """One query of `triage report --per-query` (the API's `queries()`), and, for each measure
    named, `<name>_a` and `<name>_b` (number, null for an unlabelled query)."""

    # Keys beyond the fields: the named measures' columns, each a number or null.
    extra_keys: ClassVar[str] = "^.+_[ab]$"
    extra_type: ClassVar[object] = float | None

    query_id: str
    outcome: Outcome
    text: str | None
    tenant: str | None
    gold_rank_a: int | None  # 1-based over the stored depth; null: no gold stored
    depth_a: int
    hit_a: bool | None  # at k; null for an unlabelled query
    recall_a: float | None  # null also where no gold is eligible
    mrr_a: float | None
    ndcg_a: float | None
    plan_a: str | None
    gold_rank_b: int | None
    depth_b: int
    hit_b: bool | None
    recall_b: float | None
    mrr_b: float | None
    ndcg_b: float | None
    plan_b: str | None


class QueryTable:
    """The per-query table (`QueryRow`s and the named measures' columns) held as one Arrow table;
    the JSON is a list of one object per row."""

    row_type: ClassVar[type] = QueryRow

    def __init__(self, table: pa.Table) -> None:
        fixed = tuple(f.name for f in fields(QueryRow))
        assert tuple(table.column_names[: len(fixed)]) == fixed, table.column_names
        self.table = table

    def __bool__(self) -> bool:  # asked for: written even with no rows
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QueryTable) and self.table.equals(other.table)

    def rows(self) -> list[dict[str, object]]:
        return self.table.to_pylist()


@dataclass(frozen=True)
class TruthSection:
    """The exact truth the runs are judged against: the decision measure is `decision`."""

    path: Path  # the truth folder
    k: int  # the truth's depth: it judges every k ≤ it
    metric: str
    tolerance: float
    decision: str  # "recall@10": over min(k, n_eligible), the truth's exact count
    no_eligible: int  # queries the truth lists with n_eligible = 0: counted apart, not scored


@dataclass(frozen=True)
class Report:
    triage: str  # the version that wrote it
    k: int
    n_queries: int
    n_scored: int
    n_unlabelled: int
    unlabelled: tuple[str, ...]
    missing: ByArm[tuple[str, ...]]
    labels: LabelsSection
    arms: ByArm[ArmSection]
    paired: PairedSection
    frozen: FrozenView
    k_cells: KCells | None
    slices: Mapping[str, tuple[SliceRow, ...]]
    partition: Mapping[str, Partition]
    tenants: TenantsSection | None
    flips: Flips
    ranks: RanksSection
    checks: tuple[Check, ...]  # errors first
    gate: GateSection | None = None
    ks: tuple[int, ...] = ()  # every cut-off asked for, `k` (the decision k) first
    holdout: HoldoutSection | None = None  # None: no tuning split named
    origins: tuple[OriginRow, ...] = ()  # per query origin, largest first; empty: no origin column
    origin_quote: OriginQuote | None = None
    overlap: OverlapSection | None = None  # None: not asked for (the app's screens)
    cost: CostSection | None = None  # what the change cost (core/views/cost.py)
    answers: AnswersSection | None = None  # None: no run carries answer_correct
    # Each measure named (docs/measures.md "Paired tests per measure"), B against A; left out when none is.
    compare: Mapping[str, MeasureComparison] = field(default_factory=dict, metadata={"omit_empty": True})
    # The per-query table (`--per-query`): left out unless asked for.
    queries: QueryTable | None = field(default=None, metadata={"omit_empty": True})
    # What the reader should know that is not a number (the corpus read without its cache): on
    # standard error and in the app, never in the JSON.
    notices: tuple[str, ...] = field(default=(), metadata={"json": False})
    # (ids, unjudged in A, unjudged in B) with every scored query's two top-k lists cut at the
    # shorter one, when they differ in length: the shown B − A of the unjudged counts; not in the
    # JSON, whose `unjudged_in_top_k` keeps its meaning.
    unjudged_same_depth: tuple[int, int, int] | None = field(default=None, metadata={"json": False})
    # Judged against exact truth (docs/data.md "Exact truth as labels"); left out otherwise.
    truth: TruthSection | None = field(default=None, metadata={"omit_empty": True})

    def with_tenant_order(self, order: TenantOrder) -> Report:
        return self if self.tenants is None else replace(self, tenants=self.tenants.ordered(order))

    def to_json(self) -> dict[str, object]:
        """The JSON-ready dict: `schema` first, then every field under its own name."""
        out = _plain(self)
        assert isinstance(out, dict)
        return {"schema": SCHEMA, **out}


def dumps_report(report: Report) -> str:
    """One strict JSON object: `json.dumps(report.to_json(), ensure_ascii=False)` byte for byte,
    written through orjson (`write_json`, `labels/jsontext.py`)."""
    sink = io.BytesIO()
    write_json(report, sink)
    return sink.getvalue().decode("utf-8")


def write_json(report: Report, out: BinaryIO) -> None:
    """`dumps_report(report)` as UTF-8 on `out`: the row sections (`Rows`) spelled from their columns a
    slice at a time, everything else by orjson (`jsontext.dumps`)."""
    _write({"schema": SCHEMA, **_plain(report, keep=True)}, out)  # type: ignore[dict-item]


def _write(x: object, out: BinaryIO) -> None:
    if isinstance(x, Rows):
        x.write_json(out)
    elif isinstance(x, dict) and _holds_rows(x):
        for i, (name, value) in enumerate(x.items()):
            out.write(("{" if i == 0 else ", ").encode() + jsontext.dumps(name) + b": ")
            _write(value, out)
        out.write(b"}")
    else:
        out.write(jsontext.dumps(x, spaced=True, allow_nan=False))


def _holds_rows(x: dict[str, object]) -> bool:
    return any(isinstance(v, Rows) or (isinstance(v, dict) and _holds_rows(v)) for v in x.values())


_PRIMITIVE = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[tuple[str, ...], attrgetter[tuple[object, ...]]]] = {}
_OMIT_EMPTY: set[tuple[type, str]] = set()  # (class, field) spelled only when not empty


def _fields(cls: type) -> tuple[tuple[str, ...], attrgetter[tuple[object, ...]]]:
    got = _FIELDS.get(cls)
    if got is None:
        names = tuple(f.name for f in fields(cls) if f.metadata.get("json", True))
        got = _FIELDS[cls] = (names, attrgetter(*names, *names[:1]))  # ≥ 2 names: always a tuple
        _OMIT_EMPTY.update((cls, f.name) for f in fields(cls) if f.metadata.get("omit_empty"))
    return got


def _plain(x: object, keep: bool = False) -> object:
    """Fields by name, Outcome as its `.json`, other enums as their value, paths as text, row
    sections as lists of dicts (`keep`: left as `Rows`, for `write_json`). A dataclass's field
    reader is looked up first, and primitive fields are taken as they are."""
    t = type(x)
    if t in _PRIMITIVE:
        return x
    if isinstance(x, Rows):  # spelled from its columns
        return x if keep else json.loads(x.json())
    if isinstance(x, Outcome):
        return x.json
    if isinstance(x, QueryTable):
        return x.rows()
    if isinstance(x, Enum):
        return x.value
    spec = _FIELDS.get(t) or (_fields(t) if is_dataclass(x) else None)
    if spec is not None:
        names, get = spec
        return {
            n: v if type(v) in _PRIMITIVE else _plain(v, keep)
            for n, v in zip(names, get(x), strict=False)
            if (t, n) not in _OMIT_EMPTY or v
        }
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, Path):  # a byte of its name that is not UTF-8 as \xff: JSON holds text
        return bytes_shown(str(x))
    if isinstance(x, Mapping):
        return {str(k): _plain(v, keep) for k, v in x.items()}
    if isinstance(x, tuple | list):
        return [_plain(v, keep) for v in x]
    raise TypeError(f"no JSON spelling for {t.__name__}")


# -- building ------------------------------------------------------------------------------------
