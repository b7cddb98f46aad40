"""Which files make one evaluation, however they are named: a manifest (a file or its folder), the
files one by one (the command line's RUN_A RUN_B --labels L, the Python API's `a=`, `b=`,
`labels=`), or neither: the bundled sample.

The command line (`cli.main.spec_from`), the Python API (`triage.open`) and the app's session
(`open_session`) all build their `Spec` here, so the same arguments name the same evaluation
whichever way it is opened. Each front checks the shape of its own arguments first (which may be
given together) and words its own refusals.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path

from triage.core.bundled import sample_spec
from triage.core.errors import InputError
from triage.core.inputs.manifest import Spec, from_args, from_manifest
from triage.core.inputs.readers import quoted
from triage.core.inputs.split import Holdout
from triage.core.measures.corrections import Correction
from triage.core.measures.names import parse_all
from triage.core.measures.significance import PairedTest

MAX_ROUNDS = 100_000_000  # the randomisation test's rounds: a whole number from 1 to this


def evaluation_spec(
    manifest: Path | None = None,
    runs: tuple[Path, Path] | None = None,
    labels: Path | None = None,
    corpus: Path | None = None,
    queries: Path | None = None,
    *,
    names: tuple[str | None, str | None] = (None, None),
    k: object = None,
    amendments: Path | None = None,
    holdout: Holdout | None = None,
    in_memory: Collection[Path] = (),
    split: str | None = None,
) -> Spec:
    """`runs` given: the files one by one (`labels` None: the runs' expected ids; `names`, `k` and
    `in_memory` as `manifest.from_args`; `split`: of labels that are a BEIR folder). Else the
    `manifest`, or without one the bundled sample, its own k and names. `amendments` and
    `holdout`, when given, override the manifest's."""
    if runs is not None:
        return from_args(
            runs[0],
            runs[1],
            labels,
            corpus,
            queries,
            k,
            holdout,
            names=names,
            amendments=amendments,
            in_memory=in_memory,
            split=split,
        )
    if labels is not None or corpus is not None or queries is not None or split is not None:
        raise ValueError("labels, corpus, queries and split go with two runs")
    spec = from_manifest(Path(manifest)) if manifest is not None else sample_spec()
    if spec.manifest is not None:  # the manifest's tests, checked as the command line's are
        spec = with_tests(spec, spec.tests, spec.correction, spec.rounds, spec.seed, spec.manifest)
    if amendments is not None:
        spec = replace(spec, amendments=Path(amendments))
    if holdout is not None:
        spec = replace(spec, holdout=holdout)
    return spec


def with_measures(spec: Spec, measures: str | Sequence[str] | None, order: str | None, where: str) -> Spec:
    """`spec` with measures by name (parsed now: an unknown name raises InputError naming `where`
    and the close matches, before any file is read) and the order the measures read runs in."""
    if measures is not None:
        spec = replace(spec, measures=parse_all(measures, where))
    if order is not None:
        spec = replace(spec, order=order)
    return spec


def with_tests(
    spec: Spec,
    tests: str | Sequence[str] | None = None,
    correction: str | None = None,
    rounds: object = None,
    seed: object = None,
    where: Path | str = "command line",
    prefix: str = "",
) -> Spec:
    """`spec` with the paired tests of its named measures (docs/measures.md "Paired tests per measure"), each
    given value checked here for the command line (`prefix` "--"), the API and the manifest alike:
    `tests` ("t,wilcoxon" or a list; the first is the one corrected, and "t" always runs, appended
    when not named), `correction` (holm, bonferroni, bh, none), `rounds` (1 to MAX_ROUNDS) and
    `seed` (a whole number ≥ 0) of the randomisation test. None keeps the spec's value. A bad value
    raises InputError naming `where` and the key."""
    if tests is not None:
        names = [t.strip() for t in tests.split(",")] if isinstance(tests, str) else list(tests)
        known = ", ".join(t.value for t in PairedTest)
        for name in names:
            if not isinstance(name, str) or name not in {t.value for t in PairedTest}:
                raise InputError(where, f"{prefix}tests: unknown test {quoted(name)} (known: {known})")
        twice = next((t for i, t in enumerate(names) if t in names[:i]), None)
        if twice is not None:
            raise InputError(where, f"{prefix}tests names {twice!r} twice")
        if not names:
            raise InputError(where, f"{prefix}tests: name at least one test ({known})")
        spec = replace(spec, tests=(*names, *([PairedTest.T.value] if PairedTest.T not in names else [])))
    if correction is not None:
        if correction not in {c.value for c in Correction}:
            known = ", ".join(c.value for c in Correction)
            raise InputError(
                where, f"{prefix}correction: unknown correction {quoted(correction)} (known: {known})"
            )
        spec = replace(spec, correction=correction)
    if rounds is not None:
        spec = replace(spec, rounds=_whole(rounds, 1, MAX_ROUNDS, f"{prefix}rounds", where))
    if seed is not None:
        spec = replace(spec, seed=_whole(seed, 0, 2**63 - 1, f"{prefix}seed", where))
    return spec


def _whole(value: object, low: int, high: int, key: str, where: Path | str) -> int:
    """A whole number from `low` to `high` (text of one, from the command line, too)."""
    number: int | None = None
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            number = None
    elif isinstance(value, int) and not isinstance(value, bool):
        number = int(value)
    if number is None or not low <= number <= high:
        raise InputError(where, f"{key} must be a whole number from {low} to {high}, found {quoted(value)}")
    return number
