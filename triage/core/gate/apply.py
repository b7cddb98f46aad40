"""`triage report --gate FLOORS.toml`: floors B's hit rate must not fall below, overall or per slice.

[floors]
overall = 0.75               # B's hit rate over every scored query
"tenant:*" = 0.70            # every tenant
"tenant:acme-legal" = 0.80   # one tenant (a named floor wins over the key's "*")
"selectivity:<0.1%" = 0.50   # one selectivity band; any slice key of the report works

A floor closer to B's current hit rate p than NOISE_SE standard errors √(p(1−p)/n) fails on
resampling alone: the check `gate.noise` names each such floor and its distance in standard errors.

Any measure by name (core/measures/names.py) gets its own table, computed even when --measures
does not name it:

[measures."nDCG@10"]
floor = 0.60       # B's mean over the scored queries must be at least this
max_drop = 0.01    # B − A must not fall below −0.01 …

… where a drop fails only when it is significant: the paired t-test's p, adjusted by Holm across
the measures with a max_drop, below ALPHA. A max_drop below the drop the test finds 4 times in 5
at that n (mde80, core/measures/significance.py) warns (`gate.mde`): the gate cannot see what it
promises to stop. A file needs [floors], [measures] or both; a floor or max_drop beyond what the
measure can reach (`Measure.reach`) is refused.

A gate that evaluated nothing (`nothing_evaluated`: no query scored, none answered by B, only
empty slices) fails whatever its limits say.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from triage.core.checks.model import ERROR, OK, SHOW, WARNING, Check, some
from triage.core.checks.truth import TRUTH_ERRORS
from triage.core.errors import InputError
from triage.core.evaluation import Evaluation
from triage.core.gate.propose import toml_key
from triage.core.inputs.readers import quoted, read_toml
from triage.core.measures.corrections import Correction
from triage.core.measures.names import Measure, parse
from triage.core.measures.significance import compare_all
from triage.core.text.sanitize import counted
from triage.core.views.slices import BANDS, KEYS, RATE_DIGITS, Slice, slices

NOISE_SE = 2.0  # a floor nearer B's hit rate than this many standard errors fires on noise
ALPHA = 0.05  # a measure's drop fails when its Holm-adjusted paired-t p is below this
LIMITS = ("floor", "max_drop")  # the keys of a [measures."NAME"] table


@dataclass(frozen=True)
class Floor:
    name: str  # "overall", "tenant:acme-legal", …
    floor: float
    hit_rate: float  # B's (against exact truth: B's recall at k, JSON `hit_rate` still)
    n: int
    noise_band: float
    wilson_low: float = math.nan  # Wilson 95% interval of B's hit rate (NaN: nothing judged)
    wilson_high: float = math.nan

    @property
    def holds(self) -> bool:
        # NaN (nothing judged) holds: no evidence of a drop; to RATE_DIGITS, as tenants are floored
        return not (round(self.hit_rate, RATE_DIGITS) < self.floor)

    @property
    def distance_se(self) -> float:
        """(hit rate − floor) / standard error: how many standard errors B is above the floor
        (negative: below). ±inf when the standard error is 0 (a rate of 0 or 1) and the rate is
        off the floor, 0 on it; NaN when nothing is judged."""
        gap = self.hit_rate - self.floor
        if math.isnan(gap) or math.isnan(self.noise_band):
            return math.nan
        if self.noise_band == 0:
            return 0.0 if gap == 0 else math.copysign(math.inf, gap)
        return gap / self.noise_band

    @property
    def noisy(self) -> bool:
        """The floor is within NOISE_SE standard errors of B's hit rate: it fires on noise."""
        return abs(self.distance_se) < NOISE_SE  # NaN compares False: nothing judged is not noise


@dataclass(frozen=True)
class Limit:
    """One `[measures."NAME"]` table: the measure it names, parsed, and its limits (None where the
    key is not given)."""

    measure: Measure
    floor: float | None = None
    max_drop: float | None = None


@dataclass(frozen=True)
class GateFile:
    floors: dict[str, float] = field(default_factory=dict)  # [floors]: B's hit rate
    measures: dict[str, Limit] = field(default_factory=dict)  # canonical measure name → its limits


def read_gate(path: Path) -> GateFile:
    """The gate file: [floors] and [measures."NAME"] tables (at least one). A bad file raises
    InputError naming the file, the table and the key."""
    doc = read_toml(path)
    if "floors" not in doc and "measures" not in doc:
        _floors(path, None)  # names what the file needs
    unknown = [k for k in doc if k not in ("floors", "measures")]
    if unknown:
        raise InputError(
            path, f'unknown table or key {quoted(unknown[0])}: use [floors] and [measures."NAME"]'
        )
    measures = _measures(path, doc.get("measures"))
    if "floors" not in doc and measures:
        return GateFile({}, measures)
    return GateFile(_floors(path, doc.get("floors")), measures)


def _measures(path: Path, tables: object) -> dict[str, Limit]:
    if tables is None:
        return {}
    if not isinstance(tables, dict) or not tables:
        raise InputError(path, 'measures must be tables, e.g. [measures."nDCG@10"] floor = 0.6', "[measures]")
    out: dict[str, Limit] = {}
    for name, table in tables.items():
        where = f"[measures.{toml_key(name)}]"
        if not isinstance(table, dict) or not table:
            raise InputError(path, f"{quoted(name)} needs a table with floor and/or max_drop", where)
        unknown = next((key for key in table if key not in LIMITS), None)
        if unknown is not None:
            raise InputError(path, f"unknown key {quoted(unknown)}: use floor and/or max_drop", where)
        measure = parse(name, f"{path}: {where}")
        canonical = str(measure)
        if canonical in out:
            raise InputError(path, f"{quoted(name)} names {canonical}, which another table names too", where)
        floor, cap = (_limit(path, where, measure, key, table.get(key)) for key in LIMITS)
        out[canonical] = Limit(measure, floor, cap)
    return out


def _limit(path: Path, where: str, measure: Measure, key: str, value: object) -> float | None:
    """A table's `floor` or `max_drop`, within what the measure can reach: a floor in its range
    [low, high], a max_drop in [0, high − low] (beyond, the limit fails, or holds, whatever the
    runs do)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not -math.inf < value < math.inf:
        raise InputError(path, f"{key} = {quoted(value)} must be a number", where)
    low, high = measure.reach
    reach = f"{measure} lies in [{low:g}, {high:g}]"
    if key == "floor" and not low <= value <= high:
        raise InputError(path, f"floor = {quoted(value)} is out of reach: {reach}", where)
    if key == "max_drop" and value < 0:
        raise InputError(path, f"max_drop = {quoted(value)} must not be negative", where)
    if key == "max_drop" and value > high - low:
        raise InputError(
            path, f"max_drop = {quoted(value)} is out of reach: {reach}, so B − A ≥ −{high - low:g}", where
        )
    return float(value)


def _floors(path: Path, floors: object) -> dict[str, float]:
    if not isinstance(floors, dict) or not floors:
        raise InputError(path, 'needs a [floors] table, e.g. overall = 0.75, or a [measures."NAME"] table')
    out = {}
    for name, value in floors.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InputError(
                path,
                f"floor {quoted(name)} = {quoted(value)} must be a number between 0 and 1 (a hit rate)",
                "[floors]",
            )
        key = name.split(":", 1)[0]
        if name != "overall" and (":" not in name or key not in KEYS):
            raise InputError(
                path,
                f"unknown floor {quoted(name)}: use overall or KEY:VALUE / KEY:* with KEY one of "
                + ", ".join(KEYS),
                "[floors]",
            )
        out[name] = float(value)
    return out


def judge_floors(
    ev: Evaluation,
    floors: dict[str, float],
    source: Path | str = "the gate file",
    sliced: dict[str, list[Slice]] | None = None,
) -> list[Floor]:
    """One Floor per slice a floor applies to; a named slice's floor wins over its key's "*". A
    floor naming a slice the evaluation does not have (a typo would otherwise "hold") is refused,
    naming it and the slices there are; a selectivity band with no query holds with n 0. `sliced`:
    the slices already computed, by key (`all_slices`); a key it lacks is sliced here."""
    out = []
    if "overall" in floors:
        m = ev.means(ev.b)
        if ev.truth is not None:  # against exact truth: B's recall at k, which has no interval here
            out.append(Floor("overall", floors["overall"], m.recall, m.n_recall, math.nan))
        else:
            out.append(
                Floor("overall", floors["overall"], m.hit_rate, m.n, ev.noise_band(ev.b), *ev.wilson(ev.b))
            )
    by_key: dict[str, list[Slice]] = dict(sliced or {})
    for name in floors:
        if name == "overall":
            continue
        key, value = name.split(":", 1)
        if key not in by_key:
            by_key[key] = slices(ev, key)
        cut = by_key[key]
        for s in cut:
            named = f"{key}:{s.value}"
            if value == s.value or (value == "*" and named not in floors):
                if ev.truth is not None:  # against exact truth: B's recall at k
                    out.append(Floor(named, floors[name], s.b.recall, s.n, math.nan))
                    continue
                out.append(
                    Floor(
                        named,
                        floors[name],
                        s.b.hit_rate,
                        s.n,
                        s.b.noise_band,
                        s.b.wilson_low,
                        s.b.wilson_high,
                    )
                )
        if value == "*" and not cut:  # `tenant:*` with no tenant column: a floor on nothing
            raise InputError(
                source,
                f"floor {name!r} names no slice of this evaluation ({key}: no such column)",
                "[floors]",
            )
        if value != "*" and not any(s.value == value for s in cut):
            if key == "selectivity" and value in BANDS:  # a band this evaluation has no query in
                out.append(Floor(name, floors[name], math.nan, 0, math.nan))
                continue
            there = ", ".join(s.value for s in cut[:8]) + (", …" if len(cut) > 8 else "")
            raise InputError(
                source,
                f"floor {name!r} names no slice of this evaluation ({key}: {there or 'no such column'})",
                "[floors]",
            )
    return out


def _no_margin(f: Floor) -> str:
    """Why a floor has no distance in standard errors: nothing scored on its slice, or a standard
    error of 0 (B's rate 0 or 1: every query hit, or none)."""
    return f"{f.name}: nothing scored" if f.n == 0 else f"{f.name}: B's rate {f.hit_rate:g} at n {f.n}, SE 0"


def noise_checks(floors: list[Floor]) -> list[Check]:
    """`gate.noise`: one warning per floor within NOISE_SE standard errors of B's hit rate (its
    value, n, standard error and distance); else one ok, which claims a margin only for the floors
    it could compute one for (a standard error above 0) and names the others."""
    noisy = [f for f in floors if f.noisy]
    if not noisy:
        blank = [f for f in floors if not math.isfinite(f.distance_se)]
        facts = {"not_computed": [f.name for f in blank]}
        why = "; ".join(_no_margin(f) for f in blank[:SHOW]) + (" …" if len(blank) > SHOW else "")
        if len(blank) == len(floors):
            return [
                Check(OK, "gate.noise", f"no margin computed: no floor has a standard error ({why})", facts)
            ]
        said = f"every floor is at least {NOISE_SE:g} standard errors from B's hit rate"
        if not blank:
            return [Check(OK, "gate.noise", said)]
        return [
            Check(
                OK,
                "gate.noise",
                f"{said}, but for {counted(len(blank), 'floor')} with no standard error, no margin "
                f"computed ({why})",
                facts,
            )
        ]
    return [
        Check(
            WARNING,
            "gate.noise",
            f"floor {f.name} = {f.floor:g} is {abs(f.distance_se):.1f} standard errors "
            f"{'above' if f.distance_se < 0 else 'below'} B's hit rate {f.hit_rate:.3f} "
            f"(n = {f.n}, SE √(p(1−p)/n) = {f.noise_band:.3f}): it fires on noise "
            f"(resampling alone moves the rate by that much)",
            {"slice": f.name, "floor": f.floor, "distance_se": round(f.distance_se, 3), "n": f.n},
        )
        for f in noisy
    ]


def nothing_evaluated_reason(
    ev: Evaluation, floors: list[Floor], verdicts: list[MeasureVerdict], found: Sequence[Check] = ()
) -> str | None:
    """Why the gate evaluated nothing, so fails whatever its limits say; None when it evaluated
    something. Nothing is evaluated when no query is scored (no label of grade ≥ 1 among the
    evaluation's queries), when B answers none of the scored queries (a run for other queries:
    each would count as a miss), when every floor's slice is empty and no measure is gated, or when
    the truth judged against fails its checks (an error among `found`: `checks/truth.py`), whose
    recall is then no index recall."""
    faked = sorted({c.code for c in found if c.level is ERROR and c.code in TRUTH_ERRORS})
    if faked:
        return f"the truth fails its checks ({', '.join(faked)}): its recall is not the runs' index recall"
    scored = ev.scored
    n = int(scored.sum())
    if n == 0:
        judged = len(ev.not_relevant.keys)
        if judged:
            return f"no query was scored (none of the {counted(judged, 'label')} has grade ≥ 1)"
        return "no query was scored (the labels judge none of the evaluation's queries)"
    if not (scored & ev.b.present).any():
        ids = some(ev.query_ids.filter(pa.array(scored)).to_pylist()[:SHOW], n)
        if not (scored & ev.a.present).any():
            return f"neither run answers any of the {counted(n, 'scored query', 'scored queries')} ({ids})"
        return f"B ({ev.b.name}) answers none of the {counted(n, 'scored query', 'scored queries')} ({ids})"
    if floors and not verdicts and all(f.n == 0 for f in floors):
        return f"no floor's slice holds a scored query ({', '.join(f.name for f in floors[:SHOW])})"
    return None


@dataclass(frozen=True)
class MeasureVerdict:
    """One gated measure on this evaluation (see the module's docstring)."""

    name: str
    limit: Limit
    n: int  # scored queries compared
    mean_a: float  # NaN: nothing scored
    mean_b: float
    delta: float | None  # mean(B − A)
    p: float | None  # the paired t-test's two-sided p
    p_holm: float | None  # p adjusted by Holm across the measures with a max_drop
    mde80: float | None
    reason: str | None  # why there is no p

    @property
    def floor_holds(self) -> bool:
        floor = self.limit.floor
        return floor is None or not (self.mean_b < floor)  # NaN (nothing scored) holds

    @property
    def drops(self) -> bool:
        """B − A is below −max_drop (significant or not)."""
        cap = self.limit.max_drop
        return cap is not None and self.delta is not None and self.delta < -cap

    @property
    def drop_holds(self) -> bool:
        """No drop beyond max_drop that is significant after Holm (p_holm < ALPHA)."""
        return not (self.drops and self.p_holm is not None and self.p_holm < ALPHA)

    @property
    def blind(self) -> bool:
        """max_drop is below the minimum detectable effect: a drop that size would mostly pass."""
        cap = self.limit.max_drop
        return cap is not None and self.mde80 is not None and cap < self.mde80

    @property
    def holds(self) -> bool:
        return self.floor_holds and self.drop_holds


def gated_values(
    ev: Evaluation, measures: list[Measure]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each measure per query for A and B, keyed by its canonical name: the evaluation's own when
    it has them, else computed here from the same runs, judgements and order."""
    names = [str(m) for m in measures]
    missing = tuple(m for m in measures if str(m) not in ev.named(ev.a))
    extra = replace(ev, measures=missing) if missing else ev
    a, b = ({**extra.named(x), **ev.named(y)} for x, y in ((extra.a, ev.a), (extra.b, ev.b)))
    return {n: a[n] for n in names}, {n: b[n] for n in names}


def judge_measures(ev: Evaluation, limits: dict[str, Limit]) -> list[MeasureVerdict]:
    """One verdict per gated measure, in the file's order, over the scored queries paired by
    query index (the arms are aligned on the evaluation's queries)."""
    if not limits:
        return []
    names = list(limits)
    a, b = gated_values(ev, [limit.measure for limit in limits.values()])
    scored = ev.scored
    a = {n: v[scored] for n, v in a.items()}
    b = {n: v[scored] for n, v in b.items()}
    tested = compare_all(a, b, correction=Correction.NONE)  # the MDE and p of each
    capped = [n for n in names if limits[n].max_drop is not None]
    holm = compare_all({n: a[n] for n in capped}, {n: b[n] for n in capped}) if capped else {}
    out = []
    for n in names:
        c = tested[n]
        out.append(
            MeasureVerdict(
                n,
                limits[n],
                c.n,
                float(a[n].mean()) if len(a[n]) else math.nan,
                float(b[n].mean()) if len(b[n]) else math.nan,
                c.delta,
                c.p_t,
                holm[n].p_holm if n in holm else None,
                c.mde80,
                None if c.reason is None else c.reason.value,
            )
        )
    return out


def mde_checks(verdicts: list[MeasureVerdict]) -> list[Check]:
    """`gate.mde`: one warning per measure whose max_drop is below its minimum detectable effect;
    one ok when every max_drop is at least its MDE; none when no measure has a max_drop."""
    capped = [v for v in verdicts if v.limit.max_drop is not None]
    if not capped:
        return []
    blind = [v for v in capped if v.blind]
    if not blind:
        blank = [v for v in capped if v.mde80 is None]
        facts = {"not_computed": [v.name for v in blank]}
        why = "; ".join(f"{v.name}: {(v.reason or 'no test').replace('_', ' ')}, n {v.n}" for v in blank)
        if len(blank) == len(capped):
            return [Check(OK, "gate.mde", f"no minimum detectable effect computed ({why})", facts)]
        said = "every max_drop is at least its minimum detectable effect (80% power)"
        if not blank:
            return [Check(OK, "gate.mde", said)]
        return [Check(OK, "gate.mde", f"{said}, but none computed for {len(blank)} ({why})", facts)]
    return [
        Check(
            WARNING,
            "gate.mde",
            f"{v.name}: max_drop {v.limit.max_drop:g} is below the minimum detectable effect "
            f"{v.mde80:.3f} (80% power, α = {ALPHA:g}, n = {v.n}): the gate cannot see what it "
            f"promises to stop (a drop of max_drop passes as not significant most of the time)",
            {"measure": v.name, "max_drop": v.limit.max_drop, "mde80": v.mde80, "n": v.n},
        )
        for v in blind
    ]
