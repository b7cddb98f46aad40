"""Where the bundled files live: inside the wheel (`triage/_bundled/`) or beside a checkout."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the installed `triage` package


def bundled(name: str) -> Path:
    """`styles` or `sample_runs`: the installed copy first, else the checkout's top-level folder."""
    installed = _PKG / "_bundled" / name
    return installed if installed.exists() else _PKG.parent / name


def sample_manifest() -> Path:
    return bundled("sample_runs") / "triage.toml"
