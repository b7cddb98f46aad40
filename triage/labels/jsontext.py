"""JSON text as triage writes it: encoded by orjson, spelled as Python's `json.dumps` spells it.

Every JSON triage writes (the report, review records and the canonical text their hashes cover)
goes through `dumps`. Review records written before orjson carry hashes over `json.dumps`'s text,
and the report's JSON keeps its spelling byte for byte, so the few places where orjson's text
differs are normalised here, values never changed (tests/unit/labels/test_json_text.py compares the two):

- floats: both give the shortest text that reads back as the same float, but where `json.dumps`
  writes an exponent of two digits (`1e-05`, `2.5e-07`: magnitudes below 1e-4) orjson writes
  `0.00001` or `2.5e-7`; those are written as Python spells them (`repr`);
- non-finite floats: `json.dumps` writes `NaN`, `Infinity`, `-Infinity` (orjson: `null`); kept
  with `allow_nan`, refused (ValueError) without it, as `json.dumps(allow_nan=False)` does;
- integers beyond 64 bits (orjson refuses them) are written in full, as Python writes them;
- nesting deeper than orjson's limit is written a subtree at a time;
- `spaced`: `json.dumps`'s default separators `", "` and `": "`: orjson's indented text with
  each newline and its indent taken out (a comma's replaced by one space);
- text: both write non-ASCII as it is (`ensure_ascii=False`) and escape the same characters the
  same way (`\\"`, `\\\\`, `\\n`, `\\u001f`, …); a lone surrogate, which `json.dumps` writes and
  UTF-8 then refuses, is refused here as `NotJSON` (a ValueError, as UnicodeEncodeError is).

Keys are sorted (`sort_keys`) by code point in both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import orjson

_INF = math.inf
_LOW = 1e-4  # below this magnitude `json.dumps` writes an exponent orjson spells otherwise
_INT_LOW, _INT_HIGH = -(2**63), 2**64  # the integers orjson writes itself
_DEEP = 200  # a subtree this deep is written on its own (orjson's limit is 255 levels)
_NON_FINITE = {"nan": b"NaN", "inf": b"Infinity", "-inf": b"-Infinity"}
_COMMA = re.compile(rb",\n *")  # in orjson's indented text: a comma and the next line's indent
_LAYOUT = re.compile(rb"\n *")  # the other newlines and their indent


class NotJSON(ValueError):
    """A value JSON text cannot hold: text with a lone surrogate (not valid Unicode)."""


def dumps(
    obj: object,
    *,
    sort_keys: bool = False,
    spaced: bool = False,
    allow_nan: bool = True,
    default: Callable[[object], object] | None = None,
) -> bytes:
    """`obj` as UTF-8 JSON text, byte for byte `json.dumps(obj, ensure_ascii=False,
    sort_keys=sort_keys, allow_nan=allow_nan, default=default, separators=…)` encoded as UTF-8:
    separators `(",", ":")`, or with `spaced` `(", ", ": ")`. ValueError for a non-finite float
    without `allow_nan`; NotJSON for a lone surrogate; TypeError for what JSON has no spelling of."""
    return _encode(_Walk(sort_keys, spaced, allow_nan, default).normal(obj, 0), sort_keys, spaced)


def _encode(obj: object, sort_keys: bool, spaced: bool) -> bytes:
    option = (orjson.OPT_SORT_KEYS if sort_keys else 0) | (orjson.OPT_INDENT_2 if spaced else 0)
    try:
        text = orjson.dumps(obj, option=option)
    except orjson.JSONEncodeError as e:
        if "surrogates" in str(e):
            raise NotJSON("text that is not valid Unicode (a lone surrogate)") from None
        raise TypeError(str(e)) from None
    # Indented, orjson writes `": "` after a key and a newline with the indent after each comma,
    # after `[` or `{` and before `]` or `}`; a raw newline is never inside a string (it is
    # escaped there), so each newline and its indent is layout: `, ` after a comma, else nothing.
    return _LAYOUT.sub(b"", _COMMA.sub(b", ", text)) if spaced and b"\n" in text else text


class _Walk:
    """`obj` with every value orjson would spell differently replaced by its `json.dumps` text
    (an `orjson.Fragment`); the containers copied, nothing else touched."""

    def __init__(
        self, sort_keys: bool, spaced: bool, allow_nan: bool, default: Callable[[object], object] | None
    ):
        self.sort_keys, self.spaced = sort_keys, spaced
        self.allow_nan = allow_nan
        self.default = default

    def normal(self, x: object, depth: int) -> object:
        t = type(x)
        if t is str or t is bool or x is None:
            return x
        if t is float:
            f: float = x  # type: ignore[assignment]
            return f if _LOW <= f < _INF or -_INF < f <= -_LOW or f == 0.0 else self._float(f)
        if t is int:
            return x if _INT_LOW <= x < _INT_HIGH else orjson.Fragment(int.__repr__(x))  # type: ignore[operator]
        if t is dict or t is list or t is tuple:
            if depth >= _DEEP:  # written on its own, so orjson's depth restarts
                return orjson.Fragment(_encode(self.normal(x, 0), self.sort_keys, self.spaced))
            # Loops, not comprehensions: one stack frame a level, as deep as `json.loads` reads. A
            # text, a flag, null or a float orjson spells as Python does is taken without a call.
            normal, depth = self.normal, depth + 1
            if t is dict:
                out: dict[str, object] = {}
                for k, v in x.items():  # type: ignore[attr-defined]
                    tv = type(v)
                    out[k if type(k) is str else _key(k)] = (
                        v
                        if tv is str or v is None or tv is bool or (tv is float and _LOW <= abs(v) < _INF)
                        else normal(v, depth)
                    )
                return out
            items: list[object] = []
            for v in x:  # type: ignore[attr-defined]
                tv = type(v)
                items.append(
                    v
                    if tv is str or v is None or tv is bool or (tv is float and _LOW <= abs(v) < _INF)
                    else normal(v, depth)
                )
            return items
        return self._other(x, depth)

    def _float(self, f: float) -> object:
        if math.isfinite(f):
            return orjson.Fragment(float.__repr__(f))
        if not self.allow_nan:
            raise ValueError(f"Out of range float values are not JSON compliant: {f!r}")
        return orjson.Fragment(_NON_FINITE[repr(f)])

    def _other(self, x: object, depth: int) -> object:
        """Subclasses as `json.dumps` reads them, else `default`'s value."""
        if isinstance(x, str):
            return str.__str__(x)
        if isinstance(x, int) and not isinstance(x, bool):
            return self.normal(int.__int__(x), depth)
        if isinstance(x, float):
            return self.normal(float.__float__(x), depth)
        if isinstance(x, dict):
            return self.normal(dict(x), depth)
        if isinstance(x, list | tuple):
            return self.normal(list(x), depth)
        if self.default is None:
            raise TypeError(f"Object of type {type(x).__name__} is not JSON serializable")
        return self.normal(self.default(x), depth)


def _key(k: object) -> str:
    """A dict key that is not a string, as `json.dumps` writes it."""
    if isinstance(k, str):
        return str.__str__(k)
    if isinstance(k, bool) or k is None:
        return {True: "true", False: "false", None: "null"}[k]
    if isinstance(k, int):
        return int.__repr__(k)
    if isinstance(k, float):
        if math.isfinite(k):
            return float.__repr__(k)
        return _NON_FINITE[repr(k)].decode()
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")
