"""The ranks section: B against A per query beyond the flips (core/views/ranks.py): wins, ties and
losses on MRR and nDCG at k, the both-hit queries whose gold fell, and the histogram of gold-rank
changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from triage.core.text.sanitize import one_line
from triage.report.blocks import Block, Heading, Para, Table, every_column, numeric
from triage.report.cells import BAR, text
from triage.report.rows import DropRow, Drops
from triage.report.sections.flips import FLIP_TEXT

if TYPE_CHECKING:
    from triage.core.evaluation import Evaluation
    from triage.core.views.ranks import Ranks, WinTieLoss
    from triage.report.sections.slices import SliceRow


@dataclass(frozen=True, slots=True)
class WinTieLossRow:
    """Scored queries where B's per-query value beats A's, ties it (within 1e-9), loses to it."""

    wins: int
    ties: int
    losses: int


@dataclass(frozen=True)
class RankHistogram:
    """Gold-rank change A − B over the scored queries with a gold id in both stored lists."""

    n: int  # queries in the histogram
    changes: Mapping[int, int]  # change → queries, ascending; only changes that occur
    fell: int  # change < 0: B ranked the gold lower
    same: int
    rose: int
    only_a: int  # scored queries with a gold id in A's stored list only (not in the histogram)
    only_b: int
    neither: int


@dataclass(frozen=True)
class RanksSection:
    """B against A per query beyond the flips (core/views/ranks.py)."""

    n: int  # scored queries compared
    mrr: WinTieLossRow
    ndcg: WinTieLossRow
    drops: Drops  # both arms hit, B's gold rank worse: largest drop first
    histogram: RankHistogram


class RanksSource(Protocol):
    """What the ranks' cells read of the report."""

    @property
    def k(self) -> int: ...
    @property
    def ranks(self) -> RanksSection: ...
    @property
    def slices(self) -> Mapping[str, tuple[SliceRow, ...]]: ...


def _win_tie_loss(w: WinTieLoss) -> WinTieLossRow:
    return WinTieLossRow(w.wins, w.ties, w.losses)


def ranks_section(ev: Evaluation, x: Ranks) -> RanksSection:
    """Wins, ties and losses on mrr@k and ndcg@k, the both-hit queries whose gold fell, and the
    histogram of gold-rank changes (core/views/ranks.py)."""
    order, c = x.drops, x.changes
    at = pa.array(order)
    rank_a, rank_b = ev.a.judged.gold_rank[order], ev.b.judged.gold_rank[order]
    drops = Drops(
        {
            "query_id": ev.query_ids.take(at),
            "rank_a": pa.array(rank_a, pa.int64()),
            "rank_b": pa.array(rank_b, pa.int64()),
            "drop": pa.array(rank_b - rank_a, pa.int64()),
            "tenant": ev.query_column("tenant", order),
            "text": ev.query_column("text", order),
        }
    )
    return RanksSection(
        n=x.n,
        mrr=_win_tie_loss(x.mrr),
        ndcg=_win_tie_loss(x.ndcg),
        drops=drops,
        histogram=RankHistogram(
            n=c.n,
            changes=dict(zip(c.change.tolist(), c.count.tolist(), strict=True)),
            fell=c.fell,
            same=c.same,
            rose=c.rose,
            only_a=c.only_a,
            only_b=c.only_b,
            neither=c.neither,
        ),
    )


DROP_CAP = 25  # drops listed in text and Markdown (JSON lists all)


HISTOGRAM_SPAN = 61  # a histogram spanning at most this many changes is drawn zero-filled


DROP_HEAD = ["#", "query", "tenant", "gold A → B", "drop"]


WTL_HEAD = ["metric", "B wins", "ties", "B loses"]


def win_tie_loss_rows(x: RanksSection, k: int) -> list[list[str]]:
    """[metric, wins, ties, losses] of B against A, per query, for mrr@k and ndcg@k."""
    return [
        [f"{name}@{k}", str(w.wins), str(w.ties), str(w.losses)]
        for name, w in (("mrr", x.mrr), ("ndcg", x.ndcg))
    ]


def wins_ties_losses(x: RanksSection, k: int) -> str:
    """The overview's line: "per query, B against A: mrr@5 88 wins / 60 ties / 52 losses; …"."""
    parts = [f"{m} {w} wins / {t} ties / {lo} losses" for m, w, t, lo in win_tie_loss_rows(x, k)]
    return f"per query, B against A over {x.n}: " + "; ".join(parts)


def drops_line(x: RanksSection, k: int) -> str:
    """ "46 queries hit in both arms (top 5) with the gold ranked lower in B"."""
    n = len(x.drops)
    return f"{n} queries hit in both arms (top {k}) with the gold ranked lower in B"


def capped_drops(drops: Drops) -> tuple[tuple[DropRow, ...], int]:
    """The first DROP_CAP drops (order kept) and how many were left out."""
    return drops[:DROP_CAP], max(0, len(drops) - DROP_CAP)


def drop_cells(i: int, d: DropRow) -> list[str]:
    """The drop at 1-based position `i`, under DROP_HEAD."""
    return [str(i), d.query_id, text(d.tenant), f"{d.rank_a} → {d.rank_b}", str(d.drop)]


def drop_head(r: RanksSource) -> list[str]:
    """The rank drops' columns, DROP_HEAD and the text: the tenant only when the evaluation has
    tenants, the text only when some query has one (an empty column is not drawn)."""
    shown, _ = capped_drops(r.ranks.drops)
    drop = {"tenant"} if "tenant" not in r.slices else set()
    drop |= {"text"} if not any(d.text for d in shown) else set()
    return [h for h in [*DROP_HEAD, "text"] if h not in drop]


def drop_row(i: int, d: DropRow, head: list[str]) -> list[str]:
    """The drop at 1-based position `i` under `head` (`drop_head`)."""
    every = dict(zip([*DROP_HEAD, "text"], [*drop_cells(i, d), drop_text(d)], strict=True))
    return [every[h] for h in head]


def drop_text(d: DropRow) -> str:
    """The dropped query's text as one line of at most FLIP_TEXT characters."""
    return one_line(text(d.text), FLIP_TEXT)


def change(c: int) -> str:
    """A gold-rank change A − B: "+3" (B ranked it higher), "0", "−2" (lower)."""
    return f"+{c}" if c > 0 else ("0" if c == 0 else f"−{-c}")


def count_bar(n: int, most: int, width: int = BAR) -> str:
    """A count as a bar of `width` cells scaled to `most` (eighths for the last cell); a count
    above zero shows at least an eighth."""
    eighths = round(n / most * width * 8) if most else 0
    eighths = max(eighths, 1 if n else 0)
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def histogram_rows(h: RankHistogram, width: int = BAR) -> list[tuple[int, list[str]]]:
    """(change, [change, queries, bar]) per change ascending: every change from the lowest to the
    highest seen (zero-filled) when they span at most HISTOGRAM_SPAN, else the seen ones only."""
    seen = h.changes
    if not seen:
        return []
    lo, hi = min(seen), max(seen)
    every = range(lo, hi + 1) if hi - lo < HISTOGRAM_SPAN else sorted(seen)
    most = max(seen.values())
    return [(c, [change(c), str(seen.get(c, 0)), count_bar(seen.get(c, 0), most, width)]) for c in every]


def histogram_line(h: RankHistogram) -> str:
    """What the histogram covers and what it leaves out."""
    return (
        f"gold rank A − B over {h.n} scored queries with a gold id in both stored lists: "
        f"{h.fell} lower in B, {h.same} the same, {h.rose} higher; "
        f"gold in A's list only {h.only_a}, in B's only {h.only_b}, in neither {h.neither}"
    )


def rank_blocks(r: RanksSource) -> list[Block]:
    """B's wins, ties and losses per query, then the both-hit queries whose gold fell (capped)."""
    x = r.ranks
    out: list[Block] = [Heading(f"Per query, B against A (n = {x.n})")]
    out.append(Table(WTL_HEAD, win_tie_loss_rows(x, r.k), numeric(WTL_HEAD), every_column(WTL_HEAD)))
    shown, hidden = capped_drops(x.drops)
    out += [
        Heading("Rank drops (both arms hit, the gold lower in B)"),
        Para(f"{drops_line(x, r.k)}:", own=True),
    ]
    head = drop_head(r)
    rows = [drop_row(i, d, head) for i, d in enumerate(shown, 1)]
    out += [Table(head, rows, frozenset({0}))] if rows else []
    if hidden:
        out.append(Para(f"… and {hidden} more (`--format json` lists them all).", own=True))
    return [*out, Para(histogram_line(x.histogram))]
