"""The report as Rich tables on the terminal. Data text is always a `Text`, never markup."""

from __future__ import annotations

import sys

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from triage.core.text import one_line
from triage.report import fmt

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
        t.add_row(f"{key}@{k}", fmt.rate(a[key]), fmt.rate(b[key]), fmt.delta(a[key], b[key]))
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
        checks_table(d),
        metrics_table(d),
        k_cells_table(d),
        paired_view(d),
        label_states_table(d),
        flips_view(d),
    )
    for part in parts:
        if part is not None:
            console.print()
            console.print(part)
