"""Forest plots: each figure with its 95% interval drawn to scale, one row a figure, the rows of a
panel on one shared axis (docs/app.md, "Overview").

Two panels, from the report model only (nothing is recomputed here):
- **Δ B − A**: each named measure's mean difference with its paired t interval (`compare`), a `│`
  at zero; the row is green when the whole interval lies above 0, red below 0, muted when it
  straddles 0 (a `┼` where it crosses the zero line).
- **each arm**: the hit rate at k, and the answer accuracy when the runs carry one, of each arm
  with its own Wilson interval. Two arms' intervals overlapping is not a test; the paired test is
  McNemar's p on the headline.

`panel` and `axis` are pure: numbers in, `Content` out, for any width from 40 columns up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from triage.core.measures.significance import NoTest
from triage.report import cells
from triage.report.model import Report
from triage.ui.literal import line
from triage.ui.widgets.detail.text import clip

LABEL_CAP = 14  # a label's cells at most (longer ones end in …)
MIN_BAR = 12  # the bar area's cells at the least: below this the labels give way first
MAX_BAR = 80  # and at the most: on a wide terminal the bars stay near their labels
LOW, POINT, HIGH, RULE, ZERO, CROSS = "├", "●", "┤", "─", "│", "┼"


class Tone(Enum):
    """How an interval sits against zero (the Δ panel), or neutral (the arm panel)."""

    ABOVE = "$text-success"  # the whole interval above 0
    BELOW = "$text-error"  # the whole interval below 0
    SPANS = "$text-muted"  # it straddles 0: this query set cannot tell the sign
    PLAIN = ""  # an arm's own figure: no zero to sit against

    @classmethod
    def of(cls, low: float, high: float) -> Tone:
        return cls.ABOVE if low > 0 else cls.BELOW if high < 0 else cls.SPANS


@dataclass(frozen=True, slots=True)
class ForestRow:
    """One figure: `point` inside [`low`, `high`]; `reason` is shown instead of a bar when the
    interval is missing (None or not finite)."""

    label: str
    point: float | None
    low: float | None
    high: float | None
    reason: str = "no interval"

    @property
    def drawn(self) -> bool:
        return all(x is not None and math.isfinite(x) for x in (self.point, self.low, self.high))


@dataclass(frozen=True, slots=True)
class Scale:
    """Values in [lo, hi] onto the columns 0 … cols − 1 of the bar area."""

    lo: float
    hi: float
    cols: int

    def col(self, x: float) -> int:
        return min(self.cols - 1, max(0, round((x - self.lo) / (self.hi - self.lo) * (self.cols - 1))))


def scale_of(rows: Sequence[ForestRow], cols: int, zero: bool) -> Scale | None:
    """The shared axis: from the lowest low to the highest high (and 0 with `zero`); None when no
    row has an interval. A single value is widened so it lands mid-axis."""
    ends = [x for r in rows if r.drawn for x in (r.low, r.high, r.point) if x is not None]
    if not ends:
        return None
    lo, hi = min(ends + [0.0] * zero), max(ends + [0.0] * zero)
    if hi - lo < 1e-12:
        pad = max(abs(lo) * 0.1, 0.01)
        lo, hi = lo - pad, hi + pad
    return Scale(lo, hi, cols)


def step_of(span: float, ticks: int) -> float:
    """A round step (1, 2 or 5 × 10ⁿ) giving about `ticks` intervals over `span`."""
    raw = span / max(1, ticks)
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))


def tick_text(x: float, step: float, signed: bool) -> str:
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(x) < step * 1e-6:
        return "0"
    return f"{x:+.{decimals}f}" if signed else f"{x:.{decimals}f}"


def axis(scale: Scale, signed: bool) -> str:
    """The tick labels under the bars, each centred on its column, 0 first, none overlapping: the
    coarsest round step that labels at least three values (two on a narrow axis)."""
    best = ""
    for target in range(max(2, scale.cols // 12), max(3, scale.cols // 4) + 1):
        text, placed = ticks(scale, step_of(scale.hi - scale.lo, target), signed)
        if placed >= (3 if scale.cols >= 30 else 2):
            return text
        best = best or text
    return best


def ticks(scale: Scale, step: float, signed: bool) -> tuple[str, int]:
    """The labels of the multiples of `step` on the axis, and how many found room."""
    first = math.ceil(scale.lo / step - 1e-9)
    values = [i * step for i in range(first, math.floor(scale.hi / step + 1e-9) + 1)]
    values.sort(key=lambda v: abs(v) > step * 1e-6)  # zero first: it must be labelled
    out = [" "] * scale.cols
    taken: list[tuple[int, int]] = []
    for v in values:
        text = tick_text(v, step, signed)
        start = min(max(0, scale.col(v) - (len(text) - 1) // 2), scale.cols - len(text))  # "0" under │
        end = start + len(text)
        if start < 0 or any(start <= b and a <= end for a, b in taken):  # one space between labels
            continue
        taken.append((start, end))
        out[start:end] = text
    return "".join(out), len(taken)


def interval_bar(row: ForestRow, scale: Scale, zero: bool) -> str:
    """The row's interval as `├──●──┤` over the bar area, `│` at zero outside it, `┼` inside."""
    assert row.point is not None and row.low is not None and row.high is not None
    out = [" "] * scale.cols
    lo, hi, at = scale.col(row.low), scale.col(row.high), scale.col(row.point)
    z = scale.col(0.0) if zero else None
    if z is not None:
        out[z] = ZERO
    for c in range(lo, hi + 1):
        out[c] = CROSS if c == z else RULE
    if hi > lo:
        out[lo], out[hi] = LOW, HIGH
    out[at] = POINT
    return "".join(out)


def panel(
    title: tuple[str, str],
    rows: Sequence[ForestRow],
    width: int,
    *,
    zero: bool,
    figure: Callable[[float | None], str],
) -> Content:
    """`title` (its note only when it fits), then one line per row — label, figure, bar — then the
    axis, all within `width` cells (the bars at most MAX_BAR). With `zero` the rows are toned by
    how their interval sits against 0 and the axis holds 0; without it they are plain and the
    axis spans the intervals only."""
    labels = [clip(r.label, LABEL_CAP) for r in rows]
    label_w = max((len(x) for x in labels), default=0)
    value_w = max((len(figure(r.point)) for r in rows), default=1)
    cols = min(MAX_BAR, width - label_w - value_w - 2)
    if cols < MIN_BAR:  # narrow: the labels give way to the bars
        label_w = max(4, label_w - (MIN_BAR - cols))
        labels = [clip(x, label_w) for x in labels]
        cols = max(MIN_BAR, width - label_w - value_w - 2)
    scale = scale_of(rows, cols, zero)
    head, note = title
    parts: list[str | tuple[str, str]] = [(clip(head, width), "bold")]
    if len(head) + 1 + len(note) <= width:
        parts += [" ", (note, "$text-muted")]
    for r, name in zip(rows, labels, strict=True):
        parts += ["\n", f"{name:<{label_w}} ", (f"{figure(r.point):>{value_w}} ", "bold")]
        if r.drawn and scale is not None:
            assert r.low is not None and r.high is not None
            tone = Tone.of(r.low, r.high) if zero else Tone.PLAIN
            parts.append(
                (interval_bar(r, scale, zero), tone.value) if tone.value else interval_bar(r, scale, zero)
            )
        else:
            parts.append((clip(r.reason, cols), "$text-muted italic"))
    if scale is not None:
        parts += ["\n", " " * (label_w + value_w + 2), (axis(scale, signed=zero), "$text-muted")]
    return line(*parts)


# -- the overview's panels, from the report ------------------------------------------------------

REASONS = {
    NoTest.TOO_FEW_QUERIES: "no interval: fewer than 2 scored queries",
    NoTest.ALL_DIFFERENCES_ZERO: "no interval: B = A on every query",
    NoTest.CONSTANT_DIFFERENCE: "no interval: one difference on every query",
}
DELTA_TITLE = ("Δ B − A, 95% interval", "(green: above 0, red: below 0, grey: spans 0)")
ARM_TITLE = ("Each arm, 95% interval", "(each arm alone; the paired test is McNemar's p)")


def delta_rows(r: Report) -> list[ForestRow]:
    """Each named measure's Δ and t interval (`compare`); none without named measures."""
    out = []
    for name, c in r.compare.items():
        low, high = c.ci95 if c.ci95 is not None else (None, None)
        out.append(ForestRow(name, c.delta, low, high, REASONS[c.reason] if c.reason else "no interval"))
    return out


def arm_rows(r: Report) -> list[ForestRow]:
    """Each arm's hit rate at k with its Wilson interval, and its answer accuracy with its own when
    both runs carry answer_correct (the intervals the overview's tables and hint line quote)."""
    a, b = r.arms.a, r.arms.b
    none = "no interval: no scored queries"
    out = [
        ForestRow(f"hit rate@{r.k} A", a.hit_rate, a.wilson_low, a.wilson_high, none),
        ForestRow(f"hit rate@{r.k} B", b.hit_rate, b.wilson_low, b.wilson_high, none),
    ]
    x = r.answers
    if x is not None and (x.accuracy.a is not None or x.accuracy.b is not None):
        missing = "no interval: no answer_correct"
        out += [
            ForestRow("answer acc. A", x.accuracy.a, x.wilson_low.a, x.wilson_high.a, missing),
            ForestRow("answer acc. B", x.accuracy.b, x.wilson_low.b, x.wilson_high.b, missing),
        ]
    return out


def plots(r: Report, width: int) -> Content:
    """The overview's plots at `width`: the Δ panel when measures are named, then the arm panel."""
    parts: list[Content] = []
    deltas = delta_rows(r)
    if deltas:
        parts += [panel(DELTA_TITLE, deltas, width, zero=True, figure=cells.signed), Content("\n")]
    parts.append(panel(ARM_TITLE, arm_rows(r), width, zero=False, figure=cells.rate))
    return Content.assemble(*parts)


class Forest(Widget):
    """The overview's forest plots, drawn for the width the widget has (`show` hands it a report)."""

    DEFAULT_CSS = "Forest { height: auto; margin: 1 0 0 0; }"

    report: Report | None = None

    def show(self, r: Report) -> None:
        self.report = r
        self.refresh(layout=True)

    def render(self) -> Content:
        if self.report is None:
            return Content("")
        return plots(self.report, max(40, self.content_size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.report is None:
            return 0
        return len(plots(self.report, max(40, width)).plain.splitlines())
