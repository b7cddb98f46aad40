"""The report as Rich tables on the terminal. Data text is always a `Text`, never markup."""

from __future__ import annotations

import sys

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from triage.core.checks.model import Level
from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import one_line
from triage.report import cells
from triage.report.columns import cells_of
from triage.report.model import Report
from triage.report.page import at_k, unfilled
from triage.report.sections.answers import ANSWER_HEAD, answer_change, answer_rows
from triage.report.sections.checks import check_rows
from triage.report.sections.cost import (
    COST_HEAD,
    COST_NOTE,
    LATENCY_HEAD,
    cost_checks,
    cost_recorded,
    cost_rows,
    latency_rows,
)
from triage.report.sections.flips import FLIP_TEXT, FlipLine, capped_flips, flip_columns
from triage.report.sections.gate import (
    MEASURE_GATE_HEAD,
    floor_cells,
    floor_head,
    measure_gate_cells,
    measure_gate_line,
    measure_verdict,
    nothing_evaluated,
)
from triage.report.sections.holdout import HOLDOUT_HEAD, holdout_line, holdout_rows
from triage.report.sections.labels import label_state_rows, labels_line
from triage.report.sections.measures import (
    compare_head,
    compare_notes,
    compare_overview_head,
    compare_overview_rows,
    compare_rows,
    compare_title,
)
from triage.report.sections.metrics import at_k_head, at_k_rows, at_k_title, metric_rows, metrics_note
from triage.report.sections.origins import (
    ORIGIN_HEAD,
    OVERLAP_HEAD,
    OVERLAP_NOTE,
    origin_rows,
    overlap_rows,
    overlap_unavailable,
    quote_line,
)
from triage.report.sections.paired import (
    flip_counts,
    mcnemar,
    paired_rows,
    unjudged_regressions,
    unjudged_why,
)
from triage.report.sections.ranks import (
    WTL_HEAD,
    capped_drops,
    drop_head,
    drop_row,
    drops_line,
    histogram_line,
    win_tie_loss_rows,
)
from triage.report.sections.slices import LEGEND, SLICES, decision_line
from triage.report.sections.tenants import tenant_columns, tenant_lines, tenant_summary

STYLE = {"error": "bold red", "warning": "dark_orange", "ok": "green"}


def plain_text(value: object, width: int = 80) -> Text:
    return Text(one_line("" if value is None else value, width))


def indented(value: str, width: int = 80) -> Text:
    """A row name; one indented by leading spaces is a sub-row naming a query (data text)."""
    body = value.lstrip(" ")
    return Text(value) if body == value else Text(value[: len(value) - len(body)]) + plain_text(body, width)


COMPACT_MESSAGE = 240  # characters of a check's message on the app's overview


def checks_table(r: Report, compact: bool = False) -> Table:
    """Every check, errors and warnings first; `compact` (the app's overview) folds the passing ones
    into one row of one line and caps each other message at `COMPACT_MESSAGE` characters, so the
    numbers below stay near (the report prints every message whole)."""
    rows = check_rows(r.checks, compact)
    t = Table(title="Checks", title_justify="left", expand=compact)
    if compact:  # the level and the code whole, the message in the width that is left
        t.add_column("level", no_wrap=True, width=7)
        code_width = min(26, max(len(code) for _, code, _ in rows))
        t.add_column("code", no_wrap=True, width=code_width, overflow="ellipsis")
        t.add_column("message", overflow="fold", ratio=1)
    else:
        t.add_column("level")
        t.add_column("code")
        t.add_column("message", overflow="fold")
    for level, code, message in rows:
        text = plain_text(message, COMPACT_MESSAGE if compact else 400)
        if compact and level == str(Level.OK):  # the passing checks' codes: one line
            text.no_wrap, text.overflow = True, "ellipsis"
        t.add_row(Text(level, STYLE[level]), Text(code), text)
    return t


def metrics_table(r: Report) -> Table:
    a, b = r.arms.a, r.arms.b
    t = Table(
        title=f"Metrics at k = {r.k} over {r.n_scored} scored queries",
        title_justify="left",
        caption=metrics_note(r),
        caption_justify="left",
    )
    t.add_column("metric")
    t.add_column(Text("A ") + plain_text(a.name, 30), justify="right")
    t.add_column(Text("B ") + plain_text(b.name, 30), justify="right")
    t.add_column("B − A", justify="right")
    for name, *figures in metric_rows(r):
        t.add_row(Text(name), *figures)
    return t


def compare_view(r: Report) -> Group | None:
    """Each named measure's paired tests: Δ, 95% interval, p, corrected p, MDE; and what the query
    set cannot see (None: no measure named)."""
    if not r.compare:
        return None
    t = Table(title=compare_title(r), title_justify="left")
    for i, name in enumerate(compare_head(r)):
        t.add_column(name, justify="left" if i == 0 else "right")
    for row in compare_rows(r):
        t.add_row(Text(row[0]), *row[1:])
    return Group(t, *(Text(line) for line in compare_notes(r)))


def compare_overview(r: Report) -> Table | None:
    """The app's overview: each named measure's A, B, Δ, interval, p and MDE in one compact table."""
    if not r.compare:
        return None
    first = next(iter(r.compare.values()))
    title = f"Paired tests per measure, n = {first.n} (p corr.: {first.test.value}, {first.correction.value})"
    t = Table(title=title, title_justify="left", padding=(0, 1), box=None)
    for i, name in enumerate(compare_overview_head()):
        t.add_column(name, justify="left" if i == 0 else "right")
    for row in compare_overview_rows(r):
        t.add_row(Text(row[0]), *row[1:])
    return t


def k_cells_table(r: Report) -> Table | None:
    """Each arm's metrics at every cut-off, and recall at its stored depth (several k only)."""
    rows = at_k_rows(r)
    if rows is None:
        return None
    t = Table(title=at_k_title(r), title_justify="left")
    for i, name in enumerate(at_k_head(r)):
        t.add_column(name, justify="left" if i < 2 else "right")
    shown = ""
    for side, (metric, *figures) in rows:
        name = r.arms.a.name if side == "a" else r.arms.b.name
        first = Text(f"{side.upper()} ") + plain_text(name, 30) if side != shown else Text("")
        shown = side
        t.add_row(first, Text(metric), *figures)
    return t


def paired_view(r: Report) -> Group:
    p = r.paired
    t = Table(title=f"Paired outcomes (n = {p.n})", title_justify="left")
    t.add_column("")
    t.add_column("B hit", justify="right")
    t.add_column("B miss", justify="right")
    (hit, both_hit, down), (miss, up, both_miss) = paired_rows(p)
    t.add_row(hit, both_hit, Text(down, "red"))
    t.add_row(miss, Text(up, "green"), both_miss)
    why = unjudged_why(r)
    lines = [Text(f"{mcnemar(p)}; {flip_counts(p)}"), Text(unjudged_regressions(r))]
    return Group(t, *lines, *([Text(why, "dim")] if why else []))


class Folded:
    """A table of a name column and figures, drawn whole where it fits; narrower, as several
    tables in turn, each with the name column and as many of the next columns as fit, so no
    figure is cut to `…` (the app's overview at 80 columns). `together`: runs of column indices
    kept in one table (A beside B); by default each column stands alone."""

    def __init__(
        self,
        title: str,
        head: list[str],
        rows: list[list[str]],
        together: list[list[int]] | None = None,
        name_width: int = 30,
    ) -> None:
        self.title, self.head, self.name_width = title, head, name_width
        self.together = together or [[i] for i in range(1, len(head))]
        self.rows = [[plain_text(row[0], name_width), *map(Text, row[1:])] for row in rows]

    def table(self, columns: list[int], title: str) -> Table:
        t = Table(title=title, title_justify="left")
        for i in columns:
            t.add_column(self.head[i], justify="left" if i == 0 else "right", no_wrap=i == 0)
        for row in self.rows:
            t.add_row(*(row[i] for i in columns))
        return t

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = [  # each column's natural width: its cells, its padding and its rule
            max(cell_len(self.head[i]), *(row[i].cell_len for row in self.rows)) + 3
            for i in range(len(self.head))
        ]
        if sum(widths) + 1 <= options.max_width:
            yield self.table(list(range(len(self.head))), self.title)
            return
        groups: list[list[int]] = []
        for run in self.together:
            wanted = widths[0] + sum(widths[j] for j in run) + 1
            if groups and sum(widths[j] for j in groups[-1]) + wanted <= options.max_width:
                groups[-1] += run
            else:
                groups.append(list(run))
        for n, group in enumerate(groups, 1):
            yield self.table([0, *group], f"{self.title} ({n} of {len(groups)})")


def origins_view(r: Report) -> Group | None:
    """The headline numbers per query origin beside the blend, and which figure to quote."""
    rows = origin_rows(r)
    if not rows:
        return None
    # n and the hit rates, then each measure's A and B, then the paired counts: each run whole
    runs = [[1, 2, 3, 4], [5, 6], [7, 8], [9, 10], [11, 12, 13, 14]]
    parts: list[RenderableType] = [Folded("By query origin", ORIGIN_HEAD, rows, runs)]
    if r.origin_quote is not None:
        parts.append(Text(quote_line(r.origin_quote), "bold"))
    return Group(*parts)


def overlap_view(r: Report) -> RenderableType | None:
    """The lexical overlap of the queries with their gold, when the report measured it."""
    o = r.overlap
    if o is None:
        return None
    if not o.available:
        return Text(overlap_unavailable(o), "dim")
    t = Table(title="Lexical overlap with the gold", title_justify="left", caption=OVERLAP_NOTE)
    for i, name in enumerate(OVERLAP_HEAD):
        t.add_column(name, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for name, *figures in overlap_rows(o):
        t.add_row(plain_text(name, 40), *figures)
    return t


def label_states_table(r: Report) -> Table | None:
    """Frozen labels beside amended labels, when amendments are in force."""
    rows = label_state_rows(r)
    if rows is None:
        return None
    t = Table(title=f"Frozen labels beside amended ({r.labels.state})", title_justify="left")
    t.add_column("")
    t.add_column("frozen", justify="right")
    t.add_column("amended", justify="right")
    for name, frozen, amended in rows:
        t.add_row(indented(name), frozen, amended)
    return t


def unfilled_line(r: Report, section: str) -> Text:
    """The one line a section shows when its inputs cannot fill it (`unfilled`)."""
    return Text(unfilled(r)[section].replace("`", ""), "dim")


def slices_view(r: Report) -> Group | Text:
    if not r.slices:
        return unfilled_line(r, "slices")
    parts: list[RenderableType] = []
    for key, rows in r.slices.items():
        part = r.partition[key]
        check = "✓" if part.ok else "✗ does not partition"
        t = Table(
            title=f"By {key}: n sums to {part.sum} of {part.scored} scored {check}",
            title_justify="left",
        )
        width = min(32, max(len(s.value) for s in rows))
        for c in SLICES:
            data = c.title == "value"
            t.add_column(
                c.title,
                justify="right" if c.right else "left",
                no_wrap=data,
                min_width=width if data else None,
            )
        for s in rows[: cells.SLICE_CAP]:
            value, *figures = cells_of(SLICES, s)  # the slice's value is data
            t.add_row(plain_text(value, 40), *figures)
        if len(rows) > cells.SLICE_CAP:
            t.caption = f"… {len(rows) - cells.SLICE_CAP} more (--format json lists all)"
        parts += [t, Text("")]
    return Group(*parts, Text(LEGEND, "dim"), Text(decision_line(r), "dim"))


TENANT_NO_WRAP = {"tenant", "plan", "Δ q", ""}  # columns never wrapped
TENANT_CUT = {"tenant": 40, "plan": 30}  # characters of a data cell


def tenants_view(r: Report) -> Group | Text:
    t = r.tenants
    if t is None:
        return unfilled_line(r, "tenants")
    table = Table(title=f"Tenants, {t.order.label}", title_justify="left")
    width = min(32, max(len(x.tenant) for x in t.rows))
    shown = tenant_columns(t)
    for c in shown:
        table.add_column(
            c.title,
            justify="right" if c.right else "left",
            no_wrap=c.title in TENANT_NO_WRAP,
            min_width=width if c.title == "tenant" else None,
        )
    for x in tenant_lines(t, cells.SLICE_CAP):
        style = "bold red" if x.i <= 3 and x.row.below(t.floor) else ("bold" if x.i <= 3 else "")
        drawn = (
            plain_text(v, TENANT_CUT[c.title]) if c.title in TENANT_CUT else v
            for c, v in zip(shown, cells_of(shown, x), strict=True)
        )
        table.add_row(*drawn, style=style)
    if len(t.rows) > cells.SLICE_CAP:
        table.caption = f"… {len(t.rows) - cells.SLICE_CAP} more tenants (--format json lists all)"
    return Group(Text(tenant_summary(t)), table)


def gate_view(r: Report) -> Group | None:
    g = r.gate
    if not g:
        return None
    failed = g.broken
    head = Text(
        f"Gate {g.path}: {len(failed)} of {len(g.floors)} floors broken by B",
        "bold red" if failed else "bold green",
    )
    empty = nothing_evaluated(g)
    if empty is not None:
        head = Text(f"Gate {g.path}: ", "bold red") + Text(one_line(empty, 400), "bold red")
    extra: list[RenderableType] = []
    if g.measures:
        m = Table(title=measure_gate_line(g), title_justify="left")
        for i, name in enumerate([*MEASURE_GATE_HEAD, ""]):
            m.add_column(name, justify="left" if i in (0, len(MEASURE_GATE_HEAD)) else "right")
        for x in g.measures:
            name, *figures = measure_gate_cells(x)
            verdict = Text(measure_verdict(x), "bold red" if not x.holds else "green")
            if x.blind and x.holds:
                verdict.stylize("yellow")
            m.add_row(plain_text(name, 60), *figures, verdict)
        extra = [m]
        if not g.floors:
            return Group(*([head] if empty is not None else []), *extra)
    t = Table(title_justify="left")
    columns = floor_head(g)
    for i, name in enumerate([*columns, ""]):
        t.add_column(name, justify="left" if i in (0, len(columns)) else "right")
    for f in failed + [f for f in g.floors if f.holds][: max(0, 25 - len(failed))]:
        name, *figures = floor_cells(f)
        verdict = Text("BELOW", "bold red") if not f.holds else Text("ok", "green")
        if f.noisy:
            verdict += Text(" · fires on noise", "yellow")
        t.add_row(plain_text(name, 60), *figures, verdict)
    return Group(head, t, *extra)


def holdout_view(r: Report) -> Group | None:
    """The blend beside the held-out queries alone, and what the held-out figure covers."""
    rows = holdout_rows(r)
    line = holdout_line(r)
    if rows is None or line is None:
        return None
    t = Table(title="Held-out documents beside the blend", title_justify="left")
    for i, name in enumerate(HOLDOUT_HEAD):
        t.add_column(name, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*row)
    return Group(t, plain_text(line, 600))


PIPED_WIDTH = 160  # characters per line when the output is not a terminal


def flips_view(r: Report) -> Group:
    shown, hidden = capped_flips(r.flips)
    # The text takes what width the other columns leave (one line, cut with an ellipsis).
    t = Table(title="Flips, hit→miss first", title_justify="left", expand=True, min_width=None)
    head = flip_columns(r)
    for c in head:
        if c.title == "text":
            t.add_column(c.title, ratio=1, no_wrap=True, overflow="ellipsis")
        else:
            t.add_column(c.title, justify="right" if c.right else "left", overflow="fold")
    width = {"query": 40, "text": FLIP_TEXT, "tenant": 24, "plan A": 16, "plan B": 16}
    for i, f in enumerate(shown, 1):
        drawn: list[RenderableType] = []
        for c, value in zip(head, cells_of(head, FlipLine(i, f, r.k)), strict=True):
            if c.title == "direction":
                drawn.append(Text(value, "red" if f.direction is Outcome.HIT_TO_MISS else "green"))
            else:
                drawn.append(plain_text(value, width.get(c.title, 80)))
        t.add_row(*drawn)
    parts: list[RenderableType] = [t]
    if hidden:
        parts.append(Text(f"… {hidden} more flips (--format json lists them all)"))
    if "text" in unfilled(r):
        parts.append(unfilled_line(r, "text"))
    return Group(*parts)


def ranks_view(r: Report) -> Group:
    """B's wins, ties and losses per query on mrr@k and ndcg@k, then the queries both arms hit
    whose gold B ranked lower (the first DROP_CAP; JSON lists all)."""
    x = r.ranks
    wtl = Table(title=f"Per query, B against A (n = {x.n})", title_justify="left")
    for i, name in enumerate(WTL_HEAD):
        wtl.add_column(name, justify="left" if i == 0 else "right")
    for metric, wins, ties, losses in win_tie_loss_rows(x, r.k):
        wtl.add_row(metric, Text(wins, "green"), ties, Text(losses, "red"))
    shown, hidden = capped_drops(x.drops)
    drops = Table()
    head = drop_head(r)
    for name in head:
        drops.add_column(
            name, justify="right" if name in ("#", "gold A → B", "drop") else "left", overflow="fold"
        )
    width = {"query": 40, "tenant": 24, "text": 40}
    for i, d in enumerate(shown, 1):
        row = drop_row(i, d, head)
        drops.add_row(
            *(
                Text(c, "red") if h == "drop" else plain_text(c, width[h]) if h in width else c
                for h, c in zip(head, row, strict=True)
            )
        )
    parts: list[RenderableType] = [wtl, Text(""), Text(drops_line(x, r.k), "bold")]
    parts += [drops] if shown else []
    if hidden:
        parts.append(Text(f"… and {hidden} more (--format json lists them all)"))
    parts.append(Text(histogram_line(x.histogram), "dim"))
    return Group(*parts)


def cost_table(r: Report) -> Table | None:
    """Each arm's cost, with where each figure came from."""
    c = r.cost
    if c is None:
        return None
    t = Table(title="What the change cost", title_justify="left", caption=COST_NOTE, caption_justify="left")
    for i, name in enumerate(COST_HEAD):
        t.add_column(name, justify="right" if 0 < i < 4 else "left", overflow="fold")
    for name, *figures, source_a, source_b in cost_rows(c, r.k):
        t.add_row(Text(name), *figures, plain_text(source_a, 80), plain_text(source_b, 80))
    return t


def cost_view(r: Report, slices: bool = True) -> Group | Text:
    """The cost table, its checks, and (`slices`) each slice's own latency percentiles; a line
    naming what would fill it when nothing is recorded."""
    t = cost_table(r)
    if t is None or r.cost is None or not cost_recorded(r.cost):
        return unfilled_line(r, "cost")
    parts: list[RenderableType] = [t]
    for c in cost_checks(r.checks):
        parts.append(Text(f"{c.level} {c.code}: ", STYLE[c.level]) + plain_text(c.message, 400))
    rows = latency_rows(r.cost) if slices else []
    if rows:
        lat = Table(title="Latency by slice (ms; each slice's own percentiles)", title_justify="left")
        lat.add_column("key")
        for i, name in enumerate(LATENCY_HEAD):
            lat.add_column(name, justify="left" if i == 0 else "right")
        shown = ""
        for key, (value, *figures) in rows:
            lat.add_row(Text(key if key != shown else ""), plain_text(value, 40), *figures)
            shown = key
        parts += [Text(""), lat]
    return Group(*parts)


def answers_view(r: Report) -> Group | Text:
    """Evidence × answer per arm, and answer accuracy beside the hit rate."""
    x = r.answers
    if x is None:
        return unfilled_line(r, "answers")
    parts: list[RenderableType] = []
    for side, c in x.cells.items():
        arm = r.arms.a if side == "a" else r.arms.b
        if c is None:
            parts.append(
                Text(f"{side.upper()} ") + plain_text(arm.name, 30) + Text(": no answer_correct column")
            )
            continue
        t = Table(
            title=Text(f"Evidence × answer, {side.upper()} ") + plain_text(arm.name, 30), title_justify="left"
        )
        for i, name in enumerate(ANSWER_HEAD):
            t.add_column(name, justify="left" if i == 0 else "right")
        (hit, working, assembly), (miss, lucky, retrieval) = answer_rows(c)
        t.add_row(hit, Text(working, "green"), Text(assembly, "dark_orange"))
        t.add_row(miss, lucky, Text(retrieval, "red"))
        parts.append(t)
    return Group(*parts, Text(answer_change(x)))


def title(r: Report) -> Text:
    a, b = r.arms.a, r.arms.b
    head = Text("triage report: ", "bold") + plain_text(a.name, 40) + Text(" → ") + plain_text(b.name, 40)
    return head + Text(" " + at_k(r))


def summary(r: Report) -> Text:
    """The label state and the query counts."""
    return Text(
        f"labels: {labels_line(r)}  ·  queries {r.n_queries}, scored {r.n_scored}, "
        f"{r.not_scored}, missing from A {len(r.missing.a)}, "
        f"from B {len(r.missing.b)}"
    )


class _PipedConsole(Console):
    """A console whose reader may stop early (`triage report | head`): rich's own answer is exit 1;
    this raises `BrokenPipeError`, which the CLI turns into exit 141 as for every other format."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def render_terminal(r: Report, console: Console | None = None) -> None:
    if console is None:
        # Piped or in CI there is no terminal width: use one that keeps ids whole and gives the
        # flips table (eleven columns with the query's text) room.
        console = _PipedConsole(highlight=False, width=None if sys.stdout.isatty() else PIPED_WIDTH)
    console.print(title(r))
    console.print(summary(r))
    parts = (
        gate_view(r),
        checks_table(r),
        metrics_table(r),
        compare_view(r),
        k_cells_table(r),
        paired_view(r),
        holdout_view(r),
        origins_view(r),
        overlap_view(r),
        label_states_table(r),
        answers_view(r),
        flips_view(r),
        ranks_view(r),
        tenants_view(r),
        slices_view(r),
        cost_view(r),
    )
    for part in parts:
        if part is not None:
            console.print()
            console.print(part)
