"""The columns a filter names, read by a lexer alone: what a slice's filter shape needs, without
importing sqlglot (a tenth of a second on every report whose queries carry filters).

For every filter the predicate module accepts, `filter_columns(text)` is `parse_filter(text).columns`
(tests/unit/core/truth/test_truth_predicate.py holds the two to that over generated filters). For
text it refuses, it is the names the text uses where a column may stand: a best reading, never an
error.
"""

from __future__ import annotations

import re

# The words of the filters' SQL that are never a column (case-insensitive): connectives, tests,
# literals and the typed literals' prefixes. A column spelled as one of them is quoted.
KEYWORDS = frozenset(
    "and or not in between symmetric like ilike escape is null true false date timestamp timestamptz".split()
)

_TOKEN = re.compile(
    r"""
      (?P<space>\s+|--[^\n]*|/\*.*?\*/)          # blanks and comments
    | '(?:[^']|'')*'                             # a string literal ('' inside is one quote)
    | "(?P<dq>(?:[^"]|"")*)"                     # a column in double quotes
    | `(?P<bq>(?:[^`]|``)*)`                     # a column in backticks (LanceDB)
    | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)          # a keyword, a column, or a function's name
    | [0-9.]+(?:[eE][+-]?[0-9]+)?                # a number
    | .                                          # an operator or anything else
    """,
    re.S | re.X,
)


def filter_columns(text: str | None) -> frozenset[str]:
    """The column names in a filter's SQL text, as written (quoted names unquoted); none for an
    empty or blank filter."""
    if not text:
        return frozenset()
    names: set[str] = set()
    tokens = [m for m in _TOKEN.finditer(text) if m.group("space") is None]
    for i, m in enumerate(tokens):
        if m.group("dq") is not None:
            names.add(m.group("dq").replace('""', '"'))
        elif m.group("bq") is not None:
            names.add(m.group("bq").replace("``", "`"))
        elif (word := m.group("word")) is not None and word.lower() not in KEYWORDS:
            called = i + 1 < len(tokens) and tokens[i + 1].group() == "("
            if not called:
                names.add(word)
    return frozenset(names)
