"""The flips section of a report: one row per flip, in flip order, held as columns.

An evaluation may have hundreds of thousands of flips. Their columns stay Arrow arrays, the JSON
is spelled by Arrow's string kernels (no Python per flip), and a `FlipRow` is made only for a row
that is read: text and Markdown list the first FLIP_CAP flips of each direction.
"""

from __future__ import annotations

import io
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, fields, replace
from typing import BinaryIO, ClassVar, Self, TypeVar, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.ids import codes
from triage.core.measures.paired import Outcome
from triage.core.views.hints import FACTS, KINDS, FlipHints, Hint, HintTable, join_text
from triage.labels import jsontext


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


R = TypeVar("R")


class Rows(Sequence[R]):
    """Rows of one dataclass held as columns: one Arrow array per field, in the field order
    (`fields` of the class). A row object is made only for a row that is read; the JSON array is
    spelled from the columns, as `json.dumps` spells a list of dicts of the rows' fields."""

    row_type: ClassVar[type]
    text: ClassVar[tuple[str, ...]]  # the fields held as strings (the rest: whole numbers)
    derived: ClassVar[tuple[str, ...]] = ()  # fields not held as columns (a subclass makes them)

    def __init__(self, columns: Mapping[str, pa.Array]) -> None:
        assert tuple(columns) == self.names(), tuple(columns)
        self.columns = {c: _one(v) for c, v in columns.items()}
        self._n = len(next(iter(columns.values())))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The row type's fields, in its order (the JSON's)."""
        return tuple(f.name for f in fields(cls.row_type))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The columns held: the fields but the derived ones."""
        return tuple(f for f in cls.field_names() if f not in cls.derived)

    @classmethod
    def none(cls) -> Self:
        """No rows."""
        return cls({c: pa.array([], pa.string() if c in cls.text else pa.int64()) for c in cls.names()})

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> R: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[R, ...]: ...
    def __getitem__(self, i: int | slice) -> R | tuple[R, ...]:
        if isinstance(i, slice):
            return tuple(self.rows(np.arange(self._n)[i]))
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self.rows(np.array([i % self._n]))[0]

    def __iter__(self) -> Iterator[R]:
        return iter(self.rows(np.arange(self._n)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._n} rows)"

    def rows(self, at: np.ndarray) -> list[R]:
        """The rows at positions `at`, as row objects."""
        take = pa.array(np.asarray(at, np.int64))
        values = self._values({c: self.columns[c].take(take).to_pylist() for c in self.columns}, at)
        return [self.row_type(*cells) for cells in zip(*(values[f] for f in self.field_names()), strict=True)]

    def _values(self, values: dict[str, list[object]], at: np.ndarray) -> dict[str, list[object]]:
        """The row objects' field values from the columns' (a subclass converts its own)."""
        return values

    def _spelled(self, lo: int, hi: int) -> dict[str, pa.Array]:
        """Each field's JSON text, for the rows lo .. hi."""
        return {
            name: _js(col.slice(lo, hi - lo)) if name in self.text else _number(col.slice(lo, hi - lo))
            for name, col in self.columns.items()
        }

    def write_json(self, out: BinaryIO) -> None:
        """The JSON array of the rows, UTF-8, written to `out` a slice of rows at a time, so the text
        held at once is at most two spelled slices' (at a million queries the flips' JSON is about
        190 MB); no Python per row. Past one slice, two threads spell two slices at once (Arrow's
        kernels let go of the GIL) while the caller's thread writes them in order."""
        out.write(b"[")
        if self._n <= _ROWS:  # one slice at most: no thread
            out.write(self._text(0, self._n) if self._n else b"")
        else:
            with ThreadPoolExecutor(max_workers=2) as pool:
                texts: deque[Future[pa.Buffer]] = deque()
                for lo in range(0, self._n, _ROWS):
                    texts.append(pool.submit(self._text, lo, min(lo + _ROWS, self._n)))
                    if len(texts) == 2:  # the older written; the newer, and the next, spelled meanwhile
                        out.write(texts.popleft().result())
                        out.write(b", ")
                out.write(texts.popleft().result())
        out.write(b"]")

    def _text(self, lo: int, hi: int) -> pa.Buffer:
        """The rows lo .. hi as JSON objects joined by ", " (UTF-8)."""
        spelled = self._spelled(lo, hi)
        parts: list[pa.Array | str] = []
        for i, name in enumerate(self.field_names()):
            parts += [("{" if i == 0 else ", ") + f'"{name}": ', spelled[name]]
        rows = join_text(*parts, "}")
        one = pa.ListArray.from_arrays(pa.array([0, len(rows)], pa.int32()), rows)
        joined = pc.binary_join(one, ", ")
        offsets = np.frombuffer(joined.buffers()[1], np.int32, 2, joined.offset * 4)
        return joined.buffers()[2].slice(int(offsets[0]), int(offsets[1]) - int(offsets[0]))

    def json(self) -> str:
        """The JSON array of the rows (`write_json`'s text)."""
        sink = io.BytesIO()
        self.write_json(sink)
        return sink.getvalue().decode("utf-8")


_ROWS = 1 << 16  # rows spelled at a time


def _one(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


class Flips(Rows[FlipRow]):
    """Every flip of a report, hit→miss first (`Evaluation.flips` order). `direction` holds
    Outcome codes (int8); a gold rank is null where the gold is absent from the stored depth; the
    `hints` column is not held: each flip's hints are `hints.of(position)`."""

    row_type = FlipRow
    text = ("query_id", "plan_a", "plan_b", "tenant", "text")
    derived = ("hints",)

    def __init__(self, columns: Mapping[str, pa.Array], hints: FlipHints | None = None) -> None:
        super().__init__(columns)
        self.hints = hints

    @property
    def directions(self) -> np.ndarray:
        """Each flip's Outcome code (int8)."""
        return self.columns["direction"].to_numpy(zero_copy_only=False)

    def _values(self, values: dict[str, list[object]], at: np.ndarray) -> dict[str, list[object]]:
        values["direction"] = [Outcome(d) for d in values["direction"]]  # type: ignore[arg-type]
        hints = self.hints
        values["hints"] = [hints.of(i) for i in at.tolist()] if hints is not None else [()] * len(at)
        return values

    def _spelled(self, lo: int, hi: int) -> dict[str, pa.Array]:
        spelled = super()._spelled(lo, hi)
        spelled["direction"] = pc.if_else(
            pc.equal(self.columns["direction"].slice(lo, hi - lo), int(Outcome.HIT_TO_MISS)),
            jsontext.dumps(Outcome.HIT_TO_MISS.json).decode(),
            jsontext.dumps(Outcome.MISS_TO_HIT.json).decode(),
        )
        spelled["hints"] = _hints_json(self.hints, lo, hi)
        return spelled

    def first_of_each(self, cap: int) -> tuple[list[FlipRow], int]:
        """The first `cap` flips of each direction (order kept) and how many were left out."""
        d = self.directions
        kept = np.zeros(self._n, bool)
        for code in np.unique(d):
            kept[np.flatnonzero(d == code)[:cap]] = True
        return self.rows(np.flatnonzero(kept)), int((~kept).sum())


COLUMNS = Flips.names()  # the columns a `Flips` is given: FlipRow's fields but its hints


@dataclass(frozen=True, slots=True)
class DropRow:
    query_id: str
    rank_a: int  # best gold rank in A (≤ k: both arms hit)
    rank_b: int  # in B, worse than in A
    drop: int  # rank_b − rank_a
    tenant: str | None
    text: str | None = None  # the query's text (None: unknown)


class Drops(Rows[DropRow]):
    """The both-hit queries whose gold fell in B, largest drop first."""

    row_type = DropRow
    text = ("query_id", "tenant", "text")


def hint_dict(h: Hint) -> dict[str, object]:
    """A hint as JSON holds it: kind, arm, evidence, facts."""
    return {"kind": h.kind.value, "arm": h.arm, "evidence": h.evidence, "facts": h.facts}


def _item(x: object) -> object:
    """A numpy number in a hint's facts, as the Python number JSON spells."""
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"no JSON spelling for {type(x).__name__}")


def _hints_json(hints: FlipHints | None, lo: int, hi: int) -> pa.Array:
    """The hints of each flip lo .. hi as a JSON array (text)."""
    if hints is None:
        return pa.array(["[]"] * (hi - lo), pa.string())
    read = [
        jsontext.dumps([hint_dict(h) for h in found], spaced=True, allow_nan=False, default=_item).decode()
        for found in hints.read[lo:hi]
    ]
    first, last = max(lo - len(hints.read), 0), max(hi - len(hints.read), 0)  # of the rest
    if first == last:
        return pa.array(read, pa.string())
    rest = hints.rest
    starts = np.searchsorted(rest.at, np.arange(first, last + 1))  # `rest.starts[first : last + 1]`
    one = _table_json(_hint_rows(rest, first, last, int(starts[0]), int(starts[-1])))  # an object a hint
    per_flip = pa.ListArray.from_arrays(pa.array(starts - starts[0], pa.int32()), one)
    rest_json = join_text("[", pc.binary_join(per_flip, ", "), "]")
    return pa.concat_arrays([pa.array(read, pa.string()), rest_json])


def _hint_rows(t: HintTable, first: int, last: int, lo: int, hi: int) -> HintTable:
    """The hints of `t`'s queries first .. last, its rows lo .. hi."""
    return replace(
        t,
        n=last - first,
        at=t.at[lo:hi] - first,
        kind=t.kind[lo:hi],
        b=t.b[lo:hi],
        evidence=t.evidence.slice(lo, hi - lo),
        facts={name: col.slice(lo, hi - lo) for name, col in t.facts.items()},
    )


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
        spelled = join_text(*parts, "}")
        facts = pc.replace_with_mask(facts, mask, spelled)
    kind = pa.array([KINDS[i].value for i in range(len(KINDS))]).take(pa.array(t.kind))
    arm = pc.if_else(pa.array(t.b), "b", "a")
    return join_text(
        '{"kind": "', kind, '", "arm": "', arm, '", "evidence": ', _js(t.evidence), ', "facts": ', facts, "}"
    )


def _escaped(values: pa.Array) -> np.ndarray:
    """The rows whose string needs escaping in JSON: it holds a quote, a backslash or a control
    character (a byte below 0x20; no byte of a longer UTF-8 sequence is). Found over the bytes."""
    offsets, raw = codes.string_bytes(values)
    odd = np.flatnonzero((raw < 0x20) | (raw == 0x22) | (raw == 0x5C))
    return np.unique(np.searchsorted(offsets, odd, side="right") - 1)


def _js(values: pa.Array) -> pa.Array:
    """Each value as a JSON string literal, as `json.dumps(v, ensure_ascii=False)` spells it
    (null: null). The few strings that need escapes are spelled by orjson (`jsontext`)."""
    values = _one(pc.cast(values, pa.string()))
    quoted = join_text('"', values, '"')
    rows = _escaped(values)
    if len(rows):
        odd = np.zeros(len(values), bool)
        odd[rows] = True
        spelled = [jsontext.dumps(v).decode() for v in values.take(pa.array(rows)).to_pylist()]
        quoted = pc.replace_with_mask(quoted, pa.array(odd), pa.array(spelled, pa.string()))
    return pc.fill_null(quoted, "null")


def _number(values: pa.Array) -> pa.Array:
    """Whole numbers and booleans as JSON spells them (null: null)."""
    if pa.types.is_boolean(values.type):
        return pc.fill_null(pc.if_else(values, "true", "false"), "null")
    return pc.fill_null(pc.cast(values, pa.string()), "null")
