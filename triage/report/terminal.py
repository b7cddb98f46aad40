"""The report as Rich tables on the terminal. Data text is always a `Text`, never markup."""

from __future__ import annotations

import sys

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from triage.core.sanitize import one_line
from triage.report import cells as fmt

STYLE = {"error": "bold red", "warning": "dark_orange", "ok": "green"}


def plain(value: object, width: int = 80) -> Text:
    return Text(one_line("" if value is None else value, width))


def checks_table(d: dict, compact: bool = False) -> Table:
    """Every check, errors and warnings first; `compact` folds the passing ones into one row."""
    t = Table(title="Checks", title_justify="left", expand=False)
    t.add_column("level")
    t.add_column("code")
    t.add_column("message", overflow="fold")
    passing = [c for c in d["checks"] if c["level"] == "ok"]
    for c in d["checks"]:
        if not (compact and c["level"] == "ok"):
            t.add_row(Text(c["level"], STYLE[c["level"]]), Text(c["code"]), plain(c["message"], 400))
    if compact and passing:
        codes = ", ".join(dict.fromkeys(c["code"] for c in passing))
        t.add_row(Text("ok", STYLE["ok"]), Text(f"{len(passing)} checks"), plain(codes, 400))
    return t


def metrics_table(d: dict) -> Table:
    a, b, k = d["arms"]["a"], d["arms"]["b"], d["k"]
    t = Table(title=f"Metrics at k = {k} over {d['n_scored']} scored queries", title_justify="left")
    t.add_column("metric")
    t.add_column(Text("A ") + plain(a["name"], 30), justify="right")
    t.add_column(Text("B ") + plain(b["name"], 30), justify="right")
    t.add_column("B − A", justify="right")
    for key in ("hit_rate", "recall", "mrr", "ndcg"):
        t.add_row(Text(f"{key}@{k}"), fmt.rate(a[key]), fmt.rate(b[key]), fmt.delta(a[key], b[key]))
    t.add_row("noise band (1 s.e.)", fmt.band(a["noise_band"]), fmt.band(b["noise_band"]), "")
    return t


def k_cells_table(d: dict) -> Table | None:
    if not d["k_cells"]:
        return None
    ks = list(d["k_cells"]["a"])
    t = Table(title="Each arm at each k (hit rate)", title_justify="left")
    t.add_column("arm")
    for x in ks:
        t.add_column(f"k = {x}", justify="right")
    for side in ("a", "b"):
        t.add_row(
            Text(f"{side.upper()} ") + plain(d["arms"][side]["name"], 30),
            *[
                fmt.rate(d["k_cells"][side][x]) if d["k_cells"][side][x] is not None else "depth too short"
                for x in ks
            ],
        )
    return t


def paired_view(d: dict) -> Group:
    p = d["paired"]
    t = Table(title=f"Paired outcomes (n = {p['n']})", title_justify="left")
    t.add_column("")
    t.add_column("B hit", justify="right")
    t.add_column("B miss", justify="right")
    t.add_row("A hit", str(p["both_hit"]), Text(str(p["a_hit_b_miss"]), "red"))
    t.add_row("A miss", Text(str(p["a_miss_b_hit"]), "green"), str(p["both_miss"]))
    note = Text(
        f"McNemar exact p = {fmt.p_value(p['mcnemar_p'])}; "
        f"{p['a_hit_b_miss']} hit→miss, {p['a_miss_b_hit']} miss→hit"
    )
    return Group(t, note)


def label_states_table(d: dict) -> Table | None:
    """Frozen labels beside amended labels, when amendments are in force."""
    rows = fmt.label_state_rows(d)
    if rows is None:
        return None
    t = Table(title=f"Frozen labels beside amended ({d['labels']['state']})", title_justify="left")
    t.add_column("")
    t.add_column("frozen", justify="right")
    t.add_column("amended", justify="right")
    for name, frozen, amended in rows:
        t.add_row(name, frozen, amended)
    return t


def slices_view(d: dict) -> Group | None:
    if not d["slices"]:
        return None
    parts: list = []
    for key, rows in d["slices"].items():
        part = d["partition"][key]
        check = "✓" if part["ok"] else "✗ does not partition"
        t = Table(
            title=f"By {key}: n sums to {part['sum']} of {part['scored']} scored {check}",
            title_justify="left",
        )
        width = min(32, max(len(r["value"]) for r in rows))
        for i, name in enumerate(fmt.SLICE_HEAD):
            t.add_column(
                name,
                justify="left" if i == 0 else "right",
                no_wrap=i == 0,
                min_width=width if i == 0 else None,
            )
        for s in rows[: fmt.SLICE_CAP]:
            cells = fmt.slice_cells(s)
            t.add_row(plain(cells[0], 40), *cells[1:])
        if len(rows) > fmt.SLICE_CAP:
            t.caption = f"… {len(rows) - fmt.SLICE_CAP} more (--format json lists all)"
        parts += [t, Text("")]
    return Group(*parts, Text(fmt.LEGEND, "dim"))


def tenants_view(d: dict) -> Group | None:
    t = d["tenants"]
    if t is None:
        return None
    table = Table(title="Tenants, worst first by B's hit rate", title_justify="left")
    width = min(32, max(len(r["tenant"]) for r in t["rows"]))
    for i, name in enumerate(fmt.TENANT_HEAD):
        table.add_column(
            name,
            justify="left" if i in (1, 9, 11) else "right",
            no_wrap=i in (1, 9, 11),
            min_width=width if i == 1 else None,
        )
    for i, row in enumerate(t["rows"][: fmt.SLICE_CAP], 1):
        cells = fmt.tenant_cells(i, row, t["floor"])
        style = (
            "bold red"
            if i <= 3 and row["hit_rate_b"] is not None and row["hit_rate_b"] < t["floor"]
            else ("bold" if i <= 3 else "")
        )
        table.add_row(
            cells[0], plain(cells[1], 40), *cells[2:9], plain(cells[9], 30), *cells[10:], style=style
        )
    if len(t["rows"]) > fmt.SLICE_CAP:
        table.caption = f"… {len(t['rows']) - fmt.SLICE_CAP} more tenants (--format json lists all)"
    return Group(Text(fmt.tenant_summary(t)), table)


def gate_view(d: dict) -> Group | None:
    g = d.get("gate")
    if not g:
        return None
    failed = [f for f in g["floors"] if not f["holds"]]
    head = Text(
        f"Gate {g['path']}: {len(failed)} of {len(g['floors'])} floors broken by B",
        "bold red" if failed else "bold green",
    )
    t = Table(title_justify="left")
    for name, just in (
        ("floor", "left"),
        ("B hit rate", "right"),
        ("minimum", "right"),
        ("n", "right"),
        ("noise band", "right"),
        ("", "left"),
    ):
        t.add_column(name, justify=just)  # type: ignore[arg-type]
    for f in failed + [f for f in g["floors"] if f["holds"]][: max(0, 25 - len(failed))]:
        t.add_row(
            plain(f["name"], 60),
            fmt.rate(f["hit_rate"]),
            f"{f['floor']:.2f}",
            str(f["n"]),
            fmt.band(f["noise_band"]),
            Text("BELOW", "bold red") if not f["holds"] else Text("ok", "green"),
        )
    return Group(head, t)


def flips_view(d: dict) -> Group:
    k = d["k"]
    shown, hidden = fmt.capped_flips(d["flips"])
    t = Table(title="Flips, hit→miss first", title_justify="left")
    for name, just in (
        ("#", "right"),
        ("query", "left"),
        ("direction", "left"),
        ("tenant", "left"),
        ("gold A", "right"),
        ("gold B", "right"),
        ("plan A", "left"),
        ("plan B", "left"),
    ):
        t.add_column(name, justify=just, overflow="fold")  # type: ignore[arg-type]
    for i, f in enumerate(shown, 1):
        style = "red" if f["direction"] == "hit->miss" else "green"
        t.add_row(
            str(i),
            plain(f["query_id"], 40),
            Text(f["direction"].replace("->", "→"), style),
            plain(f["tenant"], 24),
            fmt.rank(f["gold_rank_a"], k),
            fmt.rank(f["gold_rank_b"], k),
            plain(f["plan_a"], 16),
            plain(f["plan_b"], 16),
        )
    parts: list = [t]
    if hidden:
        parts.append(Text(f"… {hidden} more flips (--format json lists them all)"))
    return Group(*parts)


def title(d: dict) -> Text:
    a, b = d["arms"]["a"], d["arms"]["b"]
    head = Text("triage report: ", "bold") + plain(a["name"], 40) + Text(" → ") + plain(b["name"], 40)
    return head + Text(f" at k = {d['k']}")


def summary(d: dict) -> Text:
    """The label state and the query counts."""
    return Text(
        f"labels: {d['labels']['state']}  ·  queries {d['n_queries']}, scored {d['n_scored']}, "
        f"unlabelled {d['n_unlabelled']}, missing from A {len(d['missing']['a'])}, "
        f"from B {len(d['missing']['b'])}"
    )


def render(d: dict, console: Console | None = None) -> None:
    if console is None:
        # Piped or in CI there is no terminal width: use one that keeps ids whole.
        console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    console.print(title(d))
    console.print(summary(d))
    parts = (
        gate_view(d),
        checks_table(d),
        metrics_table(d),
        k_cells_table(d),
        paired_view(d),
        label_states_table(d),
        flips_view(d),
        tenants_view(d),
        slices_view(d),
    )
    for part in parts:
        if part is not None:
            console.print()
            console.print(part)
