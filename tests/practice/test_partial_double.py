"""Issue 28, item 1: the usual "double-score a sample for reliability" design -- most papers read
once, 30% read by two raters -- crashed check, adjust --html, compare --html and rc.check with
``min() arg is an empty sequence`` in study_rule (the study has no cell with this design).  Now the
corrected study's advice says which cell it was read as and that it is an extrapolation."""

import re
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

import ratercal_cli as rc
from ratercal_cli.practice.study_rule import design_levels, study_recommendation
from ratercal_cli.ratings import Ratings

from partial_double import partial_double
from support import ROOT, run

ROOT_EXAMPLE = ROOT / "examples" / "ratings.csv"


@pytest.fixture(scope="module")
def pd_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pd") / "pd.csv"
    assert partial_double(path) == 120
    return path


def test_the_study_rule_reads_a_partial_double_scoring_design_as_its_nearest_cell_and_says_so(pd_file):
    r = rc.read_ratings(pd_file, scale="0-5")
    d = design_levels(r)
    assert (d["raters"], d["scope"], d["exact"], d["readings"]) == ("1", "one-rater", False, {1: 280, 2: 120})
    rec = study_recommendation(r, model_fits=True, differ=True)
    # results/corrected/summary.csv, one-rater cells, all levels: TMN 0.938039 +- 0.000839, rank 1
    assert rec["method"] == "TMN"
    assert rec["levels"]["raters"]["method"]["rmse"] == 0.938039
    text = "\n".join(rec["lines"])
    assert "no cell of the study has this design (280 read once, 120 read twice)" in text
    assert "extrapolation" in text and "check --simulate" in text
    assert "supports TMN for the nearest design" in text


def test_a_design_of_the_study_is_not_called_an_extrapolation():
    rng = np.random.default_rng(0)
    paper = np.repeat(np.arange(100), 2)
    rater = np.concatenate([rng.choice(9, 2, replace=False) for _ in range(100)])
    r = Ratings(paper, rater, rng.integers(0, 6, 200), 5, 100, 9)
    rec = study_recommendation(r, model_fits=True, differ=True)
    assert rec["design"]["exact"] and rec["design"]["note"] == ""
    assert rec["lines"][0].startswith("CORRECTED STUDY supports PCM for this design")


def test_check_adjust_compare_and_the_library_go_through_it(pd_file, tmp_path):
    res = run("check", pd_file, "--scale", "0-5")
    assert res.exit_code == 0, res.output
    assert "CORRECTED STUDY: no cell of the study has this design" in res.output
    res = run("adjust", pd_file, "--scale", "0-5", "-m", "recommended,MFRM", "-o", tmp_path / "a.csv",
              "--html", tmp_path / "a.html")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "a.html").stat().st_size > 0 and len((tmp_path / "a.csv").read_text().splitlines()) == 521
    res = run("compare", pd_file, "--scale", "0-5", "--html", tmp_path / "c.html")
    assert res.exit_code == 0, res.output
    checked = rc.check(rc.read_ratings(pd_file, scale="0-5"))
    # the study's one-rater cells have their say in the one recommendation (they were read at the raters
    # level "1", which the table files under "all": the rule's TLI stood, though the study ranks TMN first);
    # most papers read once, the links' say then decides, and where it lets the pick adjust the raters are placed on
    # the papers read twice: TLS, not TMN (tests/practice/test_single_read.py)
    assert checked.recommendation == {None: "TLS"} and checked.reports[0].study["method"] == "TMN"
    assert checked.to_dict()["groups"][0]["sources"]["study"]["method"] == "TMN"
    assert checked.to_dict()["groups"][0]["study"]["design"]["exact"] is False


@pytest.mark.slow
def test_an_essays_style_facets_specification_with_a_session_facet(tmp_path):
    """import-facets of the Facets manual's Essays layout, 400 examinees x 3 essays, two of 12 readers
    each in one of three sessions: within an essay x session cell most examinees are read once, some
    twice.  The check command import-facets prints ended in the same traceback."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_facets_import import ESSAYS

    rng = np.random.default_rng(5)
    sev = np.linspace(-1.5, 1.5, 12)
    lines = []
    for e in range(1, 401):
        q = rng.normal(6, 1.2)
        for essay in (1, 2, 3):
            for reader in rng.choice(12, 2, replace=False):
                s = int(np.clip(np.rint(q - sev[reader] + rng.normal(0, 0.7)), 1, 9))
                lines.append(f"{e},{essay},{reader + 1},{rng.integers(11, 14)},{s}")
    spec = tmp_path / "essays.txt"
    spec.write_text(ESSAYS.split("Labels=")[0] + (
        "Labels=\n1,examinee\n1-400\n*\n2,Essay\n1,A\n2,B\n3,C\n*\n3,Reader\n1-12\n*\n"
        "4,Session,A\n11,day 1 time 1,0\n12,day 1 time 2,0\n13,day 2 time 1,0\n*\n"
        "data =\n" + "\n".join(lines) + "\n"))
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    cmd = shlex.split(re.search(r"ratercal (check .*)", res.output).group(1))
    res = run(*[str(tmp_path / a) if a.endswith(".csv") else a for a in cmd])
    assert res.exit_code == 0, res.output
    assert "no cell of the study has this design" in res.output


def test_the_memo_the_page_and_the_json_say_the_advice_is_an_extrapolation(pd_file, tmp_path):
    """The app's decision page said the study's advice on this design is an extrapolation; the memo and
    the HTML report, what staff file and hand on, did not.  The one recommendation carries it (``caveat``,
    ``recommendation_caveat`` in --json) and every page shows it."""
    res = run("adjust", pd_file, "--scale", "0-5", "-m", "recommended", "-o", tmp_path / "a.csv",
              "--memo", tmp_path / "memo.html", "--html", tmp_path / "page.html", "-q")
    assert res.exit_code == 0, res.output
    said = "no cell of the study has this design (280 read once, 120 read twice)"
    memo, page = (tmp_path / "memo.html").read_text(), (tmp_path / "page.html").read_text()
    assert said in memo and "this advice is an extrapolation from them" in memo
    assert said in page and "this advice is an extrapolation from them" in page
    js = rc.check(rc.read_ratings(pd_file, scale="0-5")).to_dict()["groups"][0]
    assert js["recommendation_source"] == "the links" and js["recommendation_caveat"].startswith(said)
    exact = rc.check(rc.read_ratings(ROOT_EXAMPLE, scale="0-5", group_col="grade")).to_dict()["groups"][0]
    assert exact["recommendation_caveat"] == ""
