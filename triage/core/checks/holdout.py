"""Held-out queries: those whose every gold chunk comes from a held-out document (core/inputs/split.py).

Per scored query, from its gold in force (amendments included): *tuned* when any gold chunk's
document may have been tuned on, *held out* when every gold chunk's document is held out,
*unknown* otherwise (a gold chunk whose document is not known: absent from the corpus, or a null
`doc_id`). The three partition the scored queries. The check `holdout.tuned_targets` counts the
tuned ones; the held-out metrics are the arms' means over the held-out queries alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from triage.core.checks.model import OK, WARNING, Check, some
from triage.core.evaluation import Evaluation
from triage.core.inputs.split import DocSplit
from triage.core.measures.metrics import Means, means
from triage.core.measures.paired import Paired, paired

UNKNOWN, HELD_OUT, TUNED = 0, 1, 2  # a gold chunk's document


@dataclass(frozen=True)
class QuerySplit:
    """Boolean masks over the query universe; each is a subset of the scored queries."""

    split: DocSplit
    held_out: np.ndarray
    tuned: np.ndarray
    unknown: np.ndarray


def query_split(ev: Evaluation) -> QuerySplit | None:
    """The scored queries split by where their gold comes from; None without a named split."""
    split = ev.inputs.split
    if split is None:
        return None
    vocabulary = ev.gold.vocabulary
    status = np.full(len(vocabulary), UNKNOWN, np.int8)
    # Each corpus chunk's place in the gold vocabulary (hash table over the smaller vocabulary).
    at = pc.index_in(split.chunk_ids, value_set=vocabulary).fill_null(-1).to_numpy(zero_copy_only=False)
    found = (at >= 0) & split.known
    status[at[found]] = np.where(split.held_out[found], HELD_OUT, TUNED)
    sets = ev.gold.sets
    pair = status[sets.code]
    tuned_any = np.bincount(sets.query[pair == TUNED], minlength=ev.n) > 0
    unknown_any = np.bincount(sets.query[pair == UNKNOWN], minlength=ev.n) > 0
    scored = ev.scored
    return QuerySplit(
        split,
        held_out=scored & ~tuned_any & ~unknown_any,
        tuned=scored & tuned_any,
        unknown=scored & ~tuned_any & unknown_any,
    )


def held_out_means(ev: Evaluation, qs: QuerySplit) -> tuple[Means, Means, Paired]:
    """Each arm's means, and the paired table, over the held-out queries alone."""
    a, b = ev.a.judged, ev.b.judged
    return means(a, qs.held_out), means(b, qs.held_out), paired(a.hit, b.hit, qs.held_out)


def check_holdout(ev: Evaluation) -> list[Check]:
    """`holdout.tuned_targets`: scored queries whose gold comes from tuned documents (a warning
    naming them), or that the document of some gold is unknown; ok when every scored query is
    held out. `holdout.doc_ids`: a split named but no document known (no corpus, or no doc_id)."""
    qs = query_split(ev)
    n_scored = int(ev.scored.sum())
    named = ev.inputs.spec.holdout
    if qs is None and named is None:
        return []
    if qs is None or not qs.split.known.any():
        why = "no corpus is given" if ev.inputs.corpus is None else "the corpus has no doc_id column"
        holdout = named if qs is None else qs.split.holdout
        assert holdout is not None  # a split named: on the command line, the manifest or the call
        return [
            Check(
                WARNING,
                "holdout.doc_ids",
                f"a tuning split is named ({holdout.describe()}) but {why}: no query's "
                "documents are known, so no held-out figure is given",
                {"held_out": 0, "tuned": 0, "unknown": n_scored},
            )
        ]
    split = qs.split
    n_held, n_tuned, n_unknown = (int(m.sum()) for m in (qs.held_out, qs.tuned, qs.unknown))
    facts = {
        "held_out": n_held,
        "tuned": n_tuned,
        "unknown": n_unknown,
        "docs": split.n_docs,
        "held_out_docs": split.n_held_out_docs,
        "unmatched_tuned_ids": len(split.unmatched),
    }
    parts = []
    if n_tuned:
        parts.append(
            f"{n_tuned} of {n_scored} scored queries have gold from tuned documents: "
            f"{some(ev.ids_where(qs.tuned))}"
        )
    if n_unknown:
        parts.append(
            f"{n_unknown} have gold whose document is unknown (absent from the corpus or no doc_id): "
            f"{some(ev.ids_where(qs.unknown))}"
        )
    if split.unmatched:
        name = "id names" if len(split.unmatched) == 1 else "ids name"
        unmatched = some(list(split.unmatched))
        parts.append(f"{len(split.unmatched)} tuned {name} no document of the corpus: {unmatched}")
    held = (
        f"the held-out figure is over the other {n_held} "
        f"({split.n_held_out_docs} of {split.n_docs} documents held out)"
    )
    if not parts:
        return [Check(OK, "holdout.tuned_targets", f"every scored query's gold is held out ({held})", facts)]
    return [Check(WARNING, "holdout.tuned_targets", "; ".join(parts) + f"; {held}", facts)]
