"""Issue 28 item 7: on random scores adjust put every paper near the mean (MFRM: all 202 at 3.536,
S.E. 0.0003), failed nearly every passing paper, called none uncertain and said nothing.  adjust now
runs check --simulate's paper-signal test and warns, in its warnings, its JSON and the HTML summary."""

import json

import numpy as np

import ratercal_cli as rc

from partial_double import partial_double
from support import run


def _random_scores(path, n=202, seed=7):
    rng = np.random.default_rng(seed)
    lines = ["paper,rater,score"]
    for p in range(n):
        for j in rng.choice(10, 2, replace=False):
            lines.append(f"P{p + 1},R{j + 1},{rng.integers(0, 6)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_adjust_warns_when_the_papers_do_not_differ(tmp_path):
    f = _random_scores(tmp_path / "random.csv")
    res = rc.adjust(rc.read_ratings(f, scale="0-5"), "MFRM,TLI", cut=3.5)
    w = [x for x in res.warnings if "do not differ detectably" in x]
    assert len(w) == 1 and "p = 0.53" in w[0] and "MFRM put every paper near the mean" in w[0]
    # the MFRM's papers really are all near the mean: the warning is about what the numbers show
    mfrm = np.asarray(res.groups[0].adjusted["MFRM"].paper)
    assert mfrm.std() < 0.1
    out = run("adjust", f, "--scale", "0-5", "-m", "MFRM", "--cut", "3.5", "-o", tmp_path / "o.csv",
              "--html", tmp_path / "r.html", "--json")
    assert out.exit_code == 0, out.output
    assert any("do not differ detectably" in x for x in json.loads(out.stdout)["groups"][0]["warnings"])
    summary = (tmp_path / "r.html").read_text().split('id="summary"')[1].split("</div>")[0]
    assert "do not differ detectably" in summary


def test_no_such_warning_where_the_papers_differ(tmp_path):
    partial_double(tmp_path / "pd.csv", share=1.0)
    res = rc.adjust(rc.read_ratings(tmp_path / "pd.csv", scale="0-5"), "MFRM")
    assert not any("differ detectably" in x for x in res.warnings)
    assert res.groups[0].signal_warning == ""


def _dominant_harsh_rater(path, n=2000, seed=3, quality_sd=0.8):
    """Papers of quality N(4, quality_sd) on 1-6 (quality_sd 0: none differ), two readings each; rater R1,
    1.8 points harsh, reads 95% of them, the others of no severity."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(4.0, quality_sd, n)
    lines = ["paper,rater,score"]
    for p in range(n):
        raters = [0, int(rng.integers(1, 9))] if rng.random() < 0.95 else list(rng.choice(np.arange(1, 9), 2, replace=False))
        for j in raters:
            score = np.clip(np.rint(quality[p] - 1.8 * (j == 0) + rng.normal(0.0, 0.7)), 1, 6)
            lines.append(f"P{p + 1},R{j + 1},{int(score)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_harsh_rater_on_most_papers_is_not_taken_for_papers_that_do_not_differ(tmp_path):
    """The one-way ANOVA counted the harsh rater's gap as disagreement within papers: a new user's 2,000 papers
    (quality SD 0.93, the raw means 0.72 with the truth) were warned of as not differing (F(1999, 2000) = 1.07,
    p = 0.06), beside an adjustment that took the RMSE from 0.996 to 0.617.  The test net of the raters'
    severities finds them differing; where they do not (the same design, quality SD 0), it warns as before."""
    from ratercal_cli.practice.agreement import paper_signal

    f = _dominant_harsh_rater(tmp_path / "dominant.csv")
    signal = paper_signal(rc.read_ratings(f, scale="1-6"))
    assert signal.p_value > 0.05 and signal.net_p < 1e-10 and signal.net_df1 == 1999   # (one-way: none found)
    res = rc.adjust(rc.read_ratings(f, scale="1-6"), "TLI")
    assert not any("differ detectably" in x for x in res.warnings)
    null = _dominant_harsh_rater(tmp_path / "null.csv", quality_sd=0.0)
    res = rc.adjust(rc.read_ratings(null, scale="1-6"), "TLI")
    w = [x for x in res.warnings if "do not differ detectably" in x]
    assert len(w) == 1 and "net of the raters' severities F(1999, " in w[0], res.warnings


def test_random_scores_resolved_are_still_papers_that_do_not_differ(tmp_path):
    """With discrepancies resolved the pairs kept agree by construction (the third reading kept with the nearer
    of the first two): a staff tester's random scores, resolved in the app, passed the paper-signal test (F(299,
    300) = 8.67) and were adjusted without a word.  The test is of the papers' first two readings."""
    from ratercal_cli.practice.agreement import paper_signal

    rng = np.random.default_rng(11)
    lines = ["paper,rater,order,score"]
    for p in range(300):
        raters = rng.choice(10, 3, replace=False)
        scores = rng.integers(1, 7, 3)
        for i in range(3 if abs(int(scores[0]) - int(scores[1])) > 1 else 2):
            lines.append(f"P{p},R{raters[i] + 1},{i + 1},{scores[i]}")
    f = tmp_path / "random_third.csv"
    f.write_text("\n".join(lines) + "\n")
    ratings = rc.read_ratings(f, scale="1-6", resolve_discrepancies=True)
    assert ratings.first_readings is not None
    kept = rc.read_ratings(f, scale="1-6")   # (every reading: the selection's F is the resolved pairs')
    assert paper_signal(ratings).p_value > 0.05 and paper_signal(ratings).df1 == 299
    res = rc.adjust(ratings, "TLI")
    w = [x for x in res.warnings if "do not differ detectably" in x]
    assert len(w) == 1 and "F(299, 300)" in w[0], res.warnings
    assert kept.n_ratings > ratings.n_ratings
