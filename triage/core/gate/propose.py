"""`triage report --suggest-floors`: a FLOORS.toml (valid for `--gate`) proposing one floor per slice.

Each slice with at least MIN_N scored queries (and `overall`) gets the floor p − S·SE, rounded
down to 0.01 and not below 0: p is B's hit rate on it, SE = √(p(1−p)/n), S = SUGGEST_SE by
default. At p = 0 or 1 the SE is 0 and a floor at p would break on the first miss: there the floor
is the low end of B's Wilson 95% interval instead. S > gate.NOISE_SE, so no proposed floor fires on
noise. Smaller slices, and slices nothing in is judged, are named in comments as too small to gate.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

from triage.core.defaults import MIN_N, SUGGEST_SE
from triage.core.evaluation import Evaluation
from triage.core.text.sanitize import is_mark
from triage.core.views.slices import all_slices


@dataclass(frozen=True)
class Proposal:
    name: str  # "overall" or "KEY:VALUE", as a floors file names it
    n: int
    hit_rate: float  # B's (NaN: nothing judged)
    noise_band: float  # √(p(1−p)/n)
    wilson_low: float
    floor: float | None  # None: too small to gate (or cannot be named)
    why_not: str = ""  # why there is no floor


def _proposal(name: str, n: int, p: float, se: float, low: float, s: float, min_n: int) -> Proposal:
    if name.endswith(":*"):  # a slice value "*" would read as "every slice of the key"
        return Proposal(name, n, p, se, low, None, "its value * reads as every slice of the key")
    if n < min_n or math.isnan(p):
        return Proposal(name, n, p, se, low, None, f"n {n}")
    below = p - s * se if se > 0 else low
    return Proposal(name, n, p, se, low, max(0.0, math.floor(below * 100) / 100))


def suggest_floors(ev: Evaluation, s: float = SUGGEST_SE, min_n: int = MIN_N) -> list[Proposal]:
    """`overall`, then each slice key's slices in the report's order."""
    m = ev.means(ev.b)
    low, _ = ev.wilson(ev.b)
    out = [_proposal("overall", m.n, m.hit_rate, ev.noise_band(ev.b), low, s, min_n)]
    for key, rows in all_slices(ev).items():
        for x in rows:
            b = x.b
            out.append(_proposal(f"{key}:{x.value}", x.n, b.hit_rate, b.noise_band, b.wilson_low, s, min_n))
    return out


def toml_key(name: str) -> str:
    """`name` as a TOML key: bare when it can be, else a basic string with `\\` and `"` escaped and
    every control, format or separator character and every invisible mark (`core.text.sanitize`:
    fillers, variation selectors, …) as an escape (\\uXXXX): one visible line that reads back as `name`."""
    if name and all(c.isascii() and (c.isalnum() or c in "_-") for c in name):
        return name
    out = []
    for c in name:
        if c in '\\"':
            out.append("\\" + c)
        elif unicodedata.category(c)[0] in "CZ" and c != " " or is_mark(c):
            out.append(f"\\u{ord(c):04X}" if ord(c) < 0x10000 else f"\\U{ord(c):08X}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def floors_toml(proposals: list[Proposal], s: float = SUGGEST_SE, min_n: int = MIN_N, what: str = "") -> str:
    """The proposals as a floors file: a [floors] table and comments naming the slices left out.
    `what`: one line saying what was measured (arms, k, labels), written as a comment."""
    head = [
        "# Floors proposed by `triage report --suggest-floors`" + (f" ({what})" if what else "") + ".",
        f"# Each floor: B's hit rate p minus {s:g} standard errors sqrt(p(1-p)/n) (at p = 0 or 1, the",
        "# low end of its Wilson 95% interval), rounded down to 0.01; only slices with",
        f"# n >= {min_n} scored queries. Use with: triage report --gate FLOORS.toml",
        "[floors]",
    ]
    lines = [
        f"{toml_key(x.name)} = {x.floor:.2f}  # B {x.hit_rate:.3f}, n {x.n}, SE {x.noise_band:.3f}"
        for x in proposals
        if x.floor is not None
    ]
    if not lines:
        lines = ["# no slice has enough queries to gate: --gate refuses an empty [floors] table"]
    left = [x for x in proposals if x.floor is None]
    tail = []
    if left:
        tail.append(f"# too small to gate (n < {min_n}) or not nameable, left out:")
        tail += [f"#   {toml_key(x.name)}: {x.why_not}" for x in left]
    return "\n".join(head + lines + tail) + "\n"
