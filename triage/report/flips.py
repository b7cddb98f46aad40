"""The flips section of a report: one row per flip, in flip order, held as columns.

An evaluation may have hundreds of thousands of flips. Their columns stay Arrow arrays, the JSON
is spelled by Arrow's string kernels (no Python per flip), and a `FlipRow` is made only for a row
that is read: text and Markdown list the first FLIP_CAP flips of each direction.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.hints import FACTS, KINDS, FlipHints, Hint, HintTable
from triage.core.paired import Outcome


@dataclass(frozen=True, slots=True)
class FlipRow:
    query_id: str
    direction: Outcome  # HIT_TO_MISS or MISS_TO_HIT
    gold_rank_a: int | None  # None: absent from the stored depth
    gold_rank_b: int | None
    depth_a: int
    depth_b: int
    plan_a: str | None
    plan_b: str | None
    tenant: str | None
    unjudged_in_top_k_a: int  # unjudged ids in A's top k for this query
    unjudged_in_top_k_b: int
    text: str | None = None  # the query's text (None: unknown)
    hints: tuple[Hint, ...] = ()  # likely causes for the arm that lost, most specific first


# The columns of `Flips`, in JSON order: FlipRow's fields but its hints. `direction` holds
# Outcome codes (int8); a gold rank is null where the gold is absent from the stored depth.
COLUMNS = tuple(f for f in FlipRow.__dataclass_fields__ if f != "hints")
_TEXT = ("query_id", "plan_a", "plan_b", "tenant", "text")


class Flips(Sequence[FlipRow]):
    """Every flip of a report, hit→miss first (`Evaluation.flips` order), as columns."""

    def __init__(self, columns: Mapping[str, pa.Array], hints: FlipHints | None = None) -> None:
        assert tuple(columns) == COLUMNS, tuple(columns)
        self.columns = dict(columns)
        self.hints = hints
        self._n = len(columns["query_id"])

    @classmethod
    def none(cls) -> Flips:
        """No flip rows (the app's screens list flips from the session)."""
        empty = {c: pa.array([], pa.string() if c in _TEXT else pa.int64()) for c in COLUMNS}
        empty["direction"] = pa.array([], pa.int8())
        return cls(empty)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> FlipRow: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[FlipRow, ...]: ...
    def __getitem__(self, i: int | slice) -> FlipRow | tuple[FlipRow, ...]:
        if isinstance(i, slice):
            return tuple(self.rows(np.arange(self._n)[i]))
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self.rows(np.array([i % self._n]))[0]

    def __iter__(self) -> Iterator[FlipRow]:
        return iter(self.rows(np.arange(self._n)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Flips({self._n} rows)"

    @property
    def directions(self) -> np.ndarray:
        """Each flip's Outcome code (int8)."""
        return self.columns["direction"].to_numpy(zero_copy_only=False)

    def rows(self, at: np.ndarray) -> list[FlipRow]:
        """The rows at positions `at`, as FlipRow objects."""
        take = pa.array(np.asarray(at, np.int64))
        values = {c: self.columns[c].take(take).to_pylist() for c in COLUMNS}
        values["direction"] = [Outcome(d) for d in values["direction"]]
        hints = self.hints
        found = [hints.of(i) for i in at.tolist()] if hints is not None else [()] * len(at)
        columns = zip(*values.values(), found, strict=True)
        return [FlipRow(*cells) for cells in columns]  # type: ignore[arg-type]  # COLUMNS, then hints

    def first_of_each(self, cap: int) -> tuple[list[FlipRow], int]:
        """The first `cap` flips of each direction (order kept) and how many were left out."""
        d = self.directions
        kept = np.zeros(self._n, bool)
        for code in np.unique(d):
            kept[np.flatnonzero(d == code)[:cap]] = True
        return self.rows(np.flatnonzero(kept)), int((~kept).sum())

    def json(self) -> str:
        """The JSON array of the rows, as `json.dumps` spells dicts of FlipRow's fields (with its
        default separators); no Python per row."""
        if self._n == 0:
            return "[]"
        c = self.columns
        hit_to_miss = pc.equal(c["direction"], int(Outcome.HIT_TO_MISS))
        direction = pc.if_else(
            hit_to_miss, json.dumps(Outcome.HIT_TO_MISS.json), json.dumps(Outcome.MISS_TO_HIT.json)
        )
        spelled = {name: _js(col) if name in _TEXT else _number(col) for name, col in c.items()}
        spelled["direction"] = direction
        parts: list[pa.Array | str] = []
        for i, (name, value) in enumerate(spelled.items()):
            parts += [("{" if i == 0 else ", ") + f'"{name}": ', value]
        parts += [', "hints": ', _hints_json(self.hints, self._n), "}"]
        chunks = (  # a slice of rows at a time: every Arrow string array stays far below 2 GiB
            _joined(_cat(*(p.slice(lo, _ROWS) if isinstance(p, pa.Array) else p for p in parts)), ", ")
            for lo in range(0, self._n, _ROWS)
        )
        return "[" + ", ".join(chunks) + "]"


_ROWS = 1 << 16  # rows spelled at a time


def hint_dict(h: Hint) -> dict[str, object]:
    """A hint as JSON holds it: kind, arm, evidence, facts."""
    return {"kind": h.kind.value, "arm": h.arm, "evidence": h.evidence, "facts": h.facts}


def _item(x: object) -> object:
    """A numpy number in a hint's facts, as the Python number JSON spells."""
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"no JSON spelling for {type(x).__name__}")


def _hints_json(hints: FlipHints | None, n: int) -> pa.Array:
    """Each flip's hints as a JSON array (text)."""
    if hints is None:
        return pa.array(["[]"] * n, pa.string())
    read = [
        json.dumps([hint_dict(h) for h in found], ensure_ascii=False, allow_nan=False, default=_item)
        for found in hints.read
    ]
    rest = hints.rest
    one = _table_json(rest)  # every hint of the rest, one JSON object each
    per_flip = pa.ListArray.from_arrays(pa.array(rest.starts, pa.int32()), one)
    return pa.concat_arrays([pa.array(read, pa.string()), _cat("[", pc.binary_join(per_flip, ", "), "]")])


def _table_json(t: HintTable) -> pa.Array:
    """Each hint of `t` as a JSON object (text), in `t`'s row order."""
    facts = pa.nulls(len(t.kind), pa.string())
    for code in np.unique(t.kind).tolist():
        kind = KINDS[code]
        mask = pa.array(t.kind == code)
        parts: list[pa.Array | str] = []
        for i, name in enumerate(FACTS[kind]):
            col = t.facts[name].filter(mask)
            parts += [
                ("{" if i == 0 else ", ") + f'"{name}": ',
                _js(col) if pa.types.is_string(col.type) else _number(col),
            ]
        spelled = _cat(*parts, "}")
        facts = pc.replace_with_mask(facts, mask, spelled)
    kind = pa.array([KINDS[i].value for i in range(len(KINDS))]).take(pa.array(t.kind))
    arm = pc.if_else(pa.array(t.b), "b", "a")
    return _cat(
        '{"kind": "', kind, '", "arm": "', arm, '", "evidence": ', _js(t.evidence), ', "facts": ', facts, "}"
    )


def _cat(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _joined(values: pa.Array, sep: str) -> str:
    """One string of all `values` (none null) with `sep` between."""
    one = pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()), values)
    return str(pc.binary_join(one, sep)[0].as_py())


# A string needs escaping in JSON when it holds a quote, a backslash or a control character.
_ESCAPE = r'["\\\x00-\x1f]'


def _js(values: pa.Array) -> pa.Array:
    """Each value as a JSON string literal, as `json.dumps(v, ensure_ascii=False)` spells it
    (null: null). The few strings that need escapes are spelled by `json.dumps` itself."""
    values = pc.cast(values, pa.string())
    quoted = _cat('"', values, '"')
    odd = pc.fill_null(pc.match_substring_regex(values, _ESCAPE), False)
    if pc.any(odd).as_py():
        rows = pa.array(np.flatnonzero(odd.to_numpy(zero_copy_only=False)))
        spelled = [json.dumps(v, ensure_ascii=False) for v in values.take(rows).to_pylist()]
        quoted = pc.replace_with_mask(quoted, odd, pa.array(spelled, pa.string()))
    return pc.fill_null(quoted, "null")


def _number(values: pa.Array) -> pa.Array:
    """Whole numbers and booleans as JSON spells them (null: null)."""
    if pa.types.is_boolean(values.type):
        return pc.fill_null(pc.if_else(values, "true", "false"), "null")
    return pc.fill_null(pc.cast(values, pa.string()), "null")
