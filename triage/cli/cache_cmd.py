"""`triage cache list | prune`: the corpus caches and truth folders triage keeps in the user cache
folder, and their removal (the rules: `workspace.cache`). Paths pass through `printable`: a corpus
path cannot carry an escape sequence to the terminal, and a line break in one is shown, not taken."""

from __future__ import annotations

import argparse
import sys

from triage.cli.exits import Exit
from triage.core.text.sanitize import counted, visible
from triage.workspace import cache


def byte_size(n: int) -> str:
    """Bytes as people read a folder's size: 912.3 MB, 1.8 GB (powers of 1,000)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= 1000 and round(n / scale, 1) >= 1:  # 999,999 B: 1.0 MB, not 1,000.0 kB
            return f"{n / scale:,.1f} {unit}"
    return f"{n} B"


def caches(found: list[cache.CacheFolder]) -> str:
    """ "3 corpus caches", and the truth cache's folders when there are any: "1 corpus cache and 10
    truth folders"."""
    truth = sum(f.kind == "truth" for f in found)
    corpus = counted(len(found) - truth, "corpus cache")
    return f"{corpus} and {counted(truth, 'truth folder')}" if truth else corpus


def printable(text: object) -> str:
    """One line of output: control characters as tokens, a line break or tab as ␊ or ␉."""
    return visible(str(text).replace("\n", "␊").replace("\t", "␉"), cap=None)


def _lines(f: cache.CacheFolder) -> list[str]:
    """Two lines a folder, within 80 columns: size, state, folder; then what it holds."""
    state = f.state.value + (f" ({f.format})" if f.state is cache.State.OTHER_FORMAT and f.format else "")
    if f.kind == "truth":  # a shard's partials: `rows` counts the queries they answer
        held = [
            f"top-k of {f.rows:,} queries" if f.rows is not None else "",
            f"in {f.source}" if f.source else "",
        ]
    else:
        held = [f"{f.rows:,} chunks" if f.rows is not None else "", f"of {f.source}" if f.source else ""]
    out = [f"{byte_size(f.bytes):>9}  {state:<18}  {f.path.name}"]
    if any(held):
        out.append(" " * 11 + " ".join(h for h in held if h))
    return [printable(x) for x in out]


def cache_list(args: argparse.Namespace) -> int:
    root, found = cache.listing()
    total = sum(f.bytes for f in found)
    print(printable(f"cache folder: {root}  ({caches(found)}, {byte_size(total)})"))
    for f in found:
        print("\n".join(_lines(f)))
    stale = [f for f in found if f.state in cache.STALE]
    if stale:
        them = "it" if len(stale) == 1 else "them"
        stale_bytes = byte_size(sum(f.bytes for f in stale))
        print(f"{len(stale):,} stale ({stale_bytes}): `triage cache prune` removes {them}")
    return Exit.OK


def cache_prune(args: argparse.Namespace) -> int:
    done = cache.prune(every=args.every, dry_run=args.dry_run)
    print(printable(f"cache folder: {done.root}"))
    remove, keep = ("would remove", "would keep") if args.dry_run else ("removed", "kept")
    for f in done.removed:
        print(printable(f"{remove} {f.path.name} ({byte_size(f.bytes)}): {f.state.value}"))
    for f, why in done.failed:
        print(printable(f"triage: error: cannot remove {f.path}: {why}"), file=sys.stderr)
    every = done.removed + done.kept + [f for f, _ in done.failed]
    freed = byte_size(sum(f.bytes for f in done.removed))
    failed = f"; not removed {len(done.failed):,}" if done.failed else ""
    print(f"{remove} {len(done.removed):,} of {caches(every)}, {freed}; {keep} {len(done.kept):,}{failed}")
    return Exit.INPUT if done.failed else Exit.OK
