"""The JSON Schema of `triage report --format json`, made from the typed report (`model.Report`).

Nothing here names a report key: every object's keys are its dataclass's fields (those `to_json`
writes), each typed by the field's annotation, so a field added, renamed or retyped in the model
changes the schema with it. Objects spelled from a dataclass are closed (`additionalProperties`
false, every field required, as `to_json` always writes every field). The open ones are maps:
a `Mapping[str, X]` field (per slice key, per reviewer, an arm's metadata, …) or `Mapping[int, X]`
(per cut-off k, per rank change; keys are whole numbers as text) allows any key, each value typed
by X; `facts` (`Mapping[str, object]`: a check's or a hint's numbers for programs) allows any JSON.
`triage report --json-schema` prints it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from enum import Enum
from pathlib import Path

import orjson

from triage.core.measures.paired import Outcome
from triage.report import model
from triage.report.rows import Rows

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_INTEGER_KEY = {"pattern": "^-?[0-9]+$"}
_SCALARS: dict[object, dict[str, object]] = {
    str: {"type": "string"},
    Path: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    object: {},  # any JSON value
}


def json_schema() -> dict[str, object]:
    """The schema of `model.Report.to_json()`: its `$defs` hold one closed object per dataclass."""
    defs: dict[str, object] = {}
    top = _Schemas(defs).closed(model.Report, {"schema": {"const": model.SCHEMA}})
    return {
        "$schema": DIALECT,
        "title": "triage report",
        "description": f"`triage report --format json`, schema {model.SCHEMA}, made from triage.report.model",
        **top,
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """`json_schema()` as `triage report --json-schema` prints it: indented, one newline at the end."""
    return orjson.dumps(json_schema(), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()


class _Schemas:
    def __init__(self, defs: dict[str, object]) -> None:
        self.defs = defs
        self.made: dict[str, type] = {}

    def closed(self, cls: type, first: Mapping[str, object] | None = None) -> dict[str, object]:
        """A dataclass as a closed object: each field `to_json` writes, in its order, all required but
        those written only when not empty."""
        hints = typing.get_type_hints(cls)
        props = dict(first or {})
        optional = set()  # spelled only when not empty (metadata "omit_empty")
        for f in dataclasses.fields(cls):
            if f.metadata.get("json", True):
                props[f.name] = self.of(hints[f.name])
                if f.metadata.get("omit_empty"):
                    optional.add(f.name)
        out: dict[str, object] = {
            "type": "object",
            "properties": props,
            "required": [name for name in props if name not in optional],
            "additionalProperties": False,
        }
        extra = getattr(cls, "extra_keys", None)  # keys beyond the fields: named by a pattern, typed
        if extra is not None:
            out["propertyNames"] = {"anyOf": [{"enum": list(props)}, {"pattern": extra}]}
            out["additionalProperties"] = self.of(cls.extra_type)  # type: ignore[attr-defined]
        doc = (cls.__doc__ or "").strip()
        if doc and not doc.startswith(f"{cls.__name__}("):  # not the signature dataclass makes up
            out = {"description": " ".join(doc.split()), **out}
        return out

    def ref(self, cls: type) -> dict[str, object]:
        name = cls.__name__
        if name not in self.made:
            self.made[name] = cls
            self.defs[name] = {}  # taken before the fields are made: a class may hold itself
            self.defs[name] = self.closed(cls)
        elif self.made[name] is not cls:
            raise TypeError(f"two report classes named {name}: {self.made[name]} and {cls}")
        return {"$ref": f"#/$defs/{name}"}

    def of(self, t: object) -> dict[str, object]:
        """The schema of a value annotated `t`, as `model._plain` spells it."""
        if t in _SCALARS:
            return dict(_SCALARS[t])
        if isinstance(t, type):
            return self._class(t)
        origin, args = typing.get_origin(t), typing.get_args(t)
        if origin in (types.UnionType, typing.Union):
            return {"anyOf": [self.of(a) for a in args]}
        if origin is model.ByArm:  # {"a": …, "b": …}
            arm = self.of(args[0])
            return {
                "type": "object",
                "properties": {"a": arm, "b": dict(arm)},
                "required": ["a", "b"],
                "additionalProperties": False,
            }
        if origin in (tuple, list):
            return {"type": "array", "items": self.of(args[0] if args else object)}
        if origin in (Mapping, dict, typing.Mapping):  # an open map: any key
            key, value = args or (str, object)
            out: dict[str, object] = {"type": "object", "additionalProperties": self.of(value)}
            if key is int:
                out["propertyNames"] = dict(_INTEGER_KEY)
            return out
        raise TypeError(f"no JSON schema for the annotation {t!r}")

    def _class(self, t: type) -> dict[str, object]:
        """The schema of a value of class `t`: an enum's values, a row section's rows, a dataclass."""
        if issubclass(t, Outcome):
            return {"enum": [o.json for o in Outcome]}
        if issubclass(t, Enum):
            return {"enum": [e.value for e in t]}
        if issubclass(t, Rows | model.QueryTable):  # a row section: a list of its rows
            return {"type": "array", "items": self.ref(t.row_type)}
        if dataclasses.is_dataclass(t):
            return self.ref(t)
        raise TypeError(f"no JSON schema for the class {t!r}")
