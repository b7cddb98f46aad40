"""Every figure of the report as a string cell: the one place a number becomes text.

The text, Markdown and HTML reports and the app's screens all take their cells from here and from
the sections' own cells (`sections/`), over the typed `model.Report`, so a screen and the report
cannot disagree. Cells are plain strings; data text in them (ids, names, plans) is escaped or made
visible by whoever draws them.
"""

from __future__ import annotations

from triage.core.measures.paired import Outcome

NONE = "–"  # an undefined number

FLIP_CAP = 25  # flips listed per direction in text and Markdown (JSON lists all)

SLICE_CAP = 25  # slices listed per key in text and Markdown (JSON lists all)

BAR = 24  # cells of a full (1.0) bar


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


def share(n: int, of: int) -> str:
    """`n` of `of` as a whole percentage: "13%"; "<1%" for a share above 0 that rounds to 0."""
    if not of:
        return NONE
    whole = f"{n / of:.0%}"
    return "<1%" if n and whole == "0%" else whole


def unscored(n_unlabelled: int, no_eligible: int) -> str:
    """The queries not scored, as the summary line spells them: "unlabelled N"; judged against exact
    truth, the `no_eligible` of them whose filter admits no row named apart, first."""
    if not no_eligible:
        return f"unlabelled {n_unlabelled}"
    rest = n_unlabelled - no_eligible
    return f"none eligible {no_eligible}" + (f", unlabelled {rest}" if rest else "")


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
