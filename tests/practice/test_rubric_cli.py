"""Rubric files on the command line: --facet-col, --score-cols, --rater-cols, --total."""

import csv

import numpy as np
import pytest

from ratercal_cli.generators.rubric import simulate_rubric
from ratercal_cli.practice.ratings_file import read_ratings

from support import run


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    d = tmp_path_factory.mktemp("rub")
    rub = simulate_rubric(seed=2, n_papers=60, n_raters=6, criteria=("style", "org"))
    path = d / "wide.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(rub.header)
        w.writerows(rub.rows)
    long = d / "long.csv"
    with open(long, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["paper", "rater", "criterion", "score"])
        w.writerows([r[0], r[1], c, x] for r in rub.rows for c, x in zip(rub.criteria, r[2:]))
    return path, long, rub


def test_wide_and_long_read_the_same(wide):
    path, long, rub = wide
    a = read_ratings(path, scale="1-6", score_cols="style,org")
    b = read_ratings(long, scale="1-6", facet_cols=["criterion"])
    assert a.n_ratings == b.n_ratings == 240 and a.facets["criterion"][1] == ("org", "style")
    np.testing.assert_array_equal(a.score, b.score)
    np.testing.assert_array_equal(a.facets["criterion"][0], b.facets["criterion"][0])


def test_duplicates_only_within_a_combination(wide, tmp_path):
    _, long, _ = wide
    res = run("check", long, "--scale", "1-6", "--no-rasch")
    assert res.exit_code == 2 and "duplicate rating of paper P01 by rater" in res.output
    lines = long.read_text().splitlines()
    bad = tmp_path / "dup.csv"
    bad.write_text("\n".join(lines + [lines[1]]) + "\n")
    res = run("check", bad, "--scale", "1-6", "--no-rasch", "--facet-col", "criterion")
    assert res.exit_code == 2
    assert f"dup.csv:{len(lines) + 1}: rater: duplicate rating of paper P01 by rater" in res.output
    assert "criterion style" in res.output and "(first at line 2)" in res.output


def test_adjust_writes_cell_scores_and_totals(wide, tmp_path):
    path, _, rub = wide
    out = tmp_path / "adj.csv"
    res = run("adjust", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "-o", out, "--total", "mean",
              "--layout", "long")
    assert res.exit_code == 0, res.output
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["paper", "rater", "criterion", "score", "flag", "MN", "MN_paper", "MN_total"]
    assert len(rows) == 240
    # a paper's total (mean) is the mean of its two criterion scores; each criterion's paper score is the
    # mean of its raters' adjusted scores in that criterion (MN within each criterion)
    p = [r for r in rows if r["paper"] == "P01"]
    by_crit = {c: float(next(r["MN_paper"] for r in p if r["criterion"] == c)) for c in ("style", "org")}
    for c in by_crit:
        assert by_crit[c] == pytest.approx(np.mean([float(r["MN"]) for r in p if r["criterion"] == c]), abs=2e-4)
    assert float(p[0]["MN_total"]) == pytest.approx(np.mean(list(by_crit.values())), abs=2e-4)


def test_shared_raters_on_the_command_line(wide, tmp_path):
    path, _, rub = wide
    out = tmp_path / "shared.csv"
    res = run("adjust", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "-o", out, "--shared-raters",
              "--layout", "long")
    assert res.exit_code == 0, res.output
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    # MN with one shift per rater over both criteria: the rater's mean over all its ratings to the grand mean
    scores = np.array([float(r["score"]) for r in rows])
    for rater in ("R1", "R4"):
        mine = [r for r in rows if r["rater"] == rater]
        shift = {round(float(r["MN"]) - float(r["score"]), 4) for r in mine}
        want = scores.mean() - np.mean([float(r["score"]) for r in mine])
        assert shift == {round(want, 4)}
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN,TLI", "--shared-raters")
    assert res.exit_code == 0, res.output
    res = run("adjust", path, "--scale", "1-6", "-m", "MN", "-o", tmp_path / "x.csv", "--shared-raters",
              "--rater-col", "rater", "--score-col", "style")
    assert res.exit_code == 2 and "--shared-raters" in res.output and "--facet-col or --score-cols" in res.output


def test_rater_columns(tmp_path):
    f = tmp_path / "byrater.csv"
    f.write_text("paper,r1,r2,r3\nA,3,4,\nB,,2,2\nC,5,,4\nD,1,1,\nE,,3,4\nF,2,,3\n")
    res = run("adjust", f, "--scale", "0-5", "--rater-cols", "r*", "-m", "MN", "-o", tmp_path / "o.csv", "-q",
              "--layout", "long")
    assert res.exit_code == 0, res.output
    with open(tmp_path / "o.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["paper"], r["rater"], r["score"]) for r in rows][:3] == [("A", "r1", "3"), ("A", "r2", "4"),
                                                                       ("B", "r2", "2")]


@pytest.mark.slow
def test_check_prints_the_many_facet_report(wide):
    _, long, _ = wide
    res = run("check", long, "--scale", "1-6", "--facet-col", "criterion")
    assert res.exit_code == 0, res.output
    assert "criterion=org" in res.output and "criterion=style" in res.output
    # the SUMMARY names each criterion's line (it said 'all papers' on every one)
    summary = res.output.split("SUMMARY\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split(":", 1)[0].strip() for line in summary] == ["criterion=org", "criterion=style"]
    for part in ("Many-facet Rasch model (MFRM: paper + rater + criterion", "Category statistics (Facets Table 8)",
                 "Rater x criterion bias/interaction", "Rater pairs within each criterion"):
        assert part in res.output
    # the HTML report of a rubric adjusts by the many-facet model (the rule is for one rating a rater)
    html = long.with_name("report.html")
    res = run("check", long, "--scale", "1-6", "--facet-col", "criterion", "--no-rasch", "-q", "--html", html)
    assert res.exit_code == 0, res.output
    assert html.read_text().startswith("<!DOCTYPE html>")


def test_committed_rubric_examples_are_what_make_rubric_makes(tmp_path):
    import runpy
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    runpy.run_path(str(root / "examples" / "make_rubric.py"), run_name="not_main")["main"](tmp_path)
    for name in ("rubric_year1.csv", "rubric_year2.csv"):
        assert (tmp_path / name).read_bytes() == (root / "examples" / name).read_bytes(), name


def test_compare_cuts_the_rubric_total_as_adjust_does(wide, tmp_path):
    path, _, rub = wide
    out = tmp_path / "adj.csv"
    res = run("adjust", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "-o", out, "--layout", "long")
    assert res.exit_code == 0, res.output
    with open(out, newline="") as fh:
        totals = {r["paper"]: float(r["MN_total"]) for r in csv.DictReader(fh)}
    raw = {}   # a paper's raw total: the sum over its criteria of the mean of its given scores
    for row in rub.rows:
        for c, x in zip(rub.criteria, row[2:]):
            raw.setdefault(row[0], {}).setdefault(c, []).append(float(x))
    raw = {p: sum(np.mean(v) for v in by_c.values()) for p, by_c in raw.items()}
    cut = 7.0   # on the total of two criteria of 1-6 (2-12); a cut on the scale alone would pass nearly all
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", cut, "--json")
    assert res.exit_code == 0, res.output
    import json

    rows = {r["method"]: r for r in json.loads(res.output)["groups"][0]["pass_fail"]}
    assert not [t for t in totals.values() if abs(t - cut) < 1e-3]   # (no printed total near the cut: rounding cannot decide)
    assert rows["MN"]["passing"] == sum(t >= cut for t in totals.values())
    assert rows["NO"]["passing"] == sum(t >= cut for t in raw.values())
    assert 0 < rows["NO"]["passing"] < len(raw)
    page = tmp_path / "cmp.html"   # the page too: its adjustment has no cut (a total is no paper score of adjust's)
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", cut, "--html", page)
    assert res.exit_code == 0, res.output
    assert "cut 7 on the rubric total, relative to no adjustment" in page.read_text(encoding="utf-8")
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", 13)
    assert res.exit_code == 2 and "the cut 13 is not a score on the rubric total's range 2-12" in res.output
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", 7, "--total", "mean")
    assert res.exit_code == 2 and "the cut 7 is not a score on the scale 1-6" in res.output


def test_compare_says_what_it_compares_and_cuts_on_a_rubric(wide):
    path, _, rub = wide
    raw = {}   # a paper's raw total: the sum over its criteria of the mean of its given scores
    for row in rub.rows:
        for c, x in zip(rub.criteria, row[2:]):
            raw.setdefault(row[0], {}).setdefault(c, []).append(float(x))
    raw = {p: sum(np.mean(v) for v in by_c.values()) for p, by_c in raw.items()}
    n_pass = sum(t >= 7 for t in raw.values())
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", 7)
    assert res.exit_code == 0, res.output
    assert "Between methods, over 60 papers' adjusted rubric totals (Denny's Table 4)" in res.output
    assert "Pass/fail at cut 7 on the rubric total (score >= cut passes)" in res.output
    assert f"NO {n_pass:>14}{60 - n_pass:>9}" in res.output
    n_pass = sum(t / 2 >= 3.5 for t in raw.values())   # the mean of the two criteria's
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", 3.5,
              "--total", "mean")
    assert res.exit_code == 0, res.output
    assert "Pass/fail at cut 3.5 on the mean criterion score (score >= cut passes)" in res.output
    assert f"NO {n_pass:>14}{60 - n_pass:>9}" in res.output


def test_the_library_s_compare_cuts_the_rubric_total_as_the_command_does(wide):
    """``rc.compare`` on a rubric compares and cuts the papers' rubric totals by default, as ``ratercal
    compare`` (and ``adjust``'s ``X_total``) does: the same pass counts at a cut on the total, the same
    refusal of a cut past the total's range; ``total="mean"`` is the mean criterion score, as ``--total
    mean``.  (Its default was the mean: the same call cut another score than the command line's.)"""
    import json

    import ratercal_cli as rc

    path, _, _ = wide
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", 7, "--json")
    assert res.exit_code == 0, res.output
    cli_rows = {r["method"]: r["passing"] for r in json.loads(res.output)["groups"][0]["pass_fail"]}
    got = rc.compare(path, "MN", cut=7, scale="1-6", score_cols=["style", "org"])
    assert got.total == "sum"
    lib_rows = {r["method"]: r["passing"] for r in got.groups[0].pass_fail}
    assert lib_rows == cli_rows and 0 < cli_rows["NO"] < 120
    with pytest.raises(rc.ArgumentError, match="the cut 13 is not a score on the rubric total's range 2-12"):
        rc.compare(path, "MN", cut=13, scale="1-6", score_cols=["style", "org"])
    res = run("compare", path, "--scale", "1-6", "--score-cols", "style,org", "-m", "MN", "--cut", 3.5, "--json",
              "--total", "mean")
    cli_mean = {r["method"]: r["passing"] for r in json.loads(res.output)["groups"][0]["pass_fail"]}
    mean = rc.compare(path, "MN", cut=3.5, scale="1-6", score_cols=["style", "org"], total="mean")
    assert {r["method"]: r["passing"] for r in mean.groups[0].pass_fail} == cli_mean
