"""Generate the large synthetic evaluation used by the `triage report` benchmark.

The data follows docs/data.md "The data contract":

* ``run_a.parquet`` / ``run_b.parquet`` -- one row per query: ``query_id`` (string),
  ``retrieved`` (list<string>, ``depth`` distinct ids, best first), ``scores``
  (list<double>, strictly descending), ``plan`` (string), ``n_returned`` (int64);
  Parquet schema metadata ``k`` = ``10`` and ``name``.
* ``labels.parquet`` -- one row per (query, gold chunk): ``query_id``, ``chunk_id``,
  ``relevance`` (int32, 1..3, mostly 1). Every query has 1..3 gold ids.
* ``triage.toml`` -- the manifest tying them together (k = 10, arms ``a`` and ``b``).
* with ``--corpus``: ``chunks.parquet`` -- one row per id of the id space: ``chunk_id``,
  ``header``, ``text`` (~300 characters); zstd, 65,536-row groups.
* ``bench.json`` -- the parameters used and the generation time (seconds), so a cached
  folder can be recognised and reused by ``bench_report.py``.

Chunk ids look like real ones and have variable length: the integer id space
``0 .. id_space-1`` is cut into documents of 1..16 chunks, and id ``i`` is written
``doc{document}#{chunk}`` (e.g. ``doc7#12``, ``doc18233#4``). Query ids are ``q000123``.

Each arm places each of a query's gold ids in its list with some probability at a rank
drawn from a geometric distribution (so most placed gold lands near the top and some
falls outside k), and fills the rest with random ids. The two arms use different
probabilities, so their hit rates differ (about 0.6 for A and 0.7 for B at k = 10).
Arm B's rows are stored in a different (shuffled) query order than arm A's, as two
independently written runs would be; a reader must join on query_id, not on row number.

Everything is vectorised with numpy and pyarrow compute: no Python loop per query or
per id, so 100,000 queries x 100 ids x 2 arms are generated in seconds.

Usage::

    python tests/benchmarks/make_bench.py --out /tmp/triage-bench            # 100k x 100
    python tests/benchmarks/make_bench.py --out /tmp/tb --queries 1000 --depth 50
    python tests/benchmarks/make_bench.py --out /tmp/tb-corpus --corpus      # + 2M chunks
    python tests/benchmarks/make_bench.py --out /tmp/tb-small --queries 5000 --chunks 50000 --corpus
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

K = 10  # the cut-off written into the manifest and the runs' metadata
MAX_GOLD = 3  # gold ids per query: 1..MAX_GOLD

# Per-arm generation parameters:
#   p_place -- probability that a given gold id appears anywhere in the arm's list
#   p_rank  -- parameter of the geometric distribution of its 0-based rank (higher = nearer
#              the top); the rank is capped at depth - 1.
ARMS = {
    "a": {"p_place": 0.70, "p_rank": 0.12},
    "b": {"p_place": 0.80, "p_rank": 0.15},
}
PLANS = np.array(["ann", "postfilter", "scan"])
PLAN_P = [0.85, 0.10, 0.05]

# Manifest written beside the files (paths are relative to it).
MANIFEST = """\
k = {k}
[labels]
path = "labels.parquet"
[arms.a]
name = "a"
path = "run_a.parquet"
[arms.b]
name = "b"
path = "run_b.parquet"
"""
CORPUS_SECTION = """\
[corpus]
path = "chunks.parquet"
"""


# --------------------------------------------------------------------------------------
# ids
# --------------------------------------------------------------------------------------
def _id_space(rng: np.random.Generator, id_space: int) -> tuple[pa.StringArray, np.ndarray, np.ndarray]:
    """Return (id strings, document number, chunk number) for every integer id.

    Documents have 1..16 chunks (uniform), so ids are ``doc{d}#{c}`` with d, c of varying
    widths. The mapping is a bijection: id i is the string at position i.
    """
    counts = rng.integers(1, 17, size=id_space // 4 + 16)  # more than enough documents
    starts = np.concatenate(([0], np.cumsum(counts)))
    n_docs = int(np.searchsorted(starts, id_space, side="left"))
    starts = starts[: n_docs + 1]
    ids = np.arange(id_space, dtype=np.int64)
    doc = np.searchsorted(starts, ids, side="right") - 1  # document of each id
    chunk = ids - starts[doc]  # 0-based chunk number within its document
    strings = pc.binary_join_element_wise(
        "doc",
        pc.cast(pa.array(doc), pa.string()),
        "#",
        pc.cast(pa.array(chunk), pa.string()),
        "",
    )
    return strings, doc, chunk


def _query_ids(n_queries: int) -> pa.StringArray:
    """``q000000``, ``q000001``, ... (at least six digits)."""
    width = max(6, len(str(max(n_queries - 1, 0))))
    digits = pc.utf8_lpad(pc.cast(pa.array(np.arange(n_queries)), pa.string()), width=width, padding="0")
    return pc.binary_join_element_wise("q", digits, "")


# --------------------------------------------------------------------------------------
# gold labels
# --------------------------------------------------------------------------------------
def _gold(rng: np.random.Generator, n: int, id_space: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (gold, relevance), both shape (n, MAX_GOLD); gold = -1 where absent.

    Each query has 1..3 distinct gold ids (1 most often) with graded relevance 1..3
    (1 most often).
    """
    n_gold = rng.choice([1, 2, 3], size=n, p=[0.6, 0.3, 0.1])
    gold = rng.integers(0, id_space, size=(n, MAX_GOLD))
    present = np.arange(MAX_GOLD)[None, :] < n_gold[:, None]
    # Redraw until the gold ids of a query are distinct (collisions are rare: ~3/id_space).
    while True:
        clash = np.zeros((n, MAX_GOLD), dtype=bool)
        for a in range(MAX_GOLD):
            for b in range(a + 1, MAX_GOLD):
                clash[:, b] |= gold[:, a] == gold[:, b]
        if not clash.any():
            break
        gold[clash] = rng.integers(0, id_space, size=int(clash.sum()))
    gold[~present] = -1
    relevance = rng.choice([1, 2, 3], size=(n, MAX_GOLD), p=[0.75, 0.17, 0.08]).astype(np.int32)
    relevance[~present] = 0
    return gold, relevance


# --------------------------------------------------------------------------------------
# one arm
# --------------------------------------------------------------------------------------
def _arm(
    rng: np.random.Generator,
    gold: np.ndarray,
    depth: int,
    id_space: int,
    p_place: float,
    p_rank: float,
) -> np.ndarray:
    """Return the (n, depth) int64 matrix of retrieved integer ids, best first.

    Gold ids are placed with probability ``p_place`` at a geometric rank; every other
    position holds a random non-gold id; no id repeats within a row.
    """
    n = gold.shape[0]
    rows = np.arange(n)
    retrieved = rng.integers(0, id_space, size=(n, depth))
    fixed = np.zeros((n, depth), dtype=bool)  # positions holding a placed gold id

    placed = (rng.random((n, MAX_GOLD)) < p_place) & (gold >= 0)
    rank = np.minimum(rng.geometric(p_rank, size=(n, MAX_GOLD)) - 1, depth - 1)
    # Two placed gold ids of one query must not share a rank: redraw the later one.
    while True:
        clash = np.zeros((n, MAX_GOLD), dtype=bool)
        for a in range(MAX_GOLD):
            for b in range(a + 1, MAX_GOLD):
                clash[:, b] |= placed[:, a] & placed[:, b] & (rank[:, a] == rank[:, b])
        if not clash.any():
            break
        rank[clash] = rng.integers(0, depth, size=int(clash.sum()))
    for j in range(MAX_GOLD):
        sel = placed[:, j]
        retrieved[rows[sel], rank[sel, j]] = gold[sel, j]
        fixed[rows[sel], rank[sel, j]] = True

    # Redraw random fillers that repeat an id of their row or equal a gold id of the
    # query, until none do. A few thousand cells in the first pass, then a handful.
    while True:
        bad = np.zeros((n, depth), dtype=bool)
        for j in range(MAX_GOLD):
            bad |= retrieved == gold[:, j : j + 1]  # gold = -1 never matches an id
        order = np.argsort(retrieved, axis=1, kind="stable")
        ordered = np.take_along_axis(retrieved, order, axis=1)
        r, c = np.nonzero(ordered[:, 1:] == ordered[:, :-1])
        # In each equal pair (c, c+1) of the sorted row, redraw the second unless it is
        # a placed gold id (then redraw the first; two gold ids are never equal).
        second, first = order[r, c + 1], order[r, c]
        redraw = np.where(fixed[r, second], first, second)
        bad[r, redraw] = True
        bad &= ~fixed
        if not bad.any():
            break
        retrieved[bad] = rng.integers(0, id_space, size=int(bad.sum()))
    return retrieved


def _list_array(flat: pa.Array, n: int, width: int) -> pa.ListArray:
    """Wrap a flat array of n*width values as a list array of n rows of ``width``."""
    offsets = pa.array(np.arange(0, n * width + 1, width, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, flat)


def _run_table(
    rng: np.random.Generator,
    qids: pa.StringArray,
    retrieved: np.ndarray,
    id_strings: pa.StringArray,
    name: str,
    k: int,
) -> pa.Table:
    """Build one arm's table (see the module docstring for the columns)."""
    n, depth = retrieved.shape
    # Scores: a start in [0.75, 0.95) minus a running sum of gaps in [1e-4, 8e-3):
    # strictly descending float64 (gaps are far above the float spacing near 1).
    start = rng.uniform(0.75, 0.95, size=(n, 1))
    gaps = rng.uniform(1e-4, 8e-3, size=(n, depth))
    gaps[:, 0] = 0.0
    scores = start - np.cumsum(gaps, axis=1)
    plan = PLANS[rng.choice(len(PLANS), size=n, p=PLAN_P)]
    table = pa.table(
        {
            "query_id": qids,
            "retrieved": _list_array(pc.take(id_strings, pa.array(retrieved.ravel())), n, depth),
            "scores": _list_array(pa.array(scores.ravel()), n, depth),
            "plan": pa.array(plan, pa.string()),
            "n_returned": pa.array(np.full(n, depth, dtype=np.int64)),
        }
    )
    return table.replace_schema_metadata({b"k": str(k).encode(), b"name": name.encode()})


# --------------------------------------------------------------------------------------
# corpus
# --------------------------------------------------------------------------------------
SECTIONS = [
    "Overview",
    "Leave",
    "Benefits",
    "Security",
    "Travel",
    "Expenses",
    "Onboarding",
    "Equipment",
    "Remote work",
    "Compliance",
    "Pricing",
    "Support",
    "Release notes",
    "Installation",
    "Configuration",
    "Troubleshooting",
]


def _vocabulary(rng: np.random.Generator, size: int = 4096) -> pa.StringArray:
    """Pseudo-words of 2..10 lowercase letters (a small loop over ``size`` words only)."""
    lengths = rng.integers(2, 11, size=size)
    letters = rng.integers(ord("a"), ord("z") + 1, size=int(lengths.sum())).astype(np.uint8)
    blob = letters.tobytes().decode("ascii")
    ends = np.cumsum(lengths)
    return pa.array([blob[e - ln : e] for e, ln in zip(ends, lengths, strict=True)], pa.string())


def _write_corpus(
    path: Path,
    rng: np.random.Generator,
    id_strings: pa.StringArray,
    doc: np.ndarray,
    chunk: np.ndarray,
    row_group: int = 65_536,
) -> None:
    """Write one row per id: chunk_id, header (``Title > Section > Part n``), text (~300 ch).

    Built one row group at a time to keep memory flat (~0.3 GB peak).
    """
    vocab = _vocabulary(rng)
    sections = pa.array(SECTIONS)
    n_docs = int(doc.max()) + 1
    # Document titles: three capitalised words.
    title_words = pc.take(vocab, pa.array(rng.integers(0, len(vocab), size=3 * n_docs)))
    titles = pc.utf8_capitalize(pc.binary_join(_list_array(title_words, n_docs, 3), " "))
    schema = pa.schema([("chunk_id", pa.string()), ("header", pa.string()), ("text", pa.string())])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for lo in range(0, len(id_strings), row_group):
            hi = min(lo + row_group, len(id_strings))
            m = hi - lo
            d, c = doc[lo:hi], chunk[lo:hi]
            header = pc.binary_join_element_wise(
                pc.take(titles, pa.array(d)),
                pc.take(sections, pa.array((d * 7 + c // 4) % len(SECTIONS))),
                pc.binary_join_element_wise("Part ", pc.cast(pa.array(c % 4 + 1), pa.string()), ""),
                " > ",
            )
            # Texts: 36..50 words (~300 characters with spaces).
            n_words = rng.integers(36, 51, size=m)
            offsets = np.concatenate(([0], np.cumsum(n_words))).astype(np.int32)
            words = pc.take(vocab, pa.array(rng.integers(0, len(vocab), size=int(offsets[-1]))))
            text = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), words), " ")
            writer.write_table(
                pa.table([id_strings[lo:hi], header, text], schema=schema), row_group_size=row_group
            )


# --------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------
def build(
    out_dir,
    n_queries: int = 100_000,
    depth: int = 100,
    id_space: int = 2_000_000,
    seed: int = 7,
    corpus: bool = False,
    k: int = K,
) -> dict:
    """Generate the evaluation folder ``out_dir``; return the ``bench.json`` record.

    Deterministic for given arguments. Times in the record are seconds.
    """
    if depth < k:
        raise ValueError(f"depth ({depth}) must be at least k ({k})")
    if id_space < depth + MAX_GOLD:
        raise ValueError("id_space too small for distinct ids per row")
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)

    id_strings, doc, chunk = _id_space(rng, id_space)
    qids = _query_ids(n_queries)
    gold, relevance = _gold(rng, n_queries, id_space)

    # Labels: one row per present gold id, grouped by query.
    present = gold >= 0
    q_idx = np.broadcast_to(np.arange(n_queries)[:, None], gold.shape)[present]
    labels = pa.table(
        {
            "query_id": pc.take(qids, pa.array(q_idx)),
            "chunk_id": pc.take(id_strings, pa.array(gold[present])),
            "relevance": pa.array(relevance[present], pa.int32()),
        }
    )
    pq.write_table(labels, out / "labels.parquet", compression="zstd")

    hit_rates = {}
    for name, p in ARMS.items():
        retrieved = _arm(rng, gold, depth, id_space, p["p_place"], p["p_rank"])
        # Expected hit rate at k, computed here as a sanity figure for bench.json.
        top = retrieved[:, :k]
        hit = np.zeros(n_queries, dtype=bool)
        for j in range(MAX_GOLD):
            hit |= (top == gold[:, j : j + 1]).any(axis=1)
        hit_rates[name] = float(hit.mean())
        table = _run_table(rng, qids, retrieved, id_strings, name, k)
        del retrieved, top
        if name != "a":  # store later arms in a shuffled query order
            table = table.take(pa.array(rng.permutation(n_queries)))
        pq.write_table(table, out / f"run_{name}.parquet", compression="zstd")
        del table

    manifest = MANIFEST.format(k=k)
    if corpus:
        _write_corpus(out / "chunks.parquet", rng, id_strings, doc, chunk)
        manifest += CORPUS_SECTION
    (out / "triage.toml").write_text(manifest)

    record = {
        "n_queries": n_queries,
        "depth": depth,
        "id_space": id_space,
        "seed": seed,
        "corpus": corpus,
        "k": k,
        "hit_rate_expected": hit_rates,
        "n_labels": labels.num_rows,
        "seconds": round(time.perf_counter() - t0, 3),
        "bytes": {p.name: p.stat().st_size for p in sorted(out.glob("*.parquet"))},
    }
    (out / "bench.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder (created if absent)")
    ap.add_argument("--queries", type=int, default=100_000, help="number of queries")
    ap.add_argument("--depth", type=int, default=100, help="retrieved ids per query")
    ap.add_argument(
        "--id-space",
        "--chunks",
        dest="id_space",
        type=int,
        default=2_000_000,
        help="number of distinct chunk ids (the corpus's rows with --corpus)",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--corpus",
        action="store_true",
        help="also write chunks.parquet (one row per id of the id space)",
    )
    args = ap.parse_args(argv)
    record = build(
        args.out,
        n_queries=args.queries,
        depth=args.depth,
        id_space=args.id_space,
        seed=args.seed,
        corpus=args.corpus,
    )
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
