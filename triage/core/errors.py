"""The one exception a bad input raises: it names the file, the place in it and the problem."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """An input that cannot be read or does not meet the data contract.

    `where` is a human place in the file: "row 12" (Parquet, 1-based), "line 7" (text formats),
    "column 'scores'", or empty when the whole file is at fault.
    """

    def __init__(self, path: Path | str, problem: str, where: str = "") -> None:
        self.path = str(path)
        self.where = where
        self.problem = problem
        super().__init__(self.message)

    @property
    def message(self) -> str:
        place = f": {self.where}" if self.where else ""
        return f"{self.path}{place}: {self.problem}"
