"""What `?` explains: per screen, its own keys, then every column and term it shows, one sentence each.

The data lives here, apart from the help screen that draws it: `TERMS` maps a term (as the screens
print it: a column title, a mark, an abbreviation) to one sentence; each `Topic` names a screen's
own keys and the terms it shows, with `own` for the few terms whose meaning on that screen differs
from the shared one (the ranked lists' `#` is a rank, a list's `#` a row number). A test walks
every screen and fails on a table column that has no entry here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from triage.core.views.slices import FEW

# The keys that work on every screen (the app's bindings), shown after the screen's own.
ANYWHERE: tuple[tuple[str, str], ...] = (
    ("?", "this help: the keys and terms of the screen you are on"),
    ("f", "the flips, hit→miss first"),
    ("a", "all queries"),
    ("o", "the overview"),
    ("t", "tenants, worst first by B's hit rate"),
    ("s", "slices: plan, selectivity band, tenant, query type, source type, filter shape, language"),
    ("r", "rank drops: the queries by B − A of a chosen measure, worst first; the rank-change histogram"),
    ("L", "the amendments: who added which gold, when, with what note and evidence; the verdicts"),
    ("J", "the judging queue: every unjudged passage of a top k, one at a time"),
    ("/", "fuzzy search over query ids and texts (overview and lists)"),
    ("ctrl+p", "command palette: jump to a query by id or text; switch theme"),
    ("escape", "back"),
    ("q", "quit (except while typing in a search box)"),
)

LIST_KEYS: tuple[tuple[str, str], ...] = (
    ("j / k, ↓ / ↑", "move"),
    ("pgdn / pgup, home / end", "move by a page, to the ends"),
    ("enter", "open the query's detail"),
)

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
    "B−A": "B's hit rate minus A's for that row.",
    "Δ q": (
        "B − A on the decision measure (the first measure named, else the hit rate at k) over the row's "
        "queries, and its q: the p (paired t, or McNemar for a 0/1 measure) adjusted by "
        "Benjamini–Hochberg across the rows of the list; * marks q < 0.05, a move beyond noise."
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
    "#": "The row's position in this list.",
    "outcome": "The query's paired result: both hit, both miss, hit→miss or miss→hit.",
    "query": "The query's id, as the query file spells it.",
    "tenant": "The customer (tenant) the query was asked for.",
    "gold A": (
        "Where arm A ranked the query's best gold chunk: a rank, (>k) when beyond k, absent when not stored."
    ),
    "gold B": (
        "Where arm B ranked the query's best gold chunk: a rank, (>k) when beyond k, absent when not stored."
    ),
    "(>k)": "The gold was found, but below the cut-off k: still a miss.",
    "absent": "No gold chunk is anywhere in the arm's stored list.",
    "(3/5)": "A short list: the arm returned 3 of the k = 5 results asked for (– when no gold among them).",
    "plan A": "The query plan arm A's run recorded (e.g. ann, postfilter, scan).",
    "plan B": "The query plan arm B's run recorded.",
    "hint": "The likely cause of the flip, computed from the data; the detail shows its evidence.",
    "verdict": "The cause a reviewer recorded with v in the detail (or how many reviewers differ).",
    "text": "The start of the query's (or chunk's) text.",
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
    "n": "Scored queries in this tenant or slice.",
    "hit A": "Arm A's hit rate at k in this row.",
    "hit B": "Arm B's hit rate at k in this row.",
    "B 95%": "The Wilson 95% interval of B's hit rate: with few queries it is wide.",
    "h→m": "Flips hit→miss (regressions) in this row.",
    "m→h": "Flips miss→hit (wins) in this row.",
    "sel.": "The median selectivity: the share of the corpus the query's filter let through.",
    "few": f"Fewer than {FEW} scored queries: the rates can swing with one query.",
    "< floor": "B's hit rate is below the floor.",
    "bars": "b draws A's and B's hit rate as bars; ┃ marks the floor.",
    "A": "Arm A's hit rate, as a bar.",
    "B": "Arm B's hit rate, as a bar.",
    "value": "The slice: one value of the slice key (a plan, a selectivity band, a tenant, …).",
    "rec A": "Arm A's recall at k in this slice.",
    "rec B": "Arm B's recall at k in this slice.",
    "short lists": "In the short column, A/B: queries whose arm returned fewer than k results.",
    "elig=0": "Queries whose filter matched nothing (n_eligible = 0): counted in n, not in the rates.",
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
    "chunk": "The result's chunk id.",
    "other": "The chunk's rank in the other arm's stored list (– when it is not there).",
    "score": "The retriever's score for this chunk, as the run stored it.",
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
    "when (UTC)": "When the record was written, in UTC.",
    "reviewer": "Who made the decision: --reviewer, else TRIAGE_REVIEWER, else the login name.",
    "what": "add (gold added), retract (an add undone), verdict (a cause); UNSAVED when the disk refused it.",
    "from": "The evidence: which arm and rank the passage was marked from.",
    "note": "The reviewer's note.",
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


@dataclass(frozen=True)
class Topic:
    title: str
    keys: tuple[tuple[str, str], ...]
    terms: tuple[str, ...]
    own: Mapping[str, str] = field(default_factory=dict)  # meanings that differ on this screen

    def explain(self, term: str) -> str:
        return self.own.get(term) or TERMS[term]

    def covers(self, term: str) -> bool:
        return term in self.own or (term in self.terms and term in TERMS)


LIST_TERMS = (
    "#",
    "outcome",
    "query",
    "tenant",
    "gold A",
    "gold B",
    "(>k)",
    "absent",
    "(3/5)",
    "plan A",
    "plan B",
    "hint",
    "short",
    "plan",
    "header",
    "path",
    "unlab",
    "window",
    "pushed",
    "dropped",
    "…",
    "verdict",
    "text",
)

TOPICS: dict[str, Topic] = {
    "overview": Topic(
        "Overview",
        (
            ("/", "fuzzy search over query ids and texts; enter opens the best match"),
            ("pgdn / pgup, ↓ / ↑", "scroll the overview (home / end: its top, its end)"),
        ),
        (
            "A / B",
            "k",
            "labels",
            "scored",
            "unlabelled",
            "missing from A / B",
            "checks",
            "level",
            "code",
            "message",
            "hit_rate@k",
            "recall@k",
            "mrr@k",
            "ndcg@k",
            "95% low / high",
            "judged@k",
            "unjudged in top k",
            "upper",
            "B − A",
            "measure",
            "Δ",
            "95% interval",
            "p corr.",
            "MDE",
            "Δ plot",
            "├─●─┤",
            "│ 0",
            "green / red / grey",
            "arm plot",
            "paired outcomes",
            "hit→miss",
            "miss→hit",
            "McNemar",
            "held out",
            "blend",
            "origin",
            "overlap",
            "evidence × answer",
            "header tax",
            "tokens",
            "floor",
            "5th-percentile",
            "wins / ties / losses",
            "rank drops",
            "stored depth",
            "recall@depth",
        ),
    ),
    "flips": Topic(
        "Flips",
        (*LIST_KEYS, ("/", "fuzzy search; enter opens the best match")),
        ("flip", *LIST_TERMS),
    ),
    "all": Topic(
        "All queries",
        (
            ("0 1 2 3 4", "every query / both hit / both miss / hit→miss / miss→hit"),
            *LIST_KEYS,
            ("/", "fuzzy search; enter opens the best match"),
        ),
        LIST_TERMS,
    ),
    "slice-queries": Topic(
        "A tenant's or slice's queries",
        (*LIST_KEYS, ("/", "fuzzy search; enter opens the best match")),
        LIST_TERMS,
    ),
    "ranks": Topic(
        "Rank drops",
        (
            ("M", "the next measure to order by (the title names it and the one after it)"),
            *LIST_KEYS,
            ("n / p", "in the detail opened from here: the next / previous query of this list"),
        ),
        (
            "worst first",
            "measure",
            "query",
            "tenant",
            "A",
            "B",
            "Δ",
            "text",
            "gold rank",
            "gold rank A − B",
        ),
        own={
            "measure": (
                "What the list is ordered on: each measure named with --measures, then ndcg, recall, mrr "
                "and the hit rate at k, then the gold rank. It opens on the first named measure, else on "
                "ndcg@k: it moves with every rank change within k and weighs the grades, where the hit "
                "rate's Δ is only the flips (f lists those)."
            ),
            "A": "Arm A's value of the measure for the query (for the gold rank: where A ranked the gold).",
            "B": "Arm B's value of the measure for the query (for the gold rank: where B ranked the gold).",
            "Δ": (
                "B − A for the query: negative, red, means B is worse. For the gold rank it is A's rank − "
                "B's, places gained, so a fall is negative too."
            ),
        },
    ),
    "detail": Topic(
        "Detail",
        (
            ("n / p", "next / previous query of the list you came from"),
            (
                "tab / shift+tab",
                "move the focus: gold pane, arm A's list, arm B's list; a short terminal opens each"
                " query at its top (the query and its hint, no passage selected) and tab scrolls"
                " down to the focused pane",
            ),
            (
                "j / k",
                "move the selection in the focused list (scroll the gold pane; with nothing focused,"
                " the screen; pgdn / pgup and home too)",
            ),
            ("enter", "open the selected chunk's full text (in the gold pane: the first gold)"),
            ("g", "mark the selected passage as additional gold (written at once, grade 1)"),
            ("1 … 9", "right after g: the grade of that amendment"),
            ("G", "the same, after asking for a note"),
            ("u", "undo your last amendment (a retract record: nothing is deleted)"),
            ("v", "your verdict on the query: its cause (one key each, hinted first), then an optional note"),
        ),
        (
            "hint",
            "hit / miss",
            "inside k / outside k",
            "plan",
            "n_returned",
            "n_eligible",
            "stored depth",
            "short list",
            "answer",
            "gold pane",
            "heading path",
            "tokens",
            "grade",
            "#",
            "★",
            "+",
            "✗",
            "·",
            "≈",
            "chunk",
            "other",
            "score",
            "header",
            "text",
            "rule under k",
            "verdicts",
        ),
        own={
            "#": "The chunk's rank in this arm's stored list.",
            "plan": "The query plan the arm's run recorded for this query (e.g. ann, postfilter, scan).",
            "header": "The last part of the chunk's heading path.",
            "text": "The start of the chunk's body.",
        },
    ),
    "tenants": Topic(
        "Tenants",
        (
            ("b", "bars of A's and B's hit rate per tenant (and back to the table)"),
            ("l", "order by the low end of B's 95% interval instead of B's hit rate (and back)"),
            *LIST_KEYS[:2],
            ("enter", "the tenant's queries, regressions first; enter again for the detail"),
        ),
        (
            "#",
            "tenant",
            "n",
            "hit A",
            "hit B",
            "B−A",
            "B 95%",
            "h→m",
            "m→h",
            "plan",
            "sel.",
            "Δ q",
            "< floor",
            "few",
            "floor",
            "5th-percentile",
            "bars",
            "A",
            "B",
        ),
        own={"plan": "The plan B used most for the tenant's queries, with its share."},
    ),
    "slices": Topic(
        "Slices",
        (
            ("← / →, [ / ]", "the previous / next slice key"),
            *LIST_KEYS[:2],
            ("enter", "the slice's queries, regressions first; enter again for the detail"),
        ),
        (
            "value",
            "n",
            "hit A",
            "hit B",
            "B 95%",
            "B−A",
            "rec A",
            "rec B",
            "h→m",
            "m→h",
            "short",
            "elig=0",
            "Δ q",
            "partition",
            "noise band",
        ),
        own={"short": "Queries whose arm returned fewer than k results, A/B."},
    ),
    "amendments": Topic(
        "Amendments",
        (*LIST_KEYS[:2], ("enter", "open the amended query's detail")),
        ("when (UTC)", "reviewer", "what", "query", "chunk", "grade", "from", "note"),
        own={"chunk": "The passage amended (for a verdict: its cause)."},
    ),
    "queue": Topic(
        "Judging queue",
        (
            ("y", "relevant (grade 1), written at once; the next candidate follows"),
            ("1 … 9", "relevant with that grade instead"),
            ("n", "not relevant (grade 0)"),
            ("G / N", "relevant / not relevant, after asking for a note"),
            ("space", "skip: the candidate goes to the end of the queue (nothing written)"),
            ("backspace", "undo the last decision made here; its candidate comes back"),
            ("R", "filter: regressions only (on / off)"),
            ("T", "filter: cycle the tenant — every tenant, then each in turn"),
            ("A", "filter: cycle the arm — both, A's top k only, B's top k only"),
            ("escape", "leave; J brings you back where you were"),
        ),
        (
            "candidate",
            "tier 1",
            "body … similar",
            "tier 2",
            "tier 3",
            "≈",
            "taken from arm",
            "grade",
            "★",
            "heading path",
            "query words",
            "regressions resolved",
        ),
    ),
    "chunk": Topic(
        "Chunk",
        (
            ("j / k", "scroll"),
            ("w", "the passage holding the most query words; again: the next best"),
            ("W", "back to the previous best passage"),
            ("m", "show more of a very long text"),
        ),
        ("heading path", "tokens", "doc / source", "passage", "query words", "grade"),
    ),
    "search": Topic(
        "Search",
        (
            ("type", "results update as you type"),
            ("↓ / ↑", "choose a result"),
            ("enter", "open the best (or chosen) match"),
            ("escape", "close"),
        ),
        ("query", "outcome", "text"),
    ),
}


def topic_of(screen: object) -> Topic:
    """The topic of a screen: its `HELP` name (the overview's for a screen without one)."""
    return TOPICS[getattr(screen, "HELP", "overview")]


def size() -> int:
    """How many sentences the glossary holds: the shared terms and each screen's own meanings."""
    return len(TERMS) + sum(len(t.own) for t in TOPICS.values())
