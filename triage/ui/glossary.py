"""What `?` explains: per screen, its own keys, then every column and term it shows, one sentence each.

The sentences live where the things are declared: a key's in its `Binding` (its tooltip), a
column's in its `Column` (`means`); `TERMS` holds the rest, the terms a screen prints that are
neither (a mark, an abbreviation, a line's figure). Each screen says what it shows in a `Topic`:
its title and its terms, columns and sentences of its own, in the order the help lists them.
Tests walk every screen and fail on a table column, or a key, that has no sentence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from textual.binding import Binding

from triage.core.views.slices import FEW
from triage.report.columns import Column

TERMS: dict[str, str] = {
    # -- counts and labels --------------------------------------------------------------------------
    "A / B": (
        "A is the baseline run and B the treatment; both answer the same frozen queries at the same k. "
        "The title names them: A's run first, then → B's (e.g. A plain → B headers)."
    ),
    "k": "The cut-off: a query is a hit when a gold chunk is among an arm's first k results.",
    "labels": (
        "The frozen gold file's fingerprint, how many amendment records (judgements and undos; "
        "verdicts are counted apart) stand beside it, and how many judgements are in force: those "
        "not undone."
    ),
    "scored": "Queries that have at least one gold chunk; only these count in the rates.",
    "unlabelled": "Queries asked but without any gold chunk: not scored.",
    "missing from A / B": (
        "Labelled queries an arm did not answer at all; each counts as a miss for that arm."
    ),
    "checks": (
        "What was held still besides the treatment (k, queries, corpus, chunker, model, labels): errors "
        "and warnings first."
    ),
    "level": "A check's outcome: ok, warning or error.",
    "code": "A check's stable name, the same in the JSON report.",
    "message": "What the check compared, with its evidence.",
    # -- measures -------------------------------------------------------------------------------------
    "hit_rate@k": "The share of scored queries with a gold chunk in the arm's top k.",
    "recall@k": "The share of a query's gold chunks found in the top k, averaged over scored queries.",
    "mrr@k": "Mean reciprocal rank: 1 / the first gold's rank (0 beyond k), averaged.",
    "ndcg@k": (
        "Normalised discounted cumulative gain: graded gold near the top scores more, 1 is a perfect order."
    ),
    "95% low / high": (
        "The ends of the Wilson 95% interval of the hit rate: the range the true rate plausibly lies in."
    ),
    "judged@k": "The mean share of a top k that the labels say anything about, gold or not.",
    "unjudged in top k": (
        "Results in the top k the labels say nothing about, summed over queries: each might be relevant."
    ),
    "upper": (
        "The hit rate if every unjudged passage in a top k were relevant (the measured one takes them as "
        "not)."
    ),
    "B − A": "B's figure minus A's: positive means B is higher.",
    # -- paired tests per named measure (docs/measures.md "Paired tests per measure") ------------------------
    "measure": "A measure named with --measures (ir_measures' name), compared B against A per query.",
    "Δ": "The mean over the scored queries of B's value minus A's, pairs formed by query id.",
    "95% interval": "The paired t 95% interval of Δ: the range the true mean difference plausibly lies in.",
    "p corr.": (
        "The first requested test's p, adjusted over the measures compared together by the correction "
        "the title names (Holm unless told otherwise); – when there is no test."
    ),
    "MDE": (
        "The smallest true Δ these queries would detect 4 times in 5 (80% power, two-sided 0.05); a "
        "change smaller than this is likely to go unseen."
    ),
    # -- the overview's plots (triage/ui/widgets/forest.py) -------------------------------------------
    "Δ plot": (
        "Δ B − A, 95% interval: one row per named measure, its Δ and its paired t interval drawn on one "
        "axis shared by the rows, ticks under them."
    ),
    "├─●─┤": "An interval drawn to scale: ├ and ┤ are its ends, ● the figure (Δ, or an arm's rate).",
    "│ 0": "The zero line of the Δ plot; ┼ where an interval crosses it: that Δ could be 0 or either sign.",
    "green / red / grey": (
        "A Δ whose whole interval lies above 0 (B higher), below 0 (B lower), or spans 0 (these queries "
        "cannot tell)."
    ),
    "arm plot": (
        "Each arm, 95% interval: each arm's hit rate at k, and its answer accuracy when the runs carry "
        "one, with its own Wilson interval; two intervals overlapping is not a test, the paired test is "
        "McNemar's p."
    ),
    "paired outcomes": (
        "The 2×2 table of each query's result in A against B: both hit, both miss, and the two kinds of flip."
    ),
    "hit→miss": "A regression: A had a gold in its top k and B did not.",
    "miss→hit": "A win: B had a gold in its top k and A did not.",
    "flip": "A query whose outcome differs between the arms: hit→miss or miss→hit.",
    "McNemar": (
        "McNemar's exact p: how likely this many flips one way against the other would be if the arms "
        "were equally good."
    ),
    "noise band": (
        "√(p(1−p)/n): the hit rate's standard error in a slice of n queries; a change inside it may be "
        "chance."
    ),
    "held out": (
        "Queries whose every gold chunk is in a document no arm was tuned on (picked by a hash of the "
        "document id)."
    ),
    "blend": "Every scored query together, whatever its origin.",
    "origin": "Where a query came from: real (asked by people) or generated (written from a chunk).",
    "overlap": (
        "The share of a query's content words found in its closest gold chunk's body, or heading path."
    ),
    "evidence × answer": (
        "Each query by whether the gold was retrieved (hit) and whether the harness graded the answer "
        "correct."
    ),
    "header tax": (
        "k × the mean tokens of the heading paths an arm prepends to its top-k chunks, added to every query."
    ),
    "tokens": "Estimated as ⌈whitespace words × 4/3⌉, not a model's tokenizer.",
    "floor": "The hit rate a tenant should reach (--floor, default 0.80); below it a tenant is flagged.",
    "5th-percentile": "The tenant hit rate that 95% of tenants reach or beat.",
    "wins / ties / losses": (
        "Over every scored query, how many have B's mrr@k (or ndcg@k) higher, equal or lower than "
        "A's; they sum to the scored queries."
    ),
    "rank drops": "Queries both arms hit whose gold B ranked lower than A did.",
    "worst first": (
        "The queries whose value moved, the largest fall first, then the rises from the smallest to the "
        "largest; equal changes by query id. Unchanged queries (|Δ| ≤ 1e-9) are counted in the title, "
        "not listed (a: all queries); queries without a value in an arm are counted as not compared."
    ),
    "gold rank": (
        "The choice of the best gold's rank over the queries both arms hit: its falls are the report's "
        "rank drops, ordered by the fall, then A's rank, then query id."
    ),
    "stored depth": "How many results the run stored for the query (can be more than k).",
    "recall@depth": "Recall over the whole stored list, not only the top k.",
    # -- list columns ---------------------------------------------------------------------------------
    "(>k)": "The gold was found, but below the cut-off k: still a miss.",
    "absent": "No gold chunk is anywhere in the arm's stored list.",
    "(3/5)": "A short list: the arm returned 3 of the k = 5 results asked for (– when no gold among them).",
    "…": "Still being computed; filled in when ready.",
    # hint codes
    "short": "Hint: the losing arm returned fewer than k results (a short list).",
    "plan": "Hint: the arms used different query plans for this query.",
    "header": "Hint: the gold's heading path outweighs its body and heading-lifted chunks fill the top k.",
    "path": (
        "Hint: the gold's heading path shares none of the query's words while its body does (misleading "
        "path)."
    ),
    "unlab": (
        "Hint: a result in the top k nearly duplicates a gold chunk but is not labelled (likely unlabelled)."
    ),
    "window": "Hint: heading path + body exceed the embedding model's window, so the body was cut.",
    "pushed": "Hint: the best gold sits just below k (k+1 … 2k), pushed out by other results.",
    "dropped": "Hint: no gold chunk is in the losing arm's stored list at all.",
    # -- rank drops -----------------------------------------------------------------------------------
    "gold rank A − B": (
        "The histogram: for each query with a gold in both stored lists, A's rank minus B's (+: B ranked "
        "it higher)."
    ),
    # -- tenants and slices ---------------------------------------------------------------------------
    "few": f"Fewer than {FEW} scored queries: the rates can swing with one query.",
    "< floor": "B's hit rate is below the floor.",
    "bars": "b draws A's and B's hit rate as bars; ┃ marks the floor.",
    "partition": "✓ when the slices of a key add up to every scored query (none counted twice or lost).",
    # -- detail ---------------------------------------------------------------------------------------
    "hit / miss": "Whether the arm had a gold chunk in its top k for this query.",
    "inside k / outside k": "Whether the arm's best gold rank is within the cut-off.",
    "n_returned": "How many results the arm returned for this query (the run's own count).",
    "n_eligible": "How many chunks the query's filter let through, as the run recorded it.",
    "short list": "The arm returned fewer than k results (and fewer than were eligible).",
    "gold pane": (
        "The query's gold chunks: heading path apart from the body, each with its token count and ranks."
    ),
    "heading path": "The chunk's section headings, outermost first (Document > Section > Subsection).",
    "★": "Gold in the frozen labels; the digit is its grade (★2: grade 2).",
    "+": "Gold by an amendment made in review; the digit is its grade.",
    "✗": "Judged not relevant for this query.",
    "·": "Unjudged: the labels say nothing about this chunk for this query.",
    "≈": "Unjudged but a near-duplicate of a gold chunk: likely also gold.",
    "rule under k": "The line under rank k: results below it do not count as hits.",
    "verdicts": (
        "The causes recorded with v: each reviewer's name (--reviewer, else TRIAGE_REVIEWER, else the "
        "login name), then the cause and the note."
    ),
    "grade": "How relevant a gold chunk is (1 relevant, higher: more so; 0: not relevant).",
    "answer": "The harness's grade of the answer built from the arm's results: correct or wrong.",
    # -- amendments -----------------------------------------------------------------------------------
    # -- judging queue --------------------------------------------------------------------------------
    "candidate": "An unjudged passage from a top k, to be judged relevant or not.",
    "tier 1": "A near-duplicate of a gold passage: the likeliest to be unlabelled gold.",
    "body … similar": (
        "Tier 1's evidence: how alike the candidate's body and that gold's body are, a fuzzy-match "
        "ratio from 0 (nothing shared) to 100 (the same text)."
    ),
    "tier 2": "From the top k of a query an arm misses: judging it may turn the miss into a hit.",
    "tier 3": "Any other unjudged passage of a top k.",
    "taken from arm": (
        "The arm (and its rank) the candidate is shown from: the evidence recorded with the decision."
    ),
    "regressions resolved": "Regressions whose B top k now holds a passage judged relevant here.",
    # -- chunk ----------------------------------------------------------------------------------------
    "passage": "A paragraph, or a window of whole sentences of at most 60 words in a longer one.",
    "query words": "The query's content words (no stop words, plurals folded), highlighted in the text.",
    "doc / source": "The chunk's document id and source type.",
}


Entry = str | Column[Any] | tuple[str, str]  # a term of TERMS, a column, or a term with its own sentence


@dataclass(frozen=True)
class Topic:
    """What a screen shows, for `?`: its title, then its terms in order."""

    title: str
    shows: tuple[Entry, ...]

    def entries(self) -> list[tuple[str, str]]:
        """(term, sentence) for each thing shown, once each (the first sentence of a title wins);
        an untitled column (a filler, a mark) is explained by its terms."""
        out: dict[str, str] = {}
        for entry in self.shows:
            term, sentence = _said(entry)
            if term:
                out.setdefault(term, sentence)
        return list(out.items())

    def explain(self, term: str) -> str:
        return dict(self.entries())[term]

    def covers(self, term: str) -> bool:
        return term in dict(self.entries())


def _said(entry: Entry) -> tuple[str, str]:
    if isinstance(entry, Column):
        return entry.title, entry.means
    return entry if isinstance(entry, tuple) else (entry, TERMS[entry])


# -- keys ------------------------------------------------------------------------------------------

# How a key is spelled in `?` (else as Textual names it)
SPELLED = {
    "question_mark": "?",
    "slash": "/",
    "down": "↓",
    "up": "↑",
    "left": "←",
    "right": "→",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "pagedown": "pgdn",
    "pageup": "pgup",
}


def declared(cls: type) -> list[Binding]:
    """The bindings a class and its bases declare (not Textual's own defaults), the class's own
    first."""
    out: list[Binding] = []
    for c in cls.__mro__:
        if not c.__module__.startswith("textual"):
            out += [b if isinstance(b, Binding) else Binding(*b) for b in c.__dict__.get("BINDINGS", [])]
    return out


def keys(bindings: Iterable[Binding]) -> list[tuple[str, str]]:
    """(keys, what they do) for `?`: each binding with a tooltip, once per key, those in a row
    sharing one tooltip on one line ("n / p"; "j / k, ↓ / ↑": each binding's alternative keys
    side by side; "1 … 9"), spelled by the first's `key_display` when it has one."""
    rows: list[tuple[list[Binding], str]] = []
    seen: set[str] = set()
    for b in bindings:
        mine = _keys(b)
        if not b.tooltip or seen & set(mine):
            continue
        seen |= set(mine)
        if rows and rows[-1][1] == b.tooltip:
            rows[-1][0].append(b)
        else:
            rows.append(([b], b.tooltip))
    return [(_spelled(group), what) for group, what in rows]


def _spelled(group: list[Binding]) -> str:
    if group[0].key_display:
        return group[0].key_display
    columns = [[k for k in keys if k] for keys in zip_longest(*(_keys(b) for b in group), fillvalue="")]
    return ", ".join(_run(keys) or " / ".join(SPELLED.get(k, k) for k in keys) for keys in columns)


def _keys(b: Binding) -> list[str]:
    return [k.strip() for k in b.key.split(",")]


def _run(keys: list[str]) -> str:
    """Three or more digits in a row as "1 … 9" ("" for other keys)."""
    digits = [int(k) for k in keys if k.isdigit() and len(k) == 1]
    if len(keys) < 3 or len(digits) < len(keys) or digits != list(range(digits[0], digits[-1] + 1)):
        return ""
    return f"{digits[0]} … {digits[-1]}"


def size(topics: Iterable[Topic]) -> int:
    """How many sentences the glossary holds: the shared terms and those the `topics` hold."""
    own = {(t, s) for topic in topics for t, s in topic.entries() if TERMS.get(t) != s}
    return len(TERMS) + len(own)
