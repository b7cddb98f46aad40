"""Where the bundled files live: inside the wheel (`triage/_bundled/`) or beside a checkout."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from triage.core.inputs.manifest import Spec

_PKG = Path(__file__).resolve().parent.parent  # the installed `triage` package


def bundled(name: str) -> Path:
    """`styles` or `sample_runs`: the installed copy first, else the checkout's top-level folder."""
    installed = _PKG / "_bundled" / name
    return installed if installed.exists() else _PKG.parent / name


def sample_manifest() -> Path:
    return bundled("sample_runs") / "triage.toml"


def data_dir() -> Path:
    """Where triage keeps what is the user's own: `$TRIAGE_DATA`, else `$XDG_DATA_HOME/triage`,
    else `~/.local/share/triage`."""
    given = os.environ.get("TRIAGE_DATA")
    if given:
        return Path(given)
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "triage"


def sample_spec() -> Spec:
    """The bundled sample, with its amendments kept in the user's data folder: never inside the
    installed package (a reinstall would lose them) nor in a checkout (git would see them)."""
    from triage.core.inputs.manifest import from_manifest

    return replace(from_manifest(sample_manifest()), amendments=data_dir() / "sample.amendments")
