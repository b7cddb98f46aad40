"""The report as Markdown, for pasting into a review. Data text is escaped for table cells."""

from __future__ import annotations

from triage.core.sanitize import one_line
from triage.report import cells as fmt

LEVEL = {"error": "❌ error", "warning": "⚠️ warning", "ok": "ok"}


def cell(value: object) -> str:
    """Data as one table cell: control characters visible, pipes and markup characters escaped."""
    text = one_line("" if value is None else value, 200)
    for ch in "\\|`*_[]<>":
        text = text.replace(ch, "\\" + ch)
    return text


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out + [""]


def render(d: dict) -> str:
    a, b, p, k = d["arms"]["a"], d["arms"]["b"], d["paired"], d["k"]
    out = [f"# triage report: {cell(a['name'])} → {cell(b['name'])} at k = {k}", ""]
    g = d.get("gate")
    if g:
        failed = [f for f in g["floors"] if not f["holds"]]
        out += [f"**Gate**: {len(failed)} of {len(g['floors'])} floors broken by B.", ""]
        if failed:
            out += _table(
                ["floor", "B hit rate", "minimum", "n", "noise band"],
                [
                    [
                        cell(f["name"]),
                        fmt.rate(f["hit_rate"]),
                        f"{f['floor']:.2f}",
                        str(f["n"]),
                        fmt.band(f["noise_band"]),
                    ]
                    for f in failed
                ],
            )
    out.append(
        f"Labels: {d['labels']['state']}. Queries: {d['n_queries']}, scored {d['n_scored']}, "
        f"unlabelled {d['n_unlabelled']}; missing from A {len(d['missing']['a'])}, "
        f"from B {len(d['missing']['b'])}."
    )
    out.append("")
    out.append("## Checks")
    out.append("")
    out += _table(
        ["level", "code", "message"],
        [[LEVEL[c["level"]], f"`{c['code']}`", cell(c["message"])] for c in d["checks"]],
    )
    out.append("## Metrics")
    out.append("")
    rows = []
    for key in ("hit_rate", "recall", "mrr", "ndcg"):
        rows.append([f"{key}@{k}", fmt.rate(a[key]), fmt.rate(b[key]), fmt.delta(a[key], b[key])])
    rows.append(["noise band (1 s.e.)", fmt.band(a["noise_band"]), fmt.band(b["noise_band"]), ""])
    out += _table(["metric", f"A {cell(a['name'])}", f"B {cell(b['name'])}", "B − A"], rows)
    if d["k_cells"]:
        ks = list(d["k_cells"]["a"])
        out += _table(
            ["arm", *[f"hit_rate@{x}" for x in ks]],
            [
                [
                    f"{side.upper()} {cell(d['arms'][side]['name'])}",
                    *[fmt.rate(d["k_cells"][side][x]) for x in ks],
                ]
                for side in ("a", "b")
            ],
        )
    out.append("## Paired outcomes")
    out.append("")
    out += _table(
        ["", "B hit", "B miss"],
        [
            ["A hit", str(p["both_hit"]), str(p["a_hit_b_miss"])],
            ["A miss", str(p["a_miss_b_hit"]), str(p["both_miss"])],
        ],
    )
    out.append(
        f"n = {p['n']}; McNemar exact p = {fmt.p_value(p['mcnemar_p'])}; "
        f"flips: {p['a_hit_b_miss']} hit→miss, {p['a_miss_b_hit']} miss→hit."
    )
    out.append("")
    states = fmt.label_state_rows(d)
    if states:
        out.append(f"## Frozen labels beside amended ({cell(d['labels']['state'])})")
        out.append("")
        out += _table(["", "frozen", "amended"], [list(r) for r in states])
    shown, hidden = fmt.capped_flips(d["flips"])
    out.append("## Flips (hit→miss first)")
    out.append("")
    out += _table(
        ["#", "query", "direction", "tenant", "gold rank A", "gold rank B", "plan A", "plan B"],
        [
            [
                str(i),
                cell(f["query_id"]),
                f["direction"].replace("->", "→"),
                cell(f["tenant"]),
                fmt.rank(f["gold_rank_a"], k),
                fmt.rank(f["gold_rank_b"], k),
                cell(f["plan_a"]),
                cell(f["plan_b"]),
            ]
            for i, f in enumerate(shown, 1)
        ],
    )
    if hidden:
        out += [f"… {hidden} more flips (`--format json` lists them all).", ""]
    t = d["tenants"]
    if t is not None:
        out += ["## Tenants, worst first by B", "", cell(fmt.tenant_summary(t)), ""]
        out += _table(
            fmt.TENANT_HEAD,
            [
                [cell(c) for c in fmt.tenant_cells(i, r, t["floor"])]
                for i, r in enumerate(t["rows"][: fmt.SLICE_CAP], 1)
            ],
        )
    for key, rows in d["slices"].items():
        part = d["partition"][key]
        out += [
            f"## By {key}",
            "",
            f"n sums to {part['sum']} of {part['scored']} scored"
            + ("." if part["ok"] else ": these slices do not partition the scored queries."),
            "",
        ]
        out += _table(fmt.SLICE_HEAD, [[cell(c) for c in fmt.slice_cells(s)] for s in rows[: fmt.SLICE_CAP]])
    if d["slices"] or t is not None:
        out += [cell(fmt.LEGEND), ""]
    return "\n".join(out)
