"""The rubric outputs of issue 28 item 8: counts and flags on complete designs, the fit sentence of the
rater report, --steps-by in the many-facet report, and the rubric's HTML."""

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ratercal_cli.cli import cli

KAPPA = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])


def _score(rng, location):
    cc = np.r_[0, np.cumsum(location - KAPPA)]
    p = np.exp(cc - cc.max())
    return int(rng.choice(6, p=p / p.sum())) + 1


def _rubric(path, n=40, raters=4, per=None, seed=0, extra=()):
    """A wide rubric file on 1-6 (criteria style, org): every rater reads every student (``per`` None) or
    ``per`` raters a student; ``extra``: students read by every rater on top of that."""
    rng = np.random.default_rng(seed)
    sev = np.linspace(-0.5, 0.5, raters)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student", "rater", "style", "org"])
        for p in range(n):
            theta = rng.normal(0, 1.3)
            who = range(raters) if per is None or p in extra else rng.choice(raters, per, replace=False)
            for j in who:
                w.writerow([f"S{p:03d}", f"R{j + 1}", _score(rng, theta - sev[j] + 0.2), _score(rng, theta - sev[j] - 0.2)])
    return path


OPTS = ["--scale", "1-6", "--paper-col", "student", "--score-cols", "style,org"]


def test_a_complete_design_is_not_four_or_more_readings(tmp_path):
    """Every rater read every student: check warned '80 paper(s) have four or more ratings' (students x
    criteria counted as papers) and adjust flagged every line 'many'.  Four readings are the design here;
    on a double-scored file the students read four times are still flagged, counted as students."""
    f = _rubric(tmp_path / "complete.csv")
    res = CliRunner().invoke(cli, ["check", str(f), *OPTS, "--no-rasch", "--json"])
    assert res.exit_code == 0, res.output
    assert not any("four or more" in w for w in json.loads(res.output)["warnings"])
    res = CliRunner().invoke(cli, ["adjust", str(f), *OPTS, "-m", "TLI", "-q", "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 0, res.output
    with open(tmp_path / "o.csv", newline="") as fh:
        flags = [row["flag"] for row in csv.DictReader(fh)]
    assert len(flags) == 160 and set(flags) == {""}   # a line per reading, as the file was (wide stays wide)
    # double scoring with three students read by all four raters
    f = _rubric(tmp_path / "double.csv", n=60, per=2, extra=(3, 10, 20))
    res = CliRunner().invoke(cli, ["adjust", str(f), *OPTS, "-m", "TLI", "-o", str(tmp_path / "d.csv")])
    assert res.exit_code == 0, res.output
    assert "3 paper(s) have four or more ratings (in 6 paper x criterion cells) where most have 2" in res.output
    with open(tmp_path / "d.csv", newline="") as fh:
        flags = [row["flag"] for row in csv.DictReader(fh)]
    assert flags.count("many") == 12   # the three students' four readings


@pytest.mark.parametrize("per, expected", [(2, "0.50"), (21, "0.95")])
def test_rater_report_states_the_mean_square_data_that_fit_give(tmp_path, per, expected):
    """The report said 'with two ratings per paper, data that fit give mean squares near 0.5' whatever the
    design; with 21 ratings a paper data drawn from the model give 0.96.  It now states 1 - papers/ratings,
    and the raters' mean squares on such data are near it."""
    from ratercal_cli.practice.rater_report import rater_report
    from ratercal_cli.ratings import Ratings

    rng = np.random.default_rng(4)
    J = max(per, 10)
    sev = np.linspace(-0.6, 0.6, J)
    P = 1200 if per == 2 else 100
    pp, rr, ss = [], [], []
    for p in range(P):
        th = rng.normal(0, 1.3)
        for j in rng.choice(J, per, replace=False):
            pp.append(p)
            rr.append(j)
            ss.append(_score(rng, th - sev[j]) - 1)
    rep = rater_report(Ratings(paper=np.array(pp), rater=np.array(rr), score=np.array(ss), max_score=5,
                               n_papers=P, n_raters=J))
    text = "\n".join(rep.format_text())
    assert f"data that fit give mean squares near {expected}" in text and "two ratings per paper" not in text
    outfit = np.mean([r["outfit"] for r in rep.raters])
    assert outfit == pytest.approx(float(expected), abs=0.05)


def _per_criterion(path, n=300, seed=2):
    """A rubric on 1-6 whose criteria have their own thresholds (style narrow, org wide), 6 raters, two a
    student, rater R2 1 logit harsher on org."""
    rng = np.random.default_rng(seed)
    sev = np.linspace(-0.5, 0.5, 6)
    kappa = {"style": np.array([-1.2, -0.6, 0.0, 0.6, 1.2]), "org": np.array([-3.0, -1.5, 0.0, 1.5, 3.0])}
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student", "rater", "style", "org"])
        for p in range(n):
            theta = rng.normal(0, 1.5)
            for j in rng.choice(6, 2, replace=False):
                row = [f"S{p:03d}", f"R{j + 1}"]
                for c in ("style", "org"):
                    loc = theta - sev[j] - (1.0 if (j == 1 and c == "org") else 0.0)
                    cc = np.r_[0, np.cumsum(loc - kappa[c])]
                    pr = np.exp(cc - cc.max())
                    row.append(int(rng.choice(6, p=pr / pr.sum())) + 1)
                w.writerow(row)
    return path


@pytest.mark.slow
def test_steps_by_criterion_in_the_report_and_the_bias_table(tmp_path):
    """Under --steps-by criterion the header and the JSON said 'shared thresholds', and the bias table was
    fitted with shared thresholds whatever the main model had.  Both follow --steps-by now: the bias table's
    joint fit has each criterion's thresholds, near the main model's, and finds the planted cell."""
    f = _per_criterion(tmp_path / "r.csv")
    res = CliRunner().invoke(cli, ["check", str(f), *OPTS, "--steps-by", "criterion", "--json", "-q"])
    assert res.exit_code == 0, res.output
    rub = json.loads(res.output)["rubric"][0]
    assert rub["model"] == "MFRM (paper + rater + criterion, thresholds per criterion; marginal ML)"
    assert rub["steps_by"] == "criterion" and np.shape(rub["thresholds"]) == (2, 5)
    from ratercal_cli.practice.ratings_file import read_ratings
    from ratercal_cli.practice.rubric import rubric_check

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = read_ratings(f, scale="1-6", paper_col="student", score_cols="style,org")
    rep = rubric_check(r, steps_by="criterion")
    assert "thresholds per criterion; marginal ML" in rep.format_text().splitlines()[0]
    b = rep.bias["criterion"]
    assert np.shape(b.fit.thresholds) == (2, 5)
    np.testing.assert_allclose(b.fit.thresholds, rep.model.thresholds_, atol=0.2)
    assert [(str(x["rater"]), str(x["level"])) for x in b.significant][:1] == [("R2", "org")]
    shared = rubric_check(r)
    assert "shared thresholds; marginal ML" in shared.format_text().splitlines()[0]


@pytest.mark.slow
def test_rubric_html_has_the_many_facet_tables(tmp_path):
    """The rubric's HTML headed every criterion 'all papers' and had no many-facet table, no bias table and
    no Table 8."""
    f = _per_criterion(tmp_path / "r.csv", n=120)
    res = CliRunner().invoke(cli, ["check", str(f), *OPTS, "-q", "--html", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text()
    assert "<h2 id=\"group-0\">criterion=org</h2>" in page and "<h2 id=\"group-1\">criterion=style</h2>" in page
    assert "all papers</h2>" not in page.split("Many-facet model")[0]
    for piece in ("Many-facet model: all papers", 'class=\'mfrm-raters\'', "Category statistics (Facets Table 8)",
                  "Rater x criterion bias (Facets Table 13)", "Methods: all papers", "Adjustment: all papers"):
        assert piece in page, piece


def test_bootstrap_on_a_rubric_says_it_gives_no_standard_errors(tmp_path):
    """``adjust --bootstrap 20`` on a rubric wrote no X_paper_se and said nothing: the option was dropped
    silently.  Now a warning says so, and the scores are those of the run without it."""
    src = _rubric(tmp_path / "r.csv", per=2, seed=3)
    runner = CliRunner()
    plain = runner.invoke(cli, ["adjust", str(src), *OPTS, "-m", "TLI", "-o", str(tmp_path / "a.csv"), "-q"])
    boot = runner.invoke(cli, ["adjust", str(src), *OPTS, "-m", "TLI", "--bootstrap", "20",
                               "-o", str(tmp_path / "b.csv")])
    assert plain.exit_code == 0 and boot.exit_code == 0, boot.output
    assert (f"warning: {src}: --bootstrap: no paper standard errors on ratings with facets (a rubric) yet; no "
            "X_paper_se or pass-probability columns are written") in boot.output.splitlines()
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    with open(tmp_path / "b.csv", newline="") as fh:
        header = next(csv.reader(fh))
    assert header == ["student", "rater", "style", "style_TLI", "org", "org_TLI", "flag", "TLI_total"]
