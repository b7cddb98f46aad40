"""`core.text.sanitize.visible` shows every invisible mark as a token, and nothing else (docs/app.md
"The app": shown as typed).

The marks are Default_Ignorable_Code_Point ∪ Cf ∪ Cc (but tab and newline) ∪ Zl ∪ Zp ∪ the
noncharacters. sanitize derives them from `unicodedata` and PropList.txt; these tests take the same
properties from an independent source, the `regex` package's Unicode tables (`\\p{…}`). The two may
carry different Unicode versions (Python 3.11's `unicodedata` is 14.0, `regex` newer): the
comparison leaves out the code points one of them knows as assigned and the other does not, and
checks everything else, every code point from U+0000 to U+10FFFF.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tomllib
import unicodedata

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.cli.main import main
from triage.core.gate.propose import toml_key
from triage.core.text import sanitize
from triage.core.text.sanitize import is_mark, one_line, visible

from conftest import ROOT
from invisible_marks import MARK

NAMES = {"\x1b": "␛", "\x00": "␀", "\r": "␍", "\x07": "␇", "\x08": "␈"}  # docs/app.md: ESC as ␛, …
TOKEN = re.compile(r"<U\+([0-9A-F]{4,6})>|[␛␀␍␇␈]")  # a token in `visible`'s output
SYMBOL = {v: k for k, v in NAMES.items()}


def token(c: str) -> str:
    """How a mark must read: its name, or <U+XXXX> (at least four hex digits, upper case)."""
    return NAMES.get(c) or f"<U+{ord(c):04X}>"


def decode(shown: str) -> tuple[str, str]:
    """`shown` without its tokens, and the marks the tokens stand for, in order."""
    marks = [SYMBOL.get(m.group()) or chr(int(m.group(1), 16)) for m in TOKEN.finditer(shown)]
    return TOKEN.sub("", shown), "".join(marks)


def points(pattern: regex.Pattern[str], text: str) -> set[int]:
    return {ord(c) for c in pattern.findall(text)}


@functools.cache
def everything() -> str:
    return "".join(map(chr, range(0x110000)))


@functools.cache
def versions_differ() -> frozenset[int]:
    """Code points unassigned in `unicodedata`'s Unicode and assigned in `regex`'s, or the reverse."""
    unassigned = points(regex.compile(r"\p{Cn}"), everything())
    return frozenset(
        c
        for c, cat in enumerate(map(unicodedata.category, everything()))
        if (cat == "Cn") != (c in unassigned)
    )


def ranges_to_set(ranges: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> set[int]:
    return {c for first, last in ranges for c in range(first, last + 1)}


# -- the set against Unicode's properties -----------------------------------------------------------


@pytest.mark.slow  # every code point, twice: about 2 s
def test_every_code_point_is_a_token_exactly_when_unicode_says_it_is_invisible() -> None:
    differ = versions_differ()  # 28,111 code points between Unicode 14 and regex 2026.12's
    expected = points(MARK, everything()) - differ
    assert len(expected) > 4_000  # most of plane 14, the format characters, the controls
    ours = ranges_to_set(sanitize.marks()) - differ
    assert ours == expected, (
        f"tokens Unicode does not call invisible: {sorted(map(hex, ours - expected))[:20]}; "
        f"invisible marks left as they are: {sorted(map(hex, expected - ours))[:20]}"
    )
    # and `visible` itself: each mark becomes its token, every other code point stays as it is
    marks = "".join(chr(c) for c in sorted(expected))
    assert visible(marks, cap=None) == "".join(map(token, marks))
    # a lone surrogate is no character but a byte that was not UTF-8 (`bytes_shown`: `\\xff`)
    surrogates = range(0xD800, 0xE000)
    rest = "".join(
        c for i, c in enumerate(everything()) if i not in expected and i not in differ and i not in surrogates
    )
    assert visible(rest, cap=None) == rest
    assert visible("q\udcff", cap=None) == "q\\xff" and visible("q\ud800", cap=None) == "q<U+D800>"
    ascii_ = "".join(map(chr, range(128)))  # ASCII text takes its own (import-time) pattern
    assert visible(ascii_, cap=None) == "".join(token(c) if MARK.match(c) else c for c in ascii_)


@pytest.mark.slow
def test_every_format_control_and_separator_lies_in_the_planes_sanitize_reads() -> None:
    """sanitize reads the general categories of planes 0, 1 and 14 only (the cost of a scan):
    in `regex`'s Unicode, newer than Python's, no Cc, Cf, Zl or Zp lies anywhere else."""
    found = points(regex.compile(r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]"), everything())
    assert found and all(any(a <= c < b for a, b in sanitize._SCANNED) for c in found)


@pytest.mark.slow  # three scans of every code point
@pytest.mark.parametrize(
    ("table", "prop"),
    [
        (sanitize._OTHER_DEFAULT_IGNORABLE, "Other_Default_Ignorable_Code_Point"),
        (sanitize._VARIATION_SELECTOR, "Variation_Selector"),
        (sanitize._NONCHARACTER, "Noncharacter_Code_Point"),
    ],
    ids=["other default-ignorable", "variation selector", "noncharacter"],
)
def test_the_tables_copied_from_proplist_are_unicodes(table, prop: str) -> None:
    assert ranges_to_set(table) == points(regex.compile(rf"\p{{{prop}}}"), everything())


@pytest.mark.parametrize(
    "c",
    [
        "\u061c",  # ARABIC LETTER MARK (Cf)
        "\u00ad",  # SOFT HYPHEN (Cf)
        "\u034f",  # COMBINING GRAPHEME JOINER (Mn, default-ignorable)
        "\u115f",  # HANGUL CHOSEONG FILLER (Lo, default-ignorable)
        "\u1160",  # HANGUL JUNGSEONG FILLER
        "\u3164",  # HANGUL FILLER
        "\uffa0",  # HALFWIDTH HANGUL FILLER
        "\u17b4",  # KHMER VOWEL INHERENT AQ (Mn, default-ignorable)
        "\u180e",  # MONGOLIAN VOWEL SEPARATOR (Cf)
        "\u180b",  # MONGOLIAN FREE VARIATION SELECTOR ONE
        "\u180f",  # MONGOLIAN FREE VARIATION SELECTOR FOUR (Unicode 14)
        "\ufe00",  # VARIATION SELECTOR-1
        "\ufe0f",  # VARIATION SELECTOR-16 (emoji presentation)
        "\U000e0100",  # VARIATION SELECTOR-17
        "\U000e01ef",  # VARIATION SELECTOR-256
        "\U000e0001",  # LANGUAGE TAG
        "\U000e0041",  # TAG LATIN CAPITAL LETTER A
        "\U000e007f",  # CANCEL TAG
        "\U000e0080",  # reserved, default-ignorable (plane 14)
        "\U000e0fff",  # the last of them
        "\u2065",  # reserved among the invisible operators
        "\ufff0",  # reserved before the interlinear annotations
        "\ufff9",  # INTERLINEAR ANNOTATION ANCHOR (Cf)
        "\u0600",  # ARABIC NUMBER SIGN (Cf, a prepended concatenation mark: shown as a token too)
        "\u200b",  # ZERO WIDTH SPACE
        "\u2028",  # LINE SEPARATOR (Zl)
        "\u2029",  # PARAGRAPH SEPARATOR (Zp)
        "\u0085",  # NEXT LINE (Cc)
        "\ufffe",  # a noncharacter
        "\ufdd0",  # a noncharacter
        "\U0010ffff",  # the last code point, a noncharacter
        "\U0001d173",  # MUSICAL SYMBOL BEGIN BEAM (Cf, plane 1)
        "\U000110bd",  # KAITHI NUMBER SIGN (Cf, plane 1)
    ],
    ids=lambda c: f"U+{ord(c):04X}",
)
def test_each_invisible_mark_is_a_token(c: str) -> None:
    assert MARK.match(c)  # the independent property agrees it is one
    assert visible(f"q150{c}") == f"q150<U+{ord(c):04X}>" != visible("q150")
    assert is_mark(c)


@pytest.mark.parametrize(
    "text",
    [
        "abcXYZ 0123456789 ١٢٣ ৪৫৬",  # letters, ASCII and other digits
        " \u00a0\u2002\u3000",  # spaces, the no-break and wide ones too
        "e\u0301 a\u0308 n\u0303 o\u0328\u0304",  # combining accents on their letters
        unicodedata.normalize("NFD", "Tiếng Việt, Đà Nẵng"),  # Vietnamese, decomposed
        "नमस्ते, हिन्दी, क्षत्रिय",  # Devanagari: vowel signs and viramas (Mn, Mc)
        "مَرْحَبًا بِكُمْ",  # Arabic with harakat (Mn)
        "שָׁלוֹם",  # Hebrew with niqqud
        "ภาษาไทย น้ำ",  # Thai, with tone marks
        "한국어 \u1100\u1161\u11a8",  # Hangul syllables and conjoining jamo (not the fillers)
        "日本語テキスト 中文",
        "👍🏽 🇫🇷 ☕",  # emoji, a skin-tone modifier and a flag (no selector, no joiner)
        "\u0e33\u0f71\u1abf",  # other combining marks
        "tab\there\nnew line",  # tab and newline stay (as today)
    ],
)
def test_real_text_is_left_as_it_is(text: str) -> None:
    assert not MARK.search(text)
    assert visible(text) == text


def test_q150_and_q150_with_an_arabic_letter_mark_print_differently() -> None:
    assert visible("q150") == "q150" and visible("q150\u061c") == "q150<U+061C>"
    assert one_line("q150\u061c", 40) == "q150<U+061C>"


def test_the_whole_set_is_built_only_for_text_that_is_not_ascii() -> None:
    """Importing sanitize and showing ASCII text costs no scan of Unicode's tables (`triage
    --version` and a report of ASCII data stay as fast as they were); the first other text builds it."""
    code = (
        "from triage.core.text import sanitize as s\n"
        "assert s.visible('q1\\x1b') == 'q1␛'\n"
        "print(s._all_marks.cache_info().currsize)\n"
        "assert s.visible('q1\\u061c') == 'q1<U+061C>'\n"
        "print(s._all_marks.cache_info().currsize)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.split() == ["0", "1"]


# -- properties over generated text --------------------------------------------------------------


def _known(c: str) -> bool:  # both Unicode versions agree whether it is assigned
    return ord(c) not in versions_differ()


MARK_SAMPLE = sorted({chr(c) for c in ranges_to_set(sanitize.marks()) if c < 0xE0200})
# Any character but `<` and the five names, so a token is never confused with typed text; marks drawn often.
CHARS = st.one_of(
    st.characters(exclude_characters="<" + "".join(NAMES.values())).filter(_known),
    st.sampled_from(MARK_SAMPLE),
)


@pytest.mark.slow  # the first example pays for `versions_differ` (a scan of every code point)
@settings(max_examples=300, deadline=None)
@given(st.text(CHARS, max_size=40))
def test_visible_replaces_each_mark_by_its_token_and_keeps_the_rest(s: str) -> None:
    shown = visible(s, cap=None)
    assert not MARK.search(shown), "a raw invisible mark is shown"
    rest, marks = decode(shown)
    assert rest == "".join(c for c in s if not MARK.match(c))  # every other character, as it was
    assert marks == "".join(c for c in s if MARK.match(c))  # each mark, readable from its token
    assert visible(shown, cap=None) == shown  # tokens are plain ASCII (or ␛ …): shown once more, the same
    assert all(t.group().isascii() or t.group() in SYMBOL for t in TOKEN.finditer(shown))
    assert not MARK.search(one_line(s, 80))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(CHARS, max_size=20), st.data())
def test_two_texts_that_differ_only_by_invisible_marks_print_differently(s: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(s)))
    marks = data.draw(st.text(st.sampled_from(MARK_SAMPLE), min_size=1, max_size=3))
    t = s[:at] + marks + s[at:]
    assert visible(t) != visible(s)
    assert one_line(t, 200) != one_line(s, 200)


# -- the same marks where triage writes text that is not a report ----------------------------------


@pytest.mark.parametrize("c", ["\u3164", "\ufe0f", "\u034f", "\u061c", "\u00ad", "\U000e0041"])
def test_a_suggested_floors_key_escapes_an_invisible_mark_and_reads_back(c: str) -> None:
    key = toml_key(f"tenant:acme{c}")
    assert key.isascii() and not MARK.search(key)
    assert tomllib.loads(f"{key} = 0.5")[f"tenant:acme{c}"] == 0.5


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--format", "json\u3164"],  # a refused choice (argparse quotes it with repr)
        ["report", "--x\u061c\u202e\x1b[31m"],  # an unknown flag (argparse writes it as typed)
        ["report", "--k", "5\u3164"],
        ["labels", "judge", "--query", "q", "--chunk", "c", "--grade", "1", "--bogus\ufe0f"],
    ],
    ids=["choice", "flag", "value", "verb's flag"],
)
def test_a_command_line_error_shows_the_marks_it_quotes(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert not MARK.search(err.replace("\n", "")), f"a raw mark in {err!r}"
    assert re.search(r"<U\+(3164|061C|FE0F)>|\\u061c", err), err
