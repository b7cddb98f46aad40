"""The truth kernel against a float64 brute force written here: every query's eligible rows scored
one by one, sorted by (score, chunk_id), cut at min(k, n_eligible) plus the rows tied with the k-th.
Generated data plants what breaks a careless top-k: exact ties (the same vector several times, at
the top and across the k-th), near-duplicates inside and just outside the tolerance, near-ties
closer than float32 can tell apart, filters admitting many rows, a few, fewer than k, or none."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from triage.core.truth import kernel
from triage.core.truth.kernel import Block, Job, partial_topk
from triage.core.truth.merge import Partial, merge_partials, truth_lists

TOL = 1e-6


def corpus(seed: int, n: int = 1500, d: int = 24) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Vectors, ids (not in row order) and a tenant per row, with planted ties and near-ties."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    x[10:40] = x[3]  # 31 rows of one vector: an exact tie wider than any k
    x[50:53] = x[7]
    for i in range(60, 70):  # near-duplicates of row 8: within 1e-7 relative, or 1e-5
        x[i] = x[8] * np.float32(1 + (1e-7 if i % 2 else 1e-5) * (i - 59))
    x[80] = x[9] + np.float32(1e-6)  # closer than float32 separates scores of unit-ish vectors
    ids = [f"c{(i * 7919) % 100_003:06d}" for i in range(n)]
    tenant = rng.choice(np.array(["a", "b", "c", "rare"]), n, p=[0.6, 0.3, 0.097, 0.003])
    return x, ids, tenant


def queries_for(x: np.ndarray, seed: int, n: int = 12) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    q = rng.standard_normal((n, x.shape[1])).astype(np.float32)
    q[0], q[1], q[2] = x[3], x[8], x[9]  # queries sitting on the planted rows
    q[3] = x[3] * 2
    return q


GROUPS = [None, "a", "b", "rare", "none"]  # unfiltered, 60%, 30%, ~0.3% (fewer than k), none


def masks(tenant: np.ndarray) -> list[np.ndarray | None]:
    return [None if g is None else tenant == g for g in GROUPS]


def brute(
    q: np.ndarray,
    x: np.ndarray,
    ids: list[str],
    mask: np.ndarray | None,
    metric: str,
    k: int,
    tol: float = TOL,
) -> tuple[list[str], list[float], list[bool], int]:
    """The truth of one query: ids, scores, tied flags and n_eligible."""
    rows = np.arange(len(x)) if mask is None else np.flatnonzero(mask)
    r = x[rows].astype(np.float64)
    q64 = q.astype(np.float64)
    if metric == "l2":
        diff = q64 - r
        gain = -np.sqrt((diff * diff).sum(axis=1))
    else:
        gain = (q64 * r).sum(axis=1)
        if metric == "cosine":
            gain = gain / (np.sqrt((q64 * q64).sum()) * np.sqrt((r * r).sum(axis=1)))
    order = sorted(range(len(rows)), key=lambda j: (-gain[j], ids[rows[j]]))
    n = min(k, len(rows))
    listed = order[:n]
    if n == k:
        gk = gain[order[k - 1]]
        listed += [j for j in order[k:] if gain[j] >= gk - tol * max(1.0, abs(gk))]
    scores = [float(-gain[j]) if metric == "l2" else float(gain[j]) for j in listed]
    return [ids[rows[j]] for j in listed], scores, [i >= n for i in range(len(listed))], len(rows)


def blocks_of(x: np.ndarray, ids: list[str], tenant: np.ndarray, size: int, start: int = 0) -> list[Block]:
    out = []
    for first in range(0, len(x), size):
        part = slice(first, first + size)
        out.append(
            Block(
                start + first, pa.array(ids[part]), np.ascontiguousarray(x[part]), tuple(masks(tenant[part]))
            )
        )
    return out


def job_of(q: np.ndarray, metric: str, k: int) -> Job:
    groups = np.arange(len(q)) % len(GROUPS)
    return Job(q, groups, len(GROUPS), metric, k, TOL)


def lists(part: Partial, k: int, metric: str) -> dict[int, tuple[list[str], list[float], list[bool], int]]:
    ranked = truth_lists(part, k)
    out = {}
    for qi in range(len(part.n_eligible)):
        at = np.flatnonzero(part.query == qi)
        gains = part.gains[at]
        scores = (-gains if metric == "l2" else gains).tolist()
        out[qi] = (
            part.ids.take(pa.array(at)).to_pylist(),
            scores,
            ranked.tied[at].tolist(),
            int(part.n_eligible[qi]),
        )
    return out


def assert_truth(part: Partial, q: np.ndarray, x, ids, tenant, metric: str, k: int) -> None:
    groups = np.arange(len(q)) % len(GROUPS)
    got = lists(part, k, metric)
    for qi in range(len(q)):
        want = brute(q[qi], x, ids, masks(tenant)[groups[qi]], metric, k)
        g = got[qi]
        assert g[0] == want[0], (qi, GROUPS[groups[qi]], g[0][:5], want[0][:5])
        assert g[2] == want[2] and g[3] == want[3]
        np.testing.assert_allclose(g[1], want[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
@pytest.mark.parametrize("k", [1, 4, 17])
def test_the_kernel_is_the_brute_force_truth(metric: str, k: int) -> None:
    x, ids, tenant = corpus(seed=k)
    q = queries_for(x, seed=k)
    part = partial_topk(job_of(q, metric, k), blocks_of(x, ids, tenant, 257))
    assert_truth(part, q, x, ids, tenant, metric, k)


def test_a_tie_wider_than_k_is_listed_whole_and_marked_past_k() -> None:
    x, ids, tenant = corpus(seed=3)
    q = queries_for(x, seed=3)
    part = partial_topk(job_of(q, "cosine", 5), blocks_of(x, ids, tenant, 300))
    got = lists(part, 5, "cosine")[0]  # query 0 is row 3's vector, which 31 rows hold (unfiltered)
    assert len(got[0]) == 31 and got[2] == [False] * 5 + [True] * 26
    assert got[0] == sorted(got[0])  # equal scores: chunk ids in order
    assert len(set(got[1])) == 1


def test_fewer_eligible_than_k_lists_them_all_and_none_lists_nothing() -> None:
    x, ids, tenant = corpus(seed=4)
    q = queries_for(x, seed=4, n=10)
    part = partial_topk(job_of(q, "ip", 50), blocks_of(x, ids, tenant, 400))
    got = lists(part, 50, "ip")
    rare, none = got[3], got[4]  # groups 3 ("rare") and 4 (no row)
    assert 0 < rare[3] < 50 and len(rare[0]) == rare[3] and not any(rare[2])
    assert none == ([], [], [], 0)


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_blocking_and_paths_change_no_byte(metric: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 61 rows, 500, or one; filtered groups gathered (their rows scanned at the end or
    after each block) or in the block-wide product: the same gains, bit for bit, and the same ids."""
    x, ids, tenant = corpus(seed=5)
    q = queries_for(x, seed=5)
    job = job_of(q, metric, 6)
    base = partial_topk(job, blocks_of(x, ids, tenant, len(x)))
    runs = [partial_topk(job, blocks_of(x, ids, tenant, size)) for size in (61, 500)]
    for gather, held in (
        (0.0, 1 << 30),
        (1e9, 1 << 30),
        (1e9, 1),
    ):  # held rows scanned at the end, or each block
        monkeypatch.setattr(kernel, "GATHER", gather)
        monkeypatch.setattr(kernel, "HELD_BYTES", held)
        runs.append(partial_topk(job, blocks_of(x, ids, tenant, 200)))
    for other in runs:
        assert other.ids.equals(base.ids)
        assert other.gains.tobytes() == base.gains.tobytes()
        assert other.query.tobytes() == base.query.tobytes()
        assert other.n_eligible.tolist() == base.n_eligible.tolist()


@pytest.mark.parametrize("k", [1, 9])
def test_shards_merged_are_the_whole_corpus_scanned(k: int) -> None:
    x, ids, tenant = corpus(seed=6)
    q = queries_for(x, seed=6)
    job = job_of(q, "cosine", k)
    cuts = [0, 37, 700, 1100, len(x)]  # shards of 37, 663, 400 and 400 rows
    parts = [
        partial_topk(job, blocks_of(x[a:b], ids[a:b], tenant[a:b], 128, a))
        for a, b in zip(cuts, cuts[1:], strict=False)
    ]
    merged = merge_partials(parts, k, TOL)
    assert_truth(merged, q, x, ids, tenant, "cosine", k)
    whole = partial_topk(job, blocks_of(x, ids, tenant, 128))
    assert merged.ids.equals(whole.ids) and merged.gains.tobytes() == whole.gains.tobytes()


def test_scores_closer_than_float32_are_ordered_by_their_float64_values() -> None:
    """Rows whose float32 scores are equal but float64 scores are not: ordered by the latter."""
    rng = np.random.default_rng(7)
    d = 64
    base = rng.standard_normal(d).astype(np.float32)
    x = np.repeat(base[None, :], 40, axis=0)
    x[:, 0] += (np.arange(40, dtype=np.float32) - 20) * np.float32(2.0**-20)  # tiny steps
    x = np.concatenate([x, rng.standard_normal((500, d)).astype(np.float32)])
    ids = [f"r{(i * 31) % 541:04d}" for i in range(len(x))]
    q = np.stack([base, -base]).astype(np.float32)
    job = Job(q, np.zeros(2, np.int64), 1, "ip", 10, 0.0)
    part = partial_topk(job, [Block(0, pa.array(ids), x, (None,))])
    for qi in range(2):
        want = brute(q[qi], x, ids, None, "ip", 10, tol=0.0)
        at = np.flatnonzero(part.query == qi)
        assert part.ids.take(pa.array(at)).to_pylist() == want[0]


def test_every_query_in_one_group_and_many_groups_agree() -> None:
    """A query's truth does not depend on which other queries share its scan."""
    x, ids, tenant = corpus(seed=8)
    q = queries_for(x, seed=8, n=15)
    full = lists(partial_topk(job_of(q, "l2", 3), blocks_of(x, ids, tenant, 333)), 3, "l2")
    groups = np.arange(len(q)) % len(GROUPS)
    for qi in (0, 6, 13):
        alone = Job(q[qi : qi + 1], np.array([groups[qi]]), len(GROUPS), "l2", 3, TOL)
        one = lists(partial_topk(alone, blocks_of(x, ids, tenant, 333)), 3, "l2")[0]
        assert one == full[qi]


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_vectors_far_from_the_origin_keep_few_candidates(
    metric: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows and queries 10^4 away from the origin, spread by 1: float32's products lose the spread
    unless the rows are moved by their mean first; the truth is exact and the candidates few."""
    x, ids, tenant = corpus(seed=9)
    far = np.float32(1e4)
    x = x + far
    q = queries_for(x, seed=9) + np.float32(0.0)
    q[4:] += far
    rescored = []
    exact = kernel._Scan._exact

    def counted(self: object, qidx: np.ndarray, xs: np.ndarray, rows: np.ndarray) -> np.ndarray:
        rescored.append(len(rows))
        return exact(self, qidx, xs, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(kernel._Scan, "_exact", counted)
    part = partial_topk(job_of(q, metric, 5), blocks_of(x, ids, tenant, 400))
    assert_truth(part, q, x, ids, tenant, metric, 5)
    assert sum(rescored) < 40 * len(q) * 4  # a handful per query and block, not every row
