"""The report's paired tests per named measure (`compare`, docs/measures.md "Paired tests per measure"): the
figures against scipy on the per-query arrays, pairs by query id whatever the row order, Holm by
hand, the flags / manifest keys / API arguments, what text and Markdown print, `--per-query`, the
app's overview, and scipy left unimported when no test runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

import triage
from triage.cli.main import main
from triage.core.errors import InputError
from triage.core.measures.significance import compare_all
from triage.report import cells, markdown
from triage.report.schema import _Schemas
from triage.report.sections.measures import (
    MeasureComparison,
    Randomization,
    compare_notes,
    compare_overview_head,
)
from triage.report.sections.queries import QueryTable
from triage.ui.screens.help import topic_of

from conftest import write_parquet

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
FIVE = "nDCG@10,AP,R@100,RR,P@5"
NAMES = FIVE.split(",")


def report_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def scored_arrays(ev) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each named measure's per-query values of A and B over the scored queries, from ev.named()."""
    s = ev.scored
    return {name: (ev.named(ev.a)[name][s], ev.named(ev.b)[name][s]) for name in ev.named(ev.a)}


# -- the figures ---------------------------------------------------------------------------------


def test_the_figures_equal_scipys_on_the_per_query_arrays(capsys: pytest.CaptureFixture[str]) -> None:
    doc = report_json(capsys, "--measures", FIVE, "--tests", "t,wilcoxon")
    ev = triage.open(measures=FIVE).ev
    arrays = scored_arrays(ev)
    assert list(doc["compare"]) == NAMES
    for name, (a, b) in arrays.items():
        c, d = doc["compare"][name], b - a
        n = len(d)
        assert c["n"] == n == int(ev.scored.sum())
        assert c["delta"] == pytest.approx(d.mean(), abs=1e-12)
        assert c["p"]["t"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-9)
        assert c["p"]["wilcoxon"] == pytest.approx(stats.wilcoxon(b, a).pvalue, rel=1e-9)
        se = d.std(ddof=1) / np.sqrt(n)
        half = stats.t.ppf(0.975, n - 1) * se
        assert c["ci95"] == pytest.approx([d.mean() - half, d.mean() + half], abs=1e-12)
        assert c["d_z"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-9)
        assert c["mde80"] == pytest.approx((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * se, rel=1e-9)
        assert c["test"] == "t" and c["correction"] == "holm" and c["reason"] is None
        assert c["randomization"] is None and c["p"]["randomization"] is None  # not asked for


def test_holm_over_the_named_measures_equals_a_hand_computation(capsys: pytest.CaptureFixture[str]) -> None:
    compare = report_json(capsys, "--measures", FIVE)["compare"]
    raw = {name: c["p"]["t"] for name, c in compare.items()}
    m = len(raw)
    ranked = sorted(raw, key=raw.__getitem__)
    expected, running = {}, 0.0
    for i, name in enumerate(ranked):  # step-down: (m − i)·p₍ᵢ₎ (i from 0), running maximum, capped
        running = max(running, (m - i) * raw[name])
        expected[name] = min(1.0, running)
    for name in NAMES:
        assert compare[name]["p_holm"] == pytest.approx(expected[name], rel=1e-12)
    bonferroni = report_json(capsys, "--measures", FIVE, "--correction", "bonferroni")["compare"]
    for name in NAMES:
        assert bonferroni[name]["p_holm"] == pytest.approx(min(1.0, m * raw[name]), rel=1e-12)
        assert bonferroni[name]["correction"] == "bonferroni"


def shuffled(folder: Path, seed: int) -> list[str]:
    """The sample's runs and labels with their rows in a random order: RUN_A RUN_B --labels L."""
    rng = np.random.default_rng(seed)
    out = []
    for name in ("runs/plain.parquet", "runs/headers.parquet", "labels.parquet"):
        table = pq.read_table(SAMPLE / name)
        target = folder / Path(name).name
        pq.write_table(table.take(pa.array(rng.permutation(table.num_rows))), target)
        out.append(str(target))
    return [out[0], out[1], "--labels", out[2]]


def test_pairs_are_by_query_id_so_shuffled_rows_give_the_same_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--measures", FIVE, "--tests", "t,wilcoxon,randomization", "--rounds", "2000"]
    given = [str(SAMPLE / "runs/plain.parquet"), str(SAMPLE / "runs/headers.parquet")]
    before = report_json(capsys, *given, "--labels", str(SAMPLE / "labels.parquet"), *args)["compare"]
    after = report_json(capsys, *shuffled(tmp_path, 7), *args)["compare"]
    assert before.keys() == after.keys()
    for name in NAMES:  # the same numbers, to float noise (sums taken in another order)
        x, y = before[name], after[name]
        assert x["n"] == y["n"] and x["randomization"] == y["randomization"] == {"rounds": 2000, "seed": 0}
        for key in ("delta", "d_z", "mde80", "p_holm"):
            assert y[key] == pytest.approx(x[key], rel=1e-9, abs=1e-15), (name, key)
        for test in ("t", "wilcoxon", "randomization"):
            assert y["p"][test] == pytest.approx(x["p"][test], rel=1e-9), (name, test)


def test_the_model_spells_the_comparison_as_significance_does(capsys: pytest.CaptureFixture[str]) -> None:
    report = triage.open(measures="AP,P@1", tests=["randomization"], rounds=300, seed=5).report()
    for name, c in report.compare.items():
        assert isinstance(c, MeasureComparison)
        spelled = report.to_json()["compare"][name]  # type: ignore[index]
        assert list(spelled) == [
            *("n", "delta", "ci95", "d_z", "p", "p_holm", "correction", "test", "randomization"),
            *("mde80", "reason"),
        ]
        assert spelled["test"] == "randomization" and spelled["randomization"] == {"rounds": 300, "seed": 5}
        assert spelled["p"]["t"] is not None  # the t-test always runs
    ev = triage.open(measures="AP,P@1").ev
    arrays = scored_arrays(ev)
    ids = np.asarray(ev.query_ids.to_pylist(), dtype=object)[ev.scored]
    direct = compare_all(
        {k: v[0] for k, v in arrays.items()},
        {k: v[1] for k, v in arrays.items()},
        ["randomization", "t"],
        "holm",
        300,
        5,
        query_ids=ids,
    )
    assert report.to_json()["compare"] == {name: c.json() for name, c in direct.items()}
    binary = report.to_json()["compare"]["P@1"]  # type: ignore[index]
    assert binary["p"]["mcnemar"] is not None  # 0/1 per query: McNemar stays
    assert report.to_json()["compare"]["AP"]["p"]["mcnemar"] is None  # type: ignore[index]


# -- no test -------------------------------------------------------------------------------------


def tiny(folder: Path, same: bool, queries: int = 4) -> Path:
    """`queries` labelled queries; B equals A when `same`, else B finds the gold where A did not."""
    labels = [{"query_id": f"q{i}", "chunk_id": "g", "relevance": 1} for i in range(queries)]
    a = [{"query_id": f"q{i}", "retrieved": ["x", "g"] if i % 2 else ["g"]} for i in range(queries)]
    b = a if same else [{"query_id": f"q{i}", "retrieved": ["g"]} for i in range(queries)]
    write_parquet(folder / "a.parquet", a, {"k": "5"})
    write_parquet(folder / "b.parquet", b, {"k": "5"})
    write_parquet(folder / "labels.parquet", labels)
    lines = ["[labels]", 'path = "labels.parquet"']
    for arm in ("a", "b"):
        lines += [f"[arms.{arm}]", f'path = "{arm}.parquet"']
    (folder / "triage.toml").write_text("\n".join(lines) + "\n", "utf-8")
    return folder / "triage.toml"


def test_equal_arms_and_one_query_say_why_there_is_no_p(tmp_path: Path) -> None:
    report = triage.open(tiny(tmp_path, same=True), measures="AP,RR").report()
    for c in report.compare.values():
        assert c.reason is not None and c.reason.value == "all_differences_zero"
        assert c.p.t is None and c.p_holm is None and c.ci95 is None and c.mde80 is None
        assert c.delta == 0.0
    assert compare_notes(report) == [
        "AP: no test (every difference is 0)",
        "RR: no test (every difference is 0)",
    ]
    one = tmp_path / "one"
    one.mkdir()
    report = triage.open(tiny(one, same=False, queries=1), measures="AP").report()
    assert report.compare["AP"].reason.value == "fewer_than_2_scored_queries"  # type: ignore[union-attr]
    assert report.compare["AP"].p.t is None


# -- flags, manifest keys, arguments -------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--tests", "t,welch", "unknown test 'welch'"),
        ("--tests", "t,t", "names 't' twice"),
        ("--correction", "sidak", "unknown correction 'sidak'"),
        ("--rounds", "0", "--rounds must be a whole number from 1"),
        ("--seed", "-1", "--seed must be a whole number from 0"),
        ("--seed", "x", "--seed must be a whole number"),
    ],
)
def test_a_bad_flag_exits_2_naming_it(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, said: str
) -> None:
    assert main(["report", "--measures", "AP", flag, value]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_the_manifest_keys_are_read_and_checked_as_the_flags(tmp_path: Path) -> None:
    toml = tiny(tmp_path, same=False, queries=6)
    body = toml.read_text("utf-8")
    toml.write_text(
        'tests = ["wilcoxon", "randomization"]\ncorrection = "bh"\nrounds = 99\nseed = 4\n' + body
    )
    c = triage.open(toml, measures="AP").report().compare["AP"]
    assert (c.test.value, c.correction.value, c.randomization) == (
        "wilcoxon",
        "bh",
        Randomization(99, 4),
    )
    assert c.p.t is not None and c.p.wilcoxon is not None
    # the arguments override the manifest
    c = triage.open(toml, measures="AP", correction="none", tests="t").report().compare["AP"]
    assert (c.test.value, c.correction.value, c.p_holm) == ("t", "none", c.p.t)
    toml.write_text('correction = "holms"\n' + body)
    with pytest.raises(InputError, match="unknown correction 'holms'") as e:
        triage.open(toml, measures="AP")
    assert str(toml) in str(e.value)
    toml.write_text("rounds = 1.5\n" + body)
    with pytest.raises(InputError, match="rounds must be a whole number"):
        triage.open(toml)


def test_the_api_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="rounds must be a whole number"):
        triage.open(measures="AP", rounds=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tests must be"):
        triage.open(measures="AP", tests=3)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown test 'z'"):
        triage.open(measures="AP", tests=["t", "z"])


# -- text and Markdown ---------------------------------------------------------------------------


def test_text_and_markdown_print_each_measure_and_what_the_query_set_cannot_see(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = tiny(tmp_path, same=False, queries=6)  # B gains on half the queries: a wide interval
    report = triage.open(toml, measures="AP,P@5", tests="t,wilcoxon").report()
    ap = report.compare["AP"]
    assert ap.mde80 is not None and ap.delta is not None and ap.mde80 > abs(ap.delta)
    line = f"this query set cannot see a change of {ap.mde80:.3f} in AP (MDE at 80% power)"
    md = markdown.render_markdown(report)
    assert line in md
    assert "| measure | Δ B − A | 95% interval | p t | p wilcoxon | p t, holm | MDE |" in md
    assert f"| AP | {ap.delta:+.3f} |" in md
    assert main(["report", str(toml), "--measures", "AP,P@5", "--tests", "t,wilcoxon"]) == 0
    text = capsys.readouterr().out
    assert line in text and "Paired tests per measure over 6 scored queries" in text
    sample = triage.open(measures=FIVE).report()  # every change here is well above its MDE
    assert not any("cannot see" in n for n in compare_notes(sample))
    assert main(["report"]) == 0
    assert "Paired tests per measure" not in capsys.readouterr().out  # none named: no section


# -- --per-query ---------------------------------------------------------------------------------


def test_per_query_writes_the_apis_table_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    doc = report_json(capsys, "--measures", "nDCG@10,AP", "--per-query")
    table = triage.open(measures="nDCG@10,AP").queries()
    assert doc["queries"] == table.to_pylist()
    assert {"nDCG@10_a", "AP_b"} <= doc["queries"][0].keys()
    assert "queries" not in report_json(capsys, "--measures", "AP")
    plain = report_json(capsys, "--per-query")  # without measures: the fixed columns
    assert len(plain["queries"]) == plain["n_queries"] and "compare" not in plain


def test_the_schema_types_the_measure_columns_and_refuses_other_keys() -> None:
    import jsonschema

    row = _Schemas({}).closed(QueryTable.row_type)
    good = triage.open(measures="AP").queries().to_pylist()[0]
    jsonschema.validate(good, row)
    for bad in ({**good, "AP_a": "high"}, {**good, "extra": 1.0}, {**good, "hit_a": 0.5}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, row)


# -- the app, and what is imported ---------------------------------------------------------------


async def test_the_overview_shows_each_measure_under_the_headline_at_80x24() -> None:
    from app_helpers import wait_loaded

    app = triage.open(measures="nDCG@10,AP,P@5").app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        screen = app.screen
        head = screen.query_one("#headline")
        assert head.region.y < 4 and head.region.bottom <= 24  # the headline still on the first screen
        box = screen.query_one("#measures")
        assert box.display and box.region.width <= 80
        assert head.region.bottom <= box.region.y and box.region.bottom <= 23  # under it, above the keys
        shown = "\n".join(
            "".join(seg.text for seg in strip) for strip in box.render_lines(box.region.reset_offset)
        )
        report = triage.open(measures="nDCG@10,AP,P@5").report()
        for name, c in report.compare.items():
            assert name in shown and f"{c.delta:+.3f}" in shown and cells.p_value(c.p_holm) in shown
            assert cells.rate(c.mde80) in shown
        assert "95% interval" in shown and "p corr.: t, holm" in shown
        topic = topic_of(type(screen))
        assert all(topic.covers(term) for term in compare_overview_head() if term not in "AB")
        assert max(len(line.rstrip()) for line in shown.splitlines()) <= 78


async def test_without_measures_the_overview_has_no_measures_box() -> None:
    from app_helpers import wait_loaded

    app = triage.open().app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        assert not app.screen.query_one("#measures").display


SCIPY_CHECK = """
import contextlib, io, sys
from triage.cli.main import main
try:
    main(["--version"])
except SystemExit:
    pass
assert "scipy" not in sys.modules, "--version"
with contextlib.redirect_stdout(io.StringIO()):
    main(["report", "--format", "json"])
    main(["report"])
assert "scipy" not in sys.modules, "report"
with contextlib.redirect_stdout(io.StringIO()):
    main(["report", "--measures", "AP", "--format", "json"])
assert "scipy" in sys.modules, "a test ran without scipy?"
"""


def test_scipy_is_imported_only_when_a_test_is_computed() -> None:
    done = subprocess.run([sys.executable, "-c", SCIPY_CHECK], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("tests", "loaded"), [("t", False), ("t,wilcoxon", True)])
def test_scipy_stats_is_imported_only_for_a_test_that_needs_it(tests: str, loaded: bool) -> None:
    """The t-test reads Student's t from scipy.special; scipy.stats (≈0.7 s CPU to import) only
    for Wilcoxon. Run in a fresh interpreter, which lists what it loaded."""
    code = (
        "import sys, contextlib, io\n"
        "from triage.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['report', '--format', 'json', '--measures', 'AP', '--tests', '{tests}']) == 0\n"
        "print('scipy.special' in sys.modules, 'scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", str(loaded)]
