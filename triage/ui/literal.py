"""Untrusted text for widgets: always `Content`, never markup; control characters made visible."""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content, Span

from triage.core.text.sanitize import DISPLAY_CAP, visible
from triage.core.text.words import spans

# A query's content word in a chunk's text: bold accent on the accent's muted background, so it
# stands out in a header that is already drawn in the accent colour, in dark and light themes.
QUERY_WORD = "bold $text-accent on $accent-muted"

Part = str | tuple[str, str] | Content  # a piece of `line`


def plain(value: object, cap: int | None = DISPLAY_CAP) -> Content:
    """Data as literal text: `[b]x[/b]` stays as typed, ESC shows as ␛."""
    return Content(visible(value, cap))


def marked(value: object, query: Iterable[str], cap: int | None = DISPLAY_CAP, style: str = "") -> Content:
    """Data as literal text (as `plain`) with each word whose normal form is in `query` (content
    words: `core.text.words.words` of the query text) in QUERY_WORD. The spans are found on the text as
    shown, after `visible` has replaced control characters with tokens. `style`: the whole text's."""
    shown = visible(value, cap)
    whole = [Span(0, len(shown), style)] if style and shown else []
    return Content(shown, whole + [Span(start, end, QUERY_WORD) for start, end in spans(shown, query)])


def heading(header: str | None, query: Iterable[str], missing: str = "(none)") -> Content:
    """A chunk's heading path in the accent colour, the query's words marked; `missing` without one."""
    return marked(header, query, style="$text-accent") if header else Content.styled(missing, "$text-accent")


def line(*parts: Part) -> Content:
    """Content from pieces: a `str` is data (shown literally, made visible, capped); a (text, style) pair
    is our own styled label; a `Content` is already safe (from `plain` or `marked`) and kept as it is.
    Styles are Textual style strings such as "bold" or "$text-error"."""
    out: list[Part] = []
    for p in parts:
        if isinstance(p, Content):
            out.append(p)
        else:
            out.append((visible(p[0]), p[1]) if isinstance(p, tuple) else visible(p))
    return Content.assemble(*out)
