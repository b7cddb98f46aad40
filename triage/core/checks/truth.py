"""Checks on the truth the runs are judged against (docs/checks.md "The checks"): the quiet ways to
fake filtered recall.

- `truth.postfiltered`: filtered queries whose truth holds fewer than min(k, n_eligible) ids, the
  signature of an unfiltered top k filtered afterwards: of a truth folder, or of any labels file that
  is a top-k list with `n_eligible` on the runs or the queries (`check_postfiltered`);
- `truth.corpus`, `truth.queries`, `truth.metric`: the truth computed on another corpus, from other
  query vectors or with another metric than the runs record (their metadata against truth.json);
- `truth.ids`, `labels.padding`: ids `-1` or empty (padding read as ids), or absent from the corpus;
- `truth.n_eligible`: a run's `n_eligible` (the router's estimate) against the exact count;
- `truth.postfilter`: a postfilter plan below 1% exact selectivity, which keeps about k × s results;
- `truth.no_eligible`, `truth.judged`: what is counted apart, and what the numbers are.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.checks.model import ERROR, OK, SHOW, WARNING, Check, some
from triage.core.evaluation import Arm, Evaluation
from triage.core.inputs.contract import single
from triage.core.truth.folder import unfiltered
from triage.core.truth.judged import ExactTruth, padding

POSTFILTER = "postfilter"  # the plan that filters an unfiltered top k afterwards
# Checks whose error says the truth is not the runs' (a gate judged on it fails: core/gate/apply.py)
TRUTH_ERRORS = frozenset(
    {"truth.postfiltered", "truth.corpus", "truth.queries", "truth.metric", "truth.ids", "labels.padding"}
)
LOW_SELECTIVITY = 0.01  # below it a postfilter plan keeps about k × s < 0.01 k results


def truth_checks(ev: Evaluation) -> list[Check]:
    """The checks no judgement changes, of an evaluation judged against exact truth ([] otherwise,
    but for padding in any labels)."""
    if ev.truth is None:
        return _label_padding(ev)
    t = ev.truth
    return (
        _judged(ev, t)
        + _provenance(ev, t)
        + _ids(ev, t)
        + [c for arm in ev.arms for c in _estimates(ev, t, arm)]
        + [c for arm in ev.arms for c in _postfilter_plans(ev, t, arm)]
        + _no_eligible(ev, t)
    )


def _judged(ev: Evaluation, t: ExactTruth) -> list[Check]:
    f = t.folder
    return [
        Check(
            OK,
            "truth.judged",
            f"judged against exact truth {f.path} (k = {f.k}, {f.metric}, tolerance {f.tolerance:g}): "
            f"recall@{ev.k} over min(k, n_eligible) with its exact counts",
            {"k": f.k, "metric": f.metric, "tolerance": f.tolerance},
        )
    ]


def _provenance(ev: Evaluation, t: ExactTruth) -> list[Check]:
    """The runs' metadata against truth.json: the corpus (snapshot, digest), the queries' vectors
    (digest) and the metric; and the corpus given against the rows the truth was computed over."""
    corpus, queries = t.folder.section("corpus"), t.folder.section("queries")
    # run metadata key -> (the check's code, what truth.json says, where it says it)
    compared: dict[str, tuple[str, list[object], str]] = {
        "corpus_snapshot": ("truth.corpus", [corpus.get("snapshot")], "corpus.snapshot"),
        "corpus_digest": ("truth.corpus", [corpus.get("digest")], "corpus.digest"),
        "queries_digest": (
            "truth.queries",
            [queries.get("digest"), queries.get("vectors_digest")],
            "queries",
        ),
        "metric": ("truth.metric", [t.folder.metric], "metric"),
    }
    out: list[Check] = []
    agreed: dict[str, list[str]] = {}
    for key, (code, said, where) in compared.items():
        theirs = [str(v) for v in said if v is not None]
        for arm in ev.arms:
            mine = arm.run.meta.get(key)
            if mine is None or not theirs:
                continue
            if mine in theirs:
                agreed.setdefault(code, []).append(f"{arm.name} {key} {mine!r}")
                continue
            out.append(
                Check(
                    ERROR,
                    code,
                    f"{arm.run.path.name} records {key} {mine!r}, the truth {where} "
                    f"{' / '.join(map(repr, theirs))}: the truth was computed on {_what[code]}, its recall "
                    "is not the runs'",
                    {"arm": arm.name, "key": key, "run": mine, "truth": theirs},
                )
            )
    rows, given = corpus.get("rows"), ev.inputs.corpus
    if given is not None and isinstance(rows, int) and not isinstance(rows, bool) and rows != len(given):
        out.append(
            Check(
                ERROR,
                "truth.corpus",
                f"the truth was computed over {rows} corpus rows, the corpus given holds {len(given)}",
                {"truth_rows": rows, "corpus_rows": len(given)},
            )
        )
    bad = {c.code for c in out}
    out += [
        Check(OK, code, "; ".join(said) + ": as the truth records")
        for code, said in agreed.items()
        if code not in bad
    ]
    if not any(c.code == "truth.corpus" for c in out):
        out.append(
            Check(
                WARNING,
                "truth.corpus",
                "no run records corpus_snapshot or corpus_digest the truth records: whether the truth was "
                "computed on the runs' corpus is not known",
            )
        )
    return out


_what = {
    "truth.corpus": "another corpus",
    "truth.queries": "other query vectors",
    "truth.metric": "another metric",
}


def _ids(ev: Evaluation, t: ExactTruth) -> list[Check]:
    """Truth ids that are padding ("-1", empty) or, with a corpus, absent from it."""
    labels = t.folder.labels.table
    chunks = single(labels.column("chunk_id"))
    out = []
    pad = padding(chunks)
    if pad.any():
        queries = pc.unique(single(labels.column("query_id")).filter(pa.array(pad))).to_pylist()
        out.append(
            Check(
                ERROR,
                "truth.ids",
                f"the truth holds {int(pad.sum())} padding ids ('-1' or empty) read as ids, in "
                f"{len(queries)} queries: a search library's empty slots, not neighbours: {some(queries)}",
                {"padding": int(pad.sum()), "queries": queries[:SHOW]},
            )
        )
    corpus = ev.inputs.corpus
    if corpus is not None:
        missing = corpus.missing(chunks.filter(pa.array(~pad))).to_pylist()
        if missing:
            out.append(
                Check(
                    ERROR,
                    "truth.ids",
                    f"{len(missing)} truth ids are absent from the corpus given: {some(missing)}",
                    {"absent": len(missing)},
                )
            )
    return out


def _label_padding(ev: Evaluation) -> list[Check]:
    """Gold ids of any labels file that are padding ("-1", empty)."""
    gold = ev.inputs.frozen.table
    pad = padding(single(gold.column("chunk_id")))
    if not pad.any():
        return []
    queries = pc.unique(single(gold.column("query_id")).filter(pa.array(pad))).to_pylist()
    return [
        Check(
            ERROR,
            "labels.padding",
            f"the labels hold {int(pad.sum())} gold ids that are padding ('-1' or empty), in "
            f"{len(queries)} queries: {some(queries)}",
            {"padding": int(pad.sum())},
        )
    ]


def _estimates(ev: Evaluation, t: ExactTruth, arm: Arm) -> list[Check]:
    """The run's n_eligible (the router's estimate, part of the system under test) against the
    exact count, where both are known."""
    recorded = arm.aligned("n_eligible")
    if recorded is None:
        return []
    mine = recorded.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    differ = t.listed & (mine >= 0) & (mine != t.n_eligible)
    if not differ.any():
        return [Check(OK, "truth.n_eligible", f"{arm.name}: every n_eligible recorded is the exact count")]
    qs = np.flatnonzero(differ)
    ids = ev.query_ids.take(pa.array(qs[:SHOW])).to_pylist()
    named = [f"{q} (run {mine[i]}, exact {t.n_eligible[i]})" for q, i in zip(ids, qs[:SHOW], strict=True)]
    return [
        Check(
            WARNING,
            "truth.n_eligible",
            f"{arm.run.path.name}: n_eligible differs from the exact count for {len(qs)} queries (the "
            f"router's estimate; recall reads the exact one): {some(named, len(qs))}",
            {"arm": arm.name, "count": len(qs)},
        )
    ]


def _postfilter_plans(ev: Evaluation, t: ExactTruth, arm: Arm) -> list[Check]:
    """Queries a postfilter plan answered below 1% exact selectivity: a top k filtered afterwards
    keeps about k × s results, so a short list; beside the short lists counted among them."""
    plans = arm.aligned("plan")
    if plans is None:
        return []
    planned = pc.fill_null(pc.equal(pc.utf8_lower(pc.cast(plans, pa.string())), POSTFILTER), False)
    s = t.selectivity
    low = planned.to_numpy(zero_copy_only=False) & t.filtered & (np.nan_to_num(s, nan=1.0) < LOW_SELECTIVITY)
    if not low.any():
        return []
    qs = np.flatnonzero(low)
    short = int(arm.short[qs].sum())
    expected = float(np.mean(ev.k * s[qs]))
    ids = ev.query_ids.take(pa.array(qs)).to_pylist()
    return [
        Check(
            WARNING,
            "truth.postfilter",
            f"{arm.name}: {len(qs)} queries planned {POSTFILTER} below 1% exact selectivity, where a top "
            f"{ev.k} filtered afterwards keeps about k × s = {expected:.2g} results; {short} of them "
            f"short lists (fewer than k returned): {some(ids)}",
            {"arm": arm.name, "count": len(qs), "short_lists": short, "expected_results": expected},
        )
    ]


def _no_eligible(ev: Evaluation, t: ExactTruth) -> list[Check]:
    zero = t.listed & (t.n_eligible == 0)
    if not zero.any():
        return []
    ids = ev.ids_where(zero)
    return [
        Check(
            OK,
            "truth.no_eligible",
            f"{len(ids)} queries match no document (n_eligible = 0): counted apart, not scored: {some(ids)}",
            {"count": len(ids)},
        )
    ]


# -- post-filtered truth, of any labels -------------------------------------------------------------


def check_postfiltered(ev: Evaluation) -> list[Check]:
    """Filtered queries whose truth holds fewer ids than min(k, n_eligible): an unfiltered top k
    filtered afterwards (the hardest queries lose their neighbours, a short truth inflates recall).
    Of a truth folder: its ids at K against min(K, n_eligible). Of another labels file, when it is a
    top-k list (`_list_length`) and n_eligible is on the queries or the runs: its gold against
    min(k, K, n_eligible)."""
    counts = _truth_counts(ev)
    if counts is None:
        return []
    n_elig, held, expected, filtered, known = counts
    short = known & filtered & (n_elig > 0) & (held < expected)
    if not short.any():
        return [Check(OK, "truth.postfiltered", "every filtered query's truth holds min(k, n_eligible) ids")]
    qs = np.flatnonzero(short)
    worst = qs[np.lexsort((qs, held[qs] / expected[qs]))]
    ids = ev.query_ids.take(pa.array(worst[:SHOW])).to_pylist()
    named = [f"{q} ({held[i]} of {expected[i]})" for q, i in zip(ids, worst[:SHOW], strict=True)]
    return [
        Check(
            ERROR,
            "truth.postfiltered",
            f"{len(qs)} filtered queries hold fewer true neighbours than min(k, n_eligible), the signature "
            f"of an unfiltered top k filtered afterwards: their recall is not index recall; worst: "
            f"{some(named, len(qs))}",
            {
                "count": len(qs),
                "queries": [
                    {"query": q, "held": int(held[i]), "expected": int(expected[i])}
                    for q, i in zip(ids, worst[:SHOW], strict=True)
                ],
            },
        )
    ]


def _truth_counts(ev: Evaluation) -> tuple[np.ndarray, ...] | None:
    """Per query: n_eligible, the ids the truth holds, the ids it should hold (min(k, n_eligible)),
    whether filtered, whether known; None when the labels are no top-k list or no n_eligible is given."""
    t = ev.truth
    if t is not None:
        return t.n_eligible, t.held, np.minimum(t.k, t.n_eligible), t.filtered, t.listed
    n_elig = _eligible_counts(ev)
    length = _list_length(ev)
    if n_elig is None or length is None:
        return None
    known = ev.scored | ev.a.present | ev.b.present
    return n_elig, ev.gold.sets.n_gold, np.minimum(min(ev.k, length), n_elig), _filtered(ev, n_elig), known


def _eligible_counts(ev: Evaluation) -> np.ndarray | None:
    """Per query the n_eligible the queries file gives, else B's run, else A's (-1: unknown); None
    when no input gives any."""
    out = np.full(ev.n, -1, np.int64)
    given = ev.queries_aligned("n_eligible")
    if given is not None:
        try:
            values = pc.cast(given, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            values = None
        if values is not None:
            out = values.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    for arm in (ev.b, ev.a):
        out = np.where(out < 0, arm.n_eligible, out)
    return out if (out >= 0).any() else None


def _filtered(ev: Evaluation, n_elig: np.ndarray) -> np.ndarray:
    """Per query, whether a filter applied: a `filter` given (queries file, else the runs); with no
    filter anywhere, any query with a known n_eligible."""
    filters = ev.query_column("filter")
    if filters.null_count == ev.n:
        return n_elig >= 0
    return ~unfiltered(filters)


def _list_length(ev: Evaluation) -> int | None:
    """The K of labels that are a top-K list (a truth, not a labeller's gold), or None: K ≥ k, and
    every unfiltered scored query (at least two) holds exactly K gold ids; with no filter known, at
    least half the scored queries hold the most any holds."""
    scored = ev.scored
    if not scored.any():
        return None
    n_gold = ev.gold.sets.n_gold
    filters = ev.query_column("filter")
    if filters.null_count != ev.n:
        open_ = scored & unfiltered(filters)
        counts = np.unique(n_gold[open_])
        if open_.sum() >= 2 and len(counts) == 1 and counts[0] >= ev.k:
            return int(counts[0])
        return None
    top = int(n_gold[scored].max())
    return top if top >= ev.k and (n_gold[scored] == top).mean() >= 0.5 else None
