"""The row sections held as columns (report/rows.py: the flips, the rank drops) and the hints
that read no text judged over arrays (core/hints.plain_hints), checked against a per-query
spelling of the same rules (docs/hints.md) and the per-row JSON spelling, on a generated evaluation where
every rule's cause is present in some queries and absent in others, with ids, plans, tenants and
texts that need JSON escapes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from triage.core.evaluation import Evaluation
from triage.core.inputs.manifest import from_manifest
from triage.core.views.hints import PUSHED_BELOW, FlipHints, HintKind, hints_for, losing_arms
from triage.report import rows as rows_module
from triage.report.build import build
from triage.report.model import dumps_report
from triage.report.rows import COLUMNS, Flips, hint_dict
from triage.workspace.snapshot import open_snapshot

from conftest import manifest, write_parquet

K = 5
ODD = ['pl"an', "back\\slash", "tab\there", "nul\x00", "ünï", "\u2028line", "\x1f", ""]


def _evaluation(tmp: Path, n: int = 400, seed: int = 3) -> Path:
    rnd = random.Random(seed)
    rows: dict[str, list[dict]] = {"a": [], "b": []}
    labels, queries = [], []
    for i in range(n):
        qid = f"q{i}" + (ODD[i % len(ODD)] if i % 7 == 0 else "")
        gold = [f"g{i}-{j}" for j in range(rnd.choice([0, 1, 1, 2]))]  # 0: unscored
        labels += [{"query_id": qid, "chunk_id": g, "relevance": rnd.choice([1, 2])} for g in gold]
        queries.append(
            {
                "query_id": qid,
                "text": rnd.choice([None, "plain", *ODD]),
                "tenant": rnd.choice([None, "t1", *ODD]),
            }
        )
        for arm in "ab":
            if rnd.random() < 0.05:
                continue  # the run lacks the query
            depth = rnd.choice([0, 2, K - 1, K, 2 * K, 3 * K])
            ids = [f"x{i}-{j}" for j in range(depth)]
            if gold and ids and rnd.random() < 0.6:
                ids[rnd.randrange(depth)] = rnd.choice(gold)
            eligible = rnd.choice([None, depth, depth + 3, 0])
            returned = rnd.choice([None, depth, max(depth - 1, 0)])
            plan = rnd.choice([None, "ann", "prefilter", *ODD])
            rows[arm].append(
                {
                    "query_id": qid,
                    "retrieved": ids,
                    "plan": plan,
                    "n_eligible": eligible,
                    "n_returned": returned,
                }
            )
    for arm in "ab":
        write_parquet(tmp / f"{arm}.parquet", rows[arm], {"name": arm})
    write_parquet(tmp / "labels.parquet", labels)
    write_parquet(tmp / "queries.parquet", queries)
    return manifest(tmp, "a.parquet", "b.parquet", "labels.parquet", k=K, queries="queries.parquet")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _evaluation(tmp_path_factory.mktemp("flips"))


def _rules(ev: Evaluation, q: int, unread: str) -> list[tuple[HintKind, str, dict[str, object]]]:
    """The rules (docs/hints.md) that read no text, for one query, one field at a time."""
    if not ev.scored[q]:
        return []
    side = "b" if losing_arms(ev, np.array([q]))[0] else "a"
    arm = ev.b if side == "b" else ev.a
    name = side.upper()
    present = arm.row[q] >= 0
    recorded = arm.value("n_returned", q)
    n_ret = (int(recorded) if recorded is not None else int(arm.depth[q])) if present else 0
    elig = arm.value("n_eligible", q)
    plan = arm.value("plan", q)
    out = []
    if n_ret < K and (elig is None or n_ret < elig):
        said = (f"plan {plan}" if plan is not None else "plan not recorded") + (
            f", {elig} eligible" if elig is not None else ""
        )
        facts = {"n_returned": n_ret, "k": K, "plan": plan, "n_eligible": elig}
        out.append((HintKind.SHORT_LIST, f"{name} returned {n_ret} of k={K} ids ({said})", facts))
    pa_, pb = ev.a.value("plan", q), ev.b.value("plan", q)
    if pa_ is not None and pb is not None and pa_ != pb:
        out.append((HintKind.PLAN_CHANGE, f"A used plan {pa_}, B plan {pb}", {"plan_a": pa_, "plan_b": pb}))
    if out:
        return out
    rank, depth = int(arm.judged.gold_rank[q]), int(arm.depth[q])
    note = f" ({unread}: text causes not examined)"
    if rank == 0:
        what = f"no gold id is among {name}'s {depth} stored ids{note}"
        return [(HintKind.DROPPED, what, {"depth": depth, "text_examined": False})]
    if K < rank <= PUSHED_BELOW * K:
        what = f"{name} ranks its best gold {rank}, just below k={K} (ranks {K + 1}–{2 * K}){note}"
        return [(HintKind.PUSHED_OUT, what, {"rank": rank, "k": K, "text_examined": False})]
    return []


@pytest.mark.slow
def test_the_array_rules_match_the_per_query_rules(generated: Path) -> None:
    ev = open_snapshot(from_manifest(generated)).ev
    qs = np.arange(ev.n)
    found = hints_for(ev, qs, None, "why")
    kinds = set()
    for q in qs.tolist():
        got = [(h.kind, h.evidence, h.facts) for h in found[q]]
        assert got == _rules(ev, q, "why"), ev.query_ids[q]
        assert all(h.arm == ("b" if losing_arms(ev, np.array([q]))[0] else "a") for h in found[q])
        kinds |= {h.kind for h in found[q]}
    # Every rule fired somewhere, and some queries got none (causes present and absent).
    assert kinds == {HintKind.SHORT_LIST, HintKind.PLAN_CHANGE, HintKind.PUSHED_OUT, HintKind.DROPPED}
    assert sum(1 for q in qs.tolist() if not found[q] and ev.scored[q]) > 0
    assert all(found[q] == () for q in np.flatnonzero(~ev.scored).tolist())


def test_the_columns_spell_the_json_of_their_rows(generated: Path) -> None:
    report = build(open_snapshot(from_manifest(generated)))
    flips = report.flips
    assert isinstance(flips, Flips) and len(flips) > 50
    rows = list(flips)
    per_row = [
        {
            **{c: getattr(f, c) for c in COLUMNS},
            "direction": f.direction.json,
            "hints": [hint_dict(h) for h in f.hints],
        }
        for f in rows
    ]
    assert flips.json() == json.dumps(per_row, ensure_ascii=False)  # byte for byte
    assert json.loads(dumps_report(report))["flips"] == per_row == report.to_json()["flips"]
    whole = dumps_report(report)
    assert whole == json.dumps(report.to_json(), ensure_ascii=False, allow_nan=False)
    drops = report.ranks.drops
    assert len(drops) > 5  # both-hit queries whose gold fell
    assert drops.json() == json.dumps(
        [
            {c: getattr(d, c) for c in ("query_id", "rank_a", "rank_b", "drop", "tenant", "text")}
            for d in drops
        ],
        ensure_ascii=False,
    )
    assert all(d.drop == d.rank_b - d.rank_a > 0 for d in drops)
    escaped = [r for r in per_row if any(ch in json.dumps(r["query_id"]) for ch in "\\")]
    assert escaped  # ids with quotes, backslashes and controls were among the flips


def test_a_row_is_the_evaluations_numbers(generated: Path) -> None:
    ev = open_snapshot(from_manifest(generated)).ev
    flips = build(open_snapshot(from_manifest(generated))).flips
    for i in (0, len(flips) // 2, len(flips) - 1):
        q = int(ev.flips[i])
        row = flips[i]
        assert row.query_id == ev.query_ids[q].as_py()
        assert row.gold_rank_a == (int(ev.a.judged.gold_rank[q]) or None)
        assert row.gold_rank_b == (int(ev.b.judged.gold_rank[q]) or None)
        assert row.plan_b == ev.b.value("plan", q)
        assert row.hints == hints_for(ev, [q], None)[q]
    assert flips[-1] == flips[len(flips) - 1] and flips[1:3] == tuple(flips)[1:3]
    shown, hidden = flips.first_of_each(3)
    assert len(shown) == 6 and hidden == len(flips) - 6
    assert [r.direction for r in shown] == sorted(r.direction for r in shown)  # hit→miss first
    with pytest.raises(IndexError):
        flips[len(flips)]


@pytest.mark.parametrize("slice_rows", [1, 7, 64])
def test_the_json_written_a_slice_at_a_time_is_the_whole_arrays(
    generated: Path, monkeypatch: pytest.MonkeyPatch, slice_rows: int
) -> None:
    """Each slice of rows is spelled on its own, two at once on two threads past one slice (so the
    text held at once is at most two slices'): the bytes are those of the rows' JSON, for slices
    of any size, with flips whose hints read text (`FlipHints.read`) before those judged over
    arrays, and a slice across the two."""
    flips = build(open_snapshot(from_manifest(generated))).flips
    assert isinstance(flips, Flips) and flips.hints is not None and len(flips) > 50
    rest, cut = flips.hints.rest, 11  # the first 11 flips as if their text had been read
    starts = rest.starts
    mixed = Flips(
        flips.columns,
        FlipHints(
            tuple(rest.of(i) for i in range(cut)),
            rows_module._hint_rows(rest, cut, rest.n, int(starts[cut]), int(starts[-1])),
        ),
    )
    want = [
        {
            **{c: getattr(f, c) for c in COLUMNS},
            "direction": f.direction.json,
            "hints": [hint_dict(h) for h in f.hints],
        }
        for f in flips
    ]
    assert [f.hints for f in mixed] == [f.hints for f in flips]
    monkeypatch.setattr(rows_module, "_ROWS", slice_rows)
    for section in (flips, mixed):
        assert section.json() == json.dumps(want, ensure_ascii=False)  # byte for byte


def test_a_wide_table_leaves_out_the_wide_only_columns_that_do_not_fit_and_keeps_the_marks() -> None:
    """The tenants table at the app's widths: every column when there is room; narrower, the
    wide-only columns in the order declared, never a column that is not wide-only, and the marks'
    column keeps its least width (FLEX_MIN) so that "< floor" is never cropped."""
    from triage.report.columns import FLEX_MIN, shown
    from triage.report.sections.tenants import TENANTS

    def needed(cols: list) -> int:
        return sum((c.width or FLEX_MIN) + 1 for c in cols)

    full = shown(TENANTS)
    assert shown(TENANTS, room=needed(full)) == full
    for room in range(needed(full) - 1, 60, -1):
        cols = shown(TENANTS, room=room)
        kept = [c.title for c in cols]
        assert [c.title for c in full if not c.wide] == [
            t for t in kept if t in {c.title for c in full if not c.wide}
        ]
        dropped = [c.title for c in full if c.title not in kept]
        wide = [c.title for c in full if c.wide]
        assert dropped == wide[: len(dropped)]  # in the order declared
        assert needed(cols) <= room or dropped == wide  # fits, unless nothing more may go
        assert cols[-1].title == "" and cols[-1].width == 0  # the marks
