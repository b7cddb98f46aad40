"""`triage review export [OUT] [EVAL …]`: the regressions (`--all`: every flip) as one document to
paste into a review, Markdown (the default) or self-contained HTML.

OUT absent or `-`: standard output. Otherwise a new file, written through `core.files` (never
through a link, never onto an input, the frozen labels or an amendment file); an existing OUT is
refused unless `--force`, which replaces a regular file (still never a link, an input or a folder).
Without `--format`, an OUT ending in .html or .htm is written as HTML. The evaluation is given as
for `triage report`: a manifest, RUN_A RUN_B --labels L, or none for the bundled sample. The
arguments are parsed in `cli.main` (`review_parser`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from triage.cli.exits import Exit
from triage.core.errors import InputError
from triage.core.files import Identity, refuse_target
from triage.core.inputs.manifest import Spec
from triage.core.text.sanitize import visible
from triage.workspace import store

HTML_SUFFIXES = (".html", ".htm")
STDOUT = "-"


def output_format(fmt: str | None, out: Path | None) -> str:
    if fmt is not None:
        return fmt
    return "html" if out is not None and out.suffix.lower() in HTML_SUFFIXES else "markdown"


def _check_out(out: Path, force: bool, protected: frozenset[Identity]) -> None:
    """Refuse OUT before any loading: a folder, a link, an input, or (without --force) any file."""
    if out.is_dir() and not out.is_symlink():
        raise InputError(
            out,
            "is a folder; OUT names the file the review is written to "
            f"(for an evaluation in that folder: triage review export {STDOUT} FOLDER)",
        )
    refuse_target(out, protected)
    if not force and os.path.lexists(out):
        raise InputError(out, "exists; not overwritten (--force replaces it)")


def review_export(args: argparse.Namespace, spec: Spec) -> int:
    """Exit status 0 (written); InputError (exit 2) for a refused OUT or an unreadable input."""
    from triage.core.files import write_bytes
    from triage.core.inputs.corpus import open_corpus
    from triage.labels.state import LabelMode
    from triage.report.review.document import Scope, build_review
    from triage.workspace.snapshot import open_snapshot

    out = None if args.out in (None, STDOUT) else Path(args.out)
    fmt = output_format(args.format, out)
    protected = store.protected(spec)
    if out is not None:
        _check_out(out, args.force, protected)
    snapshot = open_snapshot(spec, args.k, LabelMode(args.label_state), args.apply_stale)
    corpus = open_corpus(spec.corpus, fmt=spec.corpus_format) if spec.corpus is not None else None
    doc = build_review(snapshot, corpus, Scope.FLIPS if args.every else Scope.REGRESSIONS)
    from triage.report.review import html, markdown

    text = (html.render_review_html if fmt == "html" else markdown.render_review_markdown)(doc)
    if out is None:
        sys.stdout.write(text)
        return Exit.OK
    write_bytes(out, text.encode("utf-8"), protected, replace=args.force)
    what = "flips" if args.every else "regressions"
    print(visible(f"wrote {out}: {len(doc.queries)} {what} as {fmt}", newlines=False))
    return Exit.OK
