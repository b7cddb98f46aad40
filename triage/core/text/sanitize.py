"""Untrusted text made safe to show: control characters visible, length capped.

Queries, chunks, headers, notes and file contents come from data. Before any display they pass
through `visible`, which replaces C0 controls (but tab and newline), DEL, C1 controls, bidi
overrides and invisible characters (zero-width spaces and joiners, the byte-order mark, word
joiners, tag characters) with visible tokens such as `␛` or `<U+200D>`: no escape sequence reaches
a terminal, and `q1\u200b` is never shown as `q1`.
A byte that is not UTF-8 (in a file name or an argument) is shown as `\\xff` (`bytes_shown`).
Markup safety is the renderer's job: it must wrap the result as plain text, never parse it.
`counted` spells a count with its noun, singular for one, wherever a count is shown.
"""

from __future__ import annotations

import re

# C0 except \t \n, DEL, C1, zero-width space/joiners and LRM/RLM (U+200B–U+200F), the line and
# paragraph separators, bidi embeddings/overrides/isolates, word joiner and invisible operators
# (U+2060–U+2064), the byte-order mark, and the tag characters (U+E0000–U+E007F).
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_NAMES = {"\x1b": "␛", "\x00": "␀", "\r": "␍", "\x07": "␇", "\x08": "␈"}

DISPLAY_CAP = 20_000  # characters shown of one text before "… N more characters"


def _token(m: re.Match[str]) -> str:
    ch = m.group()
    return _NAMES.get(ch) or f"<U+{ord(ch):04X}>"


def visible(text: object, cap: int | None = DISPLAY_CAP, newlines: bool = True) -> str:
    """`text` with every control character shown as a token, capped at `cap` characters.
    With `newlines=False`, line breaks and tabs become spaces (for one-line cells)."""
    s = "" if text is None else str(text)
    more = 0
    if cap is not None and len(s) > cap:
        s, more = s[:cap], len(s) - cap
    s = _CONTROL.sub(_token, s)
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
