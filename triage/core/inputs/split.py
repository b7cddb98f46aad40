"""The tuning split: which documents templates and thresholds were tuned on, and which are held out.

Two ways to name it (manifest `[holdout]`, or `--holdout-fraction` / `--tuned-docs`):

- `rule = "hash"`, `fraction = F` (0 < F < 1): a document is held out when the first 8 bytes of
  SHA-256 over its UTF-8 `doc_id`, read as a big-endian unsigned integer h, satisfy h / 2^64 < F.
  Every other document may have been tuned on. Stable across runs, machines and languages:
  `int.from_bytes(hashlib.sha256(doc_id.encode()).digest()[:8], "big") / 2**64 < F`.
- `tuned_docs = "FILE"`: a UTF-8 text file naming the tuned documents, one `doc_id` per line
  (spaces at either end stripped; blank lines and lines starting with `#` skipped). Every document
  it does not name is held out.

A chunk's document is the corpus's `doc_id` column (docs/data.md "The data contract"). `DocSplit` holds,
per corpus chunk, whether its document is known and held out.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from triage.core.errors import InputError
from triage.core.inputs.readers import quoted, regular_file

DEFAULT_FRACTION = 0.2  # the held-out fifth


class Rule(StrEnum):
    HASH = "hash"
    TUNED_DOCS = "tuned_docs"


@dataclass(frozen=True)
class Holdout:
    """How the split is named: the hash rule with its `fraction`, or a file of tuned doc ids."""

    rule: Rule
    fraction: float | None = None  # Rule.HASH
    tuned_docs: Path | None = None  # Rule.TUNED_DOCS

    def describe(self) -> str:
        if self.rule is Rule.HASH:
            return f"hash rule: documents with sha256(doc_id)[:8] / 2^64 < {self.fraction:g} are held out"
        assert self.tuned_docs is not None
        return f"tuned documents listed in {self.tuned_docs.name}; every other document is held out"


def check_fraction(value: object, where: Path | str, section: str = "[holdout]") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise InputError(
            where, f"fraction must be a number above 0 and below 1, found {quoted(value)}", section
        )
    return float(value)


def doc_hash(doc_ids: list[str]) -> np.ndarray:
    """h per doc id (uint64). hashlib has no array form: one call per distinct document."""
    digests = b"".join(hashlib.sha256(d.encode("utf-8")).digest()[:8] for d in doc_ids)
    return np.frombuffer(digests, dtype=">u8").astype(np.uint64)


def hashed_out(doc_ids: list[str], fraction: float) -> np.ndarray:
    """Whether each document is held out under the hash rule: h < fraction · 2^64, in integers
    (fraction · 2^64 is exact in binary; its ceiling makes h < it the same as h / 2^64 < fraction)."""
    threshold = np.uint64(math.ceil(fraction * 2.0**64))
    return doc_hash(doc_ids) < threshold


def read_tuned_docs(path: Path) -> list[str]:
    """The doc ids of a tuned-docs file, in file order (a repeat kept once). Refused, naming the
    file and line: bytes that are not UTF-8, a tab or another control character inside a line
    (one id per line: a pasted table is not a list), and a file naming no document."""
    path = Path(path)
    regular_file(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        at = data[: e.start].count(b"\n") + 1
        raise InputError(path, "not UTF-8 text", f"line {at}") from None
    out: dict[str, None] = {}
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.removesuffix("\r").strip(" ")
        if not line or line.startswith("#"):
            continue
        bad = next((ch for ch in line if unicodedata.category(ch) == "Cc"), None)
        if bad is not None:
            what = "a tab" if bad == "\t" else f"control character U+{ord(bad):04X}"
            raise InputError(path, f"{what} inside a doc id: write one doc id per line", f"line {n}")
        out[line] = None
    if not out:
        raise InputError(path, "names no document: one doc id per line")
    return list(out)


@dataclass(frozen=True)
class DocSplit:
    """Per corpus chunk (aligned with `chunk_ids`): whether its document is known (a non-null
    `doc_id`) and whether it is held out. `unmatched`: tuned ids naming no document of the corpus
    (a typo tunes nothing); `n_docs`, `n_held_out_docs`: distinct documents, and held-out ones."""

    holdout: Holdout
    chunk_ids: pa.Array
    known: np.ndarray
    held_out: np.ndarray
    n_docs: int
    n_held_out_docs: int
    unmatched: tuple[str, ...] = ()


def split_of(holdout: Holdout, chunk_ids: pa.Array, doc_ids: pa.Array | None) -> DocSplit:
    """The split over a corpus's chunks; `doc_ids` None: the corpus has no `doc_id` column."""
    n = len(chunk_ids)
    if doc_ids is None:
        return DocSplit(holdout, chunk_ids, np.zeros(n, bool), np.zeros(n, bool), 0, 0)
    encoded = pc.dictionary_encode(doc_ids)
    docs = encoded.dictionary.to_pylist()
    code = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    unmatched: tuple[str, ...] = ()
    if holdout.rule is Rule.HASH:
        assert holdout.fraction is not None
        doc_out = hashed_out(docs, holdout.fraction)
    else:
        assert holdout.tuned_docs is not None
        tuned = read_tuned_docs(holdout.tuned_docs)
        listed = pa.array(tuned, pa.string())
        doc_out = ~pc.is_in(encoded.dictionary, value_set=listed).to_numpy(zero_copy_only=False)
        unmatched = tuple(
            listed.filter(pc.invert(pc.is_in(listed, value_set=encoded.dictionary))).to_pylist()
        )
    known = code >= 0
    held = np.zeros(n, bool)
    held[known] = doc_out[code[known]]
    return DocSplit(holdout, chunk_ids, known, held, len(docs), int(doc_out.sum()), unmatched)
