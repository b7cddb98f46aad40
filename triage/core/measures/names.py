"""Measures by the names IR teams use: ir_measures' syntax, with ranx's and trec_eval's names as
aliases, parsed in this one place (docs/measures.md "Measures by name").

Each family is declared in the registry (core/measures/families/): its canonical name, the
parameters it takes, whether it takes a cut-off, its definition, its trec_eval and ranx names and
its kernel. `parse` turns any accepted spelling into a `Measure`, whose `str` is the canonical
ir_measures name (`nDCG@10`, `AP(rel=2)@100`) and which computes itself (`Measure.per_query`).
Names are parsed once, where they enter: the command line and the API (workspace/spec.py), the
manifest (core/inputs/manifest.py) and a gate file (core/gate/apply.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from triage.core.errors import InputError
from triage.core.measures.families import FAMILIES
from triage.core.measures.families.family import Cut, Family
from triage.core.measures.ranked import Judgements, Positions

DEFAULT_K = 10  # the cut-off when no measure names one and no k is given anywhere


@dataclass(frozen=True)
class Measure:
    """One parsed measure. `rel`: an id is relevant when its grade is ≥ rel; `cutoff` None: the
    whole ranked list."""

    family: str
    cutoff: int | None = None
    rel: int = 1
    judged_only: bool = False

    def __str__(self) -> str:
        params = []
        if self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.judged_only:
            params.append("judged_only=True")
        text = self.family + (f"({','.join(params)})" if params else "")
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def name(self) -> str:
        return str(self)

    @property
    def declared(self) -> Family:
        """Its family, as the registry declares it."""
        return FAMILIES[self.family]

    @property
    def reach(self) -> tuple[float, float]:
        """The least and the greatest value the measure takes (its family's `reach`)."""
        return self.declared.reach

    @property
    def reads_non_relevant(self) -> bool:
        """Whether it reads where ids judged not relevant sit (Judged@k's judged, Bpref's
        non-relevant above, judged_only's closing up); the others read the relevant ids alone."""
        return self.judged_only or self.declared.reads_non_relevant

    def per_query(self, at: Positions, judged: Judgements) -> np.ndarray:
        """The measure on every query of `at` (float64, one entry per query index; 0 where the
        query has no relevant id or no list), by its family's kernel."""
        if self.judged_only:
            at = at.judged_only()
        return self.declared.kernel(at, judged, self.cutoff, self.rel)


_IR = re.compile(r"(?P<name>[A-Za-z_]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<k>[0-9]+))?")
_RANX = re.compile(r"(?P<name>[a-z_-]+)(?:@(?P<k>[0-9]+))?(?:-l(?P<rel>-?[0-9]+))?")
_TREC = re.compile(r"(?P<name>[A-Za-z_]+?)(?:_(?P<k>[0-9]+))?")


def _alias_table() -> dict[str, tuple[str, bool]]:
    """ranx's and trec_eval's names, the cut-off's part left out: base name → (family, whether
    the name takes a cut-off). `map` is both ranx's base of `map@100` and trec_eval's uncut `map`."""
    table: dict[str, tuple[str, bool]] = {}
    for f in FAMILIES.values():
        for cut in (f.ranx, f.trec_eval):
            if cut:
                table[cut.replace("@{k}", "").replace("_{k}", "")] = (f.name, True)
    for f in FAMILIES.values():
        for uncut in (f.uncut_ranx, f.uncut_trec_eval):
            if uncut:
                table.setdefault(uncut, (f.name, False))
    return table


_ALIASES = _alias_table()
_SPELLINGS: dict[str, set[str]] = {}  # a name's lower case → the known spellings it can stand for
for _name in [*FAMILIES, *_ALIASES]:
    _SPELLINGS.setdefault(_name.lower(), set()).add(_name)
_TREC_CUT = {f.trec_eval.replace("_{k}", "") for f in FAMILIES.values() if f.trec_eval}


def known_names() -> list[str]:
    """Every accepted spelling, with `k` standing for a cut-off: for the error's close matches."""
    out = []
    for f in FAMILIES.values():
        if f.cut is not Cut.REQUIRED:
            out.append(f.name)
        if f.cut is not Cut.NONE:
            out.append(f"{f.name}@k")
        out += [n.replace("{k}", "k") for n in (f.trec_eval, f.ranx, f.uncut_trec_eval, f.uncut_ranx) if n]
    return list(dict.fromkeys(out))


def _problem(text: str, why: str) -> str:
    from rapidfuzz import process  # here, not above: only a name that fails needs it (0.05 s)

    matches = process.extract(text, known_names(), limit=4, score_cutoff=40)
    close = ", ".join(m[0] for m in matches)
    return f"{why}" + (f" (close: {close})" if close else "") + "; see docs/measures.md 'Measures by name'"


def _int(text: str, what: str) -> int:
    value = int(text)
    if not 1 <= value < 2**63:
        raise ValueError(f"{what} must be a positive whole number below 2^63, not {text}")
    return value


def parse(text: str, where: Path | str = "--measures") -> Measure:
    """The measure `text` names, in ir_measures' syntax or by its ranx or trec_eval name.

    An unknown name or a bad parameter raises InputError naming `where` and the closest names."""
    name = text.strip()
    try:
        measure = _parse(name) or _any_case(name)
    except ValueError as e:
        raise InputError(where, _problem(name, f"measure {name!r}: {e}")) from None
    if measure is None:
        raise InputError(where, _problem(name, f"unknown measure {name!r}"))
    return measure


def _params(family: Family, text: str) -> tuple[int, bool]:
    """(rel, judged_only) from ir_measures' parameters, `rel=2,judged_only=True`, each once."""
    rel, judged_only = 1, False
    given: set[str] = set()
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, _, value = (s.strip() for s in part.partition("="))
        if key in given:
            raise ValueError(f"{key} is given twice")
        given.add(key)
        if key not in family.params:
            takes = ", ".join(family.params) or "no parameter"
            raise ValueError(f"{family.name} takes {takes}, not {key!r}")
        if key == "rel":
            if not re.fullmatch(r"-?[0-9]+", value):
                raise ValueError(f"rel must be a whole number, not {value!r}")
            rel = int(value)
            if rel < 1:
                raise ValueError(f"rel must be 1 or more (relevant: grade ≥ rel), not {rel}")
        else:
            if value not in ("True", "False"):
                raise ValueError(f"judged_only must be True or False, not {value!r}")
            judged_only = value == "True"
    return rel, judged_only


def _parse(name: str) -> Measure | None:
    m = _IR.fullmatch(name)
    if m and m["name"] in FAMILIES:
        family = FAMILIES[m["name"]]
        k = _int(m["k"], "the cut-off") if m["k"] else None
        rel, judged_only = _params(family, m["params"] or "")
        return _checked(Measure(family.name, k, rel, judged_only))
    m = _RANX.fullmatch(name)
    if m and m["name"] in _ALIASES:
        family_name, cut = _ALIASES[m["name"]]
        k = _int(m["k"], "the cut-off") if m["k"] else None
        rel = int(m["rel"]) if m["rel"] else 1
        if rel < 1:
            raise ValueError(f"the relevance level must be 1 or more, not {rel}")
        if rel != 1 and "rel" not in FAMILIES[family_name].params:
            raise ValueError(f"{family_name} takes no relevance level")
        if not cut and k is not None:  # `r-precision@5`: no such measure
            return None
        return _checked(Measure(family_name, k, rel))
    m = _TREC.fullmatch(name)
    if m and m["name"] in _ALIASES:
        family_name, cut = _ALIASES[m["name"]]
        k = _int(m["k"], "the cut-off") if m["k"] else None
        if k is not None and not cut:
            return None
        if (
            k is None
            and m["name"] in _TREC_CUT
            and m["name"] not in FAMILIES
            and (m["name"] not in ("ndcg", "map"))
        ):
            return None
        return _checked(Measure(family_name, k))
    return None


def _any_case(name: str) -> Measure | None:
    """`name` read with its leading word in another case (`MAP`, `NDCG@10`, `Recip_Rank`) when
    every known spelling it can stand for names one measure; None otherwise."""
    head = re.match(r"[A-Za-z_]*[A-Za-z]", name)
    if head is None:
        return None
    word, rest = head.group(), name[head.end() :]
    found = set()
    for spelling in _SPELLINGS.get(word.lower(), ()):
        try:
            measure = _parse(spelling + rest)
        except ValueError:
            continue
        if measure is not None:
            found.add(measure)
    return found.pop() if len(found) == 1 else None


def _checked(measure: Measure) -> Measure:
    family = FAMILIES[measure.family]
    if family.cut is Cut.REQUIRED and measure.cutoff is None:
        raise ValueError(f"{family.name} needs a cut-off, as {family.name}@10")
    if family.cut is Cut.NONE and measure.cutoff is not None:
        raise ValueError(f"{family.name} takes no cut-off")
    return measure


def parse_all(texts: str | Iterable[str], where: Path | str = "--measures") -> tuple[Measure, ...]:
    """Measures from a comma-separated string or a list of names, each once (in first-named order;
    two spellings of one measure count once)."""
    if isinstance(texts, str):
        texts = _split(texts)
    out: list[Measure] = []
    for text in texts:
        if not isinstance(text, str):
            raise InputError(where, f"a measure is a name such as 'nDCG@10', not {text!r}")
        measure = parse(text, where)
        if measure not in out:
            out.append(measure)
    if not out:
        raise InputError(where, "names no measure (e.g. nDCG@10,AP,R@100)")
    return tuple(out)


def _split(text: str) -> list[str]:
    """Split at the commas outside parentheses (`AP(rel=2,x=y)@5` is one name)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def table_rows() -> list[tuple[str, str, str]]:
    """(canonical name, aliases, definition) per family, for the table of docs/measures.md."""
    rows = []
    for f in FAMILIES.values():
        canon = (
            f.name
            if f.cut is Cut.NONE
            else f"{f.name}@k"
            if f.cut is Cut.REQUIRED
            else f"{f.name}, {f.name}@k"
        )
        aliases = [n.replace("{k}", "k") for n in (f.uncut_ranx, f.ranx, f.uncut_trec_eval, f.trec_eval) if n]
        rows.append((canon, ", ".join(dict.fromkeys(aliases)), f.definition))
    return rows
