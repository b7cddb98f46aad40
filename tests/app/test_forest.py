"""The overview's forest plots (triage/ui/widgets/forest.py): each figure's 95% interval drawn to
scale on a shared axis, toned by where it sits against 0, from the report model's numbers."""

from __future__ import annotations

import math

import pytest
from textual.content import Content

import triage
from triage.report import cells
from triage.ui.screens.overview import OverviewScreen
from triage.ui.widgets import forest
from triage.ui.widgets.forest import ForestRow, Tone

from app_helpers import wait_loaded


def lines(c: Content) -> list[str]:
    return c.plain.split("\n")


def style_at(c: Content, line_no: int, column: int) -> str:
    """The style of the cell at (`line_no`, `column`) of `c`'s plain text: the innermost span's."""
    offset = sum(len(x) + 1 for x in lines(c)[:line_no]) + column
    styles = [str(s.style) for s in c.spans if s.start <= offset < s.end]
    return styles[-1] if styles else ""


def delta_panel(rows: list[ForestRow], width: int) -> Content:
    return forest.panel(("Δ", ""), rows, width, zero=True, figure=cells.signed)


def test_the_point_and_the_ends_land_on_their_columns() -> None:
    rows = [ForestRow("a", 0.0, -1.0, 1.0), ForestRow("b", 0.5, 0.25, 0.75)]
    width = 60
    out = lines(delta_panel(rows, width))
    start = len("a +0.000 ")  # label, figure, a space each
    cols = width - start
    at = {x: start + round((x + 1) / 2 * (cols - 1)) for x in (-1.0, 0.0, 0.25, 0.5, 0.75, 1.0)}
    a, b, ticks = out[1], out[2], out[3]
    assert a[at[-1.0]] == "├" and a[at[1.0]] == "┤" and a[at[0.0]] == "●"
    assert b[at[0.25]] == "├" and b[at[0.5]] == "●" and b[at[0.75]] == "┤"
    assert b[at[0.0]] == "│" and b.count("●") == 1  # the zero line outside the interval
    assert ticks[at[0.0]] == "0" and set(b[start : at[0.25]]) == {" ", "│"}
    assert b[: start - 1] == "b +0.500"


def test_an_interval_crossing_zero_is_muted_and_crossed() -> None:
    rows = [
        ForestRow("up", 0.2, 0.1, 0.3),
        ForestRow("down", -0.2, -0.3, -0.1),
        ForestRow("both", 0.05, -0.1, 0.2),
    ]
    c = delta_panel(rows, 70)
    out = lines(c)
    point = [x.index("●") for x in out[1:4]]
    assert [style_at(c, i + 1, p) for i, p in enumerate(point)] == [
        Tone.ABOVE.value,
        Tone.BELOW.value,
        Tone.SPANS.value,
    ]
    zero = out[4].index(" 0 ") + 1  # the axis' 0 sits under the zero line
    assert out[1][zero] == "│" and out[2][zero] == "│" and out[3][zero] == "┼"
    assert Tone.of(0.0, 0.1) is Tone.SPANS and Tone.of(-0.1, -0.0001) is Tone.BELOW


@pytest.mark.parametrize("low", [None, math.nan])
def test_a_missing_interval_shows_its_reason_instead_of_a_bar(low: float | None) -> None:
    rows = [
        ForestRow("P@5", 0.0, low, low, "no interval: B = A on every query"),
        ForestRow("AP", 0.1, 0.05, 0.15),
    ]
    out = lines(delta_panel(rows, 80))
    assert "no interval: B = A on every query" in out[1] and "●" not in out[1] and "├" not in out[1]
    assert "●" in out[2] and len(out) == 4  # the other row still drawn, on an axis
    alone = lines(delta_panel(rows[:1], 80))
    assert len(alone) == 2 and "no interval" in alone[1]  # nothing drawn: no axis either


@pytest.mark.parametrize("width", [40, 50, 64, 76, 80, 100, 120, 140])
def test_every_width_fits_and_keeps_the_order(width: int) -> None:
    report = triage.open(measures="nDCG@10,AP,R@100").report()
    out = lines(forest.plots(report, width))
    assert max(len(x) for x in out) <= width
    deltas = forest.delta_rows(report)
    bars = [x for x in out if x.count("●") == 1]
    assert len(bars) == len(deltas) + len(forest.arm_rows(report))
    assert "●" in "".join(out)
    drawn = bars[: len(deltas)]
    order = sorted(range(len(deltas)), key=lambda i: deltas[i].point or 0.0)
    columns = [drawn[i].index("●") for i in order]
    assert columns == sorted(columns)  # a larger Δ is never drawn left of a smaller one
    # the bar area: what is free of the label and the figure, at most MAX_BAR; 0 at its left end here
    free = width - len("nDCG@10 +0.144 ")
    assert len(drawn[0]) - drawn[0].index("│") == min(free, forest.MAX_BAR)


def test_the_ticks_sit_on_their_values() -> None:
    scale = forest.Scale(-0.03, 0.21, 61)
    ticks = forest.axis(scale, signed=True)
    found = [(ticks.index(t), t) for t in ticks.split()]
    assert ("0", scale.col(0.0)) in [(t, i) for i, t in found]
    for start, text in found:
        value = float(text)
        centre = start + (len(text) - 1) // 2
        assert abs(centre - scale.col(value)) <= 1, (text, start)
    assert len(found) >= 3


def test_the_plots_draw_the_reports_own_numbers() -> None:
    report = triage.open(measures="nDCG@10,AP").report()
    for row, (name, c) in zip(forest.delta_rows(report), report.compare.items(), strict=True):
        assert (row.label, row.point, (row.low, row.high)) == (name, c.delta, c.ci95)
    arms = forest.arm_rows(report)
    a, b = report.arms.a, report.arms.b
    assert [(r.point, r.low, r.high) for r in arms[:2]] == [
        (a.hit_rate, a.wilson_low, a.wilson_high),
        (b.hit_rate, b.wilson_low, b.wilson_high),
    ]
    assert report.answers is not None and arms[2].low == report.answers.wilson_low.a
    assert not forest.delta_rows(triage.open().report())  # no measure named: the arm panel only


def test_the_overviews_help_explains_the_plots() -> None:
    topic = OverviewScreen.TOPIC
    for term in ("Δ plot", "├─●─┤", "│ 0", "green / red / grey", "arm plot"):
        assert topic.covers(term) and topic.explain(term).endswith(".")


def shown(widget) -> str:  # type: ignore[no-untyped-def]
    strips = widget.render_lines(widget.region.reset_offset)
    return "\n".join("".join(s.text for s in strip) for strip in strips)


@pytest.mark.parametrize("measures", ["nDCG@10,AP,R@100", None])
async def test_the_overview_draws_the_plots_on_its_first_screen(measures: str | None) -> None:
    opened = triage.open(measures=measures) if measures else triage.open()
    app = opened.app()
    report = opened.report()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        screen = app.screen
        plot = screen.query_one("#forest")
        above = screen.query_one("#measures" if measures else "#headline")
        assert plot.display and above.region.bottom < plot.region.y
        assert plot.region.bottom <= 23 and plot.region.right <= 80  # whole, above the keys
        text = shown(plot)
        assert text.count("●") == len(report.compare) + 4  # each measure, and each arm's two rates
        assert ("Δ B − A" in text) == bool(measures)
        for name, c in report.compare.items():
            assert f"{name} " in text and cells.signed(c.delta) in text
        assert f"hit rate@{report.k} A" in text and cells.rate(report.arms.b.hit_rate) in text
    async with opened.app().run_test(size=(140, 45)) as pilot:
        await wait_loaded(pilot)
        wide = shown(pilot.app.screen.query_one("#forest"))
        assert wide.count("●") == text.count("●") and max(map(len, wide.splitlines())) <= 140
