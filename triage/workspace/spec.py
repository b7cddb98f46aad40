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
from triage.core.inputs.manifest import Spec, from_args, from_manifest
from triage.core.inputs.split import Holdout
from triage.core.measures.names import parse_all


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
    """`runs` given: the files one by one (`labels` required; `names`, `k` and `in_memory` as
    `manifest.from_args`; `split`: of labels that are a BEIR folder). Else the `manifest`, or
    without one the bundled sample, its own k and names. `amendments` and `holdout`, when given,
    override the manifest's."""
    if runs is not None:
        if labels is None:
            raise ValueError("two runs need labels")
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
    if amendments is not None:
        spec = replace(spec, amendments=Path(amendments))
    if holdout is not None:
        spec = replace(spec, holdout=holdout)
    return spec


def with_measures(spec: Spec, measures: str | Sequence[str] | None, order: str | None, where: str) -> Spec:
    """`spec` with measures by name (parsed now: an unknown name raises InputError naming `where`
    and the close matches, before any file is read) and the order the measures read runs in."""
    if measures is not None:
        spec = replace(spec, measures=tuple(str(m) for m in parse_all(measures, where)))
    if order is not None:
        spec = replace(spec, order=order)
    return spec
