"""triage: read what a retrieval change did.

The package root stays import-light: `triage report` must never pay for Textual.
"""

from __future__ import annotations

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """`triage.open(...)`: the Python API (`triage.api.open_evaluation`), imported on first use;
    `triage.truth(...)`: `triage truth` (`triage.api.truth`);
    `triage.InputError`: what it raises for an input it cannot read (`triage.core.errors`)."""
    if name == "open":
        from triage.api import open_evaluation

        return open_evaluation
    if name == "truth":
        from triage.api import truth

        return truth
    if name == "InputError":
        from triage.core.errors import InputError

        return InputError
    if name == "sample":  # `triage sample` from Python (`triage.api.sample_queries`)
        from triage.api import sample_queries

        return sample_queries
    raise AttributeError(f"module 'triage' has no attribute {name!r}")
