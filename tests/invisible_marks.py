"""The invisible marks by Unicode's properties, taken from the `regex` package's tables (not from
`unicodedata`, which `core/text/sanitize.py` reads): what `sanitize.visible` must show as a token."""

from __future__ import annotations

import regex

# Default_Ignorable_Code_Point ∪ Cf ∪ Cc (but tab and newline) ∪ Zl ∪ Zp ∪ the noncharacters
MARK = regex.compile(
    r"[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}--[\t\n]]",
    regex.V1,
)
