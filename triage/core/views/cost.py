"""What the change cost beside what it won: the rest of the row.

Per arm, each figure with where it came from:
- chunks: run metadata `n_chunks`, else the corpus's row count (both arms: one chunking pass);
- latency p50 / p95: the `latency_ms` column over the queries the arm answered (numpy's linear
  percentile); per slice, each slice's own percentiles over its scored queries, never a
  combination of other slices' medians;
- header tokens: the mean estimated tokens (`words.token_estimate`, ⌈words × 4/3⌉) of the corpus
  `header` (heading path) of every id in the arm's top k, over the queries it answered, as the
  arm prepends it: metadata `header_mode` `none` (or `off`, `no`, `false`) prepends nothing (0);
  any other value prepends the heading path; absent: unknown. The header tax is k × that mean:
  tokens added to every answered question's context;
- where the metadata records them: `index_bytes`, `ingest_seconds`, `embed_input_tokens_mean`
  (mean tokens of the text handed to the embedder per chunk).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.checks.model import ERROR, OK, WARNING, Check
from triage.core.evaluation import Arm, Evaluation
from triage.core.ids import codes
from triage.core.inputs.corpus import Corpus
from triage.core.views.slices import KEYS, NONE, key_values, slice_order

QUANTILES = (50.0, 95.0)  # latency percentiles reported
META_NUMBERS = ("index_bytes", "ingest_seconds", "embed_input_tokens_mean")  # read where recorded
NOT_PREPENDED = frozenset({"none", "off", "no", "false"})  # header_mode values that add no header


def percentiles(values: np.ndarray, qs: tuple[float, ...] = QUANTILES) -> list[float]:
    """numpy's linear percentiles of the non-NaN `values` (NaN each when there are none)."""
    v = values[~np.isnan(values)]
    return [float(x) for x in np.percentile(v, qs)] if len(v) else [math.nan] * len(qs)


def grouped_percentiles(
    values: np.ndarray, groups: np.ndarray, m: int, qs: tuple[float, ...] = QUANTILES
) -> tuple[np.ndarray, np.ndarray]:
    """Per group 0..m-1, the linear percentiles `qs` of its own non-NaN values (groups < 0 are
    left out), all groups in one sort: (float64 array len(qs) × m, NaN where a group is empty;
    int64 counts per group). Equal to np.percentile over each group's values."""
    ok = (groups >= 0) & ~np.isnan(values)
    g, v = groups[ok], values[ok]
    order = np.lexsort((v, g))
    g, v = g[order], v[order]
    n = np.bincount(g, minlength=m)
    start = np.cumsum(n) - n
    out = np.full((len(qs), m), np.nan)
    has = np.flatnonzero(n)
    for i, q in enumerate(qs):
        pos = (n[has] - 1) * (q / 100)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, n[has] - 1)
        t = pos - lo
        a, b = v[start[has] + lo], v[start[has] + hi]
        diff = b - a
        # numpy's lerp: from the lower value below t = 0.5, back from the upper one above
        out[i, has] = np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)
    return out, n


def _number(meta: dict[str, str], key: str) -> tuple[float | None, str]:
    """A metadata figure and its source ("" when not recorded)."""
    raw = meta.get(key)
    if raw is None:
        return None, ""
    try:
        x = float(str(raw).strip())
    except ValueError:
        return None, f"metadata {key} = {raw!r} is not a number"
    if not (math.isfinite(x) and x >= 0):
        return None, f"metadata {key} = {raw!r}"
    return (int(x) if x.is_integer() and key in COUNTS else x), f"metadata {key}"


COUNTS = frozenset({"n_chunks", "index_bytes"})  # whole numbers: kept as integers (JSON 725, not 725.0)


def prepends(mode: str | None) -> bool | None:
    """Whether a `header_mode` puts the heading path in front of the chunk (None: unrecorded)."""
    if mode is None:
        return None
    return mode.strip().lower() not in NOT_PREPENDED and mode.strip() != ""


@dataclass(frozen=True)
class Figure:
    """One number and where it came from (`source`: a metadata key, a column, the corpus)."""

    value: float | None
    source: str


@dataclass(frozen=True)
class ArmCost:
    n_chunks: Figure
    latency_p50: Figure  # ms
    latency_p95: Figure
    latency_n: int  # answered queries with a latency
    header_mode: str | None
    heading_tokens: Figure  # mean tokens of the top-k chunks' heading paths, prepended or not
    header_tokens: Figure  # the same as the arm prepends it: 0 for `none`, None when unknown
    header_tax: Figure  # k × header_tokens, per answered query
    top_k_chunks: int  # ids in the arm's top k found in the corpus (what the means are over)
    meta: dict[str, Figure]  # META_NUMBERS, those recorded


@dataclass(frozen=True)
class SliceLatency:
    key: str
    value: str
    n: int  # scored queries in the slice
    n_a: int  # of them, with a latency in A
    n_b: int
    p50_a: float
    p95_a: float
    p50_b: float
    p95_b: float


@dataclass(frozen=True)
class Cost:
    a: ArmCost
    b: ArmCost
    corpus_header_tokens: Figure  # mean heading-path tokens over every corpus chunk (closure)
    slices: tuple[SliceLatency, ...]


def _headers(corpus: Corpus | None) -> pa.ChunkedArray | None:
    """The corpus's heading paths (None: no corpus, or no chunk has a header)."""
    if corpus is None:
        return None
    col = corpus.table.column("header")
    return None if col.null_count == len(col) else col


def _top_k_tokens(ev: Evaluation, corpus: Corpus) -> list[tuple[int, int, int]]:
    """Per arm: the header tokens of the ids in its top k found in the corpus, summed, with how
    many were found and how many were absent. The arms in two threads.

    By the runs' id fingerprints in the corpus ids' fingerprint table (`ids.index.IdIndex`), about
    `codes.BATCH` ids at a time, when the evaluation's corpus ids are this corpus's, row for row
    (the usual case: one file); else by one look-up of the ids (`Corpus.rows_of`)."""
    known = ev.inputs.corpus
    same = known is not None and known.ids.equals(corpus.ids)  # one memory compare

    def tally(rows: np.ndarray) -> tuple[int, int, int]:
        found = rows[rows >= 0]
        return int(corpus.header_tokens(found).sum()), len(found), len(rows) - len(found)

    def arm_tokens(arm: Arm) -> tuple[int, int, int]:
        lists = arm.run.retrieved
        if not same or known is None:
            return tally(corpus.rows_of(pc.list_flatten(pc.list_slice(lists, 0, ev.k)).cast(pa.string())))
        offsets = lists.offsets.to_numpy().astype(np.int64)
        offsets -= offsets[0]
        n = np.minimum(np.diff(offsets), ev.k)
        step = max(1, codes.BATCH // max(ev.k, 1))  # queries per batch
        total = np.zeros(3, np.int64)  # tokens, found, absent
        for first in range(0, len(n), step):
            m = n[first : first + step]
            at = np.repeat(offsets[first : first + len(m)] - (np.cumsum(m) - m), m) + np.arange(int(m.sum()))
            total += tally(known.find(arm.run.fingerprints[at]))
        return int(total[0]), int(total[1]), int(total[2])

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(arm_tokens, ev.arms))


def _arm_cost(ev: Evaluation, arm: Arm, top: tuple[int, int, int] | None, why: str) -> ArmCost:
    """`top`: `_top_k_tokens`'s for this arm (None: heading paths unknown, `why`)."""
    meta = arm.run.meta
    n_chunks, source = _number(meta, "n_chunks")
    if n_chunks is None and ev.inputs.corpus is not None:
        n_chunks, source = len(ev.inputs.corpus), "corpus rows" + (f" ({source})" if source else "")
    chunks = Figure(n_chunks, source or "unrecorded (no n_chunks, no corpus)")
    col = arm.run.column("latency_ms")
    if col is None:
        p50 = p95 = Figure(None, "no latency_ms column")
        n_lat = 0
    else:
        values = np.asarray(col.to_numpy(zero_copy_only=False), np.float64)
        n_lat = int((~np.isnan(values)).sum())
        got = percentiles(values)
        where = f"column latency_ms ({n_lat} queries)"
        p50, p95 = (Figure(None if math.isnan(x) else x, where) for x in got)
    mode = meta.get("header_mode")
    adds = prepends(mode)
    said = "header_mode unrecorded" if mode is None else f"header_mode {mode!r}"
    found = 0
    if top is None:
        heading = Figure(None, f"{why}: heading paths unknown")
    else:
        total, found, absent = top
        gone = f", {absent} absent from the corpus left out" if absent else ""
        mean = total / found if found else None
        heading = Figure(mean, f"corpus header, {found} ids of the top {ev.k}{gone}")
    if adds is None:
        prepended = Figure(None, f"{said}: whether the header is prepended is unknown")
    elif not adds:
        prepended = Figure(0.0, f"{said}: nothing prepended")
    else:
        prepended = Figure(heading.value, f"{said}: the heading path above")
    tax = Figure(None if prepended.value is None else ev.k * prepended.value, f"k = {ev.k} × the row above")
    recorded = {key: Figure(*_number(meta, key)) for key in META_NUMBERS if key in meta}
    return ArmCost(chunks, p50, p95, n_lat, mode, heading, prepended, tax, found, recorded)


def _slice_latency(ev: Evaluation) -> tuple[SliceLatency, ...]:
    """Each slice key's latency percentiles per slice of the scored queries (as `slices` cuts them)."""
    lat = []
    for arm in ev.arms:
        col = arm.aligned("latency_ms")
        lat.append(None if col is None else np.asarray(col.to_numpy(zero_copy_only=False), np.float64))
    if lat[0] is None and lat[1] is None:
        return ()
    scored = ev.scored
    out: list[SliceLatency] = []
    for key in KEYS:
        values = key_values(ev, key)
        if values is None:
            continue
        encoded = pc.dictionary_encode(values.fill_null(NONE))
        names = encoded.dictionary.to_pylist()
        code = np.where(scored, encoded.indices.to_numpy().astype(np.int64), -1)
        m = len(names)
        n = np.bincount(code[scored], minlength=m)
        empty = (np.full((2, m), np.nan), np.zeros(m, np.int64))
        pa_, na = empty if lat[0] is None else grouped_percentiles(lat[0], code, m)
        pb, nb = empty if lat[1] is None else grouped_percentiles(lat[1], code, m)
        rows = [
            SliceLatency(
                key,
                str(names[i]),
                int(n[i]),
                int(na[i]),
                int(nb[i]),
                float(pa_[0, i]),
                float(pa_[1, i]),
                float(pb[0, i]),
                float(pb[1, i]),
            )
            for i in range(m)
            if n[i]
        ]
        out += sorted(rows, key=slice_order(key))
    return tuple(out)


def cost(ev: Evaluation, corpus: Corpus | None) -> Cost:
    """The cost row of both arms; heading paths from `corpus` (None: those figures unknown)."""
    headers = _headers(corpus)
    recorded = all("embed_input_tokens_mean" in arm.run.meta for arm in ev.arms)
    why = "no corpus" if corpus is None else "the corpus has no header column"
    tops: list[tuple[int, int, int] | None] = [None, None]
    if corpus is not None and headers is not None:
        tops = list(_top_k_tokens(ev, corpus))
    if headers is None:
        whole = Figure(None, why)
    elif not recorded:  # only the closure check reads it: not computed otherwise
        whole = Figure(None, "not computed: embed_input_tokens_mean is not recorded by both arms")
    else:
        assert corpus is not None
        total = int(corpus.header_tokens(np.arange(len(corpus))).sum())
        whole = Figure(
            total / len(headers) if len(headers) else None, f"corpus header, {len(headers)} chunks"
        )
    return Cost(
        _arm_cost(ev, ev.a, tops[0], why),
        _arm_cost(ev, ev.b, tops[1], why),
        whole,
        _slice_latency(ev),
    )


# -- checks --------------------------------------------------------------------------------------

CLOSURE_TOKENS = 1.0  # closure tolerance: this many tokens (⌈⌉ rounding of a joined text) …
CLOSURE_SHARE = 0.05  # … or this share of the expected gap, whichever is larger


def _count(f: Figure) -> str:
    return "unknown" if f.value is None else f"{f.value:,.0f} ({f.source})"


def check_chunk_count(ev: Evaluation, c: Cost) -> list[Check]:
    """Equal chunk counts are the evidence of one chunking pass; unequal ones are an error."""
    na, nb = c.a.n_chunks, c.b.n_chunks
    code = "cost.chunk_count"
    if na.value is None and nb.value is None:
        return []
    if na.value is None or nb.value is None:
        known = ev.a if nb.value is None else ev.b
        figure = na if nb.value is None else nb
        return [Check(OK, code, f"only {known.name}'s chunk count is known, {_count(figure)}: not compared")]
    facts = {"a": na.value, "b": nb.value}
    if na.value != nb.value:
        return [
            Check(
                ERROR,
                code,
                f"chunk counts differ: {ev.a.name} {_count(na)}, {ev.b.name} {_count(nb)}: the arms "
                "do not come from one chunking pass, so chunk ids and gold do not mean the same",
                facts,
            )
        ]
    both_corpus = na.source.startswith("corpus") and nb.source.startswith("corpus")
    note = "; neither run records n_chunks, so this is the corpus alone" if both_corpus else ""
    return [Check(OK, code, f"both arms hold {na.value:,.0f} chunks{note}", facts)]


def check_closure(ev: Evaluation, c: Cost) -> list[Check]:
    """The embedding-input gap B − A against the header the arms' header_mode says was added:
    the corpus's mean header tokens × (B prepends − A prepends)."""
    code = "cost.closure"
    ea, eb = (arm.meta.get("embed_input_tokens_mean") for arm in (c.a, c.b))
    if ea is None or eb is None or ea.value is None or eb.value is None:
        return []
    modes = (prepends(c.a.header_mode), prepends(c.b.header_mode))
    if None in modes:
        return [Check(OK, code, "header_mode unrecorded in an arm: embedding-input gap not checked")]
    differ = [
        key for key in ("chunker", "embedding_model") if ev.a.run.meta.get(key) != ev.b.run.meta.get(key)
    ]
    if differ:
        return [
            Check(
                OK, code, f"{' and '.join(differ)} differ: the header is not the only change, gap not checked"
            )
        ]
    mean = c.corpus_header_tokens.value
    if mean is None:
        return [Check(OK, code, f"embedding-input gap not checked: {c.corpus_header_tokens.source}")]
    expected = mean * (int(bool(modes[1])) - int(bool(modes[0])))
    gap = eb.value - ea.value
    tolerance = max(CLOSURE_TOKENS, CLOSURE_SHARE * abs(expected))
    facts = {"gap": gap, "expected": expected, "tolerance": tolerance}
    said = f"embedding-input gap B − A {gap:+.1f} tokens (metadata embed_input_tokens_mean)"
    want = f"the header added {expected:+.1f} (corpus mean header tokens {mean:.1f}, header_mode "
    want += f"{c.a.header_mode!r} → {c.b.header_mode!r})"
    if abs(gap - expected) <= tolerance:
        return [Check(OK, code, f"{said} matches {want}, within {tolerance:.1f}", facts)]
    return [
        Check(
            WARNING,
            code,
            f"{said} does not match {want}: off by {gap - expected:+.1f} (tolerance {tolerance:.1f}); "
            "something besides the header changed what is embedded",
            facts,
        )
    ]


def check_cost(ev: Evaluation, c: Cost) -> list[Check]:
    return check_chunk_count(ev, c) + check_closure(ev, c)
