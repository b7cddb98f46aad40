"""Command line: `triage [PATH]` opens the app; `triage report [PATH | RUN_A RUN_B --labels L] …`
prints the numbers.

Exit status: `cli.exits.Exit` (docs/cli.md "Exit codes").
Imports stay lazy so `triage report` never loads Textual, and building the parsers loads nothing
but the standard library: `triage --help` and `--version` answer at once (docs/benchmarks.md "Benchmarks").
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from triage import __version__
from triage.cli.exits import Exit

if TYPE_CHECKING:
    from triage.core.inputs.manifest import Spec
    from triage.core.inputs.split import Holdout

VERSION = f"triage {__version__}"


class Parser(argparse.ArgumentParser):
    """argparse's parser (and its verbs'), its errors made visible: an unknown flag or a refused value
    is the user's own text, shown with every invisible mark as a token (`core.text.sanitize`)."""

    def error(self, message: str) -> NoReturn:
        from triage.core.text.sanitize import visible

        super().error(visible(message, newlines=False))


def _evaluation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="a manifest (folder or triage.toml), or RUN_A RUN_B with --labels; none: the bundled sample",
    )
    p.add_argument(
        "--labels",
        type=Path,
        help="frozen gold labels (with RUN_A RUN_B); none: the runs' expected ids (LlamaIndex, Ragas, "
        "OpenInference evaluations)",
    )
    p.add_argument("--corpus", type=Path, help="chunks file (with RUN_A RUN_B)")
    p.add_argument("--queries", type=Path, help="queries file (with RUN_A RUN_B)")
    p.add_argument(
        "--split",
        help="with --labels naming a BEIR folder (qrels/, queries.jsonl, corpus.jsonl): the split whose "
        "qrels are the labels and whose queries are evaluated (default: test)",
    )
    p.add_argument(
        "--k",
        type=cutoff_list,
        help="judge both arms at this cut-off (a positive integer); several, as 1,5,10: the flips at "
        "the first, each arm's metrics at every one",
    )
    split = p.add_mutually_exclusive_group()
    split.add_argument(
        "--holdout-fraction",
        type=fraction,
        metavar="F",
        help="the hash rule: documents whose sha256(doc_id) falls in the first fraction F are held "
        "out (overrides the manifest's [holdout])",
    )
    split.add_argument(
        "--tuned-docs",
        type=Path,
        metavar="FILE",
        help="a file of tuned doc ids, one per line; every other document is held out",
    )


def whole(text: str, low: int, high: int, what: str) -> int:
    """A whole number in [low, high), or an argparse error saying why (the flag is named by argparse)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not low <= value < high:
        raise argparse.ArgumentTypeError(f"{value} is not {what}")
    return value


def positive_int(text: str) -> int:
    """--k: a whole number ≥ 1 ("0", "-1", "1.5" and "5x" are refused, naming the flag)."""
    return whole(text, 1, 2**63, "positive: k counts the ids judged")


def cutoff_list(text: str) -> tuple[int, ...]:
    """--k: one cut-off or several separated by commas ("1,5,10"), each a positive whole number,
    none twice; the first is the decision k."""
    values = tuple(positive_int(part.strip()) for part in text.split(","))
    twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if twice is not None:
        raise argparse.ArgumentTypeError(f"{twice} is given twice")
    return values


def _number(text: str, ok: Callable[[float], bool], what: str) -> float:
    """A float flag's value, refused (naming `what` it must be) unless `ok`; "nan" fails every `ok`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"{text} is not {what}")
    return value


def floor_rate(text: str) -> float:
    """--floor: a hit rate in [0, 1] ("nan", "inf" and 1.5 are refused, naming the flag)."""
    return _number(text, lambda v: 0 <= v <= 1, "a hit rate between 0 and 1")


def fraction(text: str) -> float:
    """--holdout-fraction: a number above 0 and below 1."""
    return _number(text, lambda v: 0 < v < 1, "a fraction above 0 and below 1")


def standard_errors(text: str) -> float:
    """--floor-se: a positive number of standard errors."""
    return _number(text, lambda v: 0 < v < math.inf, "a positive number")


def _floor_arg(p: argparse.ArgumentParser) -> None:
    from triage.core.defaults import DEFAULT_FLOOR

    p.add_argument(
        "--floor",
        type=floor_rate,
        default=DEFAULT_FLOOR,
        help=f"tenant hit-rate floor (default {DEFAULT_FLOOR})",
    )


def app_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="triage",
        description="Read what a retrieval change did, from the keyboard. Also: `triage report` (the "
        "numbers, no UI; see `triage report --help`) and "
        "`triage labels log|verify|export|suggest|judge|import|conflicts|agreement`, "
        "`triage review export` (the regressions as one Markdown or HTML document to paste), and "
        "`triage sample` (the queries worth an exact truth, from a query log).",
    )
    p.add_argument("--version", action="version", version=VERSION)
    p.add_argument(
        "--print-completion",
        choices=("bash", "zsh", "fish"),
        metavar="SHELL",
        help='print the completion script for bash, zsh or fish and exit (docs/cli.md "Shell completion")',
    )
    _evaluation_args(p)
    _measure_args(p)
    p.add_argument("--reviewer", help="name on your amendments (default: TRIAGE_REVIEWER, else your login)")
    _floor_arg(p)
    return p


def _label_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--label-state",
        choices=("amended", "frozen"),
        default="amended",
        help="the labels the numbers use: frozen + amendments (default) or the frozen file alone",
    )
    p.add_argument(
        "--apply-stale",
        action="store_true",
        help="apply amendment files written against another frozen label file",
    )


def _measure_args(p: argparse.ArgumentParser) -> None:
    """Measures by name and their paired tests: the report's and the app's alike."""
    p.add_argument(
        "--measures",
        metavar="NAMES",
        help="measures by name, comma-separated (nDCG@10,AP,R@100): ir_measures' names, or ranx's or "
        "trec_eval's (docs/measures.md 'Measures by name')",
    )
    p.add_argument(
        "--order",
        choices=("trec_eval", "as_given"),
        help="how the measures read each ranked list: by score, ties by id descending (trec_eval's; the "
        "default for TREC runs), or as stored (the default otherwise)",
    )
    p.add_argument(
        "--tests",
        metavar="TESTS",
        help="the paired tests of each named measure, comma-separated, from t, wilcoxon, randomization "
        "(default t; the first is the one corrected, and the t-test always runs)",
    )
    p.add_argument(
        "--correction",
        metavar="HOW",
        help="how the first test's p is adjusted over the named measures: holm (default), bonferroni, "
        "bh or none",
    )
    p.add_argument("--rounds", metavar="N", help="the randomisation test's rounds (default 10000)")
    p.add_argument("--seed", metavar="S", help="the randomisation test's seed (default 0)")


def _format_name(text: str) -> str:
    """A format as named: `md` is Markdown's usual short name."""
    return {"md": "markdown"}.get(text, text)


def report_parser() -> argparse.ArgumentParser:
    p = Parser(prog="triage report", description="Print an evaluation's numbers (no UI).")
    _evaluation_args(p)
    _label_args(p)
    p.add_argument(
        "--format",
        type=_format_name,
        choices=("text", "markdown", "json", "html"),
        default="text",
        help="md: markdown",
    )
    p.add_argument(
        "--json-schema",
        action="store_true",
        help="print the JSON Schema of --format json (made from the report's model) and exit; reads no input",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when any check is an error")
    _floor_arg(p)
    _measure_args(p)
    p.add_argument(
        "--per-query",
        action="store_true",
        help="--format json: add the per-query table (`queries`: one row per query, as the API's "
        "queries()); left out unless asked for",
    )
    p.add_argument(
        "--tenants-by",
        choices=("rate", "lower"),
        default="rate",
        help="list tenants worst first by B's hit rate (default) or by the low end of its 95%% interval",
    )
    p.add_argument(
        "--gate",
        type=Path,
        metavar="FLOORS.toml",
        help="exit 1 when B's hit rate falls below a floor of this file's [floors], or a measure of its "
        "[measures.NAME] below its floor or significantly more than its max_drop below A",
    )
    from triage.core.defaults import MIN_N, SUGGEST_SE

    p.add_argument(
        "--suggest-floors",
        action="store_true",
        help="print a FLOORS.toml for --gate instead of the report: one floor per slice with enough queries",
    )
    p.add_argument(
        "--floor-se",
        type=standard_errors,
        default=SUGGEST_SE,
        metavar="S",
        help=f"--suggest-floors: standard errors below B's hit rate (default {SUGGEST_SE:g})",
    )
    p.add_argument(
        "--floor-min-n",
        type=lambda t: whole(t, 1, 2**63, "positive"),
        default=MIN_N,
        metavar="N",
        help=f"--suggest-floors: the fewest scored queries a slice is gated with (default {MIN_N})",
    )
    return p


def review_parser() -> argparse.ArgumentParser:
    """`triage review export [OUT] [EVAL …]` (the verb is `cli.review_cmd`)."""
    p = Parser(prog="triage review", description="Review documents.")
    sub = p.add_subparsers(dest="action", required=True)
    text = "write the regressions (--all: every flip) as one Markdown or HTML document"
    q = sub.add_parser("export", help=text, description=text)
    q.add_argument(
        "out", nargs="?", metavar="OUT", help="the file to write (new; see --force); none or '-': stdout"
    )
    _evaluation_args(q)
    _label_args(q)
    q.add_argument(
        "--format",
        type=_format_name,
        choices=("markdown", "html"),
        help="markdown or md (default; html when OUT ends in .html or .htm)",
    )
    q.add_argument("--all", dest="every", action="store_true", help="every flip, not only the regressions")
    q.add_argument("--force", action="store_true", help="replace OUT when it exists (a regular file only)")
    return p


def review_command(args: argparse.Namespace) -> int:
    from triage.cli import review_cmd

    return review_cmd.review_export(args, spec_from(args))


def sample_parser() -> argparse.ArgumentParser:
    """`triage sample LOG --corpus C --out Q` (the verb is `cli.sample_cmd`; the rule
    core/truth/sampling.py)."""
    p = Parser(
        prog="triage sample",
        description="Pick the queries worth running from a query log: a fixed quota per filter shape, "
        "spread equally over selectivity bands counted exactly against the corpus (lowest bands first), "
        "across tenants, with an unfiltered control group; written as a queries file for `triage truth`, "
        "its allocation beside it (Q's stem + .allocation.json).",
    )
    p.add_argument(
        "log",
        metavar="LOG",
        help="the query log: Parquet or JSON Lines with text and/or embedding, filter (SQL WHERE), tenant",
    )
    p.add_argument("--corpus", type=Path, required=True, help="a Parquet file or a folder of Parquet shards")
    p.add_argument(
        "--out", type=Path, required=True, metavar="Q", help="the queries file to write (.parquet)"
    )
    p.add_argument(
        "--per-shape",
        type=lambda t: whole(t, 1, 2**63, "a positive number of queries"),
        default=100,
        metavar="N",
        help="queries per filter shape, split equally over its five bands (default 100)",
    )
    p.add_argument(
        "--control",
        type=lambda t: whole(t, 0, 2**63, "a number of queries (0: none)"),
        metavar="N",
        help="unfiltered queries, the control group (default: --per-shape)",
    )
    p.add_argument(
        "--seed",
        type=lambda t: whole(t, 0, 2**63, "a whole number from 0"),
        default=0,
        metavar="S",
        help="the same log, corpus, flags and seed give the same file, byte for byte (default 0)",
    )
    p.add_argument(
        "--tenant-column",
        metavar="NAME",
        help="the log's column whose values each stratum takes in turn (default: tenant, when present)",
    )
    p.add_argument("--force", action="store_true", help="replace Q and its allocation when they exist")
    return p


def sample_command(args: argparse.Namespace) -> int:
    from triage.cli import sample_cmd

    return sample_cmd.sample_log(args)


def grade(text: str) -> int:
    """--grade: a whole number from 0 (judged not relevant) to 2^53 ("-1", "1.5", "2x" refused)."""
    from triage.workspace.judgements import MAX_GRADE

    return whole(text, 0, MAX_GRADE, "a grade from 0 (not relevant) to 2^53")


LABEL_ACTIONS = (
    ("log", "list the amendments"),
    ("verify", "check every file, chain and base (exit 1 on a problem)"),
    ("export", "write frozen + amendments (every judged pair, grade 0 included) as a new label file"),
    ("suggest", "list retrieved passages that are likely also gold"),
    ("judge", "append one judgement (exit 2 if it cannot be saved)"),
    ("import", "append the judgements of a TREC qrels or JSON Lines file"),
    ("conflicts", "list relevant-against-not-relevant conflicts (exit 1 when any), then grade differences"),
    ("agreement", "per pair of reviewers: the pairs both judged and Cohen's kappa"),
)


def labels_parser() -> argparse.ArgumentParser:
    p = Parser(prog="triage labels", description="The amendment log.")
    sub = p.add_subparsers(dest="action", required=True)
    for name, text in LABEL_ACTIONS:
        q = sub.add_parser(name, help=text, description=text)
        _evaluation_args(q)
        q.add_argument("--apply-stale", action="store_true", help=argparse.SUPPRESS)
        if name == "export":
            q.add_argument(
                "--out", type=Path, required=True, help="a .parquet file, or .qrels for TREC qrels"
            )
        if name == "suggest":
            q.add_argument("--format", choices=("text", "json"), default="text")
        if name == "judge":
            q.add_argument("--query", required=True, metavar="QUERY_ID", help="the query judged")
            q.add_argument("--chunk", required=True, metavar="CHUNK_ID", help="the chunk judged")
            q.add_argument(
                "--grade", type=grade, required=True, metavar="G", help="0 not relevant; 1, 2, … gold"
            )
            q.add_argument(
                "--resolves",
                action="store_true",
                help="when reviewers disagree on the pair, settle it with this judgement",
            )
        if name == "import":
            q.add_argument(
                "--from",
                dest="source",
                type=Path,
                required=True,
                metavar="FILE",
                help="TREC qrels (qid 0 docid rel) or JSON Lines (query_id, chunk_id, relevance)",
            )
        if name in ("judge", "import"):
            q.add_argument("--note", default="", metavar="T", help="a note on every judgement written")
            q.add_argument(
                "--reviewer",
                metavar="R",
                help="name on the judgements (default: TRIAGE_REVIEWER, else login)",
            )
    return p


def labels_command(args: argparse.Namespace) -> int:
    from triage.cli import judge_cmd, labels_cmd
    from triage.workspace.snapshot import open_snapshot

    if args.action in ("judge", "import"):  # what the records would hold, before any file is read
        from triage.workspace.review import storable

        given = ("query", "chunk", "note") if args.action == "judge" else ("note",)
        storable({f"--{n}": getattr(args, n) for n in given}, args.reviewer)
    # No labels verb shows the corpus checks: not run.
    snapshot = open_snapshot(spec_from(args), args.k, apply_stale=args.apply_stale, corpus_check=False)
    if args.action == "log":
        return labels_cmd.labels_log(snapshot)
    if args.action == "verify":
        return labels_cmd.labels_verify(snapshot)
    if args.action == "export":
        return labels_cmd.labels_export(snapshot, args.out)
    if args.action == "judge":
        return judge_cmd.labels_judge(
            snapshot, args.query, args.chunk, args.grade, args.note, args.reviewer, args.resolves
        )
    if args.action == "import":
        return judge_cmd.labels_import(snapshot, args.source, args.note, args.reviewer)
    if args.action == "conflicts":
        return judge_cmd.labels_conflicts(snapshot)
    if args.action == "agreement":
        return judge_cmd.labels_agreement(snapshot)
    return labels_cmd.labels_suggest(snapshot, args.format)


def spec_from(args: argparse.Namespace) -> Spec:
    from triage.core.errors import InputError
    from triage.workspace.spec import evaluation_spec

    paths = [Path(p) for p in args.paths]
    loose = [n for n in ("labels", "corpus", "queries", "split") if getattr(args, n, None) is not None]
    holdout = _holdout(args)
    if len(paths) == 2:  # without --labels, the labels are the runs' expected ids (RAG evaluations)
        runs = (paths[0], paths[1])
        return evaluation_spec(
            None,
            runs,
            args.labels,
            args.corpus,
            args.queries,
            holdout=holdout,
            split=getattr(args, "split", None),
        )
    if len(paths) > 2:
        raise InputError("command line", "give one manifest, or two runs with --labels")
    if loose:
        raise InputError("command line", f"--{loose[0]} goes with two runs (RUN_A RUN_B)")
    return evaluation_spec(paths[0] if paths else None, holdout=holdout)


def with_measure_flags(spec: Spec, args: argparse.Namespace) -> Spec:
    """`spec` with --measures (checked here: a bad name exits 2 before any file is read), --order,
    and the paired tests' --tests, --correction, --rounds and --seed (checked the same way)."""
    from triage.workspace.spec import with_measures, with_tests

    spec = with_measures(spec, args.measures, args.order, "--measures")
    return with_tests(spec, args.tests, args.correction, args.rounds, args.seed, "command line", "--")


def _holdout(args: argparse.Namespace) -> Holdout | None:
    """--holdout-fraction F (the hash rule) or --tuned-docs FILE; None: neither given."""
    from triage.core.errors import InputError
    from triage.core.inputs.split import Holdout, Rule

    if getattr(args, "holdout_fraction", None) is not None:
        return Holdout(Rule.HASH, fraction=args.holdout_fraction)
    tuned = getattr(args, "tuned_docs", None)
    if tuned is None:
        return None
    if not Path(tuned).exists():
        raise InputError(tuned, "file does not exist (--tuned-docs)")
    return Holdout(Rule.TUNED_DOCS, tuned_docs=Path(tuned))


def report_command(args: argparse.Namespace) -> int:
    if args.json_schema:
        from triage.report.schema import schema_text

        sys.stdout.write(schema_text())
        return Exit.OK
    from triage.core.checks.model import Level
    from triage.labels.state import LabelMode
    from triage.report.build import report_of
    from triage.report.model import dumps_report, write_json
    from triage.report.sections.tenants import TenantOrder
    from triage.workspace.results import open_results

    spec = with_measure_flags(spec_from(args), args)
    if args.suggest_floors:
        return _suggest_floors(spec, args)
    per_query = args.per_query and args.format == "json"
    order = TenantOrder.LOWER_BOUND if args.tenants_by == "lower" else TenantOrder.HIT_RATE
    # One call computes every result, the gate's too (workspace/results.py); the report holds what
    # it prints, so the results and the runs they hold are let go before it is written.
    result = report_of(
        open_results(
            spec, args.k, LabelMode(args.label_state), args.apply_stale, args.floor, per_query, args.gate
        ),
        order,
    )
    for notice in dict.fromkeys(result.notices):
        from triage.core.text.sanitize import visible

        print(f"triage: notice: {visible(notice, newlines=False)}", file=sys.stderr)
    if args.format == "json":
        raw = getattr(sys.stdout, "buffer", None)  # none when stdout is replaced by a text stream
        if raw is None:
            sys.stdout.write(dumps_report(result) + "\n")
        else:
            sys.stdout.flush()
            write_json(result, raw)
            raw.write(b"\n")
    elif args.format == "markdown":
        from triage.report import markdown

        sys.stdout.write(markdown.render_markdown(result))
    elif args.format == "html":
        from triage.report import html

        sys.stdout.write(html.render_html(result))
    else:
        from triage.report import terminal

        terminal.render_terminal(result)
    if args.strict and any(c.level is Level.ERROR for c in result.checks):
        return Exit.FOUND
    if result.gate is not None and not result.gate.holds:
        return Exit.FOUND
    return Exit.OK


def _suggest_floors(spec: Spec, args: argparse.Namespace) -> int:
    """Print the proposed FLOORS.toml on standard output (names escaped as TOML strings)."""
    from triage.labels.state import LabelMode
    from triage.workspace.results import suggested_floors

    mode = LabelMode(args.label_state)
    floors = suggested_floors(
        spec, args.k, mode, args.apply_stale, args.floor_se, args.floor_min_n, args.gate
    )
    sys.stdout.write(floors)
    return Exit.OK


def app_command(args: argparse.Namespace) -> int:
    """The app paints first; reading the manifest and files happens in its worker, so a bad file
    is shown in the app. What the command line alone can refuse is refused here, before it opens
    (exit 2): a path that names nothing, an unknown measure or test."""
    from triage.ui.app import run
    from triage.workspace.review import storable

    _exists(args)
    storable({}, args.reviewer)  # the name on every decision, refused before the app opens
    if any(
        getattr(args, n) is not None for n in ("measures", "order", "tests", "correction", "rounds", "seed")
    ):
        from triage.workspace.spec import evaluation_spec

        # the flags checked on the sample's spec, before loading
        with_measure_flags(evaluation_spec(None), args)
    return run(lambda: with_measure_flags(spec_from(args), args), args.k, args.reviewer, args.floor)


def _exists(args: argparse.Namespace) -> None:
    """A path on the command line that names nothing is refused here (exit 2), before the app
    opens; a glob (`runs/part-*.parquet`) is left to the reader."""
    from triage.core.errors import InputError

    given = [*args.paths, *(getattr(args, n, None) for n in ("labels", "corpus", "queries", "tuned_docs"))]
    for p in given:
        if p is not None and not Path(p).exists() and not set("*?[") & set(str(p)):
            raise InputError(p, "does not exist")


# the first word that picks a parser and a command; any other runs the app
def cache_parser() -> argparse.ArgumentParser:
    """`triage cache list | prune` (the verb is `cli.cache_cmd`)."""
    p = Parser(prog="triage cache", description="The corpus caches triage keeps in the user cache folder.")
    sub = p.add_subparsers(dest="action", required=True)
    text = "each corpus cache: its size, whether a run still reads it, its corpus"
    sub.add_parser("list", help=text, description=text)
    text = (
        "remove the caches no run will read again (another format, their corpus changed or gone, "
        "a build that stopped)"
    )
    q = sub.add_parser("prune", help=text, description=text)
    q.add_argument(
        "--all",
        dest="every",
        action="store_true",
        help="remove every cache but one being built (each is rebuilt when next used)",
    )
    q.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    return p


def cache_command(args: argparse.Namespace) -> int:
    from triage.cli import cache_cmd

    return cache_cmd.cache_prune(args) if args.action == "prune" else cache_cmd.cache_list(args)


def tolerance(text: str) -> float:
    """--tolerance: a number from 0 up to (not including) 1."""
    return _number(text, lambda v: 0 <= v < 1, "a number from 0 up to (not including) 1")


def truth_parser() -> argparse.ArgumentParser:
    """`triage truth --corpus C --queries Q --k K --out DIR` (the verb is `cli.truth_cmd`)."""
    p = Parser(
        prog="triage truth",
        description="Compute the exact top-k of every query within the corpus rows its filter admits "
        "(the ground truth of a filtered vector index's recall) and write it to a folder.",
    )
    p.add_argument(
        "--corpus",
        type=Path,
        required=True,
        metavar="C",
        help="a Parquet file, or a folder of Parquet files (each a shard), with chunk_id, embedding and "
        "the metadata columns the filters name",
    )
    p.add_argument(
        "--queries",
        type=Path,
        required=True,
        metavar="Q",
        help="Parquet or JSON Lines with query_id, embedding and an optional filter (a SQL WHERE clause)",
    )
    p.add_argument(
        "--k",
        type=cutoff_list,
        action="append",
        required=True,
        metavar="K",
        help="the truth's depth; several (--k 10 --k 100, or 10,100): computed at the largest, which "
        "serves every smaller k",
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="the truth folder to write (new)")
    p.add_argument("--metric", choices=("cosine", "ip", "l2"), default="cosine", help="default cosine")
    from triage.core.defaults import TRUTH_TOLERANCE as DEFAULT_TOLERANCE

    p.add_argument(
        "--tolerance",
        type=tolerance,
        default=DEFAULT_TOLERANCE,
        metavar="T",
        help=f"a row whose score is within T x max(1, |the k-th score|) of the k-th is listed as tied "
        f"(default {DEFAULT_TOLERANCE:g})",
    )
    p.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="where the shards are scanned: local (this process, the default) or ray (a Ray cluster; "
        "pip install 'retrieval-triage[ray]')",
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="--engine ray: the Ray cluster's address (default: RAY_ADDRESS, a cluster started on this "
        "machine by `ray start`, else a new local one)",
    )
    p.add_argument("--force", action="store_true", help="replace DIR when it is an earlier truth folder")
    return p


def truth_command(args: argparse.Namespace) -> int:
    from triage.cli import truth_cmd

    return truth_cmd.run_truth(args)


VERBS: dict[str, tuple[Callable[[], argparse.ArgumentParser], Callable[[argparse.Namespace], int]]] = {
    "report": (report_parser, report_command),
    "labels": (labels_parser, labels_command),
    "sample": (sample_parser, sample_command),
    "review": (review_parser, review_command),
    "cache": (cache_parser, cache_command),
    "truth": (truth_parser, truth_command),
}


def _one_malloc_arena() -> None:
    """Have glibc's malloc keep one arena for every thread of this process.

    By default each thread that allocates gets an arena of its own, and what a thread frees stays
    in its arena, resident, for that thread alone: the worker threads (the two runs read at once,
    the corpus check's two arms, the app's workers) left 0.05-0.1 GB so at 1M queries x 20, which
    the next phase could not reuse. With one arena it can, at no measured cost to a report's time
    (docs/benchmarks.md "Memory at a million queries"). Only for `triage report` in a process of
    its own: threads that live on (the app's, a test runner's) wait on each other for the one
    arena. Set before numpy's or any other thread starts; a no-op without glibc's `mallopt`."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_arena_max = -8  # glibc's M_ARENA_MAX
    mallopt(m_arena_max, 1)


def _arrow_without_pandas() -> None:
    """Keep pyarrow from importing pandas in this process (0.3-0.5 s of a report's start).

    pyarrow looks for pandas, and imports it when installed, the first time it converts any
    Python or numpy value (`pa.array`, `pa.scalar`, a compute call with a number), to tell a
    pandas object apart. A command line never holds one, so that first look is made here with
    the import refused: pyarrow notes pandas as absent and converts everything as before. Code
    that asks pyarrow for pandas itself (`to_pandas`) still gets it: pyarrow imports it then.
    Where pandas is already imported this does nothing."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    class Refuse:  # a finder on sys.meta_path, asked before the real ones
        def find_spec(self, name: str, path: object = None, target: object = None) -> None:
            if name == "pandas":
                raise ModuleNotFoundError("pandas is not imported by the command line", name=name)

    finder = Refuse()
    sys.meta_path.insert(0, finder)
    try:
        pa.scalar(0)
    finally:
        sys.meta_path.remove(finder)


def _escaped(e: UnicodeError) -> tuple[str, int]:
    """What standard output and error write for characters their encoding cannot hold: a byte
    that is not UTF-8 (from a file name or an argument) as `\\xff`, any other character as
    `\\u00b7` or `\\U0001f600` (never `\\xb7`: that spelling is a byte's)."""
    if not isinstance(e, UnicodeEncodeError):
        raise e
    from triage.core.text.sanitize import bytes_shown

    def one(c: str) -> str:
        n = ord(c)
        return bytes_shown(c) if 0xD800 <= n <= 0xDFFF else f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"

    return "".join(one(c) for c in e.object[e.start : e.end]), e.end


def _escaping_streams() -> None:
    """Standard output and error never fail on a character, whatever the locale and
    PYTHONIOENCODING (ascii, utf-8 strict): what they cannot encode is written escaped."""
    import codecs

    codecs.register_error("triage.escaped", _escaped)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="triage.escaped")


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the process is the command's own: `triage ...`, `python -m triage ...`
        argv = sys.argv[1:]
        _escaping_streams()
        if argv[:1] == ["report"]:
            _one_malloc_arena()
    if argv[:1] == ["--version"]:  # before any parser is built; exits as argparse's --version does
        print(VERSION)
        raise SystemExit(Exit.OK)
    if argv and argv[0] in VERBS:
        build, command = VERBS[argv[0]]
        args = build().parse_args(argv[1:])
    else:
        args, command = app_parser().parse_args(argv), app_command
        if args.print_completion is not None:
            from triage.cli.completion import print_completion

            verbs = {name: build() for name, (build, _) in VERBS.items()}
            return print_completion(args.print_completion, app_parser(), verbs)
    from pyarrow import ArrowException

    _arrow_without_pandas()
    # Arrow keeps its default memory pool: with the system allocator, two runs decoded in
    # parallel threads took twice as long at 1M queries x 100 ids (34 s against 18 s) and peaked
    # higher (9.3 against 8.0 GB).
    from triage.core.errors import InputError
    from triage.core.text.sanitize import visible

    try:
        return command(args)
    except InputError as e:
        print(f"triage: error: {visible(e.message, newlines=False)}", file=sys.stderr)
        return Exit.INPUT
    except MemoryError:  # an input too large for this machine: named as an input problem, exit 2
        print(
            "triage: error: out of memory while reading the inputs (a file larger than this machine "
            "can hold at once?)",
            file=sys.stderr,
        )
        return Exit.INPUT
    except KeyboardInterrupt:  # ctrl+c while loading: stop cleanly, no traceback
        print("triage: interrupted", file=sys.stderr)
        return Exit.INTERRUPTED
    except BrokenPipeError:  # the reader stopped reading (`triage report | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush cannot fail
        return Exit.PIPE
    except (ArrowException, OSError) as e:
        if os.environ.get("TRIAGE_DEBUG"):
            raise
        what = (
            "cannot write" if isinstance(e, OSError) and getattr(e, "filename", None) else "cannot read input"
        )
        print(f"triage: error: {what}: {visible(str(e), newlines=False)}", file=sys.stderr)
        return Exit.INPUT
