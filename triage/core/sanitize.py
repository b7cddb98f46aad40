"""Untrusted text made safe to show: control characters visible, length capped.

Queries, chunks, headers, notes and file contents come from data. Before any display they pass
through `visible`, which replaces C0 controls (but tab and newline), DEL, C1 controls and bidi
overrides with visible tokens such as `␛` or `<U+202E>`, so no escape sequence reaches a terminal.
Markup safety is the renderer's job: it must wrap the result as plain text, never parse it.
"""

from __future__ import annotations

import re

# C0 except \t \n, DEL, C1, bidi embeddings/overrides/isolates, and the line/paragraph separators.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
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
    if not newlines:
        s = s.replace("\n", " ").replace("\t", " ")
    if more:
        s += f" … ({more:,} more characters)"
    return s


def one_line(text: object, width: int) -> str:
    """A single display line of at most `width` characters."""
    s = " ".join(visible(text, cap=width * 4, newlines=False).split())
    return s if len(s) <= width else s[: max(width - 1, 0)] + "…"
