"""`triage sample LOG --corpus C --out Q`: the queries worth running, from a query log (the rule:
core/truth/sampling.py; the files: workspace/sampling.py). Prints the allocation, shape × band,
filled/requested, and what the log could not fill; the same is written beside Q as JSON. The
arguments are parsed in `cli.main` (`sample_parser`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from triage.cli.exits import Exit
from triage.core.text.sanitize import counted, visible
from triage.core.truth.sampling import BANDS, UNFILTERED
from triage.workspace.sampling import sample_query_log

CELL = max(len(b) for b in BANDS) + 2  # a band's column: its name or "100/100", and room
SHAPE_CAP = 40  # a shape's name is cut past this many characters


def sample_log(args: argparse.Namespace) -> int:
    """Exit 0 (written, filled or not); InputError (exit 2) for a bad input or a refused Q."""
    control = args.per_shape if args.control is None else args.control
    made = sample_query_log(
        Path(args.log),
        Path(args.corpus),
        Path(args.out),
        args.per_shape,
        control,
        args.seed,
        args.tenant_column,
        args.force,
    )
    print("\n".join(allocation_lines(made.allocation)))
    shown = visible(f"wrote {made.out} ({made.allocation['queries']['filled']:,} queries)", newlines=False)
    print(f"{shown} and {visible(made.allocation_file.name, newlines=False)}")
    return Exit.OK


def allocation_lines(report: dict) -> list[str]:
    """The allocation as text: a summary line, shape × band table, what the log could not fill."""
    log, corpus, total = report["log"], report["corpus"], report["queries"]
    held = ", ".join(
        (
            counted(log["rows"], "row"),
            counted(log["distinct"], "distinct query", "distinct queries"),
            counted(log["filters"], "distinct filter"),
        )
    )
    head = (
        f"sampled {total['filled']:,} of {total['requested']:,} queries requested, seed {report['seed']}: "
        f"{log['path']} ({held}) against {corpus['path']} ({counted(corpus['rows'], 'row')})"
    )
    out = [visible(head, newlines=False, cap=None), ""]
    names = [_shape(s["shape"]) for s in report["shapes"]]
    width = max([len("shape"), *map(len, names)]) + 2
    out.append(("shape".ljust(width) + "".join(b.ljust(CELL) for b in BANDS) + "total").rstrip())
    cells = {(s["shape"], s["band"]): f"{s['filled']}/{s['requested']}" for s in report["strata"]}
    for name, s in zip(names, report["shapes"], strict=True):
        row = "".join(cells.get((s["shape"], b), "").ljust(CELL) for b in BANDS)
        out.append(name.ljust(width) + row + f"{s['filled']}/{s['requested']}")
    out += [
        "",
        "filled/requested. A shape's quota is split equally over its bands; the remainder, and what a",
        "band cannot fill, go to its lowest bands first (0 eligible takes no more than its share).",
    ]
    if report["unfilled"]:
        out.append("not filled (the log holds too few):")
        for s in report["unfilled"]:
            where = _shape(s["shape"]) + ("" if s["band"] == UNFILTERED else f", {s['band']}")
            held = "none" if s["available"] == 0 else f"{s['available']:,}"
            out.append(f"  {where}: {s['filled']:,} of {s['requested']:,} ({held} in the log)")
    return out


def _shape(name: str) -> str:
    return visible(name + (" (control)" if name == UNFILTERED else ""), cap=SHAPE_CAP, newlines=False)
