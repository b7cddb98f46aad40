"""Three small charts as inline SVG for the HTML report: no script, no external resource, no
plotting library. Each chart is an `<svg role="img">` with a `<title>` and a `<desc>` that say its
numbers in words, so a screen reader (or a reader of the page's source) gets what the picture shows.

Every data string (a tenant's name) is made visible and escaped as the review export does
(`review.html.e`); every other string is the chart's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from triage.core.text.sanitize import one_line
from triage.report.review.html import e

WIDTH = 760
FELL, SAME, ROSE = "#b3261e", "#8a8a8a", "#2a7d2a"  # worse in B, unchanged, better in B
INK, GRID, TRACK, B_DOT = "#222", "#ddd", "#9aa4b5", "#1f4e9a"
NAME_WIDTH = 24  # characters of a tenant's name drawn beside its row


@dataclass(frozen=True, slots=True)
class Box:
    """The plotting area inside a chart of `width` × `height` pixels."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top


def _n(x: float) -> str:
    """A coordinate: one decimal, no trailing ".0"."""
    s = f"{x:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _text(x: float, y: float, s: str, anchor: str = "middle", extra: str = "") -> str:
    """`s` is the chart's own text or already escaped."""
    return f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}"{extra}>{s}</text>'


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str, extra: str = "") -> str:
    return f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}"{extra}/>'


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str = "") -> str:
    inner = f"<title>{tip}</title>" if tip else ""
    attrs = f'x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0.0))}" height="{_n(max(h, 0.0))}" fill="{fill}"'
    return f"<rect {attrs}>{inner}</rect>" if inner else f"<rect {attrs}/>"


def nice_ticks(high: float, most: int = 5) -> list[float]:
    """Ticks for a count axis: 0 and the multiples of a whole 1-2-5 step up to the first at or
    above `high`, at most `most` + 1 of them."""
    if high <= 0:
        return [0.0]
    raw = high / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw and m * power >= 1)
    return [i * step for i in range(math.ceil(high / step - 1e-9) + 1)]


def _frame(
    ident: str, title: str, desc: str, height: int, body: list[str], box: Box, axes: tuple[str, str]
) -> str:
    """The chart: its accessible title and description, a title line, the axis labels, `body`."""
    x_label, y_label = axes
    mid_y = (box.top + box.bottom) / 2
    return "\n".join(
        [
            f'<svg id="{ident}" role="img" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
            f'aria-labelledby="{ident}-title {ident}-desc" font-family="system-ui, sans-serif" '
            f'font-size="12" fill="{INK}">',
            f'<title id="{ident}-title">{title}</title>',
            f'<desc id="{ident}-desc">{desc}</desc>',
            _text(WIDTH / 2, 18, title, extra=' font-size="14" font-weight="bold"'),
            *body,
            _text((box.left + box.right) / 2, height - 8, x_label),
            _text(14, mid_y, y_label, extra=f' transform="rotate(-90 14 {_n(mid_y)})"'),
            "</svg>",
        ]
    )


def _y_axis(
    box: Box, ticks: list[float], y_of: Callable[[float], float], label: Callable[[float], str]
) -> list[str]:
    out = []
    for t in ticks:
        y = y_of(t)
        out.append(_line(box.left, y, box.right, y, GRID))
        out.append(_text(box.left - 6, y + 4, label(t), anchor="end"))
    return out


# -- 1. the histogram of gold-rank changes --------------------------------------------------------


def rank_histogram(ident: str, changes: Mapping[int, int], every: Sequence[int], desc: str) -> str:
    """Bars of queries per gold-rank change A − B, one per change in `every` (ascending; zero-filled
    or only the changes seen, as the text report draws them); red where B ranked the gold lower."""
    height = 300
    box = Box(60, 40, WIDTH - 20, height - 60)
    most = max(changes.values(), default=0)
    ticks = nice_ticks(most)
    top = ticks[-1] or 1
    y_of = lambda v: box.bottom - v / top * box.height  # noqa: E731
    body = _y_axis(box, ticks, y_of, lambda t: f"{t:g}")
    slot = min(box.width / max(len(every), 1), 48.0)  # a few changes: narrow bars, centred
    start = box.left + (box.width - slot * len(every)) / 2
    label_every = max(1, math.ceil(len(every) / 20))
    contiguous = bool(every) and every[-1] - every[0] + 1 == len(every)  # else: only the changes seen
    for i, c in enumerate(every):
        n = changes.get(c, 0)
        x = start + i * slot
        colour = FELL if c < 0 else ROSE if c > 0 else SAME
        y = y_of(n)
        word = "query" if n == 1 else "queries"
        body.append(
            _rect(x + slot * 0.1, y, slot * 0.8, box.bottom - y, colour, f"change {c:+d}: {n} {word}")
        )
        if (c if contiguous else i) % label_every == 0:
            body.append(_text(x + slot / 2, box.bottom + 16, _change(c)))
    body.append(_line(box.left, box.bottom, box.right, box.bottom, INK))
    axes = ("gold rank A − B (above 0: B ranks the gold higher)", "queries")
    return _frame(ident, "Gold-rank change, A − B", desc, height, body, box, axes)


def _change(c: int) -> str:
    return f"+{c}" if c > 0 else ("0" if c == 0 else f"−{-c}")


# -- 2. the sorted per-query differences of the decision measure ------------------------------------


def sorted_deltas(ident: str, title: str, runs: Sequence[tuple[float, int]], desc: str, y_label: str) -> str:
    """The per-query differences B − A sorted ascending, drawn as a step: `runs` are (difference,
    queries) in ascending difference, so a chart over any number of queries costs one shape per
    distinct difference. Below zero red, above green; the x axis counts the queries."""
    height = 280
    box = Box(60, 40, WIDTH - 20, height - 60)
    n = sum(count for _, count in runs)
    low = min([-1.0, *(v for v, _ in runs)])
    high = max([1.0, *(v for v, _ in runs)])
    y_of = lambda v: box.top + (high - v) / (high - low) * box.height  # noqa: E731
    x_of = lambda i: box.left + (i / n if n else 0) * box.width  # noqa: E731
    body = _y_axis(box, [low, low / 2, 0.0, high / 2, high], y_of, lambda t: f"{t:+g}" if t else "0")
    at, points, last_label = 0, [], box.left
    for value, count in runs:
        if count <= 0:
            continue
        x0, x1 = x_of(at), x_of(at + count)
        colour = FELL if value < 0 else ROSE if value > 0 else SAME
        y0, y1 = sorted((y_of(value), y_of(0.0)))
        word = "query" if count == 1 else "queries"
        body.append(_rect(x0, y0, x1 - x0, max(y1 - y0, 1.5), colour, f"{count} {word} at {value:+g}"))
        points += [(x0, y_of(value)), (x1, y_of(value))]
        if at and x0 - last_label >= 30 and box.right - x0 >= 30:
            body.append(_text(x0, box.bottom + 16, str(at)))
            last_label = x0
        at += count
    if points:
        path = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        body.append(f'<polyline points="{path}" fill="none" stroke="{INK}" stroke-width="1.5"/>')
    body.append(_line(box.left, y_of(0.0), box.right, y_of(0.0), INK))
    body += [_text(box.left, box.bottom + 16, "0"), _text(box.right, box.bottom + 16, str(n))]
    axes = ("queries, sorted by their difference", y_label)
    return _frame(ident, title, desc, height, body, box, axes)


# -- 3. the tenants against their floor -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TenantMark:
    name: str  # data text: made visible and escaped here
    n: int
    a: float | None  # A's hit rate
    b: float | None  # B's hit rate
    low: float | None  # B's 95% interval
    high: float | None
    below: bool  # B below the floor


def tenant_floor(ident: str, rows: Sequence[TenantMark], floor: float, desc: str, title: str) -> str:
    """One row per tenant (in the order given): B's 95% interval as a bar, B's hit rate as a dot
    (red below the floor), A's as a ring; the floor a dashed line across the rows."""
    row_h = 22
    height = 84 + row_h * max(len(rows), 1) + 44
    box = Box(200, 84, WIDTH - 30, 84 + row_h * max(len(rows), 1))
    x_of = lambda v: box.left + v * box.width  # noqa: E731
    body = []
    for t in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        body.append(_line(x_of(t), box.top, x_of(t), box.bottom, GRID))
        body.append(_text(x_of(t), box.bottom + 16, f"{t:.1f}"))
    fx = x_of(floor)
    body.append(_line(fx, box.top - 8, fx, box.bottom, FELL, ' stroke-width="1.5" stroke-dasharray="5 3"'))
    body.append(_text(fx, box.top - 12, f"floor {floor:.2f}", extra=f' fill="{FELL}"'))
    body += _legend(box.left, 46)
    for i, r in enumerate(rows):
        y = box.top + (i + 0.5) * row_h
        name = e(one_line(r.name, NAME_WIDTH), cap=NAME_WIDTH)
        body.append(_text(box.left - 8, y + 4, f"{name} ({r.n})", anchor="end"))
        if r.low is not None and r.high is not None:
            tip = f"{name}: B 95% interval [{r.low:.3f}, {r.high:.3f}]"
            body.append(_rect(x_of(r.low), y - 4, x_of(r.high) - x_of(r.low), 8, TRACK, tip))
        if r.a is not None:
            body.append(
                f'<circle cx="{_n(x_of(r.a))}" cy="{_n(y)}" r="4.5" fill="none" stroke="{INK}" '
                f'stroke-width="1.5"><title>{name}: A {r.a:.3f}</title></circle>'
            )
        if r.b is not None:
            colour = FELL if r.below else B_DOT
            body.append(
                f'<circle cx="{_n(x_of(r.b))}" cy="{_n(y)}" r="5" fill="{colour}">'
                f"<title>{name}: B {r.b:.3f}</title></circle>"
            )
    axes = ("hit rate", "tenant (scored queries)")
    return _frame(ident, title, desc, height, body, box, axes)


def _legend(x: float, y: float) -> list[str]:
    return [
        f'<circle cx="{_n(x + 5)}" cy="{_n(y - 4)}" r="5" fill="{B_DOT}"/>',
        _text(x + 14, y, "B hit rate", anchor="start"),
        f'<circle cx="{_n(x + 105)}" cy="{_n(y - 4)}" r="5" fill="{FELL}"/>',
        _text(x + 114, y, "B below the floor", anchor="start"),
        f'<circle cx="{_n(x + 245)}" cy="{_n(y - 4)}" r="4.5" fill="none" stroke="{INK}" '
        'stroke-width="1.5"/>',
        _text(x + 254, y, "A hit rate", anchor="start"),
        _rect(x + 335, y - 8, 24, 8, TRACK),
        _text(x + 365, y, "B 95% interval", anchor="start"),
    ]
