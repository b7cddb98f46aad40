"""One value per arm (`ByArm`), and a computed number as the report's model holds it (`num`)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ByArm(Generic[T]):
    """One value per arm: `{"a": …, "b": …}` in the JSON."""

    a: T
    b: T

    def items(self) -> Iterator[tuple[str, T]]:
        yield "a", self.a
        yield "b", self.b


def num(x: float | None) -> float | None:
    """A computed number as the model holds it: None where it is undefined (None or NaN)."""
    return None if x is None or math.isnan(x) else float(x)
