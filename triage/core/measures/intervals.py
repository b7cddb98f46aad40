"""Wilson score intervals for hit rates: honest at small n and at 0/n or n/n, where the one-arm
standard error √(p(1−p)/n) collapses to 0.

For x hits of n, p̂ = x/n and z the normal quantile (1.959964 for 95%):
    centre = (p̂ + z²/2n) / (1 + z²/n),  half = z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n),
    interval = [centre − half, centre + half], clipped to [0, 1] (0 at x = 0, 1 at x = n);
    NaN for n = 0.
"""

from __future__ import annotations

import numpy as np

Z95 = 1.959964  # two-sided 95%: the 0.975 quantile of the standard normal


def wilson(hits: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per entry of the counts `hits` of `n` (float64 arrays; NaN where n = 0)."""
    x = np.asarray(hits, np.float64)
    m = np.asarray(n, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x / m
        z2n = z * z / m
        centre = (p + z2n / 2) / (1 + z2n)
        half = z * np.sqrt(p * (1 - p) / m + z2n / (4 * m)) / (1 + z2n)
    # 0 of n starts at exactly 0 and n of n ends at exactly 1 (rounding could leave 1e-17 / 1 − 1e-16).
    low = np.where(m > 0, np.where(x == 0, 0.0, np.clip(centre - half, 0.0, 1.0)), np.nan)
    high = np.where(m > 0, np.where(x == m, 1.0, np.clip(centre + half, 0.0, 1.0)), np.nan)
    return low, high


def wilson_one(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The interval of one hit rate (NaN, NaN for n = 0)."""
    low, high = wilson(np.array([hits]), np.array([n]), z)
    return float(low[0]), float(high[0])
