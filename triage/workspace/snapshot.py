"""An evaluation with its label state and its checks: everything one label-state version shows.

`open_snapshot` reads the inputs (core) and the amendment log (labels) and judges both arms on the
effective labels. A decision gives a new label state, and `with_labels` the next snapshot: only the
queries it names are judged again; nothing of the old snapshot changes, so a worker still holding
it computes on consistent numbers, and its result is recognised as stale by `version`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

from triage.core.checks.holdout import check_holdout
from triage.core.checks.model import Check, worst_first
from triage.core.checks.suite import PENDING, check_corpus, gold_checks, input_checks
from triage.core.evaluation import Cutoffs, Evaluation, evaluate, judged_on_truth
from triage.core.inputs.load import FILES, Inputs, Tables, load_inputs
from triage.core.inputs.manifest import Spec
from triage.core.truth.folder import open_truth_folder
from triage.labels.amendment_checks import check_amendments
from triage.labels.log import default_folder, read_log
from triage.labels.state import LabelMode, LabelState
from triage.labels.verdicts import Verdicts


@dataclass(frozen=True, repr=False)  # its labels hold every record: a repr names it by version
class Snapshot:
    labels: LabelState
    ev: Evaluation
    input_checks: tuple[Check, ...]  # of the inputs: no judgement changes them
    own_checks: tuple[Check, ...]  # of the gold and the label store: run again per decision
    # The corpus checks: done; under way beside the rest of a report's work (`open_snapshot`); or
    # None, not run yet (the app runs them after painting). Read them as `corpus_checks`.
    corpus_run: tuple[Check, ...] | Future[list[Check]] | None

    @property
    def verdicts(self) -> Verdicts:
        """Every reviewer's latest verdict per query, saved or held in memory (no number reads them)."""
        return self.labels.verdicts

    @property
    def inputs(self) -> Inputs:
        return self.ev.inputs

    @property
    def spec(self) -> Spec:
        return self.ev.inputs.spec

    @property
    def corpus_checks(self) -> tuple[Check, ...] | None:
        """The corpus checks (None: not run yet), waited for when they are under way."""
        run = self.corpus_run
        return tuple(run.result()) if isinstance(run, Future) else run

    @property
    def checks(self) -> list[Check]:
        """Every check, errors first."""
        corpus = self.corpus_checks if self.corpus_checks is not None else (PENDING,)
        return worst_first([*self.input_checks, *self.own_checks, *corpus])

    @property
    def version(self) -> str:
        """Names what this snapshot shows; results cached for another version are stale."""
        return f"{self.labels.version}|{'corpus' if self.corpus_run is not None else 'pending'}"

    def __repr__(self) -> str:
        return f"Snapshot({self.version!r})"

    def with_labels(self, labels: LabelState, query_ids: Iterable[str]) -> Snapshot:
        """The snapshot for `labels`, which differs from this one's only for `query_ids`."""
        ev = self.ev
        for query_id in dict.fromkeys(query_ids):
            q = ev.query_index(query_id)
            if q >= 0:
                ev = ev.rejudged(q, labels.gold_for(query_id), list(labels.judged_for(query_id)))
        return replace(self, labels=labels, ev=ev, own_checks=_checks(labels, ev))

    def with_verdicts(self, labels: LabelState) -> Snapshot:
        """The snapshot for `labels`, which differs from this one's only by verdict records: no
        query is judged again, no check runs again, and the version stays."""
        return replace(self, labels=labels)

    def with_corpus_checks(self, checks: list[Check]) -> Snapshot:
        return replace(self, corpus_run=tuple(checks))


def _corpus_run(inputs: Inputs) -> tuple[Check, ...] | Future[list[Check]]:
    """The corpus checks of `inputs`: with a corpus, under way in a thread of their own, on the
    second core while the arms are judged and the report is built on the first (they read only the
    inputs; docs/benchmarks.md "The corpus's cost"); without one, done (nothing to wait for).

    A daemon thread, so a process that stops early (an input error, Ctrl-C) does not first wait
    for a check nobody will read; its result or its error is kept in the Future."""
    if inputs.corpus is None:
        return tuple(check_corpus(inputs))
    done: Future[list[Check]] = Future()
    done.set_running_or_notify_cancel()

    def run() -> None:
        try:
            done.set_result(check_corpus(inputs))
        except BaseException as e:  # kept for whoever reads the checks
            done.set_exception(e)

    threading.Thread(target=run, name="corpus-check", daemon=True).start()
    return done


def _checks(labels: LabelState, ev: Evaluation) -> tuple[Check, ...]:
    return tuple(gold_checks(ev) + check_holdout(ev) + check_amendments(labels, ev))


def open_snapshot(
    spec: Spec,
    k: Cutoffs = None,
    mode: LabelMode = LabelMode.AMENDED,
    apply_stale: bool = False,
    corpus_check: bool = True,
    tables: Tables = FILES,
    scores: bool = True,
    fingerprints: bool = True,
) -> Snapshot:
    """Read every file of `spec` and its amendments, and judge both arms at one k (docs/measures.md "The
    numbers") and every further cut-off of `k`.

    `apply_stale` applies amendment files written against another frozen file. Without
    `corpus_check` the slowest check (every retrieved id against the corpus) is left pending; with
    it, it runs beside the judging, and `Snapshot.corpus_checks` waits for it (`_corpus_run`).
    `tables`: inputs given as tables; labels given so have no folder beside them, so their
    amendments are read only from `spec.amendments`. Without `scores`, the runs' scores are let go
    once checked (for a caller that names no measure and shows no ranked list: `load_inputs`).
    Without `fingerprints`, and with no corpus (whose check and cost rows read them), the runs' id
    fingerprints are let go once the arms are judged (for a caller that judges once and names no
    measure: a report); anything that reads them later computes them again (`Prints`)."""
    with ThreadPoolExecutor(max_workers=1) as pool:  # the truth folder read beside the inputs
        reading = None if spec.truth is None else pool.submit(open_truth_folder, spec.truth)
        inputs = load_inputs(spec, tables, scores)
        truth = None if reading is None else reading.result()
    if truth is not None:  # judged against exact truth: the gold is the truth at the decision k
        inputs = judged_on_truth(inputs, truth, k)
    folder = spec.amendments or (None if "labels" in inputs.given else default_folder(spec.labels))
    corpus = _corpus_run(inputs) if corpus_check or inputs.corpus is None else None
    log = read_log(folder, inputs.frozen.sha256, apply_stale)
    labels = LabelState.read(inputs.frozen, log, mode)
    ev = evaluate(inputs, labels.gold_table(), k, labels.judged_table(), truth)
    if not fingerprints and inputs.corpus is None:
        inputs.a.prints.drop()
        inputs.b.prints.drop()
    return Snapshot(labels, ev, tuple(input_checks(ev)), _checks(labels, ev), corpus)
