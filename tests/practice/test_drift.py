"""A rater that drifted between two administrations (issue 28, item 2): it is freed from its anchor and
measured on the scale of the anchors that did not drift, and the link leaves it out.

The two years are drawn here by a generator of this test's own (not the project's rubric generator): a
four-criterion analytic rubric on 1-6, eight raters, two raters a student, from the many-facet rating
scale model; in year 2 one rater is harsher by ``drift`` logits.  A student's truth is the rubric total
last year's average rater would give: the mean over the year-1 raters of the expected total."""

import csv
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

CRITERIA = ["ideas", "order", "voice", "mech"]
DIFFICULTY = np.array([-0.4, -0.1, 0.2, 0.3])
KAPPA = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
SEVERITY = np.linspace(-0.7, 0.7, 8)


def _probabilities(location):
    """(..., 6) category probabilities at ``location`` = measure - severity - difficulty (logits)."""
    cum = np.concatenate([np.zeros(np.shape(location) + (1,)),
                          np.cumsum(np.asarray(location)[..., None] - KAPPA, axis=-1)], axis=-1)
    p = np.exp(cum - cum.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def _year(rng, severity, n, tag):
    theta = rng.normal(0.3, 1.2, n)
    rows, readers = [], []
    for p in range(n):
        js = rng.choice(len(severity), 2, replace=False)
        readers.append(set(int(j) for j in js))
        for j in js:
            pr = _probabilities(theta[p] - severity[j] - DIFFICULTY)
            rows.append([f"{tag}{p:04d}", f"T{j + 1}"] + [int(rng.choice(6, p=pr[c])) + 1 for c in range(4)])
    # truth: the mean over the year-1 raters of the expected rubric total (categories 1..6)
    pr = _probabilities(theta[:, None, None] - SEVERITY[None, :, None] - DIFFICULTY[None, None, :])
    truth = (pr @ np.arange(1, 7)).sum(axis=2).mean(axis=1)
    return rows, theta, truth, readers


def two_years(seed, n=500, drift=1.0, drifter=3):
    """``(year1, year2)``: each ``(rows, theta, truth, readers)``; rater ``T{drifter+1}`` is ``drift``
    logits harsher in year 2."""
    rng = np.random.default_rng(seed)
    sev2 = SEVERITY.copy()
    sev2[drifter] += drift
    return _year(rng, SEVERITY, n, "A"), _year(rng, sev2, n, "B")


def _write(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student", "rater", *CRITERIA])
        w.writerows(rows)
    return path


OPTS = ["--scale", "1-6", "--paper-col", "student", "--score-cols", ",".join(CRITERIA), "-q"]


# -- the link, on numbers made by hand ---------------------------------------------------------------
def _fake_fit(anchors_at, moved, shift=-0.2, se=0.1):
    """Ratings of eight raters and a 'free fit' reporting each at anchor + shift (+ its planted move)."""
    from ratercal_cli.practice.anchors import Anchor, Anchors
    from ratercal_cli.practice.ratings_file import Scale
    from ratercal_cli.ratings import Ratings

    J = len(anchors_at)
    ratings = Ratings(paper=np.repeat(np.arange(4), J), rater=np.tile(np.arange(J), 4), score=np.ones(4 * J, int),
                      max_score=5, n_papers=4, n_raters=J, rater_ids=tuple(f"T{j + 1}" for j in range(J)),
                      scale_low=1)
    free = SimpleNamespace(severity_=np.asarray(anchors_at) + shift + np.asarray(moved),
                           severity_se_=np.full(J, se))
    cal = Anchors("MFRM", Scale(1, 6), [Anchor("rater", f"T{j + 1}", float(a), math.nan)
                                        for j, a in enumerate(anchors_at)])
    return cal, free, ratings


def test_the_link_leaves_a_drifter_out():
    """One of eight raters moved 1 logit: linked on all eight (the old link) its displacement came out
    at 7/8 of the move and every other rater at -1/8 (0.125 logit of drift each, none of it theirs);
    purified, the drifter shows its 1 logit and the others 0, and it is the one taken out of the link."""
    from ratercal_cli.practice.anchors import displacement

    moved = np.zeros(8)
    moved[3] = 1.0
    cal, free, ratings = _fake_fit(SEVERITY, moved)
    rows = displacement(cal, free, ratings)
    d = {r["element"]: r for r in rows}
    assert d["T4"]["displacement"] == pytest.approx(1.0, abs=1e-12)
    assert [r["element"] for r in rows if not r["linked"]] == ["T4"]
    assert d["T4"]["drifted"] and d["T4"]["p_holm"] < 0.05
    assert max(abs(r["displacement"]) for r in rows if r["element"] != "T4") < 1e-12
    old = {r["element"]: r["displacement"] for r in displacement(cal, free, ratings, purify=False)}
    assert old["T4"] == pytest.approx(0.875) and old["T1"] == pytest.approx(-0.125)


def test_purification_stops_before_a_facet_loses_its_link():
    """Two of three anchored raters moved: one is taken out, the facet keeps two in its link (an element
    leaves only while two stay), and the remaining drifter is reported drifted but linked."""
    from ratercal_cli.practice.anchors import displacement

    cal, free, ratings = _fake_fit([-0.5, 0.0, 0.5], [1.5, 0.0, -1.5], se=0.05)
    rows = displacement(cal, free, ratings)
    assert sum(not r["linked"] for r in rows) == 1
    assert sum(r["drifted"] for r in rows) >= 2


def test_the_text_says_which_were_freed_or_held():
    from ratercal_cli.practice.anchors import format_displacement

    row = dict(facet="rater", element="T4", level="", anchor=0.17, free=1.1, displacement=0.93, se=0.1, t=9.3,
               p=0.0, p_holm=0.0, drift=True, drifted=True, linked=False, freed=True, used=1.12)
    text = "\n".join(format_displacement([row]))
    assert "freed (measured afresh on the scale of the anchors that did not drift, and left out of the link): " \
           "rater T4 anchored at 0.17, measured 1.12 (moved +0.95 logits)" in text
    held = dict(row, freed=False, used=0.17)
    text = "\n".join(format_displacement([held]))
    assert "held at their anchors although they drifted (--hold-drifted): rater T4" in text and "freed (" not in text
    # flagged (|displacement| > 0.5, |t| >= 2) is not drifted: a staff tester's "2 of 17 anchored element(s)
    # drifted" named a rater whose Holm p was 0.48, held, beside the one that was freed
    flagged = dict(row, element="T1", displacement=-0.53, t=-2.17, p_holm=0.48, drifted=False, linked=True,
                   freed=False, used=0.17)
    text = "\n".join(format_displacement([row, flagged]))
    assert ("2 of 2 anchored element(s) flagged for drift: rater T4, rater T1; 1 drifted beyond chance (Holm's p < "
            "0.05): rater T4") in text
    assert "flagged but held (not significant after Holm over the 2 anchored elements): rater T1" in text


def test_hold_drifted_needs_anchors(tmp_path):
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    (tmp_path / "y.csv").write_text("paper,rater,score\nP1,R1,3\nP1,R2,4\nP2,R1,2\nP2,R2,2\n")
    res = CliRunner().invoke(cli, ["adjust", str(tmp_path / "y.csv"), "--scale", "1-6", "-m", "MFRM", "-q",
                                   "--hold-drifted", "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 2 and "--hold-drifted goes with --anchors" in res.output


# -- the two-year rubric through the commands -----------------------------------------------------------
@pytest.mark.slow
def test_students_of_a_drifted_rater_get_their_truth(tmp_path):
    """Year 2's rater T4 is 1 logit harsher.  Held at its anchor (the old behaviour, now --hold-drifted)
    its students' rubric totals came out more than a point too low; by default it is freed, measured on
    the other anchors' scale, and its students are within 0.3 points of their truth on average.  The
    text, the JSON and the HTML say that T4 was freed and how far it moved."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    (y1, _, _, _), (y2, _, truth, readers) = two_years(seed=7, n=600)
    f1, f2 = _write(tmp_path / "year1.csv", y1), _write(tmp_path / "year2.csv", y2)
    a = str(tmp_path / "a.csv")
    run = CliRunner()
    res = run.invoke(cli, ["check", str(f1), *OPTS, "--no-rasch", "--write-anchors", a])
    assert res.exit_code == 0, res.output
    of_t4 = np.array([3 in r for r in readers])
    assert of_t4.sum() > 100

    def totals(extra):
        out = tmp_path / "adj.csv"
        res = run.invoke(cli, ["adjust", str(f2), *OPTS, "-m", "MFRM", "--anchors", a, "-o", str(out), "--json",
                               *extra])
        assert res.exit_code == 0, res.output
        got = {}
        with open(out, newline="") as fh:
            for row in csv.DictReader(fh):
                got[row["student"]] = float(row["MFRM_total"])
        return np.array([got[f"B{p:04d}"] for p in range(len(truth))]) - truth, json.loads(res.output)

    err, doc = totals([])
    assert abs(err[of_t4].mean()) < 0.3, err[of_t4].mean()
    t4 = next(r for r in doc["anchors"] if r["element"] == "T4")
    assert t4["freed"] and not t4["linked"] and t4["used"] - t4["anchor"] == pytest.approx(1.0, abs=0.25)
    assert [r["element"] for r in doc["anchors"] if r["freed"]] == ["T4"]
    held, doc_held = totals(["--hold-drifted"])
    assert held[of_t4].mean() < -0.8        # the silent wrong result the default now avoids
    assert not any(r["freed"] for r in doc_held["anchors"]) and next(
        r for r in doc_held["anchors"] if r["element"] == "T4")["used"] == t4["anchor"]
    # the text and the HTML name the freed rater and its move
    res = run.invoke(cli, ["adjust", str(f2), "--scale", "1-6", "--paper-col", "student", "--score-cols",
                           ",".join(CRITERIA), "-m", "MFRM", "--anchors", a, "-o", str(tmp_path / "x.csv"),
                           "--html", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    assert f"rater T4 anchored at {t4['anchor']:.2f}, measured {t4['used']:.2f}" in res.output
    page = (tmp_path / "r.html").read_text()
    assert "Anchored elements" in page and f"rater T4 moved {t4['used'] - t4['anchor']:+.2f} logits" in page
    res = run.invoke(cli, ["compare", str(f2), *OPTS, "-m", "TLI,MFRM", "--anchors", a, "--json"])
    assert res.exit_code == 0, res.output
    # check shows the value used in the measure column (Facets' practice): T4 at its new measure, the rest
    # at their anchors
    res = run.invoke(cli, ["check", str(f2), *OPTS, "--anchors", a, "--json"])
    assert res.exit_code == 0, res.output
    raters = {r["rater"]: r for r in json.loads(res.output)["rubric"][0]["raters"]}
    assert raters["T4"]["severity"] == pytest.approx(t4["used"], abs=1e-9)
    assert raters["T1"]["severity"] == pytest.approx(raters["T1"]["anchor"], abs=1e-9)


@pytest.mark.slow
def test_displacement_of_a_planted_drift_over_seeds():
    """A planted 0.8-logit drift of one of eight raters, over eight generated pairs of years: the
    displacement with the drifter out of the link averages near 0.8 (linked on every rater it came out
    at 7/8 of it, 0.70 here)."""
    from ratercal_cli.practice.anchors import calibration, displacement, fit_mfrm
    from ratercal_cli.ratings import Ratings
    import pandas as pd

    def ratings(rows):
        df = pd.DataFrame(rows, columns=["student", "rater", *CRITERIA])
        long = df.melt(id_vars=["student", "rater"], var_name="criterion", value_name="score")
        return Ratings.from_frame(long, paper_col="student", rater_col="rater", score_col="score",
                                  facet_cols=["criterion"], scale="1-6")

    new, old = [], []
    for seed in range(8):
        (y1, _, _, _), (y2, _, _, _) = two_years(seed=100 + seed, n=1000, drift=0.8)
        r1, r2 = ratings(y1), ratings(y2)
        cal = calibration(fit_mfrm(r1)[0], r1)
        free = fit_mfrm(r2)[0]
        new.append(next(r for r in displacement(cal, free, r2) if r["element"] == "T4")["displacement"])
        old.append(next(r for r in displacement(cal, free, r2, purify=False) if r["element"] == "T4")["displacement"])
    assert np.mean(new) == pytest.approx(0.8, abs=0.06), new
    assert np.mean(old) < np.mean(new) - 0.07


def test_a_freed_rater_stays_in_last_years_average_rater(tmp_path):
    """Regression (found by the new-user round of issue 28): freeing a drifted rater left it out of the
    average rater the fair scores are on, so every student moved by the drifter's anchor over the number
    of raters.  Here the drifter is year 1's most severe rater (T8, +0.7 of eight): left out, every
    student moved about 0.36 points up (its own students +0.57 above their truth, the others +0.39,
    against +0.03 with the drifter held); kept in it at its anchor: +0.24 and +0.07."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    (y1, _, _, _), (y2, _, truth, readers) = two_years(seed=7, n=600, drifter=7)
    f1, f2 = _write(tmp_path / "year1.csv", y1), _write(tmp_path / "year2.csv", y2)
    a, out = str(tmp_path / "a.csv"), tmp_path / "adj.csv"
    run = CliRunner()
    assert run.invoke(cli, ["check", str(f1), *OPTS, "--no-rasch", "--write-anchors", a]).exit_code == 0

    def errors(extra):
        res = run.invoke(cli, ["adjust", str(f2), *OPTS, "-m", "MFRM", "--anchors", a, "-o", str(out), *extra])
        assert res.exit_code == 0, res.output
        with open(out, newline="") as fh:
            got = {row["student"]: float(row["MFRM_total"]) for row in csv.DictReader(fh)}
        return np.array([got[f"B{p:04d}"] for p in range(len(truth))]) - truth

    of_t8 = np.array([7 in r for r in readers])
    freed, held = errors([]), errors(["--hold-drifted"])
    assert abs(freed[of_t8].mean()) < 0.3, freed[of_t8].mean()
    assert abs(freed[~of_t8].mean()) < 0.15, freed[~of_t8].mean()
    # freeing the drifter is for its own students: the others' scores barely move (0.36 before)
    assert abs(freed[~of_t8].mean() - held[~of_t8].mean()) < 0.1


def test_a_rater_the_anchor_file_does_not_hold_is_named(tmp_path):
    """A new rater (no anchor) is measured on the anchors' scale, and a staff tester had nothing to tell it from the
    raters held at last year's values: adjust names it; with every rater anchored it says nothing."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    (y1, _, _, _), (y2, _, _, _) = two_years(seed=3, n=300, drift=0.0)
    y2 = [[r[0], "T9" if r[1] == "T8" and k % 2 else r[1], *r[2:]] for k, r in enumerate(y2)]   # a new rater, T9
    f1, f2 = _write(tmp_path / "year1.csv", y1), _write(tmp_path / "year2.csv", y2)
    a = tmp_path / "last_year.csv"
    run = CliRunner()
    assert run.invoke(cli, ["check", str(f1), *OPTS, "--no-rasch", "--write-anchors", str(a)]).exit_code == 0
    loud = [o for o in OPTS if o != "-q"]
    res = run.invoke(cli, ["adjust", str(f2), *loud, "-m", "MFRM", "--anchors", str(a), "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 0, res.output
    said = [line for line in res.stderr.splitlines() if "no anchor" in line]
    assert said == [f"warning: {f2}: MFRM: rater(s) T9 have no anchor in last_year.csv: measured on the anchors' scale, not "
                    "held (new raters?); --write-anchors writes this run's measures, theirs with them, for the next"]
    res = run.invoke(cli, ["adjust", str(f1), *loud, "-m", "MFRM", "--anchors", str(a), "-o", str(tmp_path / "p.csv")])
    assert res.exit_code == 0 and "no anchor" not in res.stderr and "anchored element(s)" in res.stderr + res.output
