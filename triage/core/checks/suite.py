"""What was held still (docs/checks.md "The checks"): each check has a level, a stable code and a one-line
message that names its evidence. Checks never change a number; they say whether to trust it."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.checks.model import ERROR, OK, SHOW, WARNING, Check, some
from triage.core.checks.rag import check_rag
from triage.core.checks.truth import check_postfiltered, truth_checks
from triage.core.evaluation import Arm, Evaluation
from triage.core.inputs.contract import single
from triage.core.inputs.load import Inputs
from triage.core.measures.families.recall import inconsistent_eligible


def check_k(ev: Evaluation) -> list[Check]:
    return _k_agreement(ev) + _k_depth(ev) + _k_default(ev) + _measures_depth(ev)


def _k_default(ev: Evaluation) -> list[Check]:
    """No k anywhere: the flips and the four metrics are at DEFAULT_K."""
    if not ev.k_default:
        return []
    named = ", the named measures at their own cut-offs" if ev.measures else ""
    return [
        Check(
            WARNING,
            "k.default",
            f"no k given (--k, the manifest or the runs' metadata): flips and metrics at k={ev.k}{named}",
            {"k": ev.k},
        )
    ]


def _measures_depth(ev: Evaluation) -> list[Check]:
    """A measure cut deeper than every stored list measures only the stored depth: one check each."""
    deepest = max(int(arm.depth.max(initial=0)) for arm in ev.arms)
    return [
        Check(
            WARNING,
            "measures.depth",
            f"{m} is cut at {m.cutoff}, but no run stores more than {deepest} ids per query: its numbers "
            f"are those at depth {deepest}",
            {"measure": str(m), "cutoff": m.cutoff, "depth": deepest},
        )
        for m in ev.measures
        if m.cutoff is not None and m.cutoff > deepest
    ]


def _k_depth(ev: Evaluation) -> list[Check]:
    """A cut-off deeper than every stored list judges nothing more than the stored depth."""
    deepest = max(int(arm.depth.max(initial=0)) for arm in ev.arms)
    if ev.k <= deepest:
        return []
    return [
        Check(
            WARNING,
            "k.depth",
            f"judged at k={ev.k}, but no run stores more than {deepest} ids per query: the numbers "
            f"are those at depth {deepest}",
            {"k": ev.k, "depth": deepest},
        )
    ]


def _k_agreement(ev: Evaluation) -> list[Check]:
    a, b = ev.a.run, ev.b.run
    if a.k is not None and b.k is not None and a.k != b.k:
        return [
            Check(
                ERROR,
                "k.mismatch",
                f"arms ran at different k: {a.name} k={a.k}, {b.name} k={b.k}; both judged at k={ev.k} "
                "(a wider cut-off alone can only raise hit rate)",
            )
        ]
    own = a.k if a.k is not None else b.k
    if own is None and ev.k_default:
        return []  # k.default says it, with where a k could be given
    if own is None:
        return [Check(WARNING, "k.unrecorded", f"neither run records k; judged at k={ev.k}")]
    if own != ev.k:
        return [Check(WARNING, "k.override", f"arms ran at k={own}; judged at k={ev.k} as asked")]
    return [Check(OK, "k.match", f"both arms at k={ev.k}")]


def check_queries(ev: Evaluation) -> list[Check]:
    out = []
    for arm in ev.arms:
        absent = ~arm.present & ev.scored
        if absent.any():
            names = ev.ids_where(absent)
            out.append(
                Check(
                    WARNING,
                    "queries.missing",
                    f"{len(names)} labelled queries absent from {arm.name} ({arm.run.path.name}), "
                    f"scored as misses: {some(names)}",
                )
            )
    if not out:
        out.append(Check(OK, "queries.missing", "both arms answer every labelled query"))
    only_a = ev.a.present & ~ev.b.present
    only_b = ev.b.present & ~ev.a.present
    if only_a.any() or only_b.any():
        out.append(
            Check(
                WARNING,
                "queries.differ",
                f"query sets differ: {int(only_a.sum())} only in {ev.a.name}, "
                f"{int(only_b.sum())} only in {ev.b.name}: {some(ev.ids_where(only_a | only_b))}",
            )
        )
    unlabelled = ~ev.scored & (ev.a.present | ev.b.present)
    if ev.truth is not None:  # nothing eligible: counted apart (truth.no_eligible), not unlabelled
        unlabelled &= ~(ev.truth.listed & (ev.truth.n_eligible == 0))
    if unlabelled.any():
        names = ev.ids_where(unlabelled)
        out.append(
            Check(
                WARNING,
                "labels.unlabelled",
                f"{len(names)} queries have no gold (relevance ≥ 1) and are not scored: {some(names)}",
            )
        )
    return out


PENDING_CORPUS = "corpus.checking"
PENDING = Check(OK, PENDING_CORPUS, "checking retrieved and gold ids against the corpus…")


def check_corpus(inputs: Inputs) -> list[Check]:
    """Retrieved ids and the frozen file's gold ids against the corpus, by fingerprint
    (`ids.index.IdIndex`), one arm after the other. Amended ids are the label store's check.
    Of the inputs alone (no label state, no evaluation), so it may run beside the evaluation."""
    corpus = inputs.corpus
    if corpus is None:
        return [Check(OK, "corpus.ids", "no corpus given: chunk ids not checked against it")]
    out = []
    for run in (inputs.a, inputs.b):  # by the run's fingerprints: no string hashing, no Python per id
        missing = corpus.missing(run.retrieved.flatten(), run.fingerprints)
        if len(missing):
            out.append(
                Check(
                    WARNING,
                    "corpus.retrieved",
                    f"{len(missing)} ids retrieved by {run.name} are absent from the corpus: "
                    f"{some(missing.to_pylist()[:SHOW], len(missing))}",
                )
            )
    missing = corpus.missing(single(inputs.frozen.table.column("chunk_id")))
    if len(missing):
        out.append(
            Check(
                WARNING,
                "corpus.gold",
                f"{len(missing)} gold ids are absent from the corpus: {some(missing.to_pylist())}",
            )
        )
    return out or [Check(OK, "corpus.ids", "every retrieved and gold id is in the corpus")]


def check_lists(ev: Evaluation) -> list[Check]:
    out = []
    for arm in ev.arms:
        out.extend(_duplicates(arm) + _score_order(arm))
    return out


def check_eligible(ev: Evaluation) -> list[Check]:
    return [c for arm in ev.arms for c in _eligible(ev, arm)]


def _eligible(ev: Evaluation, arm: Arm) -> list[Check]:
    """n_eligible (documents the filter matched) below the gold found in the top k is impossible."""
    bad = inconsistent_eligible(arm.hits, ev.k, arm.n_eligible)
    if not bad.any():
        return []
    names = ev.ids_where(bad)
    return [
        Check(
            ERROR,
            "run.n_eligible",
            f"{arm.run.path.name}: n_eligible is below the gold found in the top {ev.k} for "
            f"{len(names)} queries (that n_eligible is not used for recall): {some(names)}",
            {"count": len(names)},
        )
    ]


def _duplicates(arm: Arm) -> list[Check]:
    found = arm.run.facts.duplicates
    if not found:
        return [Check(OK, "run.duplicates", f"{arm.name}: no id twice in a ranked list")]
    qid = arm.run.table.column("query_id")
    parts = []
    for r in sorted(found)[:SHOW]:
        chunk, positions = next(iter(found[r].items()))
        parts.append(
            f"{arm.run.loaded.where(r)} query {qid[r].as_py()!r}: {chunk!r} at ranks "
            + ",".join(map(str, positions))
        )
    more = f" (+{len(found) - SHOW} rows)" if len(found) > SHOW else ""
    return [
        Check(
            ERROR,
            "run.duplicates",
            f"{arm.run.path.name}: {len(found)} ranked lists hold an id twice (counted once, at its "
            f"first rank): {'; '.join(parts)}{more}",
        )
    ]


def _score_order(arm: Arm) -> list[Check]:
    rows = arm.run.facts.score_rises
    if not arm.run.facts.scored:
        return []
    if len(rows) == 0:
        return [Check(OK, "run.scores_order", f"{arm.name}: scores descend in every list")]
    qid = arm.run.table.column("query_id").take(pa.array(rows[:SHOW])).to_pylist()
    return [
        Check(
            WARNING,
            "run.scores_order",
            f"{arm.run.path.name}: scores rise within {len(rows)} ranked lists: {some(qid, len(rows))}",
        )
    ]


SAME = {  # metadata key -> level when the arms disagree
    "corpus_snapshot": ERROR,
    "chunker": ERROR,
    "embedding_model": WARNING,
    "embedding_model_version": WARNING,
}


def check_metadata(ev: Evaluation) -> list[Check]:
    out = []
    ma, mb = ev.a.run.meta, ev.b.run.meta
    for key, level in SAME.items():
        va, vb = ma.get(key), mb.get(key)
        if va is None or vb is None:
            continue
        if va != vb:
            out.append(Check(level, f"meta.{key}", f"{key} differs: {ev.a.name} {va!r}, {ev.b.name} {vb!r}"))
        else:
            out.append(Check(OK, f"meta.{key}", f"{key} {va!r} in both arms"))
    for arm in ev.arms:
        recorded = arm.run.meta.get("labels_sha256")
        frozen = ev.inputs.frozen
        if recorded and "labels" in ev.inputs.given:
            out.append(
                Check(
                    OK,
                    "meta.labels_sha256",
                    f"{arm.name} records labels_sha256 {recorded[:12]}; the labels were given as a "
                    "table, which has no file bytes to compare it with",
                )
            )
        elif recorded and recorded.lower() != frozen.sha256:
            out.append(
                Check(
                    WARNING,
                    "meta.labels_sha256",
                    f"{arm.name} records labels_sha256 {recorded[:12]}, the frozen file is "
                    f"{frozen.sha256[:12]}: that run was scored against other labels",
                )
            )
    return out


def _when(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.astimezone()


def check_label_time(ev: Evaluation) -> list[Check]:
    b_time = _when(ev.b.run.meta.get("created_at"))
    if b_time is None:
        return [Check(OK, "labels.time", f"{ev.b.name} records no created_at: label timing not checked")]
    frozen = ev.inputs.frozen
    said = {"treatment run": ev.b.run.meta.get("created_at"), "labels": frozen.meta.get("created_at")}
    unreadable = [
        f"{what} created_at {text!r}" for what, text in said.items() if text and _when(text) is None
    ]
    if unreadable:
        return [
            Check(
                WARNING,
                "labels.time",
                f"{' and '.join(unreadable)} is not an ISO 8601 time: label timing not checked",
            )
        ]
    l_time = _when(frozen.meta.get("created_at"))
    recorded = l_time is not None  # else the file time, which a copy or a checkout also sets
    if l_time is None and "labels" in ev.inputs.given:
        from_runs = ev.inputs.rag is not None and ev.inputs.rag.labels_from_runs
        given = "labels taken from the runs" if from_runs else "labels given as a table"
        return [Check(OK, "labels.time", f"{given} record no created_at: label timing not checked")]
    if l_time is None:
        l_time = datetime.fromtimestamp(frozen.path.stat().st_mtime).astimezone()
    if l_time > b_time:
        source = "its created_at" if recorded else "its file time (a copy or checkout also sets this)"
        return [
            Check(
                ERROR if recorded else WARNING,
                "labels.time",
                f"labels written after the treatment run: {l_time.isoformat(timespec='seconds')} by "
                f"{source}, {ev.b.name} created {b_time.isoformat(timespec='seconds')}",
                {"by_created_at": recorded},
            )
        ]
    return [Check(OK, "labels.time", f"labels ({l_time.date()}) predate {ev.b.name} ({b_time.date()})")]


def check_labels(ev: Evaluation) -> list[Check]:
    lab = ev.inputs.frozen
    if not lab.duplicate_pairs:
        return []
    names = [f"{q}/{c}" for q, c in lab.duplicate_pairs]
    return [
        Check(
            WARNING,
            "labels.duplicates",
            f"{len(names)} (query, chunk) pairs labelled more than once; highest grade kept: {some(names)}",
            {"count": len(names)},
        )
    ]


def check_slices(ev: Evaluation) -> list[Check]:
    """Slice columns given by both a run and the queries file must agree."""
    out = []
    for arm in ev.arms:
        for col in ("tenant", "filter", "selectivity"):
            mine, theirs = arm.aligned(col), ev.queries_aligned(col)
            if mine is None or theirs is None:
                continue
            differ = pc.fill_null(pc.not_equal(mine, pc.cast(theirs, mine.type)), False)
            differ = differ.to_numpy(zero_copy_only=False)
            if differ.any():
                q = int(np.flatnonzero(differ)[0])
                out.append(
                    Check(
                        ERROR,
                        "queries.conflict",
                        f"{arm.run.path.name} and the queries file disagree on {col} for "
                        f"{int(differ.sum())} queries, e.g. {ev.query_ids[q].as_py()!r}: "
                        f"{mine[q].as_py()!r} vs {theirs[q].as_py()!r}",
                    )
                )
    return out


def check_reconcile(ev: Evaluation) -> list[Check]:
    p = ev.paired()
    ha, hb = ev.means(ev.a).hit_rate, ev.means(ev.b).hit_rate
    cells = (
        f"both_hit {p.both_hit}, both_miss {p.both_miss}, a_miss_b_hit {p.a_miss_b_hit}, "
        f"a_hit_b_miss {p.a_hit_b_miss}"
    )
    if p.reconciles(ha, hb):
        return [Check(OK, "paired.reconcile", f"paired cells {cells} reproduce both hit rates")]
    return [Check(ERROR, "paired.reconcile", f"paired cells {cells} do not reproduce hit rates {ha} / {hb}")]


def input_checks(ev: Evaluation) -> list[Check]:
    """The checks no judgement can change (k, lists, metadata, label time, the label file, slice
    columns, the truth judged against): run once per evaluation opened."""
    return (
        check_k(ev)
        + check_lists(ev)
        + check_metadata(ev)
        + check_label_time(ev)
        + check_labels(ev)
        + check_slices(ev)
        + check_rag(ev)
        + truth_checks(ev)
    )


def gold_checks(ev: Evaluation) -> list[Check]:
    """The checks that read the gold (what is scored, what was found): run again after a decision."""
    return check_reconcile(ev) + check_queries(ev) + check_eligible(ev) + check_postfiltered(ev)
