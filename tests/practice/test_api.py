"""The public API (``import ratercal_cli as rc``): reading into Ratings, check/adjust/compare and
their results objects, which must give what the command line prints and label everything."""

from __future__ import annotations

import html
import json
import os
import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import ratercal_cli as rc
from ratercal_cli.commands.practice import check as check_cmd
from ratercal_cli.errors import InputError
from ratercal_cli.methods import make_method
from ratercal_cli.practice.ratings_file import read_ratings_table
from ratercal_cli.ratings import Ratings, natural_key

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ratings.csv"
NATURAL = ["R1", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11"]


@pytest.fixture(scope="module")
def grouped():
    with pytest.warns(UserWarning) as caught:
        r = rc.read_ratings(EXAMPLE, scale="0-5", group_col="grade")
    assert [str(w.message) for w in caught] == list(r.notes) and "third rating" in r.notes[0]
    return r


@pytest.fixture(scope="module")
def grouped_as_cli():
    """The same ratings, their warnings in the command line's words (``--resolve-discrepancies``,
    not ``resolve_discrepancies=True``): what the commands' JSON carries."""
    from ratercal_cli.commands import flag
    from ratercal_cli.errors import naming_flags

    with pytest.warns(UserWarning), naming_flags(flag):
        return rc.read_ratings(EXAMPLE, scale="0-5", group_col="grade")


def test_public_names_resolve():
    for name in rc.__all__:
        assert getattr(rc, name) is not None
    assert rc.read_ratings.__doc__ and "Parameters" in rc.check.__doc__ and "Returns" in rc.adjust.__doc__


def test_from_labels_orders_raters_naturally():
    r = Ratings.from_labels(["a", "a", "b", "b", "c"], ["R10", "R2", "R2", "R1", "R10"], [1, 2, 3, 4, 5], 5)
    assert r.rater_ids == ("R1", "R2", "R10")
    assert r.paper_ids == ("a", "b", "c")
    assert r.rater.tolist() == [2, 1, 1, 0, 2]
    assert sorted(["R10", "R9", "2", "10", "R1"], key=natural_key) == ["2", "10", "R1", "R9", "R10"]


def test_groups_round_trip_to_the_readers_groups():
    """One Ratings of the file's groups splits back into exactly the groups the reader made
    (indices, labels, scores), with third readings resolved."""
    table = read_ratings_table(EXAMPLE, scale="0-5", group_col="grade", resolve_discrepancies=True)
    whole = table.ratings
    assert whole.group_ids == ("5", "8", "11") and whole.group_name == "grade"
    assert whole.n_ratings == sum(g.ratings.n_ratings for g in table.groups) == 774
    assert whole.rater_ids == tuple(NATURAL) and whole.notes == tuple(table.warnings)
    for (name, part), g in zip(whole.by_group(), table.groups):
        assert name == g.name
        for k in ("paper", "rater", "score"):
            assert np.array_equal(getattr(part, k), getattr(g.ratings, k))
        assert part.paper_ids == g.ratings.paper_ids and part.rater_ids == g.ratings.rater_ids
        assert (part.n_papers, part.n_raters, part.scale_low) == (g.ratings.n_papers, g.ratings.n_raters, 0)


def test_from_frame_equals_the_file(grouped):
    df = pd.read_csv(EXAMPLE)
    r = Ratings.from_frame(df.assign(grade=df.grade.astype(str)), scale="0-5", group_col="grade")
    for k in ("paper", "rater", "score", "group"):
        assert np.array_equal(getattr(r, k), getattr(grouped, k))
    assert (r.paper_ids, r.rater_ids, r.group_ids) == (grouped.paper_ids, grouped.rater_ids, grouped.group_ids)


def test_from_frame_scale_facets_and_errors():
    df = pd.DataFrame({"paper": ["p1", "p1", "p2", "p2"], "rater": ["R2", "R10", "R10", "R2"],
                       "score": [2, 6, None, 3], "task": ["t2", "t10", "t2", "t2"]})
    r = Ratings.from_frame(df, scale="1-6", facet_cols=["task"])
    assert r.scale_low == 1 and r.max_score == 5 and r.n_ratings == 3          # the missing score left out
    assert r.score.tolist() == [1, 5, 2] and r.rater_ids == ("R2", "R10")
    levels, labels = r.facets["task"]
    assert labels == ("t2", "t10") and levels.tolist() == [0, 1, 0]
    with pytest.raises(InputError, match=r"score: row 1: 6 is outside the scale 0-5"):
        Ratings.from_frame(df, scale="0-5")
    with pytest.raises(InputError, match=r"rater: row 4: duplicate rating of paper p1 by rater R2 \(first at row 0\)"):
        Ratings.from_frame(pd.concat([df, df.iloc[[0]]], ignore_index=True), scale="1-6")
    # an index that repeats (frames concatenated as they were): the rows by position, their labels beside
    with pytest.raises(InputError, match=r"rater: row 4 by position \(index 0\): duplicate rating of paper p1 by "
                                         r"rater R2 \(first at row 0 by position \(index 0\)\)"):
        Ratings.from_frame(pd.concat([df, df.iloc[[0]]]), scale="1-6")
    with pytest.raises(InputError, match=r"score: row 0: 2.5 is not a whole number"):
        Ratings.from_frame(df.assign(score=[2.5, 3, 3, 3]))
    with pytest.raises(InputError, match="group_col: no column 'grade'"):
        Ratings.from_frame(df, group_col="grade")
    # the former names of the column arguments still work, with a DeprecationWarning
    with pytest.warns(DeprecationWarning, match=r"from_frame\(facets=\) is now facet_cols="):
        assert Ratings.from_frame(df, scale="1-6", facets=["task"]).facets["task"][1] == ("t2", "t10")


def test_from_frame_pandas_missing_values_and_scale_pairs():
    """pandas' nullable columns mark a missing cell with pd.NA, neither None nor NaN: a missing score of an
    ``Int64`` column was "row 3: <NA> is not a number", and a missing rater of a ``string`` column became a
    rater named "<NA>".  A scale given as a pair was not checked: (5, 0) gave "3 is outside the scale 5-0",
    (0, 500) passed the 100-point limit, and a list [0, 5] was refused."""
    df = pd.DataFrame({"paper": ["p1", "p1", "p2", "p2", "p3", "p3"], "rater": ["A", "B", "B", "C", "C", "A"],
                       "score": pd.array([3, 4, 2, None, 5, 4], dtype="Int64")})
    r = Ratings.from_frame(df, scale="0-5")
    assert r.n_ratings == 5 and r.score.tolist() == [3, 4, 2, 5, 4]   # the NA score left out, as NaN is
    blank = df.assign(rater=pd.array(["A", "B", None, "C", "C", "A"], dtype="string"), score=[3, 4, 2, 1, 5, 4])
    with pytest.raises(InputError, match=r"rater: row 2: blank"):
        Ratings.from_frame(blank, scale="0-5")
    with pytest.raises(InputError, match=r"paper: row 1: blank"):
        Ratings.from_frame(blank.assign(rater=list("ABBCCA"), paper=pd.Series(["p1", pd.NA] + ["p2"] * 4,
                                                                             dtype=object)), scale="0-5")
    assert Ratings.from_frame(df, scale=[1, 6]).scale_low == 1
    assert Ratings.from_frame(df, scale=(0.0, 5.0)).max_score == 5
    with pytest.raises(rc.ArgumentError, match=r"scale: the top of the scale must exceed the bottom, not \(5, 0\)"):
        Ratings.from_frame(df, scale=(5, 0))
    with pytest.raises(rc.ArgumentError, match=r"scale: scales of at most 100 points"):
        Ratings.from_frame(df, scale=(0, 500))
    with pytest.raises(rc.ArgumentError, match=r"scale: expected \(LOW, HIGH\), two whole numbers"):
        Ratings.from_frame(df, scale=(0, 5, 9))


def test_adjust_results_are_the_methods_per_group_and_labelled(grouped):
    res = rc.adjust(grouped, "TLI,MN")
    assert res.methods == ["TLI", "MN"] and res.variant == "corrected"
    papers = res.paper_frame()
    assert list(papers.columns) == ["grade", "paper", "ratings", "mean", "TLI", "MN"]
    assert papers.grade.tolist() == sorted(papers.grade.tolist(), key=natural_key)
    for (name, part), in zip(grouped.by_group()):
        direct = make_method("TLI").fit_transform(part)
        mine = papers[papers.grade == name].set_index("paper").loc[list(part.paper_ids), "TLI"]
        np.testing.assert_array_equal(mine.to_numpy(), direct.paper)
        in_group = grouped.group == grouped.group_ids.index(name)
        np.testing.assert_array_equal(res.rating_scores("TLI")[in_group], direct.rating)
    per_rating = res.to_frame()
    assert list(per_rating.columns) == ["grade", "paper", "rater", "score", "TLI", "TLI_paper", "MN", "MN_paper"]
    assert len(per_rating) == grouped.n_ratings
    first = per_rating.iloc[0]
    assert (first.paper, first.rater, first.score) == ("G5-001", "R4", 4)


def _chapter5(grouped):
    """Chapter 5's rule from the fewest papers a rater scored in each grade (the tests find the
    raters differing in every grade): 8-20 -> TMN, more -> TLI."""
    fewest = {name: part.ratings_per_rater().min() for name, part in grouped.by_group()}
    assert fewest == {"5": 20, "8": 22, "11": 20}
    return {name: "TMN" if n <= 20 else "TLI" for name, n in fewest.items()}


def test_adjust_recommended_names_the_method(grouped):
    res = rc.adjust(grouped, "recommended")
    assert res.methods == ["recommended"]
    checked = rc.check(grouped)   # adjust applies check's one recommendation (no --simulate)
    decisions = {name: checked.report(name).decision for name in grouped.group_ids}
    assert res.recommended == {name: d.label for name, d in decisions.items()}
    assert res.recommended["5"] == "TLI (shrunk)" and not any(d.multigroup for d in decisions.values())   # 2+: TLI
    assert res.warnings[0].split(": ", 1)[1].startswith("grade=5: recommended TLI (shrunk) (decided by the study")
    papers_group = np.zeros(grouped.n_papers, dtype=int)
    papers_group[grouped.paper] = grouped.group
    for g, name in enumerate(grouped.group_ids):
        d = decisions[name]
        each = rc.adjust(grouped, d.method, shrinkage=d.shrinkage).paper_scores(d.method)
        mine = papers_group == g
        np.testing.assert_array_equal(res.paper_scores("recommended")[mine], each[mine])


def test_check_to_dict_is_the_cli_json(grouped, grouped_as_cli):
    assert "give resolve_discrepancies=True" in grouped.notes[0]
    assert "give --resolve-discrepancies" in grouped_as_cli.notes[0]
    mine = rc.check(grouped_as_cli, rasch=False)
    out = CliRunner().invoke(check_cmd, [str(EXAMPLE), "--scale", "0-5", "--group-col", "grade", "--no-rasch",
                                         "--json"])
    assert out.exit_code == 0, out.output
    cli = json.loads(out.output)
    assert cli.pop("png") == []
    assert json.loads(json.dumps(mine.to_dict())) == {**cli, "file": str(EXAMPLE)}
    raters = mine.to_frame("raters")
    assert raters[raters.grade == "11"].rater.tolist() == NATURAL
    r11 = raters[(raters.grade == "11") & (raters.rater == "R11")].iloc[0]
    part = dict(grouped.by_group())["11"]
    scores = part.score[part.rater == part.rater_ids.index("R11")]
    assert r11.papers == scores.size and r11["mean"] == pytest.approx(scores.mean())
    assert r11.sd == pytest.approx(scores.std(ddof=1))
    assert mine.rule == _chapter5(grouped)
    assert mine.recommendation == mine.rule   # without the Rasch fits the rule alone has a say


def test_compare_frames_hold_table_4(grouped):
    res = rc.compare(grouped, "TLI", cut=3.25)
    t4 = res.to_frame()
    scores = res.scores_frame()
    five = scores[scores.grade == "5"]
    diff = five.TLI.to_numpy() - five.NO.to_numpy()
    row = t4[(t4.grade == "5") & (t4.method == "NO") & (t4.other == "TLI")].iloc[0]
    assert row.rmsd == pytest.approx(np.sqrt(np.mean(diff ** 2)), rel=1e-12)
    assert row.maxdiff == pytest.approx(np.abs(diff).max(), rel=1e-12)
    pf = res.pass_fail_frame()
    assert pf[(pf.grade == "5") & (pf.method == "NO")].passing.item() == int((five.NO >= 3.25).sum())
    assert five.paper.tolist() == sorted(five.paper.tolist(), key=natural_key)


def test_estimators_label_their_parameters(grouped):
    part = dict(grouped.by_group())["11"]
    est = make_method("TLI").fit(part)
    frame = est.rater_frame()
    assert frame.index.tolist() == NATURAL
    j = part.rater_ids.index("R10")
    assert frame.loc["R10", "slope"] == est.slope_[j] and frame.loc["R10", "intercept"] == est.intercept_[j]
    assert make_method("TLI").fit(part).paper_frame().shape == (part.n_papers, 0)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_the_api_example_runs_and_labels_in_natural_order(capsys):
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        env = runpy.run_path(str(ROOT / "examples" / "api.py"), run_name="__main__")
    finally:
        os.chdir(cwd)
    raters, papers = env["raters"], env["papers"]
    for grade in ("5", "8", "11"):
        assert raters[raters.grade == grade].rater.tolist() == NATURAL
    assert papers.grade.unique().tolist() == ["5", "8", "11"]
    assert papers.paper.tolist() == sorted(papers.paper.tolist(), key=lambda p: natural_key(p))
    assert env["mfrm"].rater_frame().index.tolist() == NATURAL
    assert "recommended:" in capsys.readouterr().out


def test_compare_to_dict_and_summary_are_the_cli_output(grouped_as_cli):
    from ratercal_cli.commands.practice import compare as compare_cmd

    mine = rc.compare(grouped_as_cli, "TLI,MN", cut=3.25)
    args = [str(EXAMPLE), "--scale", "0-5", "--group-col", "grade", "-m", "TLI,MN", "--cut", "3.25"]
    out = CliRunner().invoke(compare_cmd, args + ["--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(json.dumps(mine.to_dict())) == {**json.loads(out.output), "file": str(EXAMPLE)}
    text = CliRunner().invoke(compare_cmd, args + ["--quiet"])
    assert text.output == mine.summary() + "\n"


def test_severities_are_laid_out_as_statsmodels_does(grouped):
    from scipy import stats

    part = dict(grouped.by_group())["8"]
    est = make_method("MFRM").fit(part)
    table = est.severity_frame(alpha=0.10)
    assert table.index.tolist() == NATURAL and list(table.columns) == ["severity", "se", "z", "p", "0.05", "0.95"]
    j = part.rater_ids.index("R10")
    row = table.loc["R10"]
    assert (row.severity, row.se) == (est.severity_[j], est.severity_se_[j])
    assert row["0.05"] == pytest.approx(est.severity_[j] - 1.6448536269514722 * est.severity_se_[j], rel=1e-12)
    assert row.p == pytest.approx(2 * stats.norm.sf(abs(est.severity_[j] / est.severity_se_[j])), rel=1e-12)
    with pytest.raises(AttributeError, match="no rater severities"):
        make_method("TLI").fit(part).severity_frame()


@pytest.mark.slow  # over 0.6 s (an HTML report and a map): `make test-slow` (CI) runs it
def test_compare_json_names_group_maps_not_the_html_report(tmp_path):
    """``--json`` gives each group the path of its own map under ``png``; the HTML report is no
    group's map (it was put under the first group's ``png`` when no --png was given)."""
    from ratercal_cli.commands.practice import compare as compare_cmd

    args = [str(EXAMPLE), "--scale", "0-5", "-m", "TLI", "--json", "--quiet", "--html", str(tmp_path / "r.html")]
    out = CliRunner().invoke(compare_cmd, args)
    assert out.exit_code == 0, out.output
    assert "png" not in json.loads(out.output)["groups"][0] and (tmp_path / "r.html").is_file()
    out = CliRunner().invoke(compare_cmd, args + ["--png", str(tmp_path / "m.png")])
    assert json.loads(out.output)["groups"][0]["png"] == str(tmp_path / "m.png")


@pytest.mark.slow  # over 0.6 s (check with its Rasch fits, MFRM): `make test-slow` (CI) runs it
def test_the_readmes_python_runs_and_says_what_it_gives():
    import re

    section = (ROOT / "README.md").read_text().split("## In Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    env = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with pytest.warns(UserWarning):
            for block in blocks:
                exec(compile(block.replace("print(", "str("), "README.md", "exec"), env)
    finally:
        os.chdir(cwd)
    claimed = re.search(r"checked\.recommendation\s+# (\{.*?\})", blocks[0]).group(1)
    assert str(env["checked"].recommendation) == claimed
    assert str(env["r"].rater_ids) == re.search(r"r\.rater_ids\s+# (\(.*?\))", blocks[1]).group(1)
    assert env["mfrm"].severity_frame().index.tolist() == NATURAL


def test_read_ratings_takes_every_file_option_of_the_commands():
    """``read_ratings`` is the commands' reader with their file options (``_file_options``) as
    keywords: an option added to the command line and not to the library fails here."""
    import inspect

    import click

    from ratercal_cli.commands.practice import _file_options

    command = click.command()(_file_options(lambda **kw: None))
    file_options = {p.name for p in command.params} - {"quiet"}
    assert {"scale", "group_col", "sep", "resolve", "discrepancy", "order_col"} <= file_options
    keywords = set(inspect.signature(rc.read_ratings).parameters) - {"path"}
    assert keywords == (file_options - {"resolve"}) | {"resolve_discrepancies"}


def test_transform_new_papers_read_by_some_of_the_fitted_raters():
    """Scoring new papers with a fitted estimator: a frame of the new papers has only the raters who read
    them, and transform refused it ("fitted on raters R1, R2; these ratings have raters R2") unless the
    user rebuilt it with the fit's rater_ids.  The raters are now matched by label."""
    fit_on = pd.DataFrame({"paper": ["p1", "p1", "p2", "p2", "p3", "p3"], "rater": ["R1", "R2"] * 3,
                           "score": [1, 3, 2, 4, 3, 5]})
    new = pd.DataFrame({"paper": ["q1", "q2"], "rater": ["R2", "R2"], "score": [4, 5]})
    mn = make_method("MN").fit(Ratings.from_frame(fit_on, scale="0-5"))
    # R1's mean 2, R2's 4, all 3: MN moves R2's scores down by 1
    got = mn.transform(Ratings.from_frame(new, scale="0-5"))
    assert got.rating.tolist() == [3.0, 4.0] and got.paper.tolist() == [3.0, 4.0]
    with pytest.raises(rc.MethodError, match=r"these ratings have raters R2, R9 \(R9 not among them: no parameters\)"):
        mn.transform(Ratings.from_frame(new.assign(rater=["R2", "R9"]), scale="0-5"))
    # the same as the new papers built on the fit's raters, for a Rasch fit too
    r = rc.read_ratings(EXAMPLE, scale="0-5", group_col="grade")
    g11 = dict(r.by_group())["11"]
    first = np.isin(g11.paper, np.arange(g11.n_papers // 2))
    mml = make_method("MML").fit(g11.subset(first))
    rest = g11.subset(~first & np.isin(g11.rater, [0, 2, 5]))   # new papers' ratings by three raters
    rebuilt = Ratings.from_labels([rest.paper_ids[p] for p in rest.paper], [rest.rater_ids[j] for j in rest.rater],
                                  rest.score, max_score=5)   # as a frame of them reads: those three raters
    assert rebuilt.n_raters == 3 < rest.n_raters
    a, b = mml.transform(rebuilt), mml.transform(rest)
    np.testing.assert_array_equal(a.rating, b.rating)
    assert np.isfinite(a.rating).all()


def test_transform_matches_a_frames_number_raters_to_a_files_text_ones(tmp_path):
    """A fit on a data frame whose raters are whole numbers (7, 12) scores new papers read from a file, where
    the same raters are the text ``7`` and ``12``: it refused them ("fitted on raters 7, 12; these ratings
    have raters 7"), as if they were other raters.  Labels match as text."""
    fit_on = pd.DataFrame({"paper": ["p1", "p1", "p2", "p2", "p3", "p3"], "rater": [7, 12] * 3,
                           "score": [1, 3, 2, 4, 3, 5]})
    mn = make_method("MN").fit(Ratings.from_frame(fit_on, scale="0-5"))
    (tmp_path / "new.csv").write_text("paper,rater,score\nq1,12,4\nq2,12,5\n")
    got = mn.transform(rc.read_ratings(tmp_path / "new.csv", scale="0-5"))
    assert got.rating.tolist() == [3.0, 4.0] and got.paper.tolist() == [3.0, 4.0]   # rater 12's mean 4, all 3
    (tmp_path / "other.csv").write_text("paper,rater,score\nq1,12,4\nq2,99,5\n")   # only 99 is new
    with pytest.raises(rc.MethodError, match=r"these ratings have raters 12, 99 \(99 not among them"):
        mn.transform(rc.read_ratings(tmp_path / "other.csv", scale="0-5"))


def test_a_frames_column_of_numbers_and_text_reads_as_a_file_does():
    """pandas' read_excel gives a column of number and text cells as ints beside strings: rater 4 and "4"
    were two raters (the command line, reading the workbook as text, one).  A mixed column is read as text."""
    df = pd.DataFrame({"paper": ["p1", "p1", "p2", "p2", "p3", "p3"], "rater": [4, "R9", "4", "R9", 4, "R9"],
                       "score": [1, 3, 2, 4, 3, 5]})
    r = Ratings.from_frame(df, scale="0-5")
    assert r.rater_ids == ("4", "R9") and r.ratings_per_rater().tolist() == [3, 3]
    same = Ratings.from_frame(df.assign(rater=["4", "R9"] * 3), scale="0-5")
    np.testing.assert_array_equal(r.rater, same.rater)
    assert Ratings.from_frame(df.assign(rater=[4, 9] * 3), scale="0-5").rater_ids == (4, 9)   # (all numbers: kept)


def test_an_estimators_bad_parameter_is_an_error_naming_it_not_a_failed_fit():
    """MML's step_sd=0 raised ZeroDivisionError, an ArithmeticError, which apply and the study take for a
    fit failing on its data (the method "skipped" with "float division by zero"); step_sd=-1 fitted as if 1;
    EQP's presmoothing="zzz" said "invalid literal for int() with base 10"."""
    r = Ratings.from_labels(["p1", "p1", "p2", "p2", "p3", "p3", "p4", "p4"], ["A", "B", "B", "C", "C", "A", "A", "C"],
                            [2, 3, 4, 4, 3, 1, 5, 4], max_score=5)
    for sd in (0, -1, float("nan"), "wide"):
        with pytest.raises(rc.ArgumentError, match=r"step_sd: expected a number above 0"):
            make_method("MML", step_sd=sd).fit(r)
    with pytest.raises(rc.ArgumentError, match=r"location_sd: expected a number above 0"):
        rc.fit(r, model="MFRM", location_sd=0)
    with pytest.raises(rc.ArgumentError, match=r"presmoothing: expected a whole number of at least 1, not 'zzz'"):
        make_method("EQP", presmoothing="zzz").fit(r)
    assert np.isfinite(make_method("MML", step_sd=1e6).fit_transform(r).paper).all()   # "1e6 turns them off"


def test_methods_that_are_not_codes_are_an_error_naming_the_argument():
    """adjust(r, ["TLI", 5]) raised AttributeError ("'int' object has no attribute 'split'") and
    adjust(r, 5) TypeError ("'int' object is not iterable"), where a bad argument is an ArgumentError
    naming it."""
    r = Ratings.from_labels(["p1", "p1", "p2", "p2", "p3", "p3"], ["A", "B", "B", "C", "C", "A"], [2, 3, 4, 4, 3, 1],
                            max_score=5)
    for bad in (["TLI", 5], 5, [make_method("TLI")]):
        for call in (rc.adjust, rc.compare):
            with pytest.raises(rc.ArgumentError, match=r"methods: expected method codes such as 'TLI'"):
                call(r, bad)
    assert rc.adjust(r, ("TLI", "mn")).methods == ["TLI", "MN"]


def test_check_steps_by_names_a_facet():
    """check(r, steps_by="criterion") on ratings without that facet was silently a check without thresholds
    per criterion; adjust(-m MFRM) and fit refuse it."""
    r = Ratings.from_labels(["p1", "p1", "p2", "p2", "p3", "p3"], ["A", "B", "B", "C", "C", "A"], [2, 3, 4, 4, 3, 1],
                            max_score=5)
    with pytest.raises(rc.ArgumentError, match=r"steps_by: 'criterion' is not a facet of this analysis \(give it with "
                                               r"facet_cols; facets: none\)"):
        rc.check(r, steps_by="criterion")


def test_ratings_refuse_scores_that_are_not_whole_and_raters_not_in_rater_ids():
    """Ratings.from_labels([...], [...], [1.5, 2], 5) held the score 1.5 as 1 (cast to int without a word),
    where from_frame says "not a whole number"; a rater missing from rater_ids was a bare KeyError."""
    with pytest.raises(ValueError, match=r"scores: expected whole numbers, not 1\.5 \(at 0\)"):
        Ratings.from_labels(["a", "b"], ["R1", "R2"], [1.5, 2], max_score=5)
    with pytest.raises(ValueError, match=r"scores: expected whole numbers, not nan \(at 1\)"):
        Ratings.from_labels(["a", "b"], ["R1", "R2"], np.array([1, np.nan]), max_score=5)
    with pytest.raises(rc.ArgumentError, match=r"scores: expected whole numbers, not 'x' \(at 1\)"):   # (not '3')
        Ratings.from_labels(["a", "b"], ["R1", "R2"], [3, "x"], max_score=5)
    with pytest.raises(rc.ArgumentError, match=r"max_score: expected a whole number of at least 1, not 2\.5"):
        Ratings.from_labels(["a"], ["R1"], [1], max_score=2.5)   # (taken as 2)
    with pytest.raises(ValueError, match=r"rater: expected whole numbers, not 0\.5"):
        Ratings(np.array([0, 1]), np.array([0.5, 1.0]), np.array([1, 2]), 5, 2, 2)
    with pytest.raises(rc.ArgumentError, match=r"rater_ids: rater 'R9' rated but is not among rater_ids \(R1, R2\)"):
        Ratings.from_labels(["a", "b"], ["R1", "R9"], [1, 2], max_score=5, rater_ids=["R1", "R2"])
    assert Ratings.from_labels(["a", "b"], ["R1", "R2"], [1.0, 2.0], max_score=5).score.tolist() == [1, 2]


def test_from_frame_labels_of_a_float_column_are_the_whole_numbers_they_are():
    """A column of ids that pandas holds as floats (read_excel, or a column that once had a blank) labelled
    papers 7.0 and raters 2.0 in every table, where the file and an int column give 7 and 2."""
    df = pd.DataFrame({"paper": [7.0, 7.0, 8.0, 8.0], "rater": [1.0, 2.0, 2.0, 1.0], "score": [3, 4, 2, 2],
                       "grade": [5.0, 5.0, 5.0, 5.0]})
    r = Ratings.from_frame(df, scale="0-5", group_col="grade")
    assert r.paper_ids == (7, 8) and r.rater_ids == (1, 2) and r.group_ids == (5,)
    assert rc.adjust(r, "NO").paper_frame().paper.tolist() == [7, 8]
    assert Ratings.from_frame(df.assign(paper=[7.5, 7.5, 8.0, 8.0]), scale="0-5").paper_ids == (7.5, 8)


def test_check_and_adjust_read_a_file_at_the_discrepancy_they_are_given(tmp_path):
    """check and adjust take discrepancy (the file's third-reading threshold, which the simulation draws)
    as an argument of their own, so check(path, resolve_discrepancies=True, discrepancy=2) read the file at
    the default threshold 1: papers p1 (1 and 3) and p6 (0 and 2) lost a reading the rule keeps (12
    ratings, not 14)."""
    f = tmp_path / "third.csv"
    f.write_text("paper,rater,score,order\np1,A,1,1\np1,B,3,2\np1,C,3,3\np2,A,2,1\np2,B,2,2\np3,B,4,1\np3,C,4,2\n"
                 "p4,C,1,1\np4,A,2,2\np5,A,3,1\np5,C,3,2\np6,B,0,1\np6,A,2,2\np6,C,1,3\n")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert rc.read_ratings(f, scale="0-5", resolve_discrepancies=True, discrepancy=2).n_ratings == 14
        for call in (rc.check, rc.adjust):
            assert call(f, scale="0-5", resolve_discrepancies=True, discrepancy=2).ratings.n_ratings == 14
            assert call(f, scale="0-5", resolve_discrepancies=True).ratings.n_ratings == 12
    with pytest.raises(rc.ArgumentError, match="discrepancy: expected a whole number of at least 0, not -1"):
        rc.check(rc.read_ratings(f, scale="0-5"), discrepancy=-1)


def test_transform_refuses_ratings_on_another_scale_of_the_same_width():
    """A fit on 1-6 and new papers read on 0-5 are both held as 0..5: transform took a 0-5 file's 3 for the
    fit's category 3 (a 4 on 1-6) without a word, since only the top of the held scale was compared."""
    fit_on = pd.DataFrame({"paper": ["p1", "p1", "p2", "p2", "p3", "p3"], "rater": ["R1", "R2"] * 3,
                           "score": [1, 3, 2, 4, 3, 6]})
    new = pd.DataFrame({"paper": ["q1", "q1"], "rater": ["R1", "R2"], "score": [3, 3]})
    mn = make_method("MN").fit(Ratings.from_frame(fit_on, scale="1-6"))
    assert mn.transform(Ratings.from_frame(new, scale="1-6")).paper == pytest.approx([2.0])   # (2 - 1 + 13/6 + 2 - 10/3 + 13/6) / 2
    with pytest.raises(rc.MethodError, match=r"MN: fitted on the scale 1-6, these ratings are on 0-5"):
        mn.transform(Ratings.from_frame(new, scale="0-5"))
    # the bootstrap's draws keep the scale: SEs on a 1-6 file
    res = rc.adjust(Ratings.from_frame(fit_on, scale="1-6"), "MN", bootstrap=20, seed=1)
    assert np.isfinite(res.to_frame()["MN_paper_se"]).all()


def test_check_reprs_say_the_one_recommendation(grouped):
    """The library's reprs said Chapter 5's rule where the command line says the one recommendation (a
    tester's remark: ``<CheckReport '5': ... recommended TMN>`` beside ``recommended TLI (shrunk)``): each
    group's decision label, the rule beside it where it differs."""
    checked = rc.check(grouped)
    labels = {name: checked.report(name).decision.label for name in grouped.group_ids}
    assert labels["5"] == "TLI (shrunk)"   # the study's pick (test_adjust_recommended_names_the_method)
    assert f"recommended {labels}" in repr(checked)
    assert html.escape(f"recommended {labels}") in checked._repr_html_()
    for name in grouped.group_ids:
        rep = checked.report(name)
        assert rep.recommendation in ("TMN", "TLI") and rep.recommendation != labels[name]   # the rule's pick
        assert f"recommended {labels[name]} (Chapter 5's rule: {rep.recommendation});" in repr(rep)


def test_to_frame_of_the_recommendation_has_the_files_recommended_method_column(tmp_path):
    """The README says to_frame() gives the columns adjust writes; a researcher found no ``recommended_method``
    in it.  Each line's method as the command line's file has it, group by group."""
    import csv

    from support import run

    res = rc.adjust(rc.read_ratings(EXAMPLE, scale="0-5", group_col="grade"), "recommended")
    out = tmp_path / "o.csv"
    cli = run("adjust", EXAMPLE, "--scale", "0-5", "--group-col", "grade", "-m", "recommended", "-o", out, "-q")
    assert cli.exit_code == 0, cli.output
    lines = [r["recommended_method"] for r in csv.DictReader(out.open(encoding="utf-8-sig"))]
    frame = res.to_frame()
    assert frame["recommended_method"].tolist() == lines and all(lines)
    assert frame.columns[-1] == "recommended_method"
    assert "recommended_method" not in rc.adjust(rc.read_ratings(EXAMPLE, scale="0-5", group_col="grade"),
                                                 "TLI").to_frame().columns


def test_paper_frame_has_the_standard_errors_and_no_mean_for_a_paper_without_ratings():
    """A researcher's finds: paper_frame() left out the standard errors to_frame() has, and gave a paper with no
    ratings a mean of 0.0."""
    paper = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    rater = np.array([0, 1, 1, 2, 2, 0, 0, 1])
    score = np.array([3, 4, 2, 2, 5, 4, 1, 2])
    r = rc.Ratings(paper, rater, score, max_score=5, n_papers=5, n_raters=3)   # (paper 4: no ratings)
    res = rc.adjust(r, "MML")
    frame = res.paper_frame()
    assert "MML_se" in frame.columns
    np.testing.assert_array_equal(frame["MML_se"].to_numpy()[:4], res.groups[0].uncertainty["MML"].se[:4])
    assert np.isnan(frame["mean"].to_numpy()[4]) and frame["mean"].to_numpy()[0] == 3.5
