"""Corpora and query sets for the exact-truth tests and benchmarks, written as real files, seeded.

A corpus is a folder of Parquet shards (`shard-000.parquet`, …), each with `chunk_id` (string),
`embedding` (fixed_size_list<float32> by default; list<float32> or list<float64> on request) and
metadata columns:

- `tenant`: skewed sizes (acme about 30% of rows … a long tail), a tenant with exactly 3 rows
  (`tiny`, fewer than k) and one with exactly 1 (`solo`), names with a quote (`o'reilly`) and a
  non-ASCII letter (`zürich`);
- `doc_type` (6 kinds), `year` (int32, 2010–2024, more recent more often), `region` (nullable: about a
  quarter null).

Vectors are clustered (Gaussian around seeded centres). Planted on purpose, across shards: exact ties
(copies of anchor vectors under other chunk_ids), near-duplicates a few float32 ulps away (inside the
default tie tolerance) and copies 1e-4 away (outside it). chunk_ids are `d<row>` (and `D<row>-é` for
every 101st row), so Python's str order is not the rows' order.

Queries (Parquet or JSONL: `query_id`, `embedding`, `filter`, `tenant`, `band`) follow the design's
mix: about 60% unfiltered (null, empty or blank filter), the rest across selectivity bands (≥10%,
1–10%, 0.1–1%, <0.1%), some with fewer than k eligible rows and some with none; each filter is a SQL
WHERE clause over the metadata, chosen from candidates by its exact selectivity (DuckDB). Query
vectors lie near cluster centres or on the planted anchors (so ties fall at the k-th place).

Shards are generated one at a time (`rows_per_batch` rows at a time within a shard): the benchmark's
10.2M x 768 corpus is written with the same code in bounded memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

TENANTS = {  # share of rows; the rest of the weight goes to `misc-0` … `misc-9`
    "acme": 0.30,
    "globex": 0.18,
    "initech": 0.11,
    "umbrella": 0.08,
    "hooli": 0.06,
    "stark": 0.04,
    "wayne": 0.025,
    "wonka": 0.012,
    "tyrell": 0.006,
    "o'reilly": 0.003,
    "zürich": 0.0015,
    "cyberdyne": 0.0006,
}
TINY = {"tiny": 3, "solo": 1}  # tenants with exactly this many rows
DOC_TYPES = {"sow": 0.3, "amendment": 0.1, "invoice": 0.2, "memo": 0.15, "contract": 0.15, "report": 0.1}
YEARS = np.arange(2010, 2025)
REGIONS = ["emea", "amer", "apac"]
REGION_NULL = 0.25

# The design's mix of bands: fraction of queries in each (filtered bands by exact selectivity).
MIX = {
    "unfiltered": 0.60,
    ">=10%": 0.10,
    "1-10%": 0.10,
    "0.1-1%": 0.08,
    "<0.1%": 0.07,
    "<k": 0.03,
    "none": 0.02,
}


def _tenant_table() -> tuple[list[str], np.ndarray]:
    names = list(TENANTS) + [f"misc-{i}" for i in range(10)]
    rest = (1.0 - sum(TENANTS.values())) / 10
    p = np.array(list(TENANTS.values()) + [rest] * 10)
    return names, p / p.sum()


@dataclass
class Layout:
    """What to write: the corpus's size and how its embeddings are stored."""

    rows: int
    dim: int
    shards: int = 3
    seed: int = 0
    embedding: str = "fixed"  # fixed | list32 | list64
    row_group_size: int = 4096
    compression: str = "zstd"  # the embedding column's; metadata is always zstd
    clusters: int = 32
    anchors: int = 12  # vectors planted as exact ties (each copied 2..6 times)
    rows_per_batch: int = 65536

    def bounds(self) -> list[tuple[int, int]]:
        edges = np.linspace(0, self.rows, self.shards + 1).astype(np.int64)
        return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


@dataclass
class Corpus:
    folder: Path
    layout: Layout
    shards: list[Path]
    centres: np.ndarray  # float32 (clusters, dim)
    anchors: np.ndarray  # float32 (anchors, dim)
    planted: dict[str, list[str]] = field(default_factory=dict)  # kind -> chunk_ids planted

    @property
    def rows(self) -> int:
        return self.layout.rows


def chunk_id(row: int) -> str:
    return f"D{row}-é" if row % 101 == 0 else f"d{row}"


def _basis(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([layout.seed, 7])
    centres = rng.standard_normal((layout.clusters, layout.dim)).astype(np.float32)
    anchors = rng.standard_normal((layout.anchors, layout.dim)).astype(np.float32)
    return centres, anchors


def _fixed_rows(rows: int, seed: int) -> dict[int, str]:
    """Global rows given to the tiny tenants: the same rows however the corpus is sharded."""
    rng = np.random.default_rng([seed, 11])
    picks = rng.choice(rows, size=min(rows, sum(TINY.values())), replace=False)
    names = [name for name, n in TINY.items() for _ in range(n)]
    return {int(r): name for r, name in zip(picks, names, strict=False)}


def _metadata(rng: np.random.Generator, start: int, n: int, fixed: dict[int, str]) -> dict[str, pa.Array]:
    names, p = _tenant_table()
    tenant = np.array(names, dtype=object)[rng.choice(len(names), size=n, p=p)]
    for row, name in fixed.items():
        if start <= row < start + n:
            tenant[row - start] = name
    kinds = list(DOC_TYPES)
    doc_type = np.array(kinds, dtype=object)[rng.choice(len(kinds), size=n, p=list(DOC_TYPES.values()))]
    w = np.linspace(1, 3, len(YEARS))
    year = YEARS[rng.choice(len(YEARS), size=n, p=w / w.sum())].astype(np.int32)
    region = np.array(REGIONS, dtype=object)[rng.integers(0, len(REGIONS), size=n)]
    null = rng.random(n) < REGION_NULL
    return {
        "chunk_id": pa.array([chunk_id(r) for r in range(start, start + n)], pa.string()),
        "tenant": pa.array(tenant.tolist(), pa.string()),
        "doc_type": pa.array(doc_type.tolist(), pa.string()),
        "year": pa.array(year, pa.int32()),
        "region": pa.array(region.tolist(), pa.string(), mask=null),
    }


def _nudged(v: np.ndarray, ulps: int, rng: np.random.Generator) -> np.ndarray:
    """`v` with one coordinate moved `ulps` float32 steps (a near-duplicate)."""
    out = v.copy()
    i = int(rng.integers(0, len(v)))
    for _ in range(ulps):
        out[i] = np.nextafter(out[i], np.float32(np.inf), dtype=np.float32)
    return out


def _plant(
    vectors: np.ndarray, start: int, anchors: np.ndarray, rng: np.random.Generator, planted: dict
) -> None:
    """Copies of the anchors (exact ties), nudged copies (a few ulps) and far copies (1e-4) at random
    rows of this batch; every batch gets some, so ties cross shards."""
    n = len(vectors)
    if n < 4 or not len(anchors):
        return
    for a in range(len(anchors)):
        copies = int(rng.integers(0, 3))  # 0..2 per batch: 2..6 over a few shards
        kinds = ["tie"] * copies + ["near", "far"] * int(rng.random() < 0.5)
        rows = rng.choice(n, size=min(n, len(kinds)), replace=False)
        for kind, r in zip(kinds, rows, strict=False):
            if kind == "tie":
                vectors[r] = anchors[a]
            elif kind == "near":
                vectors[r] = _nudged(anchors[a], int(rng.integers(1, 4)), rng)
            else:
                vectors[r] = anchors[a] * np.float32(1 + 1e-4)
            planted.setdefault(kind, []).append(chunk_id(start + int(r)))


def _embedding(vectors: np.ndarray, kind: str) -> pa.Array:
    flat = pa.array(vectors.ravel())
    d = vectors.shape[1]
    offsets = pa.array(np.arange(0, len(vectors) * d + 1, d, dtype=np.int32))
    if kind == "fixed":
        return pa.FixedSizeListArray.from_arrays(flat, d)
    if kind == "list32":
        return pa.ListArray.from_arrays(offsets, flat)
    if kind == "list64":  # float64 values that are float32 values: both readings agree
        return pa.ListArray.from_arrays(offsets, pa.array(vectors.astype(np.float64).ravel()))
    raise ValueError(kind)


def shard_batches(layout: Layout, index: int, corpus: Corpus, variant: int = 0) -> Iterator[pa.RecordBatch]:
    """Shard `index`'s rows, `rows_per_batch` at a time; `variant` > 0 gives the shard other vectors
    and metadata (a changed shard)."""
    start, stop = layout.bounds()[index]
    rng = np.random.default_rng([layout.seed, index, variant])
    fixed = _fixed_rows(layout.rows, layout.seed)
    for lo in range(start, stop, layout.rows_per_batch):
        n = min(layout.rows_per_batch, stop - lo)
        cols = _metadata(rng, lo, n, fixed)
        which = rng.integers(0, layout.clusters, size=n)
        vectors = corpus.centres[which]
        vectors += rng.standard_normal((n, layout.dim), dtype=np.float32) * np.float32(0.6)
        _plant(vectors, lo, corpus.anchors, rng, corpus.planted)
        cols["embedding"] = _embedding(vectors, layout.embedding)
        yield pa.RecordBatch.from_pydict(cols)


def write_shard(layout: Layout, index: int, corpus: Corpus, path: Path, variant: int = 0) -> Path:
    writer = None
    for batch in shard_batches(layout, index, corpus, variant):
        if writer is None:
            compression = {c: "zstd" for c in batch.schema.names}
            compression["embedding"] = layout.compression
            writer = pq.ParquetWriter(
                path,
                batch.schema,
                compression=compression,
                use_dictionary=["tenant", "doc_type", "region"],
            )
        writer.write_batch(batch, row_group_size=layout.row_group_size)
    assert writer is not None, "a shard needs rows"
    writer.close()
    return path


def write_corpus(folder: Path, layout: Layout) -> Corpus:
    folder.mkdir(parents=True, exist_ok=True)
    centres, anchors = _basis(layout)
    corpus = Corpus(folder, layout, [], centres, anchors)
    for i in range(layout.shards):
        corpus.shards.append(write_shard(layout, i, corpus, folder / f"shard-{i:03d}.parquet"))
    return corpus


def open_corpus(folder: Path, layout: Layout) -> Corpus:
    """A corpus `write_corpus` wrote before (the planted lists are not kept)."""
    centres, anchors = _basis(layout)
    return Corpus(
        folder, layout, [folder / f"shard-{i:03d}.parquet" for i in range(layout.shards)], centres, anchors
    )


# -- filters ---------------------------------------------------------------------------------------


def quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def candidates() -> list[str]:
    """SQL WHERE clauses over the metadata, spanning the allowed constructs, from broad to empty."""
    names, _ = _tenant_table()
    out = []
    for t in names + list(TINY):
        q = quoted(t)
        out += [
            f"tenant = {q}",
            f"tenant = {q} AND doc_type IN ('sow', 'amendment')",
            f"tenant = {q} AND year BETWEEN 2018 AND 2021",
            f"tenant = {q} AND region IS NULL",
            f"tenant = {q} AND doc_type = 'memo' AND year >= 2022",
            f"(tenant = {q} OR tenant = 'wonka') AND NOT (doc_type = 'sow')",
        ]
    out += [
        "doc_type IN ('sow', 'amendment')",
        "year >= 2015",
        "year < 2012 AND region IS NOT NULL",
        "doc_type LIKE 'a%'",
        "doc_type NOT LIKE '%o%' AND year <> 2020",
        "region = 'apac' AND doc_type = 'invoice' AND year = 2024",
        "tenant LIKE 'misc-%' AND year BETWEEN 2010 AND 2013",
        "tenant != 'acme' AND region IN ('emea', 'amer') AND year > 2021",
        "NOT (tenant IN ('acme', 'globex')) AND doc_type = 'report'",
        "region IS NULL AND year <= 2011 AND doc_type = 'contract'",
        # nothing eligible
        "tenant = 'ghost'",
        "year > 2100",
        "tenant = 'tiny' AND year < 1900",
        "region IS NULL AND region IS NOT NULL",
    ]
    return out


def counts(corpus: Corpus, filters: Sequence[str]) -> dict[str, int]:
    """Exact eligible rows per filter: one DuckDB scan of the metadata columns."""
    files = ", ".join(quoted(str(p)) for p in corpus.shards)
    aggs = ", ".join(f"count(*) FILTER (WHERE {f})" for f in filters)
    con = duckdb.connect()
    got = con.execute(f"SELECT {aggs} FROM read_parquet([{files}])").fetchone()
    con.close()
    return dict(zip(filters, [int(x) for x in got], strict=True))


def band(n: int, rows: int, k: int) -> str:
    s = n / rows
    if n == 0:
        return "none"
    if n < k:
        return "<k"
    return ">=10%" if s >= 0.1 else "1-10%" if s >= 0.01 else "0.1-1%" if s >= 0.001 else "<0.1%"


def _spelled(f: str, rng: np.random.Generator) -> str:
    """The same filter, sometimes spelt otherwise (so grouping by meaning is exercised)."""
    r = rng.random()
    if r < 0.15:
        return f"({f})"
    if r < 0.25:
        return f.replace(" = ", "=")
    return f


@dataclass
class QuerySet:
    path: Path
    rows: list[dict]
    bands: dict[str, int]


def make_queries(
    corpus: Corpus,
    path: Path,
    n: int,
    k: int,
    seed: int = 0,
    mix: dict[str, float] | None = None,
    filters: Sequence[str] | None = None,
) -> QuerySet:
    """`n` queries in the band mix, written to `path` (.parquet or .jsonl)."""
    rng = np.random.default_rng([seed, 3])
    mix = mix or MIX
    by_band: dict[str, list[str]] = {}
    for f, c in counts(corpus, list(filters or candidates())).items():
        by_band.setdefault(band(c, corpus.rows, k), []).append(f)
    wanted = {b: int(round(share * n)) for b, share in mix.items()}
    wanted["unfiltered"] += n - sum(wanted.values())
    plan: list[tuple[str, str | None]] = []
    for b, m in wanted.items():
        pool = by_band.get(b) if b != "unfiltered" else None
        for _ in range(m):
            if b == "unfiltered" or not pool:  # a band the corpus cannot fill is unfiltered instead
                plan.append(("unfiltered", [None, None, None, "", "  "][int(rng.integers(0, 5))]))
            else:
                plan.append((b, _spelled(pool[int(rng.integers(0, len(pool)))], rng)))
    order = rng.permutation(len(plan))
    rows = []
    for i, j in enumerate(order):
        b, f = plan[j]
        rows.append(
            {
                "query_id": f"q{i}",
                "embedding": _query_vector(corpus, rng),
                "filter": f,
                "tenant": _tenant_of(f),
                "band": b,
            }
        )
    write_queries(path, rows)
    bands: dict[str, int] = {}
    for r in rows:
        bands[r["band"]] = bands.get(r["band"], 0) + 1
    return QuerySet(path, rows, bands)


def _query_vector(corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
    """Near a cluster centre, or on an anchor (so its planted copies tie at the top), or the same as
    an earlier query's vector now and then."""
    r = rng.random()
    if r < 0.3 and len(corpus.anchors):
        base = corpus.anchors[int(rng.integers(0, len(corpus.anchors)))]
        noise = 0.0 if rng.random() < 0.5 else 0.05
    else:
        base = corpus.centres[int(rng.integers(0, len(corpus.centres)))]
        noise = 0.6
    v = base + rng.standard_normal(base.shape, dtype=np.float32) * np.float32(noise)
    return v.astype(np.float32)


def _tenant_of(f: str | None) -> str | None:
    if not f or "tenant" not in f:
        return None
    part = f.split("tenant", 1)[1].lstrip(" =(")
    if not part.startswith("'"):
        return None
    end, out = 1, []
    while end < len(part):
        if part[end] == "'" and part[end + 1 : end + 2] == "'":
            out.append("'")
            end += 2
        elif part[end] == "'":
            break
        else:
            out.append(part[end])
            end += 1
    return "".join(out)


def write_queries(path: Path, rows: list[dict]) -> Path:
    """Parquet (embedding fixed_size_list<float32>) or JSONL (embedding a list of numbers; the filter
    key left out of some unfiltered rows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".jsonl":
        with open(path, "w", encoding="utf-8") as f:
            for i, r in enumerate(rows):
                out = {**r, "embedding": [float(x) for x in r["embedding"]]}
                if out["filter"] is None and i % 2:
                    del out["filter"]
                f.write(json.dumps(out, ensure_ascii=False) + "\n")
        return path
    vectors = np.vstack([r["embedding"] for r in rows]).astype(np.float32)
    table = pa.table(
        {
            "query_id": pa.array([r["query_id"] for r in rows], pa.string()),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1]),
            "filter": pa.array([r["filter"] for r in rows], pa.string()),
            "tenant": pa.array([r["tenant"] for r in rows], pa.string()),
            "band": pa.array([r["band"] for r in rows], pa.string()),
        }
    )
    pq.write_table(table, path)
    return path


# -- the real embeddings (tests/fixtures/truth_real) -----------------------------------------------

REAL = Path(__file__).resolve().parent / "fixtures" / "truth_real" / "bge_m3_alice_pride.parquet"


def real_vectors() -> tuple[np.ndarray, np.ndarray]:
    """The fixture's 400 sentence vectors (the corpus) and 80 paragraph vectors (queries), float32."""
    t = pq.read_table(REAL)
    v = t.column("embedding").combine_chunks().flatten().to_numpy().reshape(t.num_rows, -1)
    source = np.array(t.column("source").to_pylist())
    return v[source == "sentence"], v[source == "paragraph"]


def write_real(folder: Path, shards: int = 3, seed: int = 0, k: int = 10) -> tuple[Path, Path]:
    """The real corpus in `shards` shards with seeded metadata, and its queries (paragraph vectors and
    some sentence vectors, so exact self-matches and the repeated sentences tie), in the band mix."""
    corpus_vectors, paragraph = real_vectors()
    layout = Layout(
        rows=len(corpus_vectors), dim=corpus_vectors.shape[1], shards=shards, seed=seed, row_group_size=64
    )
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 5])
    fixed = _fixed_rows(layout.rows, seed)
    paths = []
    for i, (start, stop) in enumerate(layout.bounds()):
        cols = _metadata(rng, start, stop - start, fixed)
        cols["embedding"] = _embedding(corpus_vectors[start:stop], "fixed")
        path = folder / "corpus" / f"shard-{i:03d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(cols), path, row_group_size=layout.row_group_size, compression="zstd")
        paths.append(path)
    corpus = Corpus(folder / "corpus", layout, paths, np.zeros((0, layout.dim)), np.zeros((0, layout.dim)))
    eligible = counts(corpus, candidates())
    by_band: dict[str, list[str]] = {}
    for f, c in eligible.items():
        by_band.setdefault(band(c, layout.rows, k), []).append(f)
    pool = [f for b in (">=10%", "1-10%", "0.1-1%", "<0.1%", "<k", "none") for f in by_band.get(b, [])[:4]]
    vectors = list(paragraph) + [corpus_vectors[r] for r in (10, 74, 75, 0, 200, 399)]
    rows = []
    for i, v in enumerate(vectors):
        f = None if rng.random() < 0.6 else pool[int(rng.integers(0, len(pool)))]
        b = "unfiltered" if f is None else band(eligible[f], layout.rows, k)
        rows.append({"query_id": f"r{i}", "embedding": v, "filter": f, "tenant": _tenant_of(f), "band": b})
    return corpus.folder, write_queries(folder / "queries.parquet", rows)
