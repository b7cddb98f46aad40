"""Untrusted text made safe to show: invisible marks visible, length capped.

Queries, chunks, headers, notes and file contents come from data. Before any display they pass
through `visible`, which replaces every mark that renders as nothing or steers the text around it
with a visible token such as `␛` or `<U+200D>`: no escape sequence reaches a terminal, and neither
`q1\u200b` nor `q150\u061c` is ever shown as `q1` or `q150`.

The marks are derived from Unicode's properties, not listed by hand:

    Cc (controls, but tab and newline) ∪ Cf (format) ∪ Zl ∪ Zp (line and paragraph separators)
    ∪ Default_Ignorable_Code_Point ∪ Noncharacter_Code_Point

Default_Ignorable_Code_Point is, per DerivedCoreProperties.txt, Other_Default_Ignorable_Code_Point
+ Cf + Variation_Selector − White_Space − U+FFF9..FFFB − U+13430..1343F − Prepended_Concatenation_Mark.
Within the union with Cf the subtractions drop out (none of Other_Default_Ignorable or the variation
selectors is white space; the rest are Cf), so the union is Cc ∪ Cf ∪ Zl ∪ Zp ∪
Other_Default_Ignorable_Code_Point ∪ Variation_Selector ∪ the noncharacters. The Cf marks that
Unicode keeps visible (U+0600 ARABIC NUMBER SIGN and the other prepended concatenation marks, the
interlinear annotation marks) are shown as tokens too: harmless, a token for a mark seen anyway.
The general categories come from `unicodedata` (Python's own Unicode version), read for planes 0, 1
and 14, where every Cc, Cf, Zl and Zp lies. `unicodedata` lacks the two properties from PropList.txt,
copied below as Unicode states them (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, U+034F
COMBINING GRAPHEME JOINER, the Khmer inherent vowels, reserved code points among the format marks
and U+E0000–U+E0FFF's; the variation selectors U+180B–U+180F, U+FE00–U+FE0F, U+E0100–U+E01EF).
A format character newer than Python's Unicode is unassigned to `unicodedata` and left as it is.
The noncharacters are U+FDD0–U+FDEF and the last two code points of each plane. Combining marks
that sit on a letter (U+0301 on `e`, Devanagari vowel signs, Arabic harakat) are text and stay.
tests/unit/core/text/test_visible_marks.py holds the set against the `regex` package's own Unicode tables.

ASCII text is checked against the ASCII part of the set, taken at import; the whole set is built on
the first text that is not ASCII (about 20 ms, once).
A byte that is not UTF-8 (in a file name or an argument) is shown as `\\xff` (`bytes_shown`).
Markup safety is the renderer's job: it must wrap the result as plain text, never parse it.
`counted` spells a count with its noun, singular for one, wherever a count is shown.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# PropList.txt (the same from Unicode 14, Python 3.11's, to 16), as inclusive ranges of code points.
_OTHER_DEFAULT_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x2065, 0x2065),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0000),
    (0xE0002, 0xE001F),
    (0xE0080, 0xE00FF),
    (0xE01F0, 0xE0FFF),
)
_VARIATION_SELECTOR = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
_NONCHARACTER = ((0xFDD0, 0xFDEF), *((p << 16 | 0xFFFE, p << 16 | 0xFFFF) for p in range(17)))
_SCANNED = ((0x0, 0x20000), (0xE0000, 0xE1000))  # planes 0, 1 and 14: [first, end)
_SHOWN_AS_IS = "\t\n"
_NAMES = {"\x1b": "␛", "\x00": "␀", "\r": "␍", "\x07": "␇", "\x08": "␈"}

DISPLAY_CAP = 20_000  # characters shown of one text before "… N more characters"


def marks(end: int = 0x110000) -> list[tuple[int, int]]:
    """The code points below `end` that `visible` shows as tokens, as sorted inclusive ranges."""
    points: set[int] = set()
    for first, stop in _SCANNED:
        stop = min(stop, end)
        if first < stop:  # two letters per code point: a match starts at an even offset
            cats = "".join(map(unicodedata.category, map(chr, range(first, stop))))
            for m in re.finditer("(?:Cc|Cf|Zl|Zp)+", cats):
                points.update(range(first + m.start() // 2, first + m.end() // 2))
    for first, last in (*_OTHER_DEFAULT_IGNORABLE, *_VARIATION_SELECTOR, *_NONCHARACTER):
        points.update(range(first, min(last + 1, end)))
    points.difference_update(map(ord, _SHOWN_AS_IS))
    ranges: list[tuple[int, int]] = []
    for p in sorted(points):
        if ranges and ranges[-1][1] == p - 1:
            ranges[-1] = (ranges[-1][0], p)
        else:
            ranges.append((p, p))
    return ranges


def _pattern(end: int) -> re.Pattern[str]:
    return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in marks(end)) + "]")


_ASCII_MARKS = _pattern(0x80)


@functools.cache
def _all_marks() -> re.Pattern[str]:
    return _pattern(0x110000)


def is_mark(ch: str) -> bool:
    """Whether `visible` shows the character `ch` as a token."""
    return (_ASCII_MARKS if ch.isascii() else _all_marks()).fullmatch(ch) is not None


def _token(m: re.Match[str]) -> str:
    ch = m.group()
    return _NAMES.get(ch) or f"<U+{ord(ch):04X}>"


def visible(text: object, cap: int | None = DISPLAY_CAP, newlines: bool = True) -> str:
    """`text` with every invisible mark shown as a token, capped at `cap` characters.
    With `newlines=False`, line breaks and tabs become spaces (for one-line cells)."""
    s = "" if text is None else str(text)
    more = 0
    if cap is not None and len(s) > cap:
        s, more = s[:cap], len(s) - cap
    s = (_ASCII_MARKS if s.isascii() else _all_marks()).sub(_token, s)
    s = bytes_shown(s)
    if not newlines:
        s = s.replace("\n", " ").replace("\t", " ")
    if more:
        s += f" … ({more:,} more characters)"
    return s


# A lone surrogate: Python's text of a byte that is not UTF-8 in a file name, an argument or the
# environment (`surrogateescape`: U+DC80–U+DCFF stands for the byte 0x80–0xFF), or (any other)
# text that is not Unicode. Neither can be encoded, printed or stored as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _byte(m: re.Match[str]) -> str:
    n = ord(m.group())
    return f"\\x{n - 0xDC00:02x}" if 0xDC80 <= n <= 0xDCFF else f"<U+{n:04X}>"


def bytes_shown(text: str) -> str:
    """`text` with each byte that is not UTF-8 shown as `\\xff` (any other lone surrogate as
    `<U+D800>`): a file name holding such a byte is named as it is, in text that can be printed."""
    return _SURROGATE.sub(_byte, text)


def not_utf8(text: str) -> str | None:
    """Why `text` cannot be stored as UTF-8, or None when it can: "holds a byte that is not UTF-8
    (\\xff at position 4)", the position counted in characters from 1."""
    m = _SURROGATE.search(text)
    if m is None:
        return None
    shown = bytes_shown(m.group())
    what = "a byte that is not UTF-8" if shown.startswith("\\x") else "a lone surrogate (not Unicode)"
    return f"holds {what} ({shown} at position {m.start() + 1})"


def one_line(text: object, width: int) -> str:
    """A single display line of at most `width` characters."""
    s = " ".join(visible(text, cap=width * 4, newlines=False).split())
    return s if len(s) <= width else s[: max(width - 1, 0)] + "…"


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """`n` and its noun, singular for one: "1 record", "1,204 records" (`nouns`: an irregular plural)."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"
