"""The report dict as strict JSON: undefined numbers are null (the model emits None, never NaN)."""

from __future__ import annotations

import json


def dumps(data: dict[str, object]) -> str:
    """One compact JSON object (the C encoder: fast even with 100,000 flips)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False)
