"""The UI's one handle on the data: an evaluation, its corpus, and the orders screens list.

Screens read from a Session and never compute a metric; everything numeric comes from the core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa

from triage.core.corpus import Corpus
from triage.core.detail import QueryDetail, build_detail
from triage.core.evaluation import Evaluation, load
from triage.core.manifest import Spec, from_manifest
from triage.core.paired import A_HIT_B_MISS
from triage.core.search import Searcher
from triage.core.slices import Slice, Tenants, all_slices, tenants
from triage.labels.review import Change, Review
from triage.report.model import build


@dataclass
class Session:
    ev: Evaluation
    corpus: Corpus | None = None
    corpus_note: str = "no corpus given"  # shown where chunk text would be
    reviewer: str | None = None  # --reviewer; else TRIAGE_REVIEWER or the login name
    floor: float = 0.80  # tenant hit-rate floor (--floor)
    version: int = 0  # bumped by every amendment: screens showing numbers redraw when it moved
    flips: np.ndarray = field(init=False)  # query indices in flip order
    outcomes: np.ndarray = field(init=False)
    texts: pa.Array = field(init=False)
    tenant_of: pa.Array = field(init=False)  # each query's tenant (null: none)
    searcher: Searcher = field(init=False)

    _prefetched: dict[tuple[int, int, bool], QueryDetail] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self.refresh()
        self.texts = self.ev.query_column("text")
        self.tenant_of = self.ev.query_column("tenant")
        self.searcher = Searcher(self.ev.query_ids, self.texts)
        if self.ev.spec.corpus is not None:
            self.corpus_note = "corpus loading…"

    def refresh(self) -> None:
        """Recompute what depends on the labels (after an amendment, say)."""
        self.flips = self.ev.flips()
        self.outcomes = self.ev.outcomes()
        self._report: dict | None = None
        self._slices: dict[str, list[Slice]] | None = None
        self._tenants: Tenants | None = None

    @property
    def slices(self) -> dict[str, list[Slice]]:
        if self._slices is None:
            self._slices = all_slices(self.ev)
        return self._slices

    @property
    def tenants(self) -> Tenants | None:
        if self._tenants is None:
            self._tenants = tenants(self.ev, self.floor)
        return self._tenants

    @property
    def report(self) -> dict:
        """The report's numbers (built on first use after each change)."""
        if self._report is None:
            self._report = build(self.ev, self.floor)
        return self._report

    def checks_changed(self) -> None:
        """A deferred check finished: only the report's numbers are stale (not flips or slices)."""
        self._report = None
        self.version += 1

    @cached_property
    def review(self) -> Review:
        return Review(self.ev, self.reviewer)

    def amended(self, change: Change | None) -> Change | None:
        """Call after a review decision: the numbers screens show move on."""
        if change is not None:
            self.refresh()
            self.version += 1
        return change

    @property
    def n_regressions(self) -> int:
        return int((self.outcomes[self.flips] == A_HIT_B_MISS).sum())

    def flip_label(self, position: int) -> str:
        """ "regression 2 of 6" or "win 3 of 40" for position `position` of the flip order."""
        return flip_label(position, self.n_regressions, len(self.flips))

    def query_id(self, q: int) -> str:
        return self.ev.query_ids[q].as_py()

    def detail(self, q: int) -> QueryDetail:
        """Query `q`'s detail; one prepared ahead by `prefetch` is used while still current."""
        key = (q, self.version, self.corpus is not None)
        ready = self._prefetched.pop(key, None)
        return ready if ready is not None else build_detail(self.ev, q, self.corpus)

    def prefetch(self, q: int) -> None:
        """Build query `q`'s detail ahead (in a worker): its chunks' pages are read meanwhile."""
        key = (q, self.version, self.corpus is not None)
        if key not in self._prefetched:
            detail = build_detail(self.ev, q, self.corpus)
            self._prefetched = {key: detail}  # only the next one is kept


def flip_label(position: int, n_regressions: int, n_flips: int) -> str:
    if position < n_regressions:
        return f"regression {position + 1} of {n_regressions}"
    return f"win {position - n_regressions + 1} of {n_flips - n_regressions}"


Source = Spec | Path | Callable[[], Spec] | None


def open_session(
    source: Source, k: int | None = None, reviewer: str | None = None, floor: float = 0.80
) -> Session:
    """A Spec, a manifest path, a callable giving a Spec, or None (the bundled sample)."""
    from triage.resources import sample_manifest

    if callable(source):
        source = source()
    spec = source if isinstance(source, Spec) else from_manifest(source or sample_manifest())
    # The corpus check (every retrieved id against the corpus) runs after the first paint.
    return Session(load(spec, k, defer_corpus_check=True), reviewer=reviewer, floor=floor)
