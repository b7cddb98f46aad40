"""A 20 MB chunk on a detail: opening it and judging there must stay interactive.

Targets (docs/benchmarks.md "Benchmarks"): the detail opens in ≤ 1 s and `g` answers in ≤ 200 ms. The
bundled sample is
copied and q150's gold chunk and B's first retrieved chunk get bodies of `--mb` megabytes each.
Timed headless (the detail assembled; `g` = append + re-judge + the detail again) and through the
app (Textual's Pilot; its own idle wait, measured on a key bound to nothing, is subtracted). The
floor is reading the two chunks from the corpus.

    python tests/benchmarks/bench_big_chunk.py [--mb 20]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from triage.core.bundled import bundled
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.manifest import from_manifest
from triage.workspace.detail import build_detail
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

QUERY = "q150"


def make(folder: Path, mb: int) -> tuple[str, str]:
    shutil.copytree(bundled("sample_runs"), folder)
    labels = pq.read_table(folder / "labels.parquet").to_pylist()
    gold = next(r["chunk_id"] for r in labels if r["query_id"] == QUERY)
    run = pq.read_table(folder / "runs" / "headers.parquet").to_pylist()
    first = next(r["retrieved"][0] for r in run if r["query_id"] == QUERY)
    chunks = pq.read_table(folder / "chunks.parquet")
    texts = chunks.column("text").to_pylist()
    ids = chunks.column("chunk_id").to_pylist()
    filler = " the policy applies to every employee" * (mb * (1 << 20) // 37)
    for cid in (gold, first):
        i = ids.index(cid)
        texts[i] = texts[i] + filler
    pq.write_table(
        chunks.set_column(chunks.column_names.index("text"), "text", pa.array(texts)),
        folder / "chunks.parquet",
    )
    return gold, first


def timed(fn, repeat: int = 5) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def headless(folder: Path, gold: str, first: str) -> None:
    snapshot = open_snapshot(from_manifest(folder))
    corpus = open_corpus(snapshot.spec.corpus)
    q = snapshot.ev.query_index(QUERY)
    floor = timed(lambda: corpus.get([gold, first]))
    detail = timed(lambda: build_detail(snapshot, q, corpus))
    session = Session(snapshot, reviewer="bench")
    session.corpus = corpus

    def judge() -> None:
        session.add(QUERY, "extra#1")
        session.detail(q)
        session.undo()

    g = timed(judge)
    print(f"floor: read the two chunks         median {statistics.median(floor) * 1e3:7.1f} ms")
    print(
        f"ours:  assemble the detail         median {statistics.median(detail) * 1e3:7.1f} ms"
        "  (target ≤ 1000)"
    )
    print(
        f"ours:  g (append, re-judge, detail) median {statistics.median(g) / 2 * 1e3:7.1f} ms  (target ≤ 200)"
    )


async def through_the_app(folder: Path) -> None:
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen

    app = TriageApp(folder, reviewer="bench")
    async with app.run_test(size=(140, 45)) as pilot:
        while app.session is None or app.session.corpus is None:
            await pilot.pause(0.05)
        idle = []
        for _ in range(5):
            t = time.perf_counter()
            await pilot.press("z")  # bound to nothing: Pilot's own wait
            idle.append(time.perf_counter() - t)
        await pilot.press("slash", *QUERY)
        await pilot.pause(0.3)
        t = time.perf_counter()
        await pilot.press("enter")
        while not isinstance(app.screen, DetailScreen):
            await pilot.pause(0.01)
        opened = time.perf_counter() - t
        t = time.perf_counter()
        await pilot.press("g")
        judged = time.perf_counter() - t
        base = statistics.median(idle)
        shown = max(opened - base, 0) * 1e3
        note = f"(Pilot idle {base * 1e3:.0f} ms subtracted)"
        print(f"app:   enter → detail of {QUERY}       {shown:7.1f} ms  {note}")
        print(f"app:   g on B's 20 MB row            {max(judged - base, 0) * 1e3:7.1f} ms")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, default=20)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "big"
        gold, first = make(folder, args.mb)
        print(f"{args.mb} MB bodies on {QUERY}'s gold ({gold}) and B's rank 1 ({first})")
        headless(folder, gold, first)
        asyncio.run(through_the_app(folder))


if __name__ == "__main__":
    main()
