"""Multiple-comparison corrections: adjusted p-values over a family of tests (the named measures of one
comparison, or the slices of one measure).

For the m p-values of the family sorted ascending, p₍₁₎ ≤ … ≤ p₍ₘ₎ (ties keep their input order):
    bonferroni  p̃ᵢ = min(1, m·pᵢ)
    holm        p̃₍ᵢ₎ = min(1, max_{j ≤ i} (m − j + 1)·p₍ⱼ₎)        (step-down; controls the FWER)
    bh          p̃₍ᵢ₎ = min(1, min_{j ≥ i} m·p₍ⱼ₎ / j)              (Benjamini–Hochberg step-up; the FDR)
    none        p̃ᵢ = pᵢ
A NaN entry (no test was run) is outside the family: it stays NaN and does not count in m.
Numpy only: nothing here imports scipy.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np


class Correction(StrEnum):
    """How the p-values of a family are adjusted; the value is its one spelling in the JSON report."""

    HOLM = "holm"
    BONFERRONI = "bonferroni"
    BH = "bh"
    NONE = "none"


def adjust(p: np.ndarray, correction: Correction | str = Correction.HOLM) -> np.ndarray:
    """The adjusted p-values (float64, same shape and order as `p`; NaN stays NaN)."""
    how = Correction(correction)
    p = np.asarray(p, np.float64)
    out = np.full(p.shape, np.nan)
    family = np.flatnonzero(~np.isnan(p))
    m = len(family)
    if m == 0:
        return out
    if how is Correction.NONE:
        out[family] = p[family]
        return out
    if how is Correction.BONFERRONI:
        out[family] = np.minimum(1.0, m * p[family])
        return out
    order = family[np.argsort(p[family], kind="stable")]
    ranked = p[order]
    i = np.arange(1, m + 1)
    if how is Correction.HOLM:
        adjusted = np.maximum.accumulate((m - i + 1) * ranked)
    else:
        adjusted = np.minimum.accumulate((ranked * (m / i))[::-1])[::-1]
    out[order] = np.minimum(1.0, adjusted)
    return out
