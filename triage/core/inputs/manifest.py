"""What one evaluation is made of: a manifest `triage.toml`, or the same given on the command line.

Paths in a manifest are relative to the manifest's folder.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path

from triage.core.errors import InputError
from triage.core.files import Protected, protect
from triage.core.inputs.rag.from_runs import LABELS as FROM_RUNS
from triage.core.inputs.readers import SUFFIX, kind, linked, quoted, read_json_object, read_toml, regular_file
from triage.core.inputs.shapes import FORMATS, Format, Role, detect, is_pattern, members, sidecar_of
from triage.core.inputs.split import DEFAULT_FRACTION, Holdout, Rule, check_fraction
from triage.core.measures.names import Measure, parse_all
from triage.core.text.sanitize import bytes_shown

MANIFEST = "triage.toml"
_KEYS = {
    "": {"k", "labels", "corpus", "queries", "arms", "holdout", "measures", "order"}
    | {"tests", "correction", "rounds", "seed"},
    "labels": {"path", "amendments", "format", "split"},
    "corpus": {"path", "format"},
    "queries": {"path", "format"},
    "arm": {"name", "path", "format"},
    "holdout": {"rule", "fraction", "tuned_docs"},
}


@dataclass(frozen=True)
class ArmSpec:
    name: str
    path: Path
    format: str | None = None  # a `shapes.Format` value; None: detected


@dataclass(frozen=True)
class Spec:
    """The files of one evaluation; `k` is the cut-off asked for (None: the arms' own), `ks` every
    cut-off asked for, `k` first (empty when none is)."""

    a: ArmSpec
    b: ArmSpec
    labels: Path
    corpus: Path | None = None
    queries: Path | None = None
    amendments: Path | None = None
    k: int | None = None
    manifest: Path | None = None
    ks: tuple[int, ...] = ()
    labels_format: str | None = None  # `shapes.Format` values named in the manifest; None: detected
    corpus_format: str | None = None
    queries_format: str | None = None
    holdout: Holdout | None = None  # the tuning split ([holdout]; core/inputs/split.py); None: not named
    # Measures by name (`measures = ["nDCG@10", "AP"]`, parsed where they enter by
    # core/measures/names.py) and the order the measures read each run in ("trec_eval" |
    # "as_given"; None: trec_eval's for TREC runs)
    measures: tuple[Measure, ...] = ()
    order: str | None = None
    # A BEIR folder given as the labels (`beir`): `labels` is its qrels/SPLIT.tsv, and only the
    # split's queries are evaluated (core/inputs/load.py); None: labels given as a file
    split: str | None = None
    # The paired tests of the named measures (docs/measures.md "Paired tests per measure"), checked by
    # workspace/spec.py `with_tests`: the tests (the first is the one corrected; "t" always runs),
    # the correction over the measures, and the randomisation test's rounds and seed.
    tests: tuple[str, ...] = ("t",)
    correction: str = "holm"
    rounds: int = 10_000
    seed: int = 0
    # No labels named: the runs' expected ids are the labels (runs in a RAG framework's shape;
    # core/inputs/rag/from_runs.py), and `labels` only the name they go by
    labels_from_runs: bool = False
    # A truth folder given as the labels (`triage truth`'s output; `is_truth`, core/truth/folder.py):
    # `labels` is its labels.parquet, and the runs are judged against it (core/truth); None: not one
    truth: Path | None = None

    @property
    def beir(self) -> Path | None:
        """The BEIR folder given as the labels (`split` set: `labels` is its qrels/SPLIT.tsv)."""
        return self.labels.parent.parent if self.split is not None else None

    def inputs(self) -> list[Path]:
        """Every file this evaluation reads (its sidecars included): files triage never writes."""
        tuned = self.holdout.tuned_docs if self.holdout else None
        labels = None if self.labels_from_runs else self.labels
        given = [p for p in (self.a.path, self.b.path, labels, self.corpus, self.queries, tuned) if p]
        truth = [self.truth / TRUTH_JSON] if self.truth is not None else []
        present = [m for p in [*given, *truth, self.manifest] if p is not None for m in members(p)]
        sidecars = [sidecar_of(p) for p in dict.fromkeys([*given, *present])]
        return present + [p for p in sidecars if p.exists()]

    def forbidden(self, amendments: Path | None = None, also: list[Path] | None = None) -> Protected:
        """Every place a command's output must never be written: each input file (by name, link
        and device/inode), each input's sidecar name whether or not one exists, the manifest, and
        anything inside an input folder, a glob's folder, the BEIR folder given as the labels or
        `amendments` (the review files, whose identities `also` adds: a hard link to one
        elsewhere). The manifest's own folder is not one: exports are written beside the inputs."""
        tuned = self.holdout.tuned_docs if self.holdout else None
        labels = None if self.labels_from_runs else self.labels
        given = [p for p in (self.a.path, self.b.path, labels, self.corpus, self.queries, tuned) if p]
        files = [*self.inputs(), *(members(self.beir) if self.beir else []), *(also or [])]
        folders = [p for p in given if p.is_dir()] + [_glob_folder(p) for p in given if is_pattern(p)]
        folders += [self.beir] if self.beir is not None else []
        folders += [self.truth] if self.truth is not None else []
        names = [*given, *files, *(sidecar_of(p) for p in [*given, *files])]
        if self.manifest is not None:
            names.append(self.manifest)
        said = [(self.manifest, "the manifest"), (tuned, "the tuned documents"), (self.corpus, "the corpus")]
        said += [(self.queries, "the queries"), (self.a.path, "run A"), (self.b.path, "run B")]
        said += [(self.labels, "the frozen labels"), *((p, "an amendment file") for p in also or [])]
        roles = {p: role for p, role in said if p is not None}
        folders += [amendments] if amendments is not None else []
        return protect(files, names, folders, roles)


def _glob_folder(path: Path) -> Path:
    while is_pattern(path) and path.parent != path:
        path = path.parent
    return path


K_LIMIT = 2**63  # a cut-off is a positive whole number below this (as --k and the API's k)


def _check_k(k: object, where: Path | str) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(where, f"k must be a positive integer, found {quoted(k)}")
    if k >= K_LIMIT:
        raise InputError(where, f"k must be below 2^63, found {quoted(k)}")
    return k


def check_ks(k: object, where: Path | str) -> tuple[int, ...]:
    """k as one positive integer or a non-empty list of distinct ones (the first is the decision
    k); () when None."""
    if k is None:
        return ()
    values = k if isinstance(k, list | tuple) else [k]
    if not values:
        raise InputError(where, "k must be a positive integer or a list of them, found []")
    out = tuple(_check_k(v, where) or 0 for v in values)
    twice = next((v for i, v in enumerate(out) if v in out[:i]), None)
    if twice is not None:
        raise InputError(where, f"k lists {twice} twice")
    return out


def from_manifest(path: Path) -> Spec:
    path, doc = _read_manifest(Path(path))
    root = path.parent
    _unknown(path, doc, _KEYS[""], "")
    arms = doc.get("arms", {})
    if not isinstance(arms, dict) or set(arms) != {"a", "b"}:
        raise InputError(path, "needs exactly two arms, [arms.a] and [arms.b]")
    a, b = (_arm(path, arms, key) for key in ("a", "b"))
    labels = _section(path, doc, "labels")
    corpus, queries = _section(path, doc, "corpus"), _section(path, doc, "queries")
    amend = labels.get("amendments")
    if amend is not None and not isinstance(amend, str):
        raise InputError(path, f"amendments must be a string (a folder), found {quoted(amend)}", "[labels]")
    ks = check_ks(doc.get("k"), path)
    holdout = _holdout(doc, path) if "holdout" in doc else None
    measures, order = _measures(path, doc)
    split = labels.get("split")
    if split is not None and not isinstance(split, str):
        raise InputError(path, f"split must be a string, found {quoted(split)}", "[labels]")
    folder = _file(path, labels, "labels", "labels" in doc)  # no [labels]: the runs' expected ids
    corpus_file, queries_file = _file(path, corpus, "corpus", False), _file(path, queries, "queries", False)
    files = (
        beir(folder, split, corpus_file, queries_file)
        if folder is not None
        else Beir(FROM_RUNS, corpus_file, queries_file, from_runs=True)
    )
    spec = Spec(
        a=a,
        b=b,
        labels=files.labels,
        corpus=files.corpus,
        queries=files.queries,
        amendments=root / amend if isinstance(amend, str) else files.amendments,
        k=ks[0] if ks else None,
        manifest=path,
        ks=ks,
        labels_format=_form(path, labels, "labels"),
        corpus_format=_form(path, corpus, "corpus"),
        queries_format=_form(path, queries, "queries"),
        holdout=holdout,
        measures=measures,
        order=order,
        split=files.split,
        labels_from_runs=files.from_runs,
        truth=files.truth,
    )
    return _tests(path, doc, spec)


DEFAULT_SPLIT = "test"


@dataclass(frozen=True)
class Beir:
    """The files a labels path names: itself (`split` None), or of a BEIR folder its split's
    qrels and, unless named apart, its queries.jsonl and corpus.jsonl; and the split's amendments
    folder, `<folder>.<split>.amendments/` beside the folder (never inside: it is an input)."""

    labels: Path
    corpus: Path | None
    queries: Path | None
    split: str | None = None
    amendments: Path | None = None
    from_runs: bool = False  # no labels named: the runs' expected ids
    truth: Path | None = None  # a truth folder: `labels` its labels.parquet, `queries` its queries.parquet


def is_llamaindex_dataset(path: Path) -> bool:
    """A LlamaIndex EmbeddingQAFinetuneDataset JSON file (labels, queries and a corpus in one)."""
    try:
        return path.is_file() and detect(path, Role.LABELS) is Format.LLAMAINDEX_DATASET
    except InputError:
        return False


def is_beir(path: Path) -> bool:
    """A BEIR dataset folder: one holding a `qrels` folder (qrels/test.tsv, …)."""
    return not is_pattern(path) and path.is_dir() and (path / "qrels").is_dir()


def beir(labels: Path, split: str | None, corpus: Path | None, queries: Path | None) -> Beir:
    """A BEIR folder given as the labels read as its `split` (default: test): qrels/SPLIT.tsv the
    labels, queries.jsonl and corpus.jsonl in it the queries and corpus unless given. A split with
    no qrels file is refused, naming the file and the splits present; a split named for labels
    that are not a BEIR folder too. Each of these files that is there and not a regular file (a
    FIFO, a device, a folder, a link to one or to nothing) is refused naming it, before anything
    opens it; so is a `qrels` that is not a folder. A LlamaIndex EmbeddingQAFinetuneDataset is,
    likewise, the queries and the corpus unless they are given; a truth folder (`is_truth`) its
    labels.parquet the labels and its queries.parquet the queries unless they are given."""
    _qrels_folder(labels)
    if is_truth(labels):
        if split is not None:
            raise InputError(labels, f"split {split!r} names a split of a BEIR folder, not of a truth folder")
        return Beir(labels / TRUTH_LABELS, corpus, queries or labels / TRUTH_QUERIES, truth=labels)
    if not is_beir(labels):
        if split is not None:
            raise InputError(labels, f"split {split!r} names a split of a BEIR folder (one holding qrels/)")
        if is_llamaindex_dataset(labels):
            return Beir(labels, corpus or labels, queries or labels)
        return Beir(labels, corpus, queries)
    split = DEFAULT_SPLIT if split is None else split
    if not split or split in (".", "..") or any(c in split for c in "/\\\0"):
        raise InputError(
            labels, f"split {quoted(split)} is not a split's name (test, dev, …): qrels/NAME.tsv"
        )
    qrels = _packed(labels / "qrels" / f"{split}.tsv")
    if not os.path.lexists(qrels):
        names = [p.name for p in (labels / "qrels").iterdir()]
        present = sorted({n.split(".tsv")[0] for n in names if ".tsv" in n and _packed_name(n)})
        raise InputError(
            qrels, f"no qrels for split {split!r} (splits present: {', '.join(present) or 'none'})"
        )
    regular_file(qrels)
    beside = {name: _packed(labels / f"{name}.jsonl") for name in ("queries", "corpus")}
    for name, given in (("queries", queries), ("corpus", corpus)):
        if given is None and os.path.lexists(beside[name]):
            regular_file(beside[name])
    return Beir(
        qrels,
        corpus if corpus is not None else beside["corpus"] if beside["corpus"].is_file() else None,
        queries if queries is not None else beside["queries"] if beside["queries"].is_file() else None,
        split,
        _amendments(labels, split),
    )


# A truth folder given as the labels (`triage truth`'s output; docs/data.md "Exact truth as labels") is
# recognised by its provenance: a folder holding truth.json whose `format` is "triage-truth". Its
# labels.parquet is then the labels and, unless a queries file is named, its queries.parquet the
# queries; the truth itself (ranks, scores, ties, exact n_eligible) is read by core/truth.
TRUTH_JSON = "truth.json"
TRUTH_FORMAT = "triage-truth"
TRUTH_LABELS = "labels.parquet"
TRUTH_QUERIES = "queries.parquet"


def is_truth(path: Path) -> bool:
    """Whether `path` is a truth folder: a folder holding truth.json, which must then be one JSON
    object whose `format` is "triage-truth", with the labels and queries files beside it (each refused
    by name otherwise)."""
    path = Path(path)
    if is_pattern(path) or not path.is_dir() or not os.path.lexists(path / TRUTH_JSON):
        return False
    said = read_json_object(path / TRUTH_JSON, "truth provenance").get("format")
    if said != TRUTH_FORMAT:
        raise InputError(
            path / TRUTH_JSON, f"format is {quoted(said)}, not {TRUTH_FORMAT!r}: not a truth folder"
        )
    for name in (TRUTH_LABELS, TRUTH_QUERIES):
        if not os.path.lexists(path / name):
            raise InputError(path / name, f"missing: a truth folder holds {TRUTH_LABELS} and {TRUTH_QUERIES}")
        regular_file(path / name)
    return True


def _packed(path: Path) -> Path:
    """`path`, or the same compressed (`corpus.jsonl.gz`, as the BEIR sets ship) when only that is
    there; `path` when neither is (the caller names it)."""
    if os.path.lexists(path):
        return path
    return next((c for c in (path.with_name(path.name + e) for e in SUFFIX) if os.path.lexists(c)), path)


def _packed_name(name: str) -> bool:
    """A qrels file's name, plain (`test.tsv`) or compressed (`test.tsv.gz`)."""
    return name.endswith(".tsv") or any(name.endswith(".tsv" + e) for e in SUFFIX)


def _amendments(folder: Path, split: str) -> Path:
    """A BEIR split's default amendments folder: `<folder>.<split>.amendments/` beside the folder."""
    folder = Path(os.path.abspath(folder))
    return folder.parent / f"{folder.name or 'beir'}.{split}.amendments"


def _qrels_folder(labels: Path) -> None:
    """A folder's `qrels` that is there and is not a folder is refused: it says the folder is a
    BEIR folder, one whose splits cannot be read."""
    if is_pattern(labels) or not labels.is_dir():
        return
    qrels = labels / "qrels"
    if os.path.lexists(qrels) and not qrels.is_dir():
        try:
            what = f"is {linked(qrels)}{kind(os.stat(qrels).st_mode)}, not a folder"
        except OSError:
            what = f"is a symbolic link to {os.readlink(qrels)}, which does not exist"
        raise InputError(qrels, f"{what}: a BEIR folder holds its splits in qrels/")


def _tests(path: Path, doc: dict[str, object], spec: Spec) -> Spec:
    """`spec` with the manifest's `tests`, `correction`, `rounds` and `seed`, as given (their values
    are checked with the command line's and the API's, by workspace/spec.py `with_tests`); their
    TOML types are checked here."""
    tests = doc.get("tests", spec.tests)
    if isinstance(tests, str):
        tests = [t.strip() for t in tests.split(",")]
    if not isinstance(tests, list | tuple) or not all(isinstance(t, str) for t in tests):
        raise InputError(path, f'tests must be a list of names, as ["t", "wilcoxon"], found {quoted(tests)}')
    correction = doc.get("correction", spec.correction)
    if not isinstance(correction, str):
        raise InputError(path, f'correction must be a string, as "holm", found {quoted(correction)}')
    rounds, seed = doc.get("rounds", spec.rounds), doc.get("seed", spec.seed)
    for key, value in (("rounds", rounds), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(path, f"{key} must be a whole number, found {quoted(value)}")
    return replace(spec, tests=tuple(tests), correction=correction, rounds=rounds, seed=seed)  # type: ignore[arg-type]


def _measures(path: Path, doc: dict[str, object]) -> tuple[tuple[Measure, ...], str | None]:
    """`measures = [...]` (names, parsed here: an unknown one names the manifest) and `order`."""
    measures = doc.get("measures", [])
    if not isinstance(measures, list) or not all(isinstance(m, str) for m in measures):
        raise InputError(
            path, f'measures must be a list of names, as ["nDCG@10", "AP"], found {quoted(measures)}'
        )
    order = doc.get("order")
    if order is not None and order not in ("trec_eval", "as_given"):
        raise InputError(path, f'order must be "trec_eval" or "as_given", found {quoted(order)}')
    return (parse_all(measures, path) if measures else ()), order


def _read_manifest(path: Path) -> tuple[Path, dict[str, object]]:
    """The manifest's path (a folder's triage.toml) and its TOML document (`toml_file.read_toml`)."""
    if path.is_dir():
        path = path / MANIFEST
    if not path.exists():
        raise InputError(path, "manifest does not exist")
    return path, read_toml(path)


def _unknown(path: Path, table: dict[str, object], allowed: set[str], section: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise InputError(
            path,
            f"unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})",
            f"[{section}]" if section else "",
        )


def _section(path: Path, doc: dict[str, object], name: str) -> dict[str, object]:
    value = doc.get(name, {})
    if not isinstance(value, dict):
        raise InputError(path, f"{name!r} must be a table ([{name}])")
    _unknown(path, value, _KEYS[name] if name in _KEYS else _KEYS["arm"], name)
    return value


def _arm(path: Path, arms: dict[str, object], key: str) -> ArmSpec:
    """`[arms.a]` or `[arms.b]`: its file, its name (default: the file's stem) and format."""
    t = arms[key]
    if not isinstance(t, dict):
        raise InputError(path, f"[arms.{key}] must be a table")
    _unknown(path, t, _KEYS["arm"], f"arms.{key}")
    p = _file(path, t, f"arms.{key}", True)
    assert p is not None
    name = t.get("name")
    if name is not None and not isinstance(name, str):
        raise InputError(path, f"name must be a string, found {quoted(name)}", f"[arms.{key}]")
    return ArmSpec(name or _stem(p), p, _form(path, t, f"arms.{key}"))


def _stem(path: Path) -> str:
    """An arm's name taken from its file's: a byte that is not UTF-8 shown as `\\xff` (a name is text)."""
    return bytes_shown(path.stem)


def _file(path: Path, table: dict[str, object], section_name: str, required: bool) -> Path | None:
    """A section's `path`, relative to the manifest's folder; it (or its glob's files) must exist."""
    value = table.get("path")
    if value is None:
        if required:
            raise InputError(path, "missing key 'path'", f"[{section_name}]")
        return None
    if not isinstance(value, str):
        raise InputError(path, f"path must be a string, found {quoted(value)}", f"[{section_name}]")
    target = path.parent / value
    try:
        if is_pattern(target) and not members(target):
            raise InputError(path, f"path {quoted(value)} matches no files", f"[{section_name}]")
        if not is_pattern(target) and not target.exists():
            raise InputError(
                path, f"path {quoted(value)} names a missing file ({target})", f"[{section_name}]"
            )
    except OSError as e:  # a name too long for the filesystem, a folder that cannot be listed
        raise InputError(
            path, f"path {quoted(value)} cannot be read: {e.strerror}", f"[{section_name}]"
        ) from None
    return target


def _form(path: Path, table: dict[str, object], section_name: str) -> str | None:
    value = table.get("format")
    if value is None:
        return None
    if not isinstance(value, str) or value not in set(Format):
        raise InputError(path, f"format {quoted(value)} is not one of {FORMATS}", f"[{section_name}]")
    return str(value)


def _holdout(doc: dict[str, object], path: Path) -> Holdout:
    """`[holdout]`: `tuned_docs = "FILE"` (relative to the manifest), or `rule = "hash"` with an
    optional `fraction` (default DEFAULT_FRACTION); one of the two."""
    table = doc["holdout"]
    where = "[holdout]"
    if not isinstance(table, dict):
        raise InputError(path, "'holdout' must be a table ([holdout])")
    extra = sorted(set(table) - _KEYS["holdout"])
    if extra:
        raise InputError(path, f"unknown key {extra[0]!r} (allowed: fraction, rule, tuned_docs)", where)
    rule, tuned = table.get("rule"), table.get("tuned_docs")
    if tuned is not None:
        if rule not in (None, Rule.TUNED_DOCS.value) or "fraction" in table:
            raise InputError(path, 'give tuned_docs or rule = "hash" with a fraction, not both', where)
        if not isinstance(tuned, str):
            raise InputError(path, f"tuned_docs must be a string, found {quoted(tuned)}", where)
        target = path.parent / tuned
        try:
            found = target.exists()
        except OSError as e:  # a name too long for the filesystem
            raise InputError(
                path, f"tuned_docs {quoted(tuned)} cannot be read: {e.strerror}", where
            ) from None
        if not found:
            raise InputError(path, f"tuned_docs {quoted(tuned)} names a missing file ({target})", where)
        return Holdout(Rule.TUNED_DOCS, tuned_docs=target)
    if rule != Rule.HASH.value:
        raise InputError(
            path,
            f'needs tuned_docs = "FILE" or rule = "hash" (with fraction), found rule {quoted(rule)}',
            where,
        )
    return Holdout(Rule.HASH, fraction=check_fraction(table.get("fraction", DEFAULT_FRACTION), path))


def from_args(
    run_a: Path,
    run_b: Path,
    labels: Path | None,
    corpus: Path | None = None,
    queries: Path | None = None,
    k: object = None,
    holdout: Holdout | None = None,
    *,
    names: tuple[str | None, str | None] = (None, None),
    amendments: Path | None = None,
    in_memory: Collection[Path] = (),
    split: str | None = None,
) -> Spec:
    """The files named one by one: each must exist (or, a glob, match files), except those in
    `in_memory` (names standing for inputs given as tables). An arm's name is its file's stem
    unless `names` gives it; `k` is checked as `check_ks` does, an error naming "k". Labels that
    are a BEIR folder are read as its `split` (`beir`); no labels: the runs' expected ids."""
    for p in (run_a, run_b, labels, corpus, queries):
        if p is None or p in in_memory:
            continue
        if not Path(p).exists() and not (is_pattern(p) and members(Path(p))):
            raise InputError(p, "file does not exist")
    ks = check_ks(k, "k")
    name_a, name_b = names
    beir_amendments = None
    truth = None
    from_runs = labels is None
    if labels is None:
        if split is not None:
            raise InputError(
                "command line", f"split {split!r} names a split of labels given as a BEIR folder"
            )
        labels = FROM_RUNS
    elif Path(labels) not in in_memory:
        files = beir(
            Path(labels), split, Path(corpus) if corpus else None, Path(queries) if queries else None
        )
        labels, corpus, queries, split = files.labels, files.corpus, files.queries, files.split
        beir_amendments, truth = files.amendments, files.truth
    elif split is not None:
        raise InputError(labels, f"split {split!r} names a split of a BEIR folder, not of a table")
    return Spec(
        a=ArmSpec(name_a or _stem(Path(run_a)), Path(run_a)),
        b=ArmSpec(name_b or _stem(Path(run_b)), Path(run_b)),
        labels=Path(labels),
        corpus=Path(corpus) if corpus else None,
        queries=Path(queries) if queries else None,
        amendments=Path(amendments) if amendments is not None else beir_amendments,
        k=ks[0] if ks else None,
        ks=ks,
        holdout=holdout,
        split=split,
        labels_from_runs=from_runs,
        truth=truth,
    )
