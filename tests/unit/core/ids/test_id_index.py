"""The id index (core/ids/index.py): `IdIndex` holds exactly its ids, past full slots and past the
last home slot, and `CorpusIds` finds each id's first row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.core.ids.codes import fingerprint
from triage.core.ids.index import CorpusIds


# hypothesis in the quick loop: this one stays out of the `slow` mark
@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(max_size=12), max_size=200, unique=True),
    st.lists(st.text(max_size=12), max_size=200),
)
def test_an_id_index_holds_exactly_its_ids(corpus: list[str], asked: list[str]) -> None:
    from triage.core.ids.index import IdIndex

    index = IdIndex.build(fingerprint(pa.array(corpus, pa.string())))
    values = asked + corpus[::3]
    held = index.contains(fingerprint(pa.array(values, pa.string())), batch=7)
    assert held.tolist() == [v in set(corpus) for v in values]


def test_an_id_index_probes_past_full_slots_and_keeps_repeated_keys() -> None:
    from triage.core.ids.index import IdIndex

    # Keys built to share their low bits (the slot): one long probe chain; a key given twice; 0.
    keys = np.array([(i << 20) | 5 for i in range(1, 40)] + [7 << 20 | 5, 0], np.uint64)
    index = IdIndex.build(keys)
    asked = np.array([(i << 20) | 5 for i in range(1, 45)] + [0, 6], np.uint64)
    want = [i < 40 for i in range(1, 45)] + [True, False]
    assert index.contains(asked).tolist() == want


def test_an_id_index_runs_past_its_last_home_slot_instead_of_wrapping() -> None:
    from triage.core.ids.index import IdIndex

    # 8 keys whose home is the last slot (low bits all ones) and 3 at slot 0: the first run
    # spills past the end of the home slots, the second must not be taken for its continuation.
    keys = np.array([(i << 20) | 0xFFFFF for i in range(1, 9)] + [(i << 20) for i in range(1, 4)], np.uint64)
    index = IdIndex.build(keys)
    assert index.mask < 0xFFFFF  # 11 ids: 64 home slots, all these keys at the last one or the first
    asked = np.array(
        [(i << 20) | 0xFFFFF for i in range(1, 12)] + [(i << 20) for i in range(1, 6)], np.uint64
    )
    want = [i < 9 for i in range(1, 12)] + [i < 4 for i in range(1, 6)]
    assert index.contains(asked).tolist() == want
    assert index.table[-1] == 0  # a probe ends at a free slot


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=6), max_size=120), st.lists(st.text(max_size=6), max_size=60))
def test_corpus_ids_find_each_ids_first_row(corpus: list[str], asked: list[str]) -> None:
    from triage.core.ids.index import by_slot

    chunk_ids = pa.array(corpus, pa.string())
    first = {}
    for row, c in enumerate(corpus):
        first.setdefault(c, row)
    values = asked + corpus[::2]
    for built in (
        CorpusIds(chunk_ids),
        CorpusIds(chunk_ids, fingerprint(chunk_ids), by_slot(fingerprint(chunk_ids))),
    ):
        found = built.find(fingerprint(pa.array(values, pa.string())))
        assert found.tolist() == [first.get(v, -1) for v in values]
        assert built.holds(fingerprint(pa.array(values, pa.string()))).tolist() == [
            v in first for v in values
        ]
