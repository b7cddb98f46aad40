"""Every figure of the report as a string cell: the one place a number becomes text.

The text and Markdown reports and the app's screens all take their cells from here, over the
typed `model.Report`, so a screen and the report cannot disagree. Cells are plain strings; data
text in them (ids, names, plans) is escaped or made visible by whoever draws them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from triage.core.checks.model import Check, Level
from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import counted, one_line
from triage.core.views.slices import KEYS as SLICE_KEYS
from triage.report.model import (
    AnswerCellsRow,
    AnswersSection,
    ArmMeans,
    ArmSection,
    CostSection,
    FloorRow,
    GateSection,
    MeasureComparison,
    MeasureGateRow,
    OriginQuote,
    OverlapSection,
    PairedSection,
    RankHistogram,
    RanksSection,
    Report,
    SliceComparison,
    Sourced,
    Spread,
    TenantRow,
    TenantsSection,
)
from triage.report.rows import DropRow, Drops, FlipRow, Flips

NONE = "–"  # an undefined number
FLIP_CAP = 25  # flips listed per direction in text and Markdown (JSON lists all)
SLICE_CAP = 25  # slices listed per key in text and Markdown (JSON lists all)
BAR = 24  # cells of a full (1.0) bar

# -- one figure ----------------------------------------------------------------------------------


def at_k(r: Report) -> str:
    """The title's cut-off: "at k = 10", with "(the default: no k given)" when nothing named one."""
    defaulted = any(c.code == "k.default" for c in r.checks)
    return f"at k = {r.k}" + (" (the default: no k given)" if defaulted else "")


def rate(x: float | None) -> str:
    """A mean in [0, 1] to three decimals: enough to tell 0.620 from 0.625 at n = 200."""
    return NONE if x is None else f"{x:.3f}"


def p_value(p: float | None) -> str:
    if p is None:
        return NONE
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def band(x: float | None) -> str:
    return NONE if x is None else f"±{x:.3f}"


def interval(low: float | None, high: float | None) -> str:
    """A Wilson 95% interval: "[0.538, 0.832]" ("–" when nothing is judged)."""
    return NONE if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def rate_interval(x: float | None, low: float | None, high: float | None) -> str:
    """A hit rate with its 95% interval: "0.706 [0.538, 0.832]"."""
    return NONE if x is None else f"{rate(x)} {interval(low, high)}"


def signed(x: float | None) -> str:
    """A change of a rate: "+0.005"."""
    return NONE if x is None else f"{x:+.3f}"


def delta(a: float | None, b: float | None) -> str:
    return NONE if a is None or b is None else f"{b - a:+.3f}"


def count_delta(a: int, b: int) -> str:
    """B − A of two counts: "-37"."""
    return f"{b - a:+d}"


def rank(r: int | None, k: int) -> str:
    """A gold rank with its side of the cut-off: "3", "12 (>k)", or "absent" (None or 0)."""
    if not r:
        return "absent"
    return f"{r}" if r <= k else f"{r} (>k)"


def floor(x: float) -> str:
    """A hit-rate floor: "0.80"."""
    return f"{x:.2f}"


def k_cell(x: float | None) -> str:
    """An arm's hit rate at another k; None when its stored depth cannot show it."""
    return "depth too short" if x is None else rate(x)


def plan(name: str | None, share: float) -> str:
    """A tenant's dominant plan with its share: "scan (100%)"."""
    return f"{name} ({share:.0%})" if name else NONE


def selectivity(x: float | None) -> str:
    return NONE if x is None else f"{x:.2%}"


def share(n: int, of: int) -> str:
    """`n` of `of` as a whole percentage: "13%"; "<1%" for a share above 0 that rounds to 0."""
    if not of:
        return NONE
    whole = f"{n / of:.0%}"
    return "<1%" if n and whole == "0%" else whole


def outcome(o: Outcome) -> str:
    return o.label


def text(value: object) -> str:
    """A data value as a cell ("" for none); the drawer escapes it."""
    return "" if value is None else str(value)


def bar(x: float | None, floor_at: float, width: int = BAR) -> str:
    """A hit rate as a bar of `width` cells (eighths for the last one) on a light track, with the
    floor marked ┃ over it, whether the bar reaches it or not."""
    if x is None:
        return NONE.ljust(width, "░")
    eighths = round(x * width * 8)
    filled = "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]
    track = list(filled.ljust(width, "░"))
    track[min(width - 1, int(floor_at * width))] = "┃"
    return "".join(track)


# -- rows ----------------------------------------------------------------------------------------


def checks_tally(checks: Iterable[Check]) -> tuple[Level, str]:
    """The worst level among `checks` and a count to read at a glance: "checks: 12 ok", or
    "checks: 1 error, 2 warnings" (errors and warnings only, the passing ones then go unsaid)."""
    by = Counter(c.level for c in checks)
    if not by[Level.ERROR] and not by[Level.WARNING]:
        return Level.OK, f"checks: {by[Level.OK]} ok"
    bad = [counted(n, name) for name, n in (("error", by[Level.ERROR]), ("warning", by[Level.WARNING])) if n]
    return (Level.ERROR if by[Level.ERROR] else Level.WARNING), "checks: " + ", ".join(bad)


def check_rows(checks: Iterable[Check], compact: bool = False) -> list[list[str]]:
    """[level, code, message] per check; `compact` folds the passing ones into one row."""
    checks = list(checks)
    passing = [c for c in checks if c.level is Level.OK]
    rows = [[str(c.level), c.code, c.message] for c in checks if not (compact and c.level is Level.OK)]
    if compact and passing:
        codes = ", ".join(f"{c} ×{n}" if n > 1 else c for c, n in Counter(c.code for c in passing).items())
        rows.append([str(Level.OK), f"{len(passing)} checks", codes])
    return rows


def metric_rows(r: Report) -> list[list[str]]:
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


def metrics_note(r: Report) -> str:
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


def sparse_labels(r: Report) -> str:
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


def measure_rows(r: Report) -> list[list[str]]:
    """[measure, A, B, B − A] for each measure asked for by name, at its own cut-off (none asked:
    no rows)."""
    a, b = r.arms.a.measures, r.arms.b.measures
    return [[name, rate(a[name]), rate(b.get(name)), delta(a[name], b.get(name))] for name in a]


def compare_tests(r: Report) -> list[str]:
    """The tests whose p the comparisons hold (the t-test always; the others when asked for and run;
    McNemar for a binary measure), in the JSON's order."""
    ps = [c.p for c in r.compare.values()]
    asked = {"wilcoxon": any(p.wilcoxon is not None for p in ps)}
    asked["randomization"] = any(c.randomization is not None for c in r.compare.values())
    asked["mcnemar"] = any(p.mcnemar is not None for p in ps)
    return ["t", *(t for t, on in asked.items() if on)]


def compare_head(r: Report) -> list[str]:
    """[measure, Δ B − A, 95% interval, p <test> …, p <correction>, MDE 80%]."""
    first = next(iter(r.compare.values()))
    corrected = f"p {first.test.value}, {first.correction.value}"
    return ["measure", "Δ B − A", "95% interval", *(f"p {t}" for t in compare_tests(r)), corrected, "MDE"]


def compare_rows(r: Report) -> list[list[str]]:
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


def compare_title(r: Report) -> str:
    n = next(iter(r.compare.values())).n
    return f"Paired tests per measure over {n} scored queries (pairs by query id)"


def compare_notes(r: Report) -> list[str]:
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


def compare_overview_rows(r: Report) -> list[list[str]]:
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


def judged_rows(r: Report) -> list[list[str]]:
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


def at_k_title(r: Report) -> str:
    return f"Each arm at each k (flips and the paired table at k = {r.k})"


def at_k_head(r: Report) -> list[str]:
    """[arm, metric, "k = 1", …, "recall@depth"]: the columns of `at_k_rows`."""
    return ["arm", "metric", *[f"k = {x}" for x in r.arms.a.at_k], "recall@depth"]


def at_k_rows(r: Report) -> list[tuple[str, list[str]]] | None:
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


def paired_rows(p: PairedSection) -> list[list[str]]:
    """The 2×2 table: rows A hit / A miss, columns B hit / B miss."""
    return [
        ["A hit", str(p.both_hit), str(p.a_hit_b_miss)],
        ["A miss", str(p.a_miss_b_hit), str(p.both_miss)],
    ]


def mcnemar(p: PairedSection) -> str:
    return f"McNemar exact p = {p_value(p.mcnemar_p)}"


def flip_counts(p: PairedSection) -> str:
    return f"{p.a_hit_b_miss} hit→miss, {p.a_miss_b_hit} miss→hit"


def unjudged_regressions(r: Report) -> str:
    """ "regressions with an unjudged passage in B's top 5: 6 of 6" (each a possible false one)."""
    p = r.paired
    some = f"{p.regressions_with_unjudged} of {p.a_hit_b_miss}"
    return f"regressions with an unjudged passage in B's top {r.k}: {some}"


def unjudged_why(r: Report) -> str:
    """Beneath that count, why it runs high when the labels are sparse ("" otherwise)."""
    if not (r.paired.regressions_with_unjudged and sparse_labels(r)):
        return ""
    a, b = rate(r.arms.a.judged_at_k), rate(r.arms.b.judged_at_k)
    return f"sparse labels, judged@{r.k} A {a}, B {b}: such a regression may be unlabelled"


def regressions_and_wins(p: PairedSection) -> str:
    """The overview's count of the flips: "6 regressions, 40 wins."."""
    return f"{p.a_hit_b_miss} regressions, {p.a_miss_b_hit} wins."


def labels_line(r: Report) -> str:
    """The label state as the report's header shows it: the state (the frozen file's fingerprint and
    the amendment records beside it: judgements and undos, verdicts apart) and, when there are any, how many
    judgements are in force, the number the labels check counts."""
    if not r.labels.amendments:
        return r.labels.state
    return f"{r.labels.state}; {counted(r.labels.in_force, 'judgement')} in force"


def label_state_rows(r: Report) -> list[tuple[str, str, str]] | None:
    """(what, on frozen labels, on amended labels) rows, or None when no amendment is in force."""
    if not r.labels.applied or not r.labels.in_force:
        return None
    fa, fb, fp = r.frozen.arms.a, r.frozen.arms.b, r.frozen.paired
    a, b, p = r.arms.a, r.arms.b, r.paired
    rows = [
        ("hit_rate A", rate(fa.hit_rate), rate(a.hit_rate)),
        ("hit_rate B", rate(fb.hit_rate), rate(b.hit_rate)),
        ("both hit", str(fp.both_hit), str(p.both_hit)),
        ("both miss", str(fp.both_miss), str(p.both_miss)),
        ("miss→hit", str(fp.a_miss_b_hit), str(p.a_miss_b_hit)),
        ("hit→miss", str(fp.a_hit_b_miss), str(p.a_hit_b_miss)),
        ("McNemar p", p_value(fp.mcnemar_p), p_value(p.mcnemar_p)),
    ]
    by = r.labels.by_arm
    rows.append(("amendments from A / B / no evidence", "", f"{by['a']} / {by['b']} / {by['none']}"))
    moved = r.labels.moved
    if moved is not None:
        rows.append(("hit rate moved A / B", "", f"{signed(moved.a)} / {signed(moved.b)}"))
    for c in r.frozen.changed[:FLIP_CAP]:
        rows.append((f"  {c.query_id}", outcome(c.frozen), outcome(c.amended)))
    return rows


def capped_flips(flips: Flips) -> tuple[list[FlipRow], int]:
    """The first FLIP_CAP flips of each direction (order kept) and how many were left out."""
    return flips.first_of_each(FLIP_CAP)


FLIP_TEXT = 40  # characters of a query's text shown in a flips table


def hint_codes(f: FlipRow) -> str:
    """The flip's hints as short codes, most specific first, and the arm they speak of (the one
    that missed): "short plan (B)"."""
    if not f.hints:
        return ""
    return " ".join(h.kind.code for h in f.hints) + f" ({f.hints[0].arm.upper()})"


LEGEND = (
    "B 95%: Wilson 95% interval of B's hit rate; h→m, m→h: flips each way; short: lists shorter "
    "than k, A/B; elig=0: filter matched nothing (in n, not in the rates); sel.: median "
    "selectivity; rec: recall; Δ q: B − A on the decision measure and its Benjamini–Hochberg q "
    "across the key's slices (* q < 0.05: moved beyond noise)"
)


def moved(compare: Mapping[str, SliceComparison]) -> str:
    """The decision measure's Δ and BH q in one slice: "+0.21 q 0.22", "+0.15 q <.01*" (* when
    q < 0.05), "+0.00 q –" when untested, "–" when not compared."""
    c = next(iter(compare.values()), None)
    if c is None or c.delta is None:
        return NONE
    q = NONE if c.q_bh is None else "<.01" if c.q_bh < 0.01 else f"{c.q_bh:.2f}"
    return f"{c.delta:+.2f} q {q}" + ("*" if c.moved else "")


def decision_line(r: Report) -> str:
    """Which measure the Δ q column compares on, and by which test ("" when no slice is compared)."""
    for rows in r.slices.values():
        for name, c in (rows[0].compare if rows else {}).items():
            test = "exact McNemar" if c.test == "mcnemar" else "paired t-test"
            return f"Δ q compares B with A on {name} ({test} per slice, q: Benjamini–Hochberg per key)"
    return ""


def tenant_marks(t: TenantRow, floor_at: float) -> str:
    return ", ".join(m for m, on in (("< floor", t.below(floor_at)), ("few", t.few)) if on)


def below_floor(t: TenantsSection) -> str:
    """ "2 below the floor 0.80 in A, 3 in B"; against exact truth "tenants below 0.80 recall: 2 in
    A, 3 in B"."""
    if t.measure is not None:
        return f"tenants below {floor(t.floor)} recall: {t.below_floor.a} in A, {t.below_floor.b} in B"
    return f"{t.below_floor.a} below the floor {floor(t.floor)} in A, {t.below_floor.b} in B"


def p5(t: TenantsSection) -> str:
    what = "hit rate" if t.measure is None else t.measure
    return f"5th-percentile tenant {what} A {rate(t.p5.a)}, B {rate(t.p5.b)}"


def tenant_summary(t: TenantsSection) -> str:
    of = f" ({t.measure})" if t.measure is not None else ""
    return (
        f"floor {floor(t.floor)}{of}: {t.below_floor.a} tenants below it in A, {t.below_floor.b} in B; "
        f"{p5(t)}; {len(t.rows)} tenants, {t.order.label}"
    )


def below_floor_line(t: TenantsSection, show: int = 3) -> str:
    """ "2 tenants below 0.80 in B: acme, globex": the overview's line, the first `show` named."""
    names = [r.tenant for r in t.below()]
    head = f"{len(names)} tenants below {floor(t.floor)} in B"
    if t.measure is not None:
        head = f"tenants below {floor(t.floor)} recall in B: {len(names)}"
    if not names:
        return head
    return f"{head}: {', '.join(names[:show])}{' …' if len(names) > show else ''}"


MEASURE_GATE_HEAD = ["measure", "A", "B", "floor", "B−A", "max drop", "p (Holm)", "MDE 80%"]


def measure_gate_cells(m: MeasureGateRow) -> list[str]:
    """One gated measure under MEASURE_GATE_HEAD."""
    return [
        m.name,
        rate(m.mean_a),
        rate(m.mean_b),
        NONE if m.floor is None else f"{m.floor:g}",
        signed(m.delta),
        NONE if m.max_drop is None else f"{m.max_drop:g}",
        p_value(m.p_holm),
        rate(m.mde80),
    ]


def measure_verdict(m: MeasureGateRow) -> str:
    """ "below the floor; significant drop; cannot see max_drop (MDE 0.031)" or "holds"."""
    out = [
        *(["below the floor"] if not m.floor_holds else []),
        *(["significant drop"] if not m.drop_holds else []),
    ]
    if m.blind and m.mde80 is not None:
        out.append(f"cannot see a drop of max_drop (MDE {m.mde80:.3f})")
    return "; ".join(out) or "holds"


def nothing_evaluated(g: GateSection) -> str | None:
    """ "no query was scored (…) — nothing evaluated, so the gate fails"; None when it evaluated something."""
    return None if g.evaluated else f"{g.nothing_evaluated} — nothing evaluated, so the gate fails"


def measure_gate_line(g: GateSection) -> str:
    return (
        f"{len(g.broken_measures)} of {len(g.measures)} measures broken by B "
        "(a drop beyond max_drop fails when its paired-t p, Holm-adjusted across the measures, is < 0.05)"
    )


def floor_cells(f: FloorRow) -> list[str]:
    """[floor, B hit rate, minimum, n, B's 95% interval, distance in standard errors]."""
    return [
        f.name,
        rate(f.hit_rate),
        floor(f.floor),
        str(f.n),
        interval(f.wilson_low, f.wilson_high),
        distance_se(f.distance_se),
    ]


FLOOR_HEAD = ["floor", "B hit rate", "minimum", "n", "B 95%", "above it (SE)"]


def distance_se(d: float | None) -> str:
    """How far B's hit rate is above a floor, in standard errors: "+0.3 SE", "−1.2 SE"."""
    if d is None:
        return NONE
    if d in (float("inf"), float("-inf")):
        return "∞ SE" if d > 0 else "−∞ SE"
    return f"{d:+.1f} SE".replace("-", "−")


# -- held-out documents (core/checks/holdout.py) ----------------------------------------------------------

HOLDOUT_HEAD = ["queries", "n", "A hit rate", "B hit rate", "B − A", "hit→miss", "miss→hit", "McNemar p"]


def holdout_rows(r: Report) -> list[list[str]] | None:
    """The blend (every scored query) beside the held-out queries alone, under HOLDOUT_HEAD; None
    without a tuning split."""
    h = r.holdout
    if h is None:
        return None
    rows = []
    for name, a, b, p in (
        ("all scored (blend)", r.arms.a.hit_rate, r.arms.b.hit_rate, r.paired),
        ("held out", h.arms.a.hit_rate, h.arms.b.hit_rate, h.paired),
    ):
        rows.append(
            [name, str(p.n), rate(a), rate(b), delta(a, b), str(p.a_hit_b_miss), str(p.a_miss_b_hit)]
            + [p_value(p.mcnemar_p)]
        )
    return rows


def holdout_line(r: Report) -> str | None:
    """What the held-out figure covers: "held out: 38 of 200 scored queries …"."""
    h = r.holdout
    if h is None:
        return None
    if not h.doc_ids:
        return f"held out: no figure ({h.described}; no document of any chunk is known)"
    return (
        f"held out: {h.n_held_out} of {r.n_scored} scored queries have every gold chunk in a held-out "
        f"document ({h.held_out_docs} of {h.docs} documents); {h.n_tuned} have gold from tuned "
        f"documents, {h.n_unknown} from unknown ones. {h.described}"
    )


def holdout_summary(r: Report) -> str | None:
    """The overview's line: "held out (38 of 200 queries): hit rate 0.526 → 0.684 (+0.158); all
    0.620 → 0.790 (+0.170)"; None without a tuning split."""
    h = r.holdout
    if h is None:
        return None
    a, b = h.arms.a.hit_rate, h.arms.b.hit_rate
    blend_a, blend_b = r.arms.a.hit_rate, r.arms.b.hit_rate
    return (
        f"held out ({h.n_held_out} of {r.n_scored} queries): hit rate {rate(a)} → {rate(b)} "
        f"({delta(a, b)}); all {rate(blend_a)} → {rate(blend_b)} ({delta(blend_a, blend_b)})"
    )


# -- rank movements among the scored queries (core/views/ranks.py) -------------------------------------

DROP_CAP = 25  # drops listed in text and Markdown (JSON lists all)
HISTOGRAM_SPAN = 61  # a histogram spanning at most this many changes is drawn zero-filled
DROP_HEAD = ["#", "query", "tenant", "gold A → B", "drop"]
WTL_HEAD = ["metric", "B wins", "ties", "B loses"]


def win_tie_loss_rows(x: RanksSection, k: int) -> list[list[str]]:
    """[metric, wins, ties, losses] of B against A, per query, for mrr@k and ndcg@k."""
    return [
        [f"{name}@{k}", str(w.wins), str(w.ties), str(w.losses)]
        for name, w in (("mrr", x.mrr), ("ndcg", x.ndcg))
    ]


def wins_ties_losses(x: RanksSection, k: int) -> str:
    """The overview's line: "per query, B against A: mrr@5 88 wins / 60 ties / 52 losses; …"."""
    parts = [f"{m} {w} wins / {t} ties / {lo} losses" for m, w, t, lo in win_tie_loss_rows(x, k)]
    return f"per query, B against A over {x.n}: " + "; ".join(parts)


def drops_line(x: RanksSection, k: int) -> str:
    """ "46 queries hit in both arms (top 5) with the gold ranked lower in B"."""
    n = len(x.drops)
    return f"{n} queries hit in both arms (top {k}) with the gold ranked lower in B"


def capped_drops(drops: Drops) -> tuple[tuple[DropRow, ...], int]:
    """The first DROP_CAP drops (order kept) and how many were left out."""
    return drops[:DROP_CAP], max(0, len(drops) - DROP_CAP)


def drop_cells(i: int, d: DropRow) -> list[str]:
    """The drop at 1-based position `i`, under DROP_HEAD."""
    return [str(i), d.query_id, text(d.tenant), f"{d.rank_a} → {d.rank_b}", str(d.drop)]


def drop_head(r: Report) -> list[str]:
    """The rank drops' columns, DROP_HEAD and the text: the tenant only when the evaluation has
    tenants, the text only when some query has one (an empty column is not drawn)."""
    shown, _ = capped_drops(r.ranks.drops)
    drop = {"tenant"} if "tenant" not in r.slices else set()
    drop |= {"text"} if not any(d.text for d in shown) else set()
    return [h for h in [*DROP_HEAD, "text"] if h not in drop]


def drop_row(i: int, d: DropRow, head: list[str]) -> list[str]:
    """The drop at 1-based position `i` under `head` (`drop_head`)."""
    every = dict(zip([*DROP_HEAD, "text"], [*drop_cells(i, d), drop_text(d)], strict=True))
    return [every[h] for h in head]


def drop_text(d: DropRow) -> str:
    """The dropped query's text as one line of at most FLIP_TEXT characters."""
    return one_line(text(d.text), FLIP_TEXT)


def change(c: int) -> str:
    """A gold-rank change A − B: "+3" (B ranked it higher), "0", "−2" (lower)."""
    return f"+{c}" if c > 0 else ("0" if c == 0 else f"−{-c}")


def count_bar(n: int, most: int, width: int = BAR) -> str:
    """A count as a bar of `width` cells scaled to `most` (eighths for the last cell); a count
    above zero shows at least an eighth."""
    eighths = round(n / most * width * 8) if most else 0
    eighths = max(eighths, 1 if n else 0)
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def histogram_rows(h: RankHistogram, width: int = BAR) -> list[tuple[int, list[str]]]:
    """(change, [change, queries, bar]) per change ascending: every change from the lowest to the
    highest seen (zero-filled) when they span at most HISTOGRAM_SPAN, else the seen ones only."""
    seen = h.changes
    if not seen:
        return []
    lo, hi = min(seen), max(seen)
    every = range(lo, hi + 1) if hi - lo < HISTOGRAM_SPAN else sorted(seen)
    most = max(seen.values())
    return [(c, [change(c), str(seen.get(c, 0)), count_bar(seen.get(c, 0), most, width)]) for c in every]


def histogram_line(h: RankHistogram) -> str:
    """What the histogram covers and what it leaves out."""
    return (
        f"gold rank A − B over {h.n} scored queries with a gold id in both stored lists: "
        f"{h.fell} lower in B, {h.same} the same, {h.rose} higher; "
        f"gold in A's list only {h.only_a}, in B's only {h.only_b}, in neither {h.neither}"
    )


# -- query origin and lexical overlap (core/views/origin.py, core/checks/overlap.py) ----

ORIGIN_HEAD = [
    "origin",
    "n",
    "hit A",
    "hit B",
    "B−A",
    "recall A",
    "recall B",
    "mrr A",
    "mrr B",
    "ndcg A",
    "ndcg B",
    "both hit",
    "both miss",
    "h→m",
    "m→h",
]
BLEND = "all (blend)"


def _origin_cells(
    name: str, a: ArmMeans | ArmSection, b: ArmMeans | ArmSection, p: PairedSection
) -> list[str]:
    return [
        name,
        str(p.n),
        rate(a.hit_rate),
        rate(b.hit_rate),
        delta(a.hit_rate, b.hit_rate),
        rate(a.recall),
        rate(b.recall),
        rate(a.mrr),
        rate(b.mrr),
        rate(a.ndcg),
        rate(b.ndcg),
        str(p.both_hit),
        str(p.both_miss),
        str(p.a_hit_b_miss),
        str(p.a_miss_b_hit),
    ]


def origin_rows(r: Report) -> list[list[str]]:
    """The blend first, then one row per origin (empty without an origin column)."""
    if not r.origins:
        return []
    rows = [_origin_cells(BLEND, r.arms.a, r.arms.b, r.paired)]
    return rows + [_origin_cells(o.origin, o.arms.a, o.arms.b, o.paired) for o in r.origins]


def quote_line(q: OriginQuote) -> str:
    """Which figure to quote when real and generated queries are both present, and the gap."""
    return (
        f"Quote the real figure: hit rate A {rate(q.real.a)} / B {rate(q.real.b)} on {q.n_real} real "
        f"queries. The {q.n_generated} generated queries score A {rate(q.generated.a)} / B "
        f"{rate(q.generated.b)} (generated − real: {signed(q.gap.a)} / {signed(q.gap.b)}); generated "
        "questions reuse their chunk's words and inflate recall."
    )


OVERLAP_HEAD = [
    "queries",
    "n",
    "body q1",
    "body median",
    "body q3",
    "path q1",
    "path median",
    "path q3",
    "path > body",
]
OVERLAP_NOTE = (
    "Overlap: the share of a query's content words found in its closest gold chunk's body, and in "
    "its heading path (path). path > body: queries whose heading path shares more than the body."
)


def _spread(s: Spread) -> list[str]:
    return [rate(s.q1), rate(s.median), rate(s.q3)]


def overlap_rows(o: OverlapSection) -> list[list[str]]:
    """Each group (all, per origin), then each arm's hits and misses."""
    named = [(g.group, g) for g in o.groups]
    named += [(f"{side.upper()} {g.group}", g) for side, groups in o.by_arm.items() for g in groups]
    return [
        [name, str(g.body.n), *_spread(g.body), *_spread(g.header), str(g.header_above_body)]
        for name, g in named
    ]


def overlap_unavailable(o: OverlapSection) -> str:
    return f"Lexical overlap unavailable: {o.reason}."


# -- what the change cost, and the answers (core/views/cost.py, core/views/answers.py) ----------------------

COST_HEAD = ["figure", "A", "B", "B − A", "source A", "source B"]
LATENCY_HEAD = ["slice", "n", "p50 A", "p50 B", "p95 A", "p95 B"]
ANSWER_HEAD = ["", "answer correct", "answer wrong"]
COST_NOTE = (
    "header tax: k × the mean tokens (≈ words × 4/3) of the heading paths the arm prepends to "
    "its top-k chunks, added to every answered query; latency by slice (the report's) takes each "
    "slice's own percentiles"
)


def figure(x: float | None, digits: int = 1) -> str:
    """A measured amount: "16.7", "2,273,600" with `digits` 0 ("–" when unknown)."""
    return NONE if x is None else f"{x:,.{digits}f}"


def _diff(a: float | None, b: float | None, digits: int = 1) -> str:
    return NONE if a is None or b is None else f"{b - a:+,.{digits}f}"


def cost_rows(c: CostSection, k: int) -> list[list[str]]:
    """[figure, A, B, B − A, source A, source B]: chunks, latency, header tokens and tax, then
    the metadata figures either arm records."""
    a, b = c.arms.a, c.arms.b
    rows: list[tuple[str, Sourced, Sourced, int]] = [
        ("chunks", a.n_chunks, b.n_chunks, 0),
        ("latency p50 ms", a.latency_p50_ms, b.latency_p50_ms, 1),
        ("latency p95 ms", a.latency_p95_ms, b.latency_p95_ms, 1),
        (f"heading-path tokens, top {k} mean", a.heading_tokens, b.heading_tokens, 1),
        ("header tokens prepended, mean", a.header_tokens, b.header_tokens, 1),
        (f"header tax / query (k = {k})", a.header_tax, b.header_tax, 1),
    ]
    unknown = Sourced(None, "not recorded")
    for name, key, digits in (
        ("index bytes", "index_bytes", 0),
        ("ingest seconds", "ingest_seconds", 1),
        ("embedding input tokens, mean", "embed_input_tokens_mean", 1),
    ):
        fa, fb = getattr(a, key), getattr(b, key)
        if fa is not None or fb is not None:
            rows.append((name, fa or unknown, fb or unknown, digits))
    return [
        [name, figure(x.value, d), figure(y.value, d), _diff(x.value, y.value, d), x.source, y.source]
        for name, x, y, d in rows
    ]


def cost_recorded(c: CostSection) -> bool:
    """Whether either arm records any figure of the cost (else the table is all dashes)."""
    return any(
        f is not None and f.value is not None
        for arm in (c.arms.a, c.arms.b)
        for f in (
            arm.n_chunks,
            arm.latency_p50_ms,
            arm.heading_tokens,
            arm.header_tokens,
            arm.index_bytes,
            arm.ingest_seconds,
            arm.embed_input_tokens_mean,
        )
    )


def unfilled(r: Report) -> dict[str, str]:
    """Each section the inputs cannot fill, by its id, as one line naming the input that would
    fill it, a sentence (every output shows it in the section's place, not an empty table)."""
    out = {}
    shown, _ = capped_flips(r.flips)
    if shown and not any(f.text for f in shown):
        out["text"] = (
            "Query text: none given; a queries file with `text` (--queries) or a `query` column in "
            "the runs shows it."
        )
    if r.tenants is None:
        out["tenants"] = (
            "Tenants: no `tenant` column in the runs or the queries file, so no tenant is ranked."
        )
    if not r.slices:
        keys = ", ".join(f"`{k}`" for k in SLICE_KEYS).replace("`selectivity`", "`n_eligible` (selectivity)")
        out["slices"] = (
            f"Slices: none of {keys} in the runs or the queries file to break the numbers down by."
        )
    if r.answers is None:
        out["answers"] = "Evidence × answer: no `answer_correct` column in the runs."
    if r.cost is None or not cost_recorded(r.cost):
        out["cost"] = (
            "What the change cost: nothing recorded; the runs' metadata (n_chunks, index_bytes, "
            "ingest_seconds, embed_input_tokens_mean, header_mode), a `latency_ms` column or a corpus "
            "(--corpus) fills it."
        )
    return out


def cost_line(c: CostSection, k: int) -> str:
    """The overview's one line: "latency p50 16.1 → 15.0 ms, p95 33.1 → 34.9 ms; header tax …"."""
    a, b = c.arms.a, c.arms.b
    return (
        f"latency p50 {figure(a.latency_p50_ms.value)} → {figure(b.latency_p50_ms.value)} ms, "
        f"p95 {figure(a.latency_p95_ms.value)} → {figure(b.latency_p95_ms.value)} ms; header tax "
        f"{figure(a.header_tax.value)} → {figure(b.header_tax.value)} tokens per query (k = {k}); "
        f"chunks {figure(a.n_chunks.value, 0)} / {figure(b.n_chunks.value, 0)}"
    )


def latency_rows(c: CostSection) -> list[tuple[str, list[str]]]:
    """(key, [value, n, p50 A, p50 B, p95 A, p95 B]) per slice, the first SLICE_CAP of each key."""
    out: list[tuple[str, list[str]]] = []
    seen: dict[str, int] = {}
    for s in c.slices:
        seen[s.key] = seen.get(s.key, 0) + 1
        if seen[s.key] <= SLICE_CAP:
            out.append(
                (
                    s.key,
                    [s.value, str(s.n), figure(s.p50_a), figure(s.p50_b), figure(s.p95_a), figure(s.p95_b)],
                )
            )
    return out


def answer_rows(c: AnswerCellsRow) -> list[list[str]]:
    """One arm's evidence × answer table: rows hit / miss, columns answer correct / wrong."""
    return [
        ["gold in top k (hit)", f"{c.working} working", f"{c.assembly} assembly problem"],
        ["gold missing (miss)", f"{c.lucky} lucky", f"{c.retrieval} retrieval problem"],
    ]


def answer_change(x: AnswersSection) -> str:
    """ "answer accuracy 0.586 [0.516, 0.652] → 0.692 [0.624, 0.752] (+0.106) beside hit rate
    0.616 → 0.788 (+0.172), over 198 queries judged in both; McNemar p = …"."""
    a = rate_interval(x.accuracy.a, x.wilson_low.a, x.wilson_high.a)
    b = rate_interval(x.accuracy.b, x.wilson_low.b, x.wilson_high.b)
    return (
        f"answer accuracy {a} → {b} ({delta(x.accuracy.a, x.accuracy.b)}) beside hit rate "
        f"{rate(x.hit_rate.a)} → {rate(x.hit_rate.b)} ({delta(x.hit_rate.a, x.hit_rate.b)}), over "
        f"{x.n} scored queries with answer_correct in both arms; answers {x.a_correct_b_wrong} "
        f"right→wrong, {x.a_wrong_b_correct} wrong→right, McNemar exact p = {p_value(x.mcnemar_p)}"
    )


def cost_checks(checks: Iterable[Check]) -> list[Check]:
    """The checks of the cost row (codes `cost.*`)."""
    return [c for c in checks if c.code.startswith("cost.")]
