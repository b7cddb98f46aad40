"""`readers.validate_text` refuses what Arrow's full validation refuses, worded the same; a table
given through the API is refused by name."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from triage.core.errors import InputError
from triage.core.inputs.readers import from_table, validate_text


def test_validate_text_refuses_what_the_full_validation_refuses() -> None:
    # ASCII text skips Arrow's UTF-8 decoding; bytes past ASCII, and offsets that fall (possible in
    # an array built from buffers), still get the full check.
    good = pa.table({"q": ["q1", "q2"], "ids": [["a", "b"], ["c"]], "n": [1, 2]})
    validate_text(good)
    bad_byte = pa.array([b"q1", b"q\xff"], pa.binary()).view(pa.string())
    fall = pa.py_buffer(np.array([0, 5, 3], np.int32).tobytes())
    falling = pa.Array.from_buffers(pa.string(), 2, [None, fall, pa.py_buffer(b"abcdef")])
    listed = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), falling)
    # A bad byte in a list's child that the list's slice does not reach: the full check reads it.
    child = pa.array([b"a", b"b", b"\xff"], pa.binary()).view(pa.string())
    unreached = pa.ListArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), child).slice(0, 2)
    for col in (bad_byte, falling, listed, unreached):
        table = pa.table({"n": list(range(len(col))), "x": col})
        with pytest.raises(pa.ArrowInvalid) as full:
            table.validate(full=True)
        with pytest.raises(pa.ArrowInvalid) as ours:
            validate_text(table)
        assert str(ours.value) == str(full.value)  # worded the same: "Column 1: …"
    # Given as a table (the Python API's way), each is refused by name, never a crash.
    for col, words in ((bad_byte, "not UTF-8"), (falling, "is corrupt"), (unreached, "is corrupt")):
        with pytest.raises(InputError, match=words):
            from_table("run a", pa.table({"x": col}))
