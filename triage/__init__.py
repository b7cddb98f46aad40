"""triage: read what a retrieval change did.

The package root stays import-light: `triage report` must never pay for Textual.
"""

from __future__ import annotations

__version__ = "0.1.0"
