"""The cache's folders for `triage cache`: the corpus caches (`corpus-<key>`) and the truth cache's
shard folders (`truth-<key>`): what is there, and which of them `prune` removes.

`prune` removes the folders no run will read again: of another cache format, whose corpus (or
shard) changed or is gone, or whose build stopped (`core.inputs.corpus_cache` and
`core.truth.cache` say how each is told). A folder in
use, one whose corpus is unknown or cannot be read, and one being built are kept; `every` removes
those too (except one being built), for a cache to be rebuilt from nothing. A cache is derived data: removing
one costs its next run a rebuild, never a number. A removal never leaves the folder
(`core.removal`): what is on another device in it (a mount) is left as it was, and the folder is
counted as not removed, the paths left named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from triage.core.inputs.corpus_cache import CacheFolder, State, cache_dir, folders, remove
from triage.core.truth import cache as truth_cache

__all__ = ["MOUNTED", "STALE", "CacheFolder", "Pruned", "State", "listing", "prune"]

STALE = frozenset({State.OTHER_FORMAT, State.CHANGED, State.GONE, State.INCOMPLETE})
MOUNTED = "left as it was, on another device (a mount)"  # why a folder was not removed, before its paths


@dataclass
class Pruned:
    root: Path
    removed: list[CacheFolder] = field(default_factory=list)
    kept: list[CacheFolder] = field(default_factory=list)
    failed: list[tuple[CacheFolder, str]] = field(default_factory=list)  # (folder, why not removed)


def listing() -> tuple[Path, list[CacheFolder]]:
    """The cache folder and every cache in it (corpus caches and truth folders), largest first."""
    root = cache_dir()
    found = folders(root) + truth_cache.truth_folders(root)
    return root, sorted(found, key=lambda f: (-f.bytes, f.path.name))


def prune(every: bool = False, dry_run: bool = False) -> Pruned:
    """Remove the stale folders (`every`: all but one being built); `dry_run`: only say which."""
    root, found = listing()
    out = Pruned(root)
    for f in found:
        if f.state is State.BUILDING or not (every or f.state in STALE):
            out.kept.append(f)
            continue
        try:
            left = [] if dry_run else remove(f)
        except OSError as e:
            named = e.filename is not None and e.filename != str(f.path)  # an entry inside it
            out.failed.append((f, f"{e.filename}: {e.strerror}" if named else e.strerror or str(e)))
            continue
        if left:
            out.failed.append((f, f"{MOUNTED}: {', '.join(map(str, left))}"))
        else:
            out.removed.append(f)
    return out
