"""Number formats shared by the text and Markdown reports (and the UI)."""

from __future__ import annotations


def rate(x: float | None) -> str:
    """A mean in [0, 1] to three decimals: enough to tell 0.620 from 0.625 at n = 200."""
    return "–" if x is None else f"{x:.3f}"


def p_value(p: float | None) -> str:
    if p is None:
        return "–"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def band(x: float | None) -> str:
    return "–" if x is None else f"±{x:.3f}"


def rank(r: int | None, k: int) -> str:
    """A gold rank with its side of the cut-off: "3", "12 (>k)", or "absent"."""
    if r is None:
        return "absent"
    return f"{r}" if r <= k else f"{r} (>k)"


def delta(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{b - a:+.3f}"


FLIP_CAP = 25  # flips listed per direction in text and Markdown (JSON lists all)


def capped_flips(flips: list[dict]) -> tuple[list[dict], int]:
    """The first FLIP_CAP flips of each direction (order kept) and how many were left out."""
    seen: dict[str, int] = {}
    shown = []
    for f in flips:
        seen[f["direction"]] = seen.get(f["direction"], 0) + 1
        if seen[f["direction"]] <= FLIP_CAP:
            shown.append(f)
    return shown, len(flips) - len(shown)


def label_state_rows(d: dict) -> list[tuple[str, str, str]] | None:
    """(what, on frozen labels, on amended labels) rows, or None when no amendment is in force."""
    if not d["labels"]["applied"] or not d["labels"]["in_force"]:
        return None
    fa, fb, fp = d["frozen"]["arms"]["a"], d["frozen"]["arms"]["b"], d["frozen"]["paired"]
    a, b, p = d["arms"]["a"], d["arms"]["b"], d["paired"]
    rows = [
        ("hit_rate A", rate(fa["hit_rate"]), rate(a["hit_rate"])),
        ("hit_rate B", rate(fb["hit_rate"]), rate(b["hit_rate"])),
    ]
    for key, name in (
        ("both_hit", "both hit"),
        ("both_miss", "both miss"),
        ("a_miss_b_hit", "miss→hit"),
        ("a_hit_b_miss", "hit→miss"),
    ):
        rows.append((name, str(fp[key]), str(p[key])))
    rows.append(("McNemar p", p_value(fp["mcnemar_p"]), p_value(p["mcnemar_p"])))
    by = d["labels"]["by_arm"]
    rows.append(("amendments from A / B / no evidence", "", f"{by['a']} / {by['b']} / {by['none']}"))
    for c in d["frozen"]["changed"][:FLIP_CAP]:
        rows.append((f"  {c['query_id']}", c["frozen"], c["amended"]))
    return rows


SLICE_CAP = 25  # slices listed per key in text and Markdown (JSON lists all)
SLICE_HEAD = ["value", "n", "hit A", "hit B", "±B", "B−A", "rec A", "rec B", "h→m", "m→h", "short", "elig=0"]
TENANT_HEAD = ["#", "tenant", "n", "hit A", "hit B", "B−A", "±B", "h→m", "m→h", "plan", "sel.", ""]
LEGEND = (
    "±B: B's noise band; h→m, m→h: flips each way; short: lists shorter than k, A/B; elig=0: filter "
    "matched nothing (in n, not in the rates); sel.: median selectivity; rec: recall"
)


def slice_cells(s: dict) -> list[str]:
    a, b = s["a"], s["b"]
    zero = a["n_eligible_zero"] + b["n_eligible_zero"]
    return [
        s["value"],
        str(s["n"]),
        rate(a["hit_rate"]),
        rate(b["hit_rate"]),
        band(b["noise_band"]),
        delta(a["hit_rate"], b["hit_rate"]),
        rate(a["recall"]),
        rate(b["recall"]),
        str(s["hit_to_miss"]),
        str(s["miss_to_hit"]),
        f"{a['short_lists']}/{b['short_lists']}",
        str(zero) if zero else "",
    ]


def tenant_cells(i: int, t: dict, floor: float) -> list[str]:
    share = f"{t['plan']} ({t['plan_share']:.0%})" if t["plan"] else "–"
    sel = "–" if t["median_selectivity"] is None else f"{t['median_selectivity']:.2%}"
    marks = []
    if t["hit_rate_b"] is not None and t["hit_rate_b"] < floor:
        marks.append("< floor")
    if t["few"]:
        marks.append("few")
    return [
        str(i),
        t["tenant"],
        str(t["n"]),
        rate(t["hit_rate_a"]),
        rate(t["hit_rate_b"]),
        delta(t["hit_rate_a"], t["hit_rate_b"]),
        band(t["noise_band_b"]),
        str(t["hit_to_miss"]),
        str(t["miss_to_hit"]),
        share,
        sel,
        ", ".join(marks),
    ]


def tenant_summary(t: dict) -> str:
    below = t["below_floor"]
    return (
        f"floor {t['floor']:.2f}: {below['a']} tenants below it in A, {below['b']} in B; "
        f"5th-percentile tenant hit rate A {rate(t['p5']['a'])}, B {rate(t['p5']['b'])}; "
        f"{len(t['rows'])} tenants, worst first by B"
    )
