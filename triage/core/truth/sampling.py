"""The queries worth running: a log's distinct queries stratified by filter shape and exact
selectivity band, given fixed quotas, and picked across tenants rather than by popularity.

- shape: the corpus columns a filter names, lower-cased, sorted and joined by " & ", values and
  operators ignored (the slices' filter shape, core/views/slices.py); "unfiltered" for no filter,
  the control group; "(no column)" for a filter that names none (`1 = 1`).
- band: from the exact n_eligible over a corpus of N rows, s = n / N: "≥10%" (s ≥ 0.1), "1–10%"
  (0.01 ≤ s < 0.1), "0.1–1%" (0.001 ≤ s < 0.01), "<0.1%" (0 < s < 0.001), "0 eligible" (n = 0).
  The edges are the slices' (each band holds its lower edge), decided in whole numbers (10·n ≥ N,
  …) so that no rounding moves a query across one. An unfiltered query's band is "unfiltered".
- quota: each filtered shape asks for `per_shape` queries, the control group for `control`.
- requested: a shape's quota split equally over its five bands; what does not divide goes one
  query each to the lowest bands first, in `LOW_FIRST` order (<0.1%, 0.1–1%, 1–10%, ≥10%, then
  0 eligible, whose queries no recall can score).
- filled: the shape's quota spread over its bands as evenly as the log allows (water-filling):
  a band the log cannot fill keeps all it has, and its shortfall goes to the shape's other scored
  bands as evenly as they can take it, a query that cannot be even to the lowest band first. The
  0 eligible band never takes more than it was asked for (its queries are counted apart, never
  scored). With the log able to fill every band, filled = requested. So the lowest bands are
  over-represented twice: equal quotas give them far more than their share of a log, and every
  remainder is theirs.
- pick: within a stratum (shape × band) round-robin over distinct tenants, each turn taking one
  query from every tenant that has one left; the tenants of a turn ordered by how many queries of
  theirs earlier strata took (fewest first), then by a seeded hash; each tenant's queries ordered
  by a seeded hash of the query. A tenant with a thousand queries gets no more turns than one
  with two, and with fewer queries to pick than tenants the tenants drawn differ stratum to
  stratum.
- order: the control group first, then the shapes by name, bands from ≥10% down to 0 eligible,
  each stratum's queries in the order picked.

Every random choice is an xxh3-64 hash of the seed and what is chosen (a query's `identity`, a
tenant's value), never a generator's stream: the same log and seed give the same set, and a query
keeps its hash when other rows are added to the log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

UNFILTERED = "unfiltered"  # the control group's shape and band
NO_COLUMN = "(no column)"  # the shape of a filter that names no column
ZERO = "0 eligible"
BANDS = ("≥10%", "1–10%", "0.1–1%", "<0.1%", ZERO)  # as listed: broadest first
LOW_FIRST = ("<0.1%", "0.1–1%", "1–10%", "≥10%", ZERO)  # who gets a remainder first


def predicate_shape(columns: Iterable[str], unfiltered: bool = False) -> str:
    """A filter's shape: its columns lower-cased, sorted, joined by " & "."""
    if unfiltered:
        return UNFILTERED
    names = sorted({c.lower() for c in columns})
    return " & ".join(names) if names else NO_COLUMN


def eligible_band(n_eligible: np.ndarray, rows: int) -> np.ndarray:
    """Each count of eligible rows (of a corpus of `rows`) as its band label (object array)."""
    n = np.asarray(n_eligible, dtype=np.int64)
    out = np.full(len(n), BANDS[3], dtype=object)
    out[n * 1000 >= rows] = BANDS[2]
    out[n * 100 >= rows] = BANDS[1]
    out[n * 10 >= rows] = BANDS[0]
    out[n == 0] = ZERO
    return out


def water_fill(quota: int, available: Mapping[str, int], order: Sequence[str]) -> dict[str, int]:
    """`quota` queries over the bands of `order`, each band at most its `available`: as evenly as
    they allow (the largest level L with Σ min(available, L) ≤ quota, then one more each to the
    bands above L in `order` while the quota lasts). Never more than quota nor than available."""
    cap = {b: max(0, int(available.get(b, 0))) for b in order}
    if sum(cap.values()) <= quota:
        return cap
    low, high = 0, max(cap.values())  # Σ min(cap, low) ≤ quota < Σ min(cap, high)
    while high - low > 1:
        mid = (low + high) // 2
        if sum(min(c, mid) for c in cap.values()) <= quota:
            low = mid
        else:
            high = mid
    out = {b: min(c, low) for b, c in cap.items()}
    extra = quota - sum(out.values())
    for b in order:
        if extra and cap[b] > low:
            out[b] += 1
            extra -= 1
    return out


def requested(quota: int) -> dict[str, int]:
    """A filtered shape's quota split over its bands before the log is seen (BANDS' order)."""
    even = water_fill(quota, dict.fromkeys(BANDS, quota), LOW_FIRST)
    return {b: even[b] for b in BANDS}


def order_keys(seed: int, identities: Iterable[bytes]) -> np.ndarray:
    """The seeded hash of each identity (uint64): the order queries are taken in."""
    prefix = f"triage-sample|{seed}|".encode()
    return np.fromiter((xxhash.xxh3_64_intdigest(prefix + i) for i in identities), dtype=np.uint64)


def _tenant_key(seed: int, stratum: str, tenant: Hashable) -> int:
    value = b"\x00" if tenant is None else b"\x01" + str(tenant).encode("utf-8", "surrogatepass")
    return xxhash.xxh3_64_intdigest(f"triage-tenant|{seed}|{stratum}|".encode() + value)


def round_robin(
    rows: np.ndarray,
    tenants: Sequence[Hashable],
    keys: np.ndarray,
    quota: int,
    used: Counter[Hashable],
    tenant_key: dict[Hashable, int],
) -> list[int]:
    """Up to `quota` of `rows`, one per tenant a turn (see the module's `pick`); `used` counts each
    tenant's queries taken so far and is updated; `tenant_key` orders tenants tied on `used`."""
    rows = np.asarray(rows, dtype=np.int64)
    ranked = rows[np.lexsort((rows, keys[rows]))]
    queues: dict[Hashable, list[int]] = {}
    for r in ranked.tolist():
        queues.setdefault(tenants[r], []).append(r)
    for q in queues.values():
        q.reverse()  # popped from the end: the lowest key first
    chosen: list[int] = []
    while len(chosen) < quota and queues:
        for t in sorted(queues, key=lambda t: (used[t], tenant_key[t])):
            if len(chosen) == quota:
                break
            chosen.append(queues[t].pop())
            used[t] += 1
            if not queues[t]:
                del queues[t]
    return chosen


@dataclass(frozen=True)
class Stratum:
    """One shape × band of the allocation: the queries asked for, the log's, the ones taken."""

    shape: str
    band: str
    requested: int
    available: int  # the log's distinct queries in the stratum
    filled: int
    tenants: int  # distinct tenants among the available queries
    tenants_filled: int  # … among those taken

    @property
    def short(self) -> int:
        return max(0, self.requested - self.filled)


@dataclass(frozen=True)
class Allocation:
    rows: np.ndarray  # the candidates taken (int64 indices), in the output's order
    strata: tuple[Stratum, ...]  # the control group's first, then each shape's bands in BANDS order


def allocate(
    shapes: Sequence[str],
    bands: Sequence[str],
    tenants: Sequence[Hashable],
    keys: np.ndarray,
    per_shape: int,
    control: int,
    seed: int,
) -> Allocation:
    """Stratify the candidates (one shape, band, tenant and order key each; the unfiltered ones in
    shape and band UNFILTERED) and take each stratum's fill (the module's rules)."""
    members: dict[tuple[str, str], list[int]] = {}
    for i, (s, b) in enumerate(zip(shapes, bands, strict=True)):
        members.setdefault((s, b), []).append(i)
    names = sorted({s for s, _ in members} - {UNFILTERED})
    plan: list[tuple[str, str, int, int]] = []  # shape, band, requested, filled
    if (UNFILTERED, UNFILTERED) in members or control:
        have = len(members.get((UNFILTERED, UNFILTERED), ()))
        plan.append((UNFILTERED, UNFILTERED, control, min(control, have)))
    for shape in names:
        even = requested(per_shape)
        available = {b: len(members.get((shape, b), ())) for b in BANDS}
        available[ZERO] = min(available[ZERO], even[ZERO])  # takes no other band's shortfall
        fill = water_fill(per_shape, available, LOW_FIRST)
        plan += [(shape, b, n, fill[b]) for b, n in even.items()]
    used: Counter[Hashable] = Counter()
    taken: list[int] = []
    strata = []
    for shape, band, asked, filled in plan:
        rows = np.asarray(members.get((shape, band), []), dtype=np.int64)
        present = {tenants[r] for r in rows.tolist()}
        stratum = f"{shape}\x00{band}"
        order = {t: _tenant_key(seed, stratum, t) for t in present}
        chosen = round_robin(rows, tenants, keys, filled, used, order)
        taken += chosen
        strata.append(
            Stratum(
                shape, band, asked, len(rows), len(chosen), len(present), len({tenants[r] for r in chosen})
            )
        )
    return Allocation(np.asarray(taken, dtype=np.int64), tuple(strata))
