"""What was held still (DESIGN §5): each check has a level, a stable code and a one-line message
that names its evidence. Checks never change a number; they say whether to trust it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core import ids

if TYPE_CHECKING:
    from triage.core.evaluation import Arm, Evaluation

OK, WARNING, ERROR = "ok", "warning", "error"
_RANK = {ERROR: 0, WARNING: 1, OK: 2}
SHOW = 5  # ids named in one message


@dataclass(frozen=True)
class Check:
    level: str
    code: str
    message: str


def worst_first(checks: list[Check]) -> list[Check]:
    return sorted(checks, key=lambda c: _RANK[c.level])


def _some(values: list[str], total: int | None = None) -> str:
    total = len(values) if total is None else total
    shown = ", ".join(values[:SHOW])
    return shown + (f", … (+{total - SHOW})" if total > SHOW else "")


def check_k(ev: Evaluation) -> list[Check]:
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
                    f"scored as misses: {_some(names)}",
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
                f"{int(only_b.sum())} only in {ev.b.name}: {_some(ev.ids_where(only_a | only_b))}",
            )
        )
    unlabelled = ~ev.scored & (ev.a.present | ev.b.present)
    if unlabelled.any():
        names = ev.ids_where(unlabelled)
        out.append(
            Check(
                WARNING,
                "labels.unlabelled",
                f"{len(names)} queries have no gold (relevance ≥ 1) and are not scored: {_some(names)}",
            )
        )
    return out


def absent_from(values: pa.Array, corpus_ids: pa.Array) -> pa.Array:
    """The distinct `values` not among `corpus_ids`; the hash table is built over the smaller side."""
    if len(values) * 4 < len(corpus_ids):
        found = corpus_ids.filter(pc.is_in(corpus_ids, value_set=values))
        return pc.unique(values.filter(pc.invert(pc.is_in(values, value_set=found))))
    return pc.unique(values.filter(pc.invert(pc.is_in(values, value_set=corpus_ids))))


PENDING_CORPUS = "corpus.checking"


def check_corpus(ev: Evaluation) -> list[Check]:
    """Retrieved and gold ids against the corpus (the arms in two threads: ~1 s per 10M ids)."""
    if ev.corpus_ids is None:
        return [Check(OK, "corpus.ids", "no corpus given: chunk ids not checked against it")]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        per_arm = list(pool.map(lambda arm: absent_from(arm.run.retrieved.flatten(), ev.corpus_ids), ev.arms))
    out = []
    for arm, missing in zip(ev.arms, per_arm, strict=True):
        if len(missing):
            out.append(
                Check(
                    WARNING,
                    "corpus.retrieved",
                    f"{len(missing)} ids retrieved by {arm.name} are absent from the corpus: "
                    f"{_some(missing.to_pylist()[:SHOW], len(missing))}",
                )
            )
    missing = absent_from(ev.gold.vocabulary, ev.corpus_ids)
    if len(missing):
        out.append(
            Check(
                WARNING,
                "corpus.gold",
                f"{len(missing)} gold ids are absent from the corpus: {_some(missing.to_pylist())}",
            )
        )
    return out or [Check(OK, "corpus.ids", "every retrieved and gold id is in the corpus")]


def check_lists(ev: Evaluation) -> list[Check]:
    out = []
    for arm in ev.arms:
        out.extend(_duplicates(arm) + _score_order(arm))
    return out


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
    if "scores" not in arm.run.table.column_names:
        return []
    if len(rows) == 0:
        return [Check(OK, "run.scores_order", f"{arm.name}: scores descend in every list")]
    qid = arm.run.table.column("query_id").take(pa.array(rows[:SHOW])).to_pylist()
    return [
        Check(
            WARNING,
            "run.scores_order",
            f"{arm.run.path.name}: scores rise within {len(rows)} ranked lists: {_some(qid, len(rows))}",
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
        if recorded and recorded.lower() != ev.labels.frozen.sha256:
            out.append(
                Check(
                    WARNING,
                    "meta.labels_sha256",
                    f"{arm.name} records labels_sha256 {recorded[:12]}, the frozen file is "
                    f"{ev.labels.frozen.sha256[:12]}: that run was scored against other labels",
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
    l_time = _when(ev.labels.frozen.meta.get("created_at"))
    source = "its created_at"
    if l_time is None:
        l_time = datetime.fromtimestamp(ev.labels.frozen.path.stat().st_mtime).astimezone()
        source = "its file time (a copy or checkout also sets this)"
    if l_time > b_time:
        level = ERROR if source == "its created_at" else WARNING
        return [
            Check(
                level,
                "labels.time",
                f"labels written after the treatment run: {l_time.isoformat(timespec='seconds')} by "
                f"{source}, {ev.b.name} created {b_time.isoformat(timespec='seconds')}",
            )
        ]
    return [Check(OK, "labels.time", f"labels ({l_time.date()}) predate {ev.b.name} ({b_time.date()})")]


def check_labels(ev: Evaluation) -> list[Check]:
    lab = ev.labels.frozen
    out = []
    if lab.duplicate_pairs:
        names = [f"{q}/{c}" for q, c in lab.duplicate_pairs]
        out.append(
            Check(
                WARNING,
                "labels.duplicates",
                f"{len(names)} (query, chunk) pairs labelled more than once; highest grade kept: "
                f"{_some(names)}",
            )
        )
    return out + check_amendments(ev)


def check_amendments(ev: Evaluation) -> list[Check]:
    state = ev.labels
    log = state.log
    out = []
    adds = state.adds_in_force() if state.amended else []
    if not state.records:
        out.append(Check(OK, "labels.amendments", "no amendments: frozen labels only"))
    elif not state.amended:
        out.append(
            Check(
                OK,
                "labels.amendments",
                f"{len(state.records)} amendments read, not applied (label state: frozen)",
            )
        )
    else:
        arms = state.by_arm()
        split = f"from A's results {arms['a']}, from B's {arms['b']}, without evidence {arms['none']}"
        one_sided = [side for side in ("a", "b") if adds and arms[side] == len(adds)]
        if one_sided:
            name = ev.a.name if one_sided[0] == "a" else ev.b.name
            out.append(
                Check(
                    WARNING,
                    "labels.amendments",
                    f"all {len(adds)} amendments in force were taken from {name}'s results: they "
                    f"can only favour it; compare the frozen numbers",
                )
            )
        else:
            out.append(Check(OK, "labels.amendments", f"{len(adds)} amendments in force ({split})"))
    if log.stale:
        out.append(
            Check(
                ERROR,
                "labels.amendments_base",
                f"{len(log.stale)} amendment files were written against other frozen labels: "
                f"{_some(log.stale)}"
                + (
                    ""
                    if any(p.kind == "base" and "applied anyway" in p.message for p in log.problems)
                    else "; not applied"
                ),
            )
        )
    damaged = [p for p in log.problems if p.kind != "base"]
    if damaged:
        out.append(
            Check(
                WARNING,
                "labels.amendments_damaged",
                f"{len(damaged)} amendment lines skipped: {'; '.join(str(p) for p in damaged[:SHOW])}",
            )
        )
    named = pa.array(sorted({r.query_id for r in adds}), pa.string())
    unknown = named.filter(pa.array(ids.positions(named.to_pylist(), ev.query_ids) < 0)).to_pylist()
    if unknown:
        out.append(
            Check(
                WARNING,
                "labels.amendments_unknown",
                f"amendments name {len(unknown)} queries no input knows: {_some(unknown)}",
            )
        )
    if ev.corpus_ids is not None and adds:
        missing = ev.absent_chunks(sorted({r.chunk_id for r in adds}))
        if missing:
            out.append(
                Check(
                    WARNING,
                    "labels.amendments_corpus",
                    f"amendments name {len(missing)} chunks absent from the corpus: {_some(missing)}",
                )
            )
    return out


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


def run_checks(ev: Evaluation, corpus: bool = True) -> list[Check]:
    """Every check; with `corpus=False` the corpus check is left pending (`finish_corpus_check`)."""
    checks = (
        check_k(ev)
        + check_reconcile(ev)
        + check_queries(ev)
        + (
            check_corpus(ev)
            if corpus or ev.corpus_ids is None
            else [Check(OK, PENDING_CORPUS, "checking retrieved and gold ids against the corpus…")]
        )
        + check_lists(ev)
        + check_metadata(ev)
        + check_label_time(ev)
        + check_labels(ev)
        + check_slices(ev)
    )
    return worst_first(checks)


def finish_corpus_check(ev: Evaluation) -> None:
    """Replace the pending corpus check with its result (the app runs this in a worker)."""
    done = check_corpus(ev)
    ev.checks = worst_first([c for c in ev.checks if c.code != PENDING_CORPUS] + done)
