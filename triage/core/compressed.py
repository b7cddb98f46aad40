"""Compressed inputs: which codec a file holds (by its first bytes and its name), and its bytes.

gzip, zstd and bzip2 are read transparently through Arrow's own decompressors. A name ending in
`.gz`, `.zst`/`.zstd` or `.bz2` must hold those bytes; a file holding them under another name is
read as well (the bytes decide). xz and zip are named and refused.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from triage.core.errors import InputError

# First bytes of compressed files, the codec's name, and Arrow's name for it (None: not read).
MAGIC: dict[bytes, tuple[str, str | None]] = {
    b"\x1f\x8b": ("gzip", "gzip"),
    b"\x28\xb5\x2f\xfd": ("zstd", "zstd"),
    b"BZh": ("bzip2", "bz2"),
    b"\xfd7zXZ\x00": ("xz", None),
    b"PK\x03\x04": ("zip", None),
}
SUFFIX = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bzip2"}


def codec(path: Path, head: bytes) -> str | None:
    """Arrow's codec name for the file whose first bytes are `head`, or None for plain bytes."""
    found = next((kind for magic, kind in MAGIC.items() if head.startswith(magic)), None)
    named = SUFFIX.get(path.suffix.lower())
    if named is not None and (found is None or found[0] != named):
        holds = f"{found[0]}-compressed bytes" if found else "bytes that are not compressed"
        raise InputError(path, f"is named {path.suffix} but holds {holds}")
    if found is None:
        return None
    if found[1] is None:
        raise InputError(path, f"holds {found[0]}-compressed bytes; triage reads gzip, zstd and bzip2")
    return found[1]


def inner_suffix(path: Path) -> str:
    """The format's suffix, under a compression suffix: `run.jsonl.gz` -> `.jsonl`."""
    if path.suffix.lower() in SUFFIX:
        return Path(path.stem).suffix.lower()
    return path.suffix.lower()


def decompress(path: Path, name: str) -> bytes:
    """The whole decompressed content of `path` (Arrow codec `name`)."""
    try:
        with pa.input_stream(str(path), compression=name) as stream:
            data = stream.read()
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot decompress ({name}; truncated or corrupt?): {e}") from None
    if not data:
        raise InputError(path, "is empty once decompressed")
    return bytes(data)
