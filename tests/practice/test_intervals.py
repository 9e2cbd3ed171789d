"""The change list's interval, its ``uncertain`` flag and its level probability are one rule: a student is
uncertain exactly where the printed interval at the stated confidence holds a cut, and a student whose
interval lies inside a level is in it with at least that confidence.  For MML the interval is the fair
scores of the quality's interval (as the pass probability is the quality's normal beyond the cut): the
fair score's own SE +- 1.645 printed 3.019-3.702 at cut 3 beside a pass probability of 0.74, so the flag
said "uncertain" of a student whose printed interval was all above the cut."""

import numpy as np
import pytest

import ratercal_cli as rc
from ratercal_cli.practice.levels import changes, parse_levels

from support import ROOT


def _ratings(seed=7, papers=120, raters=8, top=5):
    """A PCM-like file: 2 raters a paper, severities spread, qualities wide enough that many papers sit
    near the top of the scale (where the fair-score curve flattens)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(1.0, 1.6, papers)
    sev = np.linspace(-1.0, 1.0, raters)
    steps = np.linspace(-2.0, 2.0, top)
    rows = []
    for p in range(papers):
        for j in rng.choice(raters, 2, replace=False):
            k = np.arange(top + 1)
            logit = np.r_[0.0, np.cumsum(theta[p] - sev[j] - steps)]
            prob = np.exp(logit - logit.max())
            rows.append((f"P{p:03d}", f"R{j}", int(rng.choice(k, p=prob / prob.sum()))))
    import pandas as pd

    return rc.Ratings.from_frame(pd.DataFrame(rows, columns=["paper", "rater", "score"]), scale=f"0-{top}")


@pytest.mark.parametrize("method", ["MML", "TLI"])
def test_uncertain_is_the_printed_interval_holding_the_cut(method):
    r = _ratings()
    cut = 4.0
    res = rc.adjust(r, method, cut=cut, bootstrap=40 if method == "TLI" else 0)
    ch = changes(res, levels=parse_levels(str(cut)))
    rows = [row for row in ch.rows if np.isfinite(row["se"])]
    assert len(rows) > 100
    for row in rows:
        inside = row["low90"] < cut <= row["high90"]
        assert (row["uncertain"] == "yes") == inside, row
        if row["uncertain"] != "yes":
            assert row["p_level"] >= 0.95 - 1e-9, row   # (two-sided 90%: 5% a side)
    if method == "MML":   # the interval follows the fair-score curve: uneven about the score near the top
        skew = [(row["high90"] - row["adjusted"]) - (row["adjusted"] - row["low90"]) for row in rows
                if row["adjusted"] > 4.0]
        assert skew and min(skew) < -0.05
        # and the fair score's SE +- z, as printed before, disagreed with the flag for some student
        old = [row for row in rows if (row["uncertain"] == "yes") !=
               (row["adjusted"] - 1.6448536 * row["se"] < cut <= row["adjusted"] + 1.6448536 * row["se"])]
        assert old, "no student on whom the old interval and the flag disagreed: the test shows nothing"


@pytest.mark.parametrize("method", ["MML", "TLI"])
def test_several_cuts_an_interval_inside_its_level_has_at_least_the_confidence(method):
    r = _ratings(seed=11)
    res = rc.adjust(r, method, bootstrap=40 if method == "TLI" else 0, cut=2.5)
    levels = parse_levels("1.5,3,4.5")
    ch = changes(res, levels=levels, confidence=0.8)
    rows = [row for row in ch.rows if np.isfinite(row["se"])]
    names = list(levels.names)
    for row in rows:
        lo_level, hi_level = levels.level([row["low80"], row["high80"]]).tolist()
        assert (row["uncertain"] == "yes") == (lo_level != hi_level)
        assert row["adjusted_level"] == names[levels.level([row["adjusted"]])[0]]
        if row["uncertain"] != "yes":
            assert row["p_level"] >= 0.8 - 1e-9, row
        assert row["low80"] <= row["adjusted"] + 1e-9 and row["adjusted"] <= row["high80"] + 1e-9
    assert sum(row["uncertain"] == "yes" for row in rows) > 5
    lc = ch.changes[0]
    assert lc.at_cut == [sum(row["low80"] < c <= row["high80"] for row in rows) for c in levels.cuts]


def test_mml_interval_is_the_fair_scores_of_the_quality_interval():
    """Recomputed from the fitted model: the quality's EAP -+ 1.645 posterior SDs through its fair-score curve,
    and the pass probability the normal tail of the quality beyond the quality whose fair score is the cut."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    r = _ratings(seed=3)
    res = rc.adjust(r, "MML", cut=4.0)
    est = res.groups[0].estimators["MML"]
    ch = changes(res, levels=parse_levels("4"))
    mu, sd = np.asarray(est.quality_eap_), np.asarray(est.quality_eap_se_)
    t_cut = brentq(lambda t: float(est.fair_scores(np.array([t]))[0]) - 4.0, -30, 30, xtol=1e-12)
    by_paper = {row["paper"]: row for row in ch.rows}
    for p, label in enumerate(r.paper_ids):
        row = by_paper[label]
        lo, hi = (float(est.fair_scores(np.array([mu[p] + s * 1.6448536269514722 * sd[p]]))[0]) for s in (-1, 1))
        assert row["low90"] == pytest.approx(lo, abs=1e-9) and row["high90"] == pytest.approx(hi, abs=1e-9)
        p_pass = norm.sf((t_cut - mu[p]) / sd[p])
        assert row["p_level"] == pytest.approx(p_pass if row["adjusted_level"] == "pass" else 1 - p_pass, abs=1e-9)


def test_a_group_without_standard_errors_is_not_counted_as_sure():
    """-m recommended gave one school MML (with SEs) and two NO (none): the memo and --json said "0 of 40
    students are uncertain" of those two, where three of them sat exactly on the cut."""
    import json

    r = rc.read_ratings(ROOT / "examples" / "ratings.csv", scale="0-5", group_col="grade", resolve_discrepancies=True)
    res = rc.adjust(r, "MML", cut=3.25)
    res.groups[1].uncertainty.clear()   # (grade 8's method gave none, as NO without a bootstrap)
    ch = changes(res, levels=parse_levels("3.25"))
    five, eight, eleven = ch.changes
    assert five.uncertain > 0 and eleven.uncertain > 0 and not five.without_se
    assert eight.uncertain is None and eight.without_se == "MML" and eight.accuracy is None
    assert eight.uncertain_text("student").startswith("no standard errors for its 141 student(s) (MML gives none")
    d = json.loads(json.dumps(eight.to_dict()))
    assert d["uncertain"] is None and d["standard_errors"] is False
    assert five.to_dict()["standard_errors"] is True
    # ... and a method that gave no group any (TLI without a bootstrap) says so: it said true (a researcher tester)
    none = changes(rc.adjust(r, "TLI"), levels=parse_levels("2,3,4")).changes
    assert [x.to_dict()["standard_errors"] for x in none] == [False] * 3 and all(x.uncertain is None for x in none)
    assert "no standard errors for its 141" in eight.format_text()


def test_a_shrunk_methods_moves_at_the_cut_are_told_apart_from_the_shrinkages():
    """A tester's district: MML (shrunk) moved 8 students pass -> fail in a school where the raters hardly
    differ, and nothing said the shrinkage toward the school's mean did it.  The summary, the memo and the
    app now give the moves the method would make unshrunk (its WLE fair scores) beside its own."""
    from ratercal_cli.methods.shrinkage import shrunk_papers
    from ratercal_cli.practice.summary import shrinkage_words

    r = rc.read_ratings(ROOT / "examples" / "ratings.csv", scale="0-5", group_col="grade", resolve_discrepancies=True)
    res = rc.adjust(r, ["MML", "TLI"], cut=3.25)
    for g, s in zip(res.groups, res.adjustment_summaries()):
        mml, tli = s.methods
        assert tli.unshrunk_moves is None   # (TLI's own scores are unshrunk)
        est = g.estimators["MML"]
        none = shrunk_papers(est, g.ratings, None, ("none",))["none"] + g.ratings.scale_low
        raw = g.ratings.paper_mean() + g.ratings.scale_low
        up = int(np.sum((none >= 3.25 - 1e-9) & (raw < 3.25 - 1e-9)))
        down = int(np.sum((none < 3.25 - 1e-9) & (raw >= 3.25 - 1e-9)))
        assert mml.unshrunk_moves == (up, down)
        assert shrinkage_words(mml.unshrunk_moves, len(mml.fail_to_pass), len(mml.pass_to_fail)) in s.format_text()
    assert any(s.methods[0].unshrunk_moves != (len(s.methods[0].fail_to_pass), len(s.methods[0].pass_to_fail))
               for s in res.adjustment_summaries())


def test_with_several_cuts_the_level_moves_are_told_apart_from_the_shrinkages():
    """A researcher tester: with several cuts a shrunk method's level moves were counted with nothing saying how
    many the shrinkage made.  Each group's levels now give the moves the method would make unshrunk (its WLE fair
    scores for MML, Kelley's formula undone for TLI), the papers that move shrunk only and those it keeps, counted
    here from the unshrunk scores; the text, the JSON and the memo's table say them."""
    import json

    from ratercal_cli.methods.shrinkage import shrunk_papers
    from ratercal_cli.practice.levels import changes, parse_levels
    from ratercal_cli.practice.memo import levels_html

    r = rc.read_ratings(ROOT / "examples" / "ratings.csv", scale="0-5", group_col="grade", resolve_discrepancies=True)
    levels = parse_levels("2,3,4")
    for code, kw in (("MML", {}), ("TLI", {"shrinkage": "kelley"})):
        res = rc.adjust(r, code, **kw)
        ch = changes(res, levels=levels)
        seen = 0
        for g, lc in zip(res.groups, ch.changes):
            est = g.estimators[code]
            own = None if code == "MML" else est.transform(g.ratings).paper
            none = levels.level(shrunk_papers(est, g.ratings, own, ("none",))["none"] + g.ratings.scale_low)
            raw = levels.level(g.ratings.paper_mean() + g.ratings.scale_low)
            adj = levels.level(g.adjusted[code].paper + g.ratings.scale_low)
            assert lc.moved == int(np.sum(adj != raw))
            assert lc.unshrunk == (int(np.sum(none > raw)), int(np.sum(none < raw))), (code, g.name)
            assert lc.by_shrinkage == (int(np.sum((adj != raw) & (none == raw))),
                                       int(np.sum((adj == raw) & (none != raw)))), (code, g.name)
            seen += lc.by_shrinkage[0]
            # ... student by student in the change list (a staff tester: which students did the shrinkage move?)
            rows = [row for row in ch.rows if row["grade"] == g.name]
            assert [row["unshrunk_level"] for row in rows] == [levels.names[k] for k in none]
            assert lc.shrinkage_text() in lc.format_text()
            d = json.loads(json.dumps(lc.to_dict()))["unshrunk"]
            assert (d["moved_by_shrinkage_alone"], d["kept_by_shrinkage"]) == lc.by_shrinkage
        assert seen > 0, code   # (the shrinkage makes moves of its own on this file)
        page = levels_html([(str(lc.group), lc) for lc in ch.changes])
        assert page.count("come from the shrinkage alone") == 3 and "those students keep their level" in page
    plain = changes(rc.adjust(r, "TLI"), levels=levels)
    assert all(lc.unshrunk is None for lc in plain.changes)   # (TLI's own scores: nothing shrunk)
    assert "unshrunk_level" not in plain.header


def test_a_rubrics_many_facet_levels_are_told_apart_from_the_shrinkages():
    """On a rubric's totals the levels' account of the shrinkage was missing (``"unshrunk": null``; a researcher
    tester counted 41 of MFRM's 81 changes the shrinkage's alone).  The many-facet model's totals at its WLE are
    its unshrunk ones; counted here from the change list's columns and the model's WLE cell scores."""
    from ratercal_cli.practice.levels import changes, parse_levels
    from ratercal_cli.practice.rubric import model_cell_scores, paper_total

    r = rc.read_ratings(ROOT / "examples" / "rubric_year1.csv", scale="1-6", paper_col="student",
                        score_cols=["style", "org", "conv", "sent_form"])
    levels = parse_levels("12,16,20")
    res = rc.adjust(r, "MFRM")
    ch = changes(res, levels=levels)
    (lc,) = ch.changes
    g = res.groups[0]
    est = g.estimators["MFRM"][0]
    none = levels.level(paper_total(model_cell_scores(est, g.ratings, est.quality_wle_), 1))
    given = np.array([levels.names.index(row["given_level"]) for row in ch.rows])
    adjusted = np.array([levels.names.index(row["adjusted_level"]) for row in ch.rows])
    assert [row["unshrunk_level"] for row in ch.rows] == [levels.names[k] for k in none]
    assert lc.unshrunk == (int(np.sum(none > given)), int(np.sum(none < given)))
    assert lc.by_shrinkage == (int(np.sum((adjusted != given) & (none == given))),
                               int(np.sum((adjusted == given) & (none != given))))
    assert lc.by_shrinkage[0] > 10 and lc.shrinkage_text() in lc.format_text()


def test_with_several_cuts_scores_on_a_cut_are_counted_and_said():
    """A staff tester: cuts 2.5, 3.5 and 4.5 on means of two readings (whole and half points) -- 39 of 40 level
    changes were students whose given mean sat exactly on a cut, moved down by any lowering, and only one cut
    was ever warned of (the summary's grid warning).  Each group's levels now count the scores on each cut and
    the changes that are theirs, counted here from the change list; the text, the JSON and the memo say it."""
    import json

    from ratercal_cli.practice.levels import changes, parse_levels
    from ratercal_cli.practice.memo import levels_html

    r = rc.read_ratings(ROOT / "examples" / "ratings.csv", scale="0-5", group_col="grade", resolve_discrepancies=True)
    levels = parse_levels("2.5,3.5,4.5")
    ch = changes(rc.adjust(r, "TLI"), levels=levels)
    for lc in ch.changes:
        rows = [row for row in ch.rows if row["grade"] == lc.group]
        on = [sum(row["given"] == c for row in rows) for c in (2.5, 3.5, 4.5)]
        assert lc.on_cut == on and sum(on) > 0
        assert lc.moved_on_cut == sum(row["moved"] == "yes" and row["given"] in (2.5, 3.5, 4.5) for row in rows)
        assert lc.moved_on_cut > lc.moved / 2   # (most of the changes here)
        assert lc.ties_text() in lc.format_text() and f"{sum(on)} paper(s) have a given score exactly" in lc.ties_text()
        assert json.loads(json.dumps(lc.to_dict()))["on_cut"] == {"2.5": on[0], "3.5": on[1], "4.5": on[2]}
    assert levels_html([(str(lc.group), lc) for lc in ch.changes]).count("student(s) have a given score exactly") == 3
    between = changes(rc.adjust(r, "TLI"), levels=parse_levels("2.25,3.25,4.25"))
    assert all(lc.on_cut == [0, 0, 0] and lc.ties_text() == "" for lc in between.changes)


def test_a_shrunk_truncated_method_keeps_its_ratings_on_the_scale():
    """TLI (shrunk), the usual recommendation, moved each rating by its paper's shrinkage: a paper below the mean
    with a top rating put that rating past the top (1.08 on a 0-1 scale), with no word."""
    rng = np.random.default_rng(5)
    import pandas as pd

    rows = [(f"P{p}", f"R{j}", int(rng.integers(0, 2))) for p in range(60) for j in rng.choice(6, 2, replace=False)]
    r = rc.Ratings.from_frame(pd.DataFrame(rows, columns=["paper", "rater", "score"]), scale="0-1")
    plain = rc.adjust(r, "TLI")
    shrunk = rc.adjust(r, "TLI", shrinkage="kelley")
    g0, g1 = plain.groups[0], shrunk.groups[0]
    move = np.asarray(g1.adjusted["TLI"].paper) - np.asarray(g0.adjusted["TLI"].paper)
    unclipped = np.asarray(g0.adjusted["TLI"].rating) + move[r.paper]
    assert unclipped.max() > 1 + 1e-6 or unclipped.min() < -1e-6   # (the case: some would leave 0-1)
    rating = np.asarray(g1.adjusted["TLI"].rating)
    assert rating.min() >= 0.0 and rating.max() <= 1.0
    np.testing.assert_allclose(rating, np.clip(unclipped, 0, 1))


def test_among_several_methods_one_that_cannot_be_fitted_is_skipped(tmp_path):
    """One method that cannot be fitted on one group cancelled a run of nine (149 of 172 random designs):
    among several it is skipped with a warning; named alone, it is the run's error."""
    from support import run

    src = tmp_path / "one.csv"
    src.write_text("paper,rater,score\n" + "".join(f"P{p},R{p % 4},{(p * 7) % 6}\n" for p in range(40)))
    both = run("adjust", src, "--scale", "0-5", "-m", "TLI,MML", "-o", tmp_path / "o.csv")
    assert both.exit_code == 0, both.output
    assert "MML skipped: needs two or more raters per paper" in both.stderr
    alone = run("adjust", src, "--scale", "0-5", "-m", "MML", "-o", tmp_path / "p.csv")
    assert alone.exit_code == 2 and "MML" in alone.output and not (tmp_path / "p.csv").exists()
    cmp = run("compare", src, "--scale", "0-5", "-m", "TLI,MML")
    assert cmp.exit_code == 0 and "MML skipped" in cmp.stderr


def test_recommended_beside_a_method_that_cannot_be_fitted_skips_that_method(tmp_path):
    """Raters in two groups that share no paper: ``-m NO,MML`` skipped MML with a warning, ``-m recommended,MML``
    stopped on it (exit 2), as if MML were the one method named.  ``recommended`` counts as a method named: MML is
    skipped, the recommendation (NO: the design cannot tell the groups' severities from their papers) applied."""
    from support import run

    src = tmp_path / "two_groups.csv"
    rows = [f"P{p},R{(p % 2) * 4 + (p + k) % 4},{(p * 7 + 3 * k) % 6}\n" for p in range(80) for k in (0, 1)]
    src.write_text("paper,rater,score\n" + "".join(rows))
    out = tmp_path / "o.csv"
    res = run("adjust", src, "--scale", "0-5", "-m", "recommended,MML", "-o", out)
    assert res.exit_code == 0, res.output
    assert "MML skipped:" in res.stderr and "not linked through shared papers" in res.stderr
    head = out.read_text().splitlines()
    assert head[0].split(",")[3:] == ["flag", "recommended", "recommended_paper", "recommended_method"]
    assert {line.split(",")[-1] for line in head[1:]} == {"NO"}
    given = [float(line.split(",")[2]) for line in head[1:]]
    assert [float(line.split(",")[4]) for line in head[1:]] == given   # NO: the scores as given
