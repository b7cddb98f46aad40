"""`triage report --gate FLOORS.toml`: floors B's hit rate must not fall below, overall or per slice.

[floors]
overall = 0.75               # B's hit rate over every scored query
"tenant:*" = 0.70            # every tenant
"tenant:acme-legal" = 0.80   # one tenant (a named floor wins over the key's "*")
"selectivity:<0.1%" = 0.50   # one selectivity band; any slice key of the report works

A floor closer to B's current hit rate p than NOISE_SE standard errors √(p(1−p)/n) fails on
resampling alone: the check `gate.noise` names each such floor and its distance in standard errors.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from triage.core.checks.model import OK, WARNING, Check
from triage.core.errors import InputError
from triage.core.evaluation import Evaluation
from triage.core.inputs.readers import regular_file
from triage.core.views.slices import BANDS, KEYS, Slice, slices

NOISE_SE = 2.0  # a floor nearer B's hit rate than this many standard errors fires on noise


@dataclass(frozen=True)
class Floor:
    name: str  # "overall", "tenant:acme-legal", …
    floor: float
    hit_rate: float  # B's
    n: int
    noise_band: float
    wilson_low: float = math.nan  # Wilson 95% interval of B's hit rate (NaN: nothing judged)
    wilson_high: float = math.nan

    @property
    def holds(self) -> bool:
        return not (self.hit_rate < self.floor)  # NaN (nothing judged) holds: no evidence of a drop

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


def read_floors(path: Path) -> dict[str, float]:
    regular_file(Path(path))
    try:
        doc = tomllib.loads(Path(path).read_text("utf-8-sig"))  # a BOM (Windows editors) is tolerated
    except RecursionError:
        raise InputError(path, "not valid TOML: nested too deeply") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(path, f"not valid TOML: {e}") from None
    floors = doc.get("floors")
    if not isinstance(floors, dict) or not floors:
        raise InputError(path, "needs a [floors] table, e.g. overall = 0.75")
    out = {}
    for name, value in floors.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InputError(path, f"floor {name!r} = {value!r} must be a number between 0 and 1", "[floors]")
        key = name.split(":", 1)[0]
        if name != "overall" and (":" not in name or key not in KEYS):
            raise InputError(
                path,
                f"unknown floor {name!r}: use overall or KEY:VALUE / KEY:* with KEY one of {', '.join(KEYS)}",
                "[floors]",
            )
        out[name] = float(value)
    return out


def judge_floors(
    ev: Evaluation, floors: dict[str, float], source: Path | str = "the gate file"
) -> list[Floor]:
    """One Floor per slice a floor applies to; a named slice's floor wins over its key's "*". A
    floor naming a slice the evaluation does not have (a typo would otherwise "hold") is refused,
    naming it and the slices there are; a selectivity band with no query holds with n 0."""
    out = []
    if "overall" in floors:
        m = ev.means(ev.b)
        out.append(
            Floor("overall", floors["overall"], m.hit_rate, m.n, ev.noise_band(ev.b), *ev.wilson(ev.b))
        )
    by_key: dict[str, list[Slice]] = {}
    for name in floors:
        if name == "overall":
            continue
        key, value = name.split(":", 1)
        cut = by_key.setdefault(key, slices(ev, key))
        for s in cut:
            named = f"{key}:{s.value}"
            if value == s.value or (value == "*" and named not in floors):
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


def noise_checks(floors: list[Floor]) -> list[Check]:
    """`gate.noise`: one warning per floor within NOISE_SE standard errors of B's hit rate (its
    value, n, standard error and distance); one ok when no floor is."""
    noisy = [f for f in floors if f.noisy]
    if not noisy:
        return [
            Check(OK, "gate.noise", f"every floor is at least {NOISE_SE:g} standard errors from B's hit rate")
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
