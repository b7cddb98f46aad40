"""Likely-also-gold passages across an evaluation (`triage labels suggest`): the near-duplicate rule
of `core.suggest`, applied to the rows a detail shows, for every scored query that misses in at
least one arm (where a missing label can change a number)."""

from __future__ import annotations

import numpy as np

from triage.core.errors import InputError
from triage.core.inputs.corpus import Corpus, open_corpus
from triage.core.measures.paired import Outcome
from triage.core.text.suggest import THRESHOLD, Suggestion, near_duplicates
from triage.workspace.detail import shown_ids
from triage.workspace.snapshot import Snapshot

__all__ = ["THRESHOLD", "Suggestion", "suggest", "suggestions_for"]


def suggest(snapshot: Snapshot) -> list[Suggestion]:
    """`suggestions_for` the evaluation's corpus; an `InputError` when it has none (suggestions
    compare chunk texts)."""
    spec = snapshot.spec
    if spec.corpus is None:
        raise InputError(spec.manifest or "command line", "suggestions compare chunk texts: give a corpus")
    return suggestions_for(snapshot, open_corpus(spec.corpus, fmt=spec.corpus_format))


def suggestions_for(snapshot: Snapshot, corpus: Corpus) -> list[Suggestion]:
    """One look-up of each query's gold and shown ids; no detail is assembled."""
    ev = snapshot.ev
    outcomes = ev.outcomes
    out = []
    wanted = (outcomes != Outcome.BOTH_HIT) & (outcomes != Outcome.UNSCORED)
    for q in np.flatnonzero(wanted).tolist():
        gold = dict(ev.gold_of(q))
        list_a, list_b = shown_ids(ev, q)
        chunks = corpus.get(list(gold) + list_a + list_b)
        found = near_duplicates(
            {c: (chunks[c].header, chunks[c].text) for c in gold if c in chunks},
            {c: (chunks[c].header, chunks[c].text) for c in list_a + list_b if c in chunks and c not in gold},
        )
        query_id = ev.query_ids[q].as_py()
        for cid, (gold_id, sim) in found.items():
            rank_a = list_a.index(cid) + 1 if cid in list_a else None
            rank_b = list_b.index(cid) + 1 if cid in list_b else None
            out.append(Suggestion(query_id, cid, gold_id, sim, rank_a, rank_b))
    return out
