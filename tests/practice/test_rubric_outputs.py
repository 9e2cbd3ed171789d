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
    assert len(flags) == 320 and set(flags) == {""}   # a line per rating (student x rater x criterion)
    # double scoring with three students read by all four raters
    f = _rubric(tmp_path / "double.csv", n=60, per=2, extra=(3, 10, 20))
    res = CliRunner().invoke(cli, ["adjust", str(f), *OPTS, "-m", "TLI", "-o", str(tmp_path / "d.csv")])
    assert res.exit_code == 0, res.output
    assert "3 paper(s) have four or more ratings (in 6 paper x criterion cells) where most have 2" in res.output
    with open(tmp_path / "d.csv", newline="") as fh:
        flags = [row["flag"] for row in csv.DictReader(fh)]
    assert flags.count("many") == 24


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
