"""Generate the on-call's bundled case: a small filtered vector index, its query log, and two
routers' runs over the queries `triage sample` draws from that log (sample_runs/oncall/README.md).

    python sample_runs/make_oncall.py              # writes sample_runs/oncall/
    python sample_runs/make_oncall.py --out DIR    # writes the same files into DIR

The runs answer the very queries `triage sample` takes from the log with its default flags, so the
generator asks triage which: the checkout's own `triage` when it sits in one, else the one installed.

Everything else is simulated here, apart from triage: a corpus of 4,000 chunks of twelve tenants
(32-dimensional vectors around 40 topics, quantized to hundredths), an IVF index over it (spherical
k-means, 64 lists), and a router that picks a plan per query from its ESTIMATE of the rows a filter
admits (each column's share multiplied, as if independent):

- `scan`: every eligible row scored exactly (recall 1.0 against exact truth);
- `ann`: the IVF searched with the filter applied inside the probed lists (NPROBE of 64): recall
  below 1 for real reasons, the eligible neighbours lying outside the probed lists;
- `postfilter`: the IVF's unfiltered top k × OVERFETCH, filtered afterwards: about k × s results
  survive a selectivity s, so a short list at low selectivity.

Arm A, `router-v1`, scans up to 600 estimated rows and runs `ann` above. Arm B, `router-v2`, is the
change under review: to cut the scans' latency it scans only up to 320 estimated rows and
postfilters above. Planted by the data, not by hand: atlas keeps 3 tickets (0.075% of the corpus)
while its users still filter on them, and the estimate (atlas's 25% × tickets' 37%) sends those
queries to B's postfilter, which returns nothing; granite's 300 chunks stay under B's scan threshold
(recall 1.0) beside evergreen and fjord, a little larger, whose whole-tenant queries B postfilters
at about 9% selectivity (recall about 0.3) in the same 1–10% band.

All arithmetic that decides a ranking is on integers (the quantized vectors), so the files do not
depend on the machine's BLAS; `verify` recomputes the exact truth apart and checks the story.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import pathlib
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = pathlib.Path(__file__).resolve().parent
if (HERE.parent / "triage" / "__init__.py").is_file():  # in a checkout: its own triage, not one installed
    sys.path.insert(0, str(HERE.parent))

import triage  # noqa: E402
from triage.core.truth.queries import read_queries  # noqa: E402

SEED = 20261206
DIM = 32
SCALE = 100  # vectors are stored as integers / SCALE (hundredths: an 8-bit quantization)
TOPICS = (
    "payment terms", "late payment fees", "termination notice", "data retention", "liability cap",
    "renewal dates", "service credits", "uptime commitments", "refund requests", "password resets",
    "invoice disputes", "tax exemptions", "purchase orders", "shipping delays", "damaged goods",
    "warranty claims", "onboarding checklists", "access reviews", "incident response",
    "backup schedules", "audit logs", "travel expenses", "parental leave", "remote work",
    "security training", "vendor due diligence", "price increases", "volume discounts",
    "currency conversion", "credit notes", "support hours", "escalation paths", "SSO setup",
    "API rate limits", "data exports", "subprocessors", "insurance certificates", "confidentiality",
    "governing law", "assignment clauses",
)  # fmt: skip
TEMPLATES = (
    "{t}", "what are our {t}", "{t} policy", "latest {t}", "who approves {t}", "{t} exceptions",
    "summary of {t}", "{t} for next quarter",
)  # fmt: skip
DOC_TYPES = ("contract", "invoice", "ticket", "policy", "note")
PLURAL = {
    "contract": "contracts",
    "invoice": "invoices",
    "ticket": "tickets",
    "policy": "policies",
    "note": "notes",
}
TYPE_MIX = (0.15, 0.17, 0.48, 0.10, 0.10)  # every tenant's chunks by doc_type, but atlas's
YEARS = (2019, 2020, 2021, 2022, 2023, 2024, 2025)
# tenant -> (chunks, first year): twelve tenants, 4,000 chunks; lumen signed up and holds none
TENANTS = {
    "atlas": (987, 2019),
    "borealis": (720, 2019),
    "cobalt": (520, 2020),
    "driftwood": (420, 2021),
    "evergreen": (380, 2020),
    "fjord": (360, 2021),
    "granite": (300, 2022),
    "harbor": (180, 2023),
    "iris": (100, 2024),
    "juniper": (30, 2024),
    "kestrel": (3, 2025),
    "lumen": (0, 2025),
}
ATLAS_TICKETS = 3  # atlas moved its support tickets elsewhere: 3 remain of 987 chunks
N_TOPICS_PER_TENANT = 30  # each tenant writes about most of the topics
SPREAD_DOC, SPREAD_QUERY, TENANT_PULL = 1.2, 1.0, 0.1  # noise around a topic; a tenant's own direction

NLIST, NPROBE = 64, 3  # the IVF: lists, and lists probed per search
K = 10
OVERFETCH = 3  # postfilter: the unfiltered top k × OVERFETCH, then the filter
ROUTERS = {  # arm -> (file stem, name, scan threshold in estimated rows, plan above it)
    "a": ("a", "router-v1", 600, "ann"),
    "b": ("b", "router-v2", 320, "postfilter"),
}
SNAPSHOT = "oncall-corpus-2026-11-30"
LOG_ROWS = 900
LOG_START = "2026-11-30T00:00:00Z"
UNFILTERED_SHARE = 0.15  # the support console's queries, over every tenant's chunks
REPEAT_SHARE = 0.2  # a query asked again (the same text, filter and tenant)


# -- the corpus ------------------------------------------------------------------------------------


def unit_ints(x: np.ndarray) -> np.ndarray:
    """Rows of x scaled to length SCALE and rounded: the stored vectors (int64)."""
    norms = np.sqrt(np.sum(x * x, axis=1, keepdims=True))
    return np.rint(x / norms * SCALE).astype(np.int64)


def noise(rng: np.random.Generator, n: int, spread: float) -> np.ndarray:
    return rng.standard_normal((n, DIM)) * spread / math.sqrt(DIM)


def geometry(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Topic centres, each tenant's own direction and the topics it writes about."""
    centres = rng.standard_normal((len(TOPICS), DIM))
    centres /= np.sqrt(np.sum(centres * centres, axis=1, keepdims=True))
    pull, topics = {}, {}
    for name in TENANTS:
        v = rng.standard_normal(DIM)
        pull[name] = v / math.sqrt(float(v @ v))
        topics[name] = np.sort(rng.choice(len(TOPICS), N_TOPICS_PER_TENANT, replace=False))
    return centres, pull, topics


def doc_types(rng: np.random.Generator, name: str, n: int) -> list[str]:
    if name != "atlas":
        return [DOC_TYPES[i] for i in rng.choice(len(DOC_TYPES), n, p=TYPE_MIX)]
    rest = [t for t in DOC_TYPES if t != "ticket"]
    out = [rest[i] for i in rng.choice(len(rest), n - ATLAS_TICKETS)] + ["ticket"] * ATLAS_TICKETS
    return [out[i] for i in rng.permutation(n)]


def build_corpus(rng: np.random.Generator, centres, pull, topics) -> pa.Table:
    rows: dict[str, list] = {c: [] for c in ("chunk_id", "tenant", "doc_type", "year", "topic")}
    vectors = []
    for name, (n, first) in TENANTS.items():
        if not n:
            continue
        topic = rng.choice(topics[name], n)
        vectors.append(centres[topic] + TENANT_PULL * pull[name] + noise(rng, n, SPREAD_DOC))
        years = rng.integers(first, YEARS[-1] + 1, n)
        for i, (t, y, d) in enumerate(zip(topic, years, doc_types(rng, name, n), strict=True)):
            rows["chunk_id"].append(f"{name}/{d}-{y}-{i:04d}")
            rows["tenant"].append(name)
            rows["doc_type"].append(d)
            rows["year"].append(int(y))
            rows["topic"].append(TOPICS[t])
    ints = unit_ints(np.concatenate(vectors))
    flat = pa.array((ints.reshape(-1) / SCALE).astype(np.float32), pa.float32())
    return pa.table(
        {
            "chunk_id": rows["chunk_id"],
            "tenant": rows["tenant"],
            "doc_type": rows["doc_type"],
            "year": pa.array(rows["year"], pa.int32()),
            "header": [
                f"{t} > {PLURAL[d]} > {y}"
                for t, d, y in zip(rows["tenant"], rows["doc_type"], rows["year"], strict=True)
            ],
            "text": [
                f"{d.capitalize()} {c.rsplit('-', 1)[1]} of {t}, {y}: {topic}."
                for c, t, d, y, topic in zip(
                    rows["chunk_id"],
                    rows["tenant"],
                    rows["doc_type"],
                    rows["year"],
                    rows["topic"],
                    strict=True,
                )
            ],
            "embedding": pa.FixedSizeListArray.from_arrays(flat, DIM),
        }
    )


def corpus_ints(corpus: pa.Table) -> np.ndarray:
    """The stored float32 vectors back as the integers they were made from."""
    values = corpus.column("embedding").combine_chunks().flatten().to_numpy()
    return np.rint(values.astype(np.float64) * SCALE).astype(np.int64).reshape(-1, DIM)


# -- the query log ---------------------------------------------------------------------------------


def embed(text: str, topic: int, centres: np.ndarray) -> np.ndarray:
    """A query's vector: its topic's centre and noise seeded by its text (the same text, the same
    vector), as integers."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    rng = np.random.default_rng(seed)
    return unit_ints(centres[topic][None, :] + noise(rng, 1, SPREAD_QUERY))[0]


def issuer_weights() -> tuple[list[str], np.ndarray]:
    """Who asks: tenants by their size to the power 0.6 (a new tenant tries search too)."""
    names = list(TENANTS)
    w = np.array([max(n, 20) ** 0.6 for n, _ in TENANTS.values()])
    return names, w / w.sum()


def log_filter(rng: np.random.Generator, tenant: str) -> str:
    shape = rng.choice(3, p=(0.5, 0.3, 0.2))
    if shape == 0:
        return f"tenant = '{tenant}'"
    if shape == 1:
        wanted = "ticket" if tenant == "atlas" and rng.random() < 0.6 else DOC_TYPES[rng.integers(5)]
        return f"tenant = '{tenant}' AND doc_type = '{wanted}'"
    return f"tenant = '{tenant}' AND year >= {int(rng.choice(YEARS[3:]))}"


def build_log(rng: np.random.Generator, centres, topics) -> list[dict]:
    names, weights = issuer_weights()
    t = np.datetime64(LOG_START.rstrip("Z"), "s")
    rows: list[dict] = []
    for i in range(LOG_ROWS):
        t += np.timedelta64(int(rng.integers(20, 100)), "s")
        if rows and rng.random() < REPEAT_SHARE:
            again = rows[int(rng.integers(len(rows)))]
            text, topic, tenant, where = again["text"], again["_topic"], again["tenant"], again["filter"]
        else:
            if rng.random() < UNFILTERED_SHARE:
                tenant, where, topic = None, None, int(rng.integers(len(TOPICS)))
            else:
                tenant = names[int(rng.choice(len(names), p=weights))]
                where = log_filter(rng, tenant)
                topic = int(rng.choice(topics[tenant]))
            text = TEMPLATES[int(rng.integers(len(TEMPLATES)))].format(t=TOPICS[topic])
        rows.append(
            {
                "query_id": f"req-{i + 1:05d}",
                "time": str(t) + "Z",
                "tenant": tenant,
                "text": text,
                "filter": where,
                "_topic": topic,
            }
        )
    for r in rows:
        r["embedding"] = [int(v) / SCALE for v in embed(r["text"], r.pop("_topic"), centres)]
    return rows


def write_log(rows: list[dict], path: pathlib.Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


# -- the index and the routers ---------------------------------------------------------------------


def ivf(rng: np.random.Generator, x: np.ndarray, iterations: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Spherical k-means over the integer vectors: (centroids as integers, each row's list)."""
    c = x[np.sort(rng.choice(len(x), NLIST, replace=False))]
    for _ in range(iterations):
        assign = np.argmax(x @ c.T, axis=1)
        for j in range(NLIST):
            members = x[assign == j]
            if len(members):
                c[j] = unit_ints(members.sum(axis=0, keepdims=True).astype(np.float64))[0]
    return c, np.argmax(x @ c.T, axis=1)


def cosine(q: np.ndarray, x: np.ndarray, norms2: np.ndarray) -> np.ndarray:
    """Exact cosine of integer q against integer rows x (their squared lengths given), float64."""
    return (x @ q) / np.sqrt(float(q @ q) * norms2)


def id_order(ids: list[str]) -> np.ndarray:
    """Each chunk id's place in Python's string order (int64): how equal scores are ordered."""
    place = np.empty(len(ids), np.int64)
    place[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    return place


def best(scores: np.ndarray, rows: np.ndarray, place: np.ndarray, n: int) -> np.ndarray:
    """The n best of `rows` by score, then chunk id (`place`: id_order)."""
    order = np.lexsort((place[rows], -scores))
    return rows[order[:n]]


class Index:
    def __init__(self, corpus: pa.Table, rng: np.random.Generator) -> None:
        self.x = corpus_ints(corpus)
        self.norms2 = np.einsum("ij,ij->i", self.x, self.x)
        self.ids = np.array(corpus.column("chunk_id").to_pylist(), dtype=object)
        self.place = id_order(corpus.column("chunk_id").to_pylist())
        self.columns = {c: np.array(corpus.column(c).to_pylist()) for c in ("tenant", "doc_type", "year")}
        self.centroids, self.lists = ivf(rng, self.x)

    def eligible(self, spec: dict) -> np.ndarray:
        """The rows a filter admits (bool)."""
        mask = np.ones(len(self.x), bool)
        for column, (op, value) in spec.items():
            got = self.columns[column]
            mask &= got >= value if op == ">=" else got == value
        return mask

    def estimate(self, spec: dict) -> int:
        """The router's estimate of the rows a filter admits: each column's share multiplied."""
        share = 1.0
        for column, op_value in spec.items():
            share *= self.eligible({column: op_value}).mean()
        return int(round(share * len(self.x)))

    def scored(self, q: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return cosine(q, self.x[rows], self.norms2[rows])

    def scan(self, q: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
        rows = np.flatnonzero(mask)
        return best(self.scored(q, rows), rows, self.place, K), len(rows)

    def probed(self, q: np.ndarray) -> np.ndarray:
        coarse = self.centroids @ q
        lists = np.lexsort((np.arange(NLIST), -coarse))[:NPROBE]
        return np.flatnonzero(np.isin(self.lists, lists))

    def ann(self, q: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
        probed = self.probed(q)
        rows = probed[mask[probed]]
        return best(self.scored(q, rows), rows, self.place, K), len(probed)

    def postfilter(self, q: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
        probed = self.probed(q)
        top = best(self.scored(q, probed), probed, self.place, K * OVERFETCH)
        return top[mask[top]][:K], len(probed)


def filter_spec(where: str | None) -> dict:
    """The log's own filters, read back: {column: (op, value)}."""
    spec: dict = {}
    for part in (where or "").split(" AND "):
        if not part:
            continue
        column, op, value = part.split(" ", 2)
        spec[column] = (op, int(value) if op == ">=" else value.strip("'"))
    return spec


def latency(plan: str, touched: int, query_id: str) -> float:
    """Simulated milliseconds: a scan reads its eligible rows, ann and postfilter the probed lists;
    a jitter seeded by the query."""
    jitter = int.from_bytes(hashlib.sha256(f"{SEED}|{query_id}".encode()).digest()[:4], "big") / 2**32
    base = 1.0 + 0.05 * touched if plan == "scan" else 2.5 + 0.008 * touched
    return round(base * (0.85 + 0.3 * jitter), 2)


def route(arm: str, spec: dict, index: Index) -> tuple[str, int]:
    """(plan, estimated eligible rows) for a query."""
    if not spec:
        return "ann", len(index.x)
    _, _, scan_max, above = ROUTERS[arm]
    est = index.estimate(spec)
    return ("scan" if est <= scan_max else above), est


def answer(arm: str, query: dict, q: np.ndarray, index: Index) -> dict:
    spec = filter_spec(query["filter"])
    plan, est = route(arm, spec, index)
    mask = index.eligible(spec)
    rows, touched = getattr(index, plan)(q, mask)
    scores = index.scored(q, rows)
    return {
        "query_id": query["query_id"],
        "retrieved": [str(c) for c in index.ids[rows]],
        "scores": pa.array(scores.astype(np.float32), pa.float32()),
        "plan": plan,
        "n_eligible": est,
        "n_returned": len(rows),
        "latency_ms": latency(plan, touched, query["query_id"]),
        "tenant": query["tenant"],
        "filter": query["filter"],
    }


def write_run(rows: list[dict], path: pathlib.Path, meta: dict[str, str]) -> None:
    table = pa.table(
        {
            "query_id": [r["query_id"] for r in rows],
            "retrieved": pa.array([r["retrieved"] for r in rows], pa.list_(pa.string())),
            "scores": pa.array([r["scores"].to_pylist() for r in rows], pa.list_(pa.float32())),
            "plan": [r["plan"] for r in rows],
            "n_eligible": pa.array([r["n_eligible"] for r in rows], pa.int64()),
            "n_returned": pa.array([r["n_returned"] for r in rows], pa.int64()),
            "latency_ms": pa.array([r["latency_ms"] for r in rows], pa.float64()),
            "tenant": pa.array([r["tenant"] for r in rows], pa.string()),
            "filter": pa.array([r["filter"] for r in rows], pa.string()),
        }
    )
    write_parquet(table, path, meta)


def write_parquet(table: pa.Table, path: pathlib.Path, meta: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    pq.write_table(table, path, compression="zstd")


# -- the whole ---------------------------------------------------------------------------------------


def sampled(log: pathlib.Path, corpus: pathlib.Path) -> tuple[list[dict], np.ndarray, str]:
    """The queries `triage sample LOG --corpus C --out Q` takes (its defaults), their vectors as
    integers and the vectors' digest, as `triage truth` records it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "q.parquet"
        triage.sample(log, corpus, out)
        qs = read_queries(out, cosine=True)
        queries = qs.table.select(["query_id", "tenant", "filter"]).to_pylist()
        ints = np.rint(qs.vectors.astype(np.float64) * SCALE).astype(np.int64)
        return queries, ints, qs.vectors_digest


def run_meta(arm: str, digest: str) -> dict[str, str]:
    stem, name, scan_max, above = ROUTERS[arm]
    return {
        "name": name,
        "k": str(K),
        "metric": "cosine",
        "corpus_snapshot": SNAPSHOT,
        "queries_digest": digest,
        "embedding_model": "sim-embed-32",
        "chunker": "one-chunk-per-record",
        "n_chunks": str(sum(n for n, _ in TENANTS.values())),
        "index": f"ivf{NLIST}-flat, nprobe {NPROBE}",
        "router": f"scan up to {scan_max} estimated eligible rows, {above} above"
        + (f" (top {K} x {OVERFETCH} unfiltered, then the filter)" if above == "postfilter" else ""),
    }


def build(out_dir: pathlib.Path) -> dict:
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    centres, pull, topics = geometry(rng)
    corpus = build_corpus(rng, centres, pull, topics)
    write_parquet(corpus, out_dir / "corpus.parquet", {"corpus_snapshot": SNAPSHOT})
    write_log(build_log(rng, centres, topics), out_dir / "log.jsonl")
    index = Index(corpus, rng)
    queries, vectors, digest = sampled(out_dir / "log.jsonl", out_dir / "corpus.parquet")
    for arm in ROUTERS:
        rows = [answer(arm, q, v, index) for q, v in zip(queries, vectors, strict=True)]
        write_run(rows, out_dir / "runs" / f"{ROUTERS[arm][0]}.parquet", run_meta(arm, digest))
    return verify(out_dir, queries, vectors)


# -- the story, checked apart ------------------------------------------------------------------------


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise SystemExit(f"make_oncall: the story does not hold: {msg}")


class Exact:
    """The exact top k within the rows a filter admits, computed apart from the index: every
    eligible row scored, equal scores by chunk id, ties within 1e-6 of the k-th kept (as `triage
    truth` lists them)."""

    def __init__(self, corpus: pa.Table) -> None:
        self.x = corpus_ints(corpus)
        self.ids = corpus.column("chunk_id").to_pylist()
        self.place = id_order(self.ids)
        self.columns = {c: np.array(corpus.column(c).to_pylist()) for c in ("tenant", "doc_type", "year")}

    def __call__(self, where: str | None, q: np.ndarray) -> tuple[set[str], int]:
        """(the true neighbours, the rows the filter admits)."""
        mask = np.ones(len(self.x), bool)
        for column, (op, value) in filter_spec(where).items():
            got = self.columns[column]
            mask &= got >= value if op == ">=" else got == value
        rows = np.flatnonzero(mask)
        if not len(rows):
            return set(), 0
        x = self.x[rows]
        s = (x @ q) / np.sqrt(float(q @ q) * np.einsum("ij,ij->i", x, x))
        order = np.lexsort((self.place[rows], -s))
        m = min(K, len(rows))
        kth = s[order[m - 1]]
        keep = order[:m].tolist() + [i for i in order[m:].tolist() if abs(s[i] - kth) <= 1e-6]
        return {self.ids[rows[i]] for i in keep}, len(rows)


def verify(out_dir: pathlib.Path, queries: list[dict], vectors: np.ndarray) -> dict:
    corpus = pq.read_table(out_dir / "corpus.parquet")
    n = corpus.num_rows
    runs = {
        arm: pq.read_table(out_dir / "runs" / f"{ROUTERS[arm][0]}.parquet").to_pylist() for arm in ROUTERS
    }
    recall: dict[str, dict[str, float]] = {"a": {}, "b": {}}
    eligible: dict[str, int] = {}
    exact = Exact(corpus)
    for i, query in enumerate(queries):
        truth, n_elig = exact(query["filter"], vectors[i])
        eligible[query["query_id"]] = n_elig
        for arm in ROUTERS:
            row = runs[arm][i]
            check(row["query_id"] == query["query_id"], f"{arm} answers the sampled queries in order")
            if n_elig:
                recall[arm][query["query_id"]] = min(
                    len(set(row["retrieved"][:K]) & truth), min(K, n_elig)
                ) / min(K, n_elig)
    by = {q["query_id"]: (q, runs["a"][i], runs["b"][i]) for i, q in enumerate(queries)}

    def tenant_recall(arm: str) -> dict[str, float]:
        per: dict[str, list[float]] = {}
        for qid, value in recall[arm].items():
            per.setdefault(by[qid][0]["tenant"] or "(none)", []).append(value)
        return {t: float(np.mean(v)) for t, v in per.items()}

    tenants = {arm: tenant_recall(arm) for arm in ROUTERS}
    # planted 1: atlas's ticket queries, 0.075% of the corpus, B postfilters into nothing
    tickets = [
        qid for qid, (q, _, _) in by.items() if q["filter"] == "tenant = 'atlas' AND doc_type = 'ticket'"
    ]
    check(len(tickets) >= 4, f"the sample holds atlas's ticket queries ({len(tickets)})")
    for qid in tickets:
        _, a, b = by[qid]
        check(eligible[qid] == ATLAS_TICKETS and a["plan"] == "scan" and b["plan"] == "postfilter", qid)
        check(b["n_returned"] < K and recall["b"][qid] < 0.5 and recall["a"][qid] == 1.0, qid)
    # planted 2: granite (300 chunks) scanned at 1.0 in B beside evergreen and fjord, postfiltered
    check(tenants["b"]["granite"] == 1.0, f"granite's recall in B is {tenants['b']['granite']}")
    check(
        all(by[q][2]["plan"] == "scan" for q in recall["b"] if by[q][0]["tenant"] == "granite"),
        "granite scans",
    )
    whole = {
        t: [recall["b"][q] for q in recall["b"] if by[q][0]["filter"] == f"tenant = '{t}'"]
        for t in ("granite", "evergreen", "fjord")
    }
    for t in ("evergreen", "fjord"):
        check(
            0.15 <= float(np.mean(whole[t])) <= 0.45,
            f"{t}'s whole-tenant recall in B {np.mean(whole[t]):.2f}",
        )
    for t in ("granite", "evergreen", "fjord"):
        check(whole[t] and 0.01 <= TENANTS[t][0] / n < 0.1, f"{t}'s whole-tenant queries in the 1–10% band")
    # the control group: the same index and plan in both arms
    for qid, (q, a, b) in by.items():
        if q["filter"] is None:
            check(a["retrieved"] == b["retrieved"] and a["plan"] == "ann", f"{qid} unchanged")
    below = {arm: sum(v < 0.8 for v in t.values()) for arm, t in tenants.items()}
    check(below["a"] < below["b"], f"B has more tenants below 0.80 than A ({below})")
    return {
        "corpus": n,
        "queries": len(queries),
        "tenants": tenants,
        "below": below,
        "recall": {arm: float(np.mean(list(r.values()))) for arm, r in recall.items()},
        "atlas_tickets": len(tickets),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="Write triage's bundled on-call case.")
    ap.add_argument(
        "--out",
        type=pathlib.Path,
        default=HERE / "oncall",
        help="folder to write into (default: oncall/ beside this script)",
    )
    summary = build(ap.parse_args().out)
    recall, below = summary["recall"], summary["below"]
    print(f"{summary['corpus']} chunks, {summary['queries']} sampled queries")
    print(f"recall A {recall['a']:.3f}, B {recall['b']:.3f}; below 0.80: A {below['a']}, B {below['b']}")
    tenants = summary["tenants"]
    for t in sorted(tenants["b"], key=tenants["b"].get):
        print(f"  {t:10} A {tenants['a'][t]:.3f}  B {tenants['b'][t]:.3f}")


if __name__ == "__main__":
    main()
