"""The checks of inputs read from a RAG framework's shape (docs/checks.md; core/inputs/rag/): what
each was read as, labels taken from runs that disagree, ids that are digests of text, queries known by
their text that no label names, an id given two texts."""

from __future__ import annotations

from triage.core.checks.model import ERROR, OK, WARNING, Check, some
from triage.core.evaluation import Evaluation


def check_rag(ev: Evaluation) -> list[Check]:
    facts = ev.inputs.rag
    if facts is None:
        return []
    read = "; ".join(f"{name}: {shape}" for name, shape in facts.shapes.items())
    sources = [read] if read else []
    if facts.labels_from_runs:
        sources.append("labels: the runs' expected ids")
    if facts.stand_in:
        sources.append("texts: the runs' own (no corpus given)")
    out = [Check(OK, "rag.shapes", "read as " + "; ".join(sources), {"shapes": dict(facts.shapes)})]
    if facts.labels_from_runs:
        out.append(_from_runs(facts.differ))
    for name, n in facts.by_text.items():
        if n:
            out.append(
                Check(
                    WARNING,
                    "ids.from_text",
                    f"{name}: {n} queries' retrieved texts carry no ids: each text is known by a digest of "
                    "it, whitespace normalised (equal text, one chunk: sound when both arms and the "
                    "references come from one chunking pass)",
                    {"input": name, "rows": n},
                )
            )
    keyed = {name: n for name, n in facts.keyed_by_text.items() if n}
    answered = (ev.a.present | ev.b.present) & ev.scored  # labelled queries a run answers
    if keyed and not facts.labels_from_runs and not answered.any():
        names = ", ".join(keyed)
        out.append(
            Check(
                ERROR,
                "queries.keyed_by_text",
                f"{names}: queries known by their text (no query_id), and none is a query of the labels: "
                "give --queries, a file of query_id and text, to map each text to its id",
                {"inputs": list(keyed)},
            )
        )
    if facts.texts_differ:
        ids = list(facts.texts_differ)
        out.append(
            Check(
                WARNING,
                "corpus.texts_differ",
                f"{len(ids)} ids come with two different texts in the runs (the first is shown): {some(ids)}",
                {"count": len(ids)},
            )
        )
    return out


def _from_runs(differ: tuple[str, ...]) -> Check:
    if not differ:
        return Check(
            OK, "labels.from_runs", "the labels are the runs' expected ids; both arms expect the same"
        )
    queries = list(differ)
    return Check(
        ERROR,
        "labels.from_runs",
        f"the arms expect different ids for {len(queries)} queries (each judged on the union of both): "
        f"{some(queries)}",
        {"queries": len(queries)},
    )
