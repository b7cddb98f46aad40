"""The metrics section: each arm's means at k (hit rate, recall, MRR, nDCG), its hit rate's
interval, what the labels judge of its top k, the measures asked for by name, and each arm at each
cut-off; its types, built from the workspace's figures, and its cells."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from triage.report.arms import ByArm, num
from triage.report.blocks import Block, Heading, Para, Table, all_but, every_column, numeric
from triage.report.cells import count_delta, delta, k_cell, rate

if TYPE_CHECKING:
    from triage.core.evaluation import Arm
    from triage.core.measures.metrics import Means
    from triage.workspace.results import ArmFigures


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
class KCells:
    """Each arm's hit rate at each k asked for and each arm's own k (None: depth too short); k
    ascending. Present when there are several."""

    a: Mapping[int, float | None]
    b: Mapping[int, float | None]

    @property
    def ks(self) -> list[int]:
        return list(self.a)


class MetricsSource(Protocol):
    """What the metrics' cells read of the report."""

    @property
    def k(self) -> int: ...
    @property
    def arms(self) -> ByArm[ArmSection]: ...
    @property
    def unjudged_same_depth(self) -> tuple[int, int, int] | None: ...
    @property
    def k_cells(self) -> KCells | None: ...


def _at_k(m: Means | None) -> AtK:
    if m is None:
        return AtK(None, None, None, None, within_depth=False)
    return AtK(num(m.hit_rate), num(m.recall), num(m.mrr), num(m.ndcg), within_depth=True)


def arm_section(arm: Arm, f: ArmFigures) -> ArmSection:
    m = f.means
    low, high = f.wilson
    return ArmSection(
        name=arm.name,
        path=arm.run.path,
        k=arm.run.k,
        n=m.n,
        hit_rate=num(m.hit_rate),
        recall=num(m.recall),
        mrr=num(m.mrr),
        ndcg=num(m.ndcg),
        noise_band=num(f.noise_band),
        wilson_low=num(low),
        wilson_high=num(high),
        judged_at_k=num(f.judged_at_k),
        unjudged_in_top_k=f.unjudged_in_top_k,
        hit_rate_upper=num(f.hit_rate_upper),
        n_recall_unscored=m.n - m.n_recall,
        n_missing_scored=f.missing_scored,
        meta=dict(arm.run.meta),
        at_k={k: _at_k(m) for k, m in f.at_k.items()},
        depth=f.depth,
        recall_at_depth=num(f.recall_at_depth),
        measures={name: num(v) for name, v in f.named_means.items()},
    )


def arm_means(m: Means) -> ArmMeans:
    return ArmMeans(m.n, num(m.hit_rate), num(m.recall), num(m.mrr), num(m.ndcg))


def k_cells_of(arms: ByArm[ArmSection]) -> KCells | None:
    """Each arm's hit rate at each of its cut-offs, when there are several."""
    if len(arms.a.at_k) < 2:
        return None
    return KCells(*({k: x.hit_rate for k, x in arm.at_k.items()} for arm in (arms.a, arms.b)))


def metric_rows(r: MetricsSource) -> list[list[str]]:
    """[metric, A, B, B − A] for each metric at k, then the hit rate's 95% interval, then what is
    judged."""
    a, b = r.arms.a, r.arms.b
    rows = [
        [f"{name}@{r.k}", rate(x), rate(y), delta(x, y)]
        for name, x, y in (
            ("hit_rate", a.hit_rate, b.hit_rate),
            ("recall", a.recall, b.recall),
            ("mrr", a.mrr, b.mrr),
            ("ndcg", a.ndcg, b.ndcg),
        )
    ]
    # The interval as two rows keeps the overview's metrics table as narrow as its other rows.
    ci = [
        [f"hit_rate@{r.k} 95% low", rate(a.wilson_low), rate(b.wilson_low), ""],
        [f"hit_rate@{r.k} 95% high", rate(a.wilson_high), rate(b.wilson_high), ""],
    ]
    return [*rows, *ci, *judged_rows(r), *measure_rows(r)]


def metrics_note(r: MetricsSource) -> str:
    """The metrics table's note: what judged and upper mean, and, with measures by name, that
    each keeps its own cut-off (nDCG@10 under a table at k = 5)."""
    own = "; measures by name are at their own cut-off, not at k" if r.arms.a.measures else ""
    sparse = sparse_labels(r)
    same = r.unjudged_same_depth
    depth = (
        ""
        if same is None
        else f". The arms' top {r.k} lists differ in length: unjudged B − A compares them cut at the "
        f"shorter one, query by query ({same[0]} ids each: A {same[1]} unjudged, B {same[2]})"
    )
    return JUDGED_NOTE + own + depth + (f". {sparse[:1].upper()}{sparse[1:]}" if sparse else "")


SPARSE = 0.5  # labels judging less than this share of either arm's top k are sparse


def sparse_labels(r: MetricsSource) -> str:
    """Why the upper bound and the unjudged counts run high, when the labels judge little of the
    top k ("" when they judge at least SPARSE of it in both arms)."""
    a, b = r.arms.a.judged_at_k, r.arms.b.judged_at_k
    if a is None or b is None or min(a, b) >= SPARSE:
        return ""
    return (
        f"sparse labels: they judge {a:.0%} of A's top {r.k} and {b:.0%} of B's, so a top k often "
        "holds an unjudged passage: the upper bound counts each as relevant, and a regression holding "
        "one may be a passage nobody labelled"
    )


def measure_rows(r: MetricsSource) -> list[list[str]]:
    """[measure, A, B, B − A] for each measure asked for by name, at its own cut-off (none asked:
    no rows)."""
    a, b = r.arms.a.measures, r.arms.b.measures
    return [[name, rate(a[name]), rate(b.get(name)), delta(a[name], b.get(name))] for name in a]


def judged_rows(r: MetricsSource) -> list[list[str]]:
    """[what, A, B, B − A]: the share of the top k judged, the unjudged ids in it, and the hit
    rate if every one of those were relevant."""
    a, b, same = r.arms.a, r.arms.b, r.unjudged_same_depth
    return [
        [f"judged@{r.k}", rate(a.judged_at_k), rate(b.judged_at_k), delta(a.judged_at_k, b.judged_at_k)],
        [
            f"unjudged in top {r.k}",
            str(a.unjudged_in_top_k),
            str(b.unjudged_in_top_k),
            # lists of different lengths: B − A at one depth (the metrics' note says so)
            count_delta(a.unjudged_in_top_k, b.unjudged_in_top_k)
            if same is None
            else count_delta(same[1], same[2]),
        ],
        [
            f"hit_rate@{r.k} upper",
            rate(a.hit_rate_upper),
            rate(b.hit_rate_upper),
            delta(a.hit_rate_upper, b.hit_rate_upper),
        ],
    ]


JUDGED_NOTE = (
    "judged: mean share of a top k judged, gold or not; upper: the hit rate if every unjudged "
    "passage there were relevant (the measured one takes them as not)"
)


AT_K_METRICS = ("hit_rate", "recall", "mrr", "ndcg")


def at_k_title(r: MetricsSource) -> str:
    return f"Each arm at each k (flips and the paired table at k = {r.k})"


def at_k_head(r: MetricsSource) -> list[str]:
    """[arm, metric, "k = 1", …, "recall@depth"]: the columns of `at_k_rows`."""
    return ["arm", "metric", *[f"k = {x}" for x in r.arms.a.at_k], "recall@depth"]


def at_k_rows(r: MetricsSource) -> list[tuple[str, list[str]]] | None:
    """(arm, [metric, its value at each k, recall at the stored depth on the recall row]) for each
    arm and metric; None with one cut-off (the metrics table says it all)."""
    if r.k_cells is None:
        return None
    out = []
    for side, arm in r.arms.items():
        for metric in AT_K_METRICS:
            figures = [
                rate(getattr(x, metric)) if x.within_depth else k_cell(None) for x in arm.at_k.values()
            ]
            depth = f"{rate(arm.recall_at_depth)} @{arm.depth}" if metric == "recall" else ""
            out.append((side, [metric, *figures, depth]))
    return out


def metric_blocks(r: MetricsSource) -> list[Block]:
    """The metrics at k and their note."""
    a, b = r.arms.a, r.arms.b
    head = ["metric", f"A {a.name}", f"B {b.name}", "B − A"]
    return [
        Heading("Metrics"),
        Table(head, metric_rows(r), numeric(head), every_column(head)),
        Para(metrics_note(r)),
    ]


def at_k_blocks(r: MetricsSource) -> list[Block]:
    """Each arm at each k (none with one cut-off)."""
    at_k = at_k_rows(r)
    if at_k is None:
        return []
    names = {"a": r.arms.a.name, "b": r.arms.b.name}
    head = at_k_head(r)
    rows = [
        [f"{side.upper()} {names[side]}" if metric == AT_K_METRICS[0] else "", metric, *row]
        for side, (metric, *row) in at_k
    ]
    return [Heading(at_k_title(r), 3), Table(head, rows, numeric(head, 2), all_but(head, 0))]
