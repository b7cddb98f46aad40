"""Compressed inputs: which codec a file holds (by its first bytes and its name), and its bytes.

gzip, zstd and bzip2 are read transparently through Arrow's own decompressors. A name ending in
`.gz`, `.zst`/`.zstd` or `.bz2` must hold those bytes; a file holding them under another name is
read as well (the bytes decide). xz and zip are named and refused.
"""

from __future__ import annotations

import os
import re
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


RATIO = 200  # decompressed bytes allowed per compressed byte (text inputs compress 5-50x)
FLOOR = 256 << 20  # bytes: always allowed, however small the compressed file
CEILING = 16 << 30  # bytes: never more, unless TRIAGE_MAX_DECOMPRESSED says so
CHUNK = 16 << 20  # bytes read at a time


def limit(path: Path) -> int:
    """The most bytes `path` may decompress to: RATIO times its size, at least FLOOR and at most
    CEILING; `TRIAGE_MAX_DECOMPRESSED` (bytes, or with a K, M, G or T suffix) replaces both."""
    given = os.environ.get("TRIAGE_MAX_DECOMPRESSED", "").strip()
    if given:
        match = re.fullmatch(r"(\d+)\s*([KMGT]?)i?B?", given, re.IGNORECASE)
        if match is None:
            raise InputError("TRIAGE_MAX_DECOMPRESSED", f"{given!r} is not a size (as 4G or 500000000)")
        return int(match[1]) << (10 * " KMGT".index(match[2].upper() or " "))
    return min(CEILING, max(FLOOR, RATIO * path.stat().st_size))


def decompress(path: Path, name: str) -> bytes:
    """The whole decompressed content of `path` (Arrow codec `name`), refused past `limit(path)`:
    a small file that inflates to gigabytes (a decompression bomb) is named, never read whole."""
    cap = limit(path)
    parts, total = [], 0
    try:
        with pa.input_stream(str(path), compression=name) as stream:
            while chunk := stream.read(CHUNK):
                total += len(chunk)
                if total > cap:
                    raise InputError(
                        path,
                        f"decompresses to more than {cap:,} bytes ({RATIO}x its size, at most "
                        f"{CEILING >> 30} GiB); set TRIAGE_MAX_DECOMPRESSED to read it",
                    )
                parts.append(chunk)
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot decompress ({name}; truncated or corrupt?): {e}") from None
    if not total:
        raise InputError(path, "is empty once decompressed")
    return b"".join(parts)
