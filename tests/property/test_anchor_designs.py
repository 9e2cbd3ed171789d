"""Anchors with and without drift on drawn designs (issue 28): a file anchored at its own calibration
gets the free fit's paper scores back; a second administration where one rater became 1.5 logits
harsher flags that rater and frees it.  (Whether other raters are falsely flagged is not asserted:
both years' estimates carry sampling error, and at seed 0 year 1's calibration was itself 2.5 S.E.
off for two raters, enough to flag one in year 2.)"""

import tempfile
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import given, settings, strategies as st

import ratercal_cli as rc
from ratercal_cli.practice.anchors import calibration, fit_mfrm

from designs import Design, write_csv


#: a quarter of the profile's examples: each draws 250-400 papers and fits the MFRM three times
FEW = settings(max_examples=max(5, settings().max_examples // 4))


@st.composite
def linked_designs(draw):
    low = draw(st.sampled_from([0, 1]))
    return Design(n_papers=draw(st.integers(250, 400)), n_raters=draw(st.integers(4, 6)), per_paper=2,
                  double_share=0.0, third=False, groups=1, criteria=draw(st.sampled_from([0, 2])), low=low,
                  high=low + draw(st.integers(3, 5)), seed=draw(st.integers(0, 2**31)), severity_sd=0.6)


def _read(design, rows, tmp, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.read_ratings(write_csv(rows, design.columns(), Path(tmp) / name), scale=design.scale,
                               facet_cols=["criterion"] if design.criteria else ())


@FEW
@given(design=linked_designs())
def test_anchored_at_its_own_calibration_gives_the_free_scores(design):
    with tempfile.TemporaryDirectory() as tmp:
        r = _read(design, design.rows(), tmp, "y1.csv")
    free, _ = fit_mfrm(r)
    cal = calibration(free, r)
    est, rows = fit_mfrm(r, cal)
    assert not any(x["drift"] for x in rows)
    kw = {"facet": r.facet_levels()} if design.criteria else {}
    a, b = np.asarray(free.transform(r, **kw).paper), np.asarray(est.transform(r, **kw).paper)
    assert np.nanmax(np.abs(a - b)) < 1e-3


@FEW
@given(design=linked_designs(), which=st.integers(0, 100))
def test_a_drifted_rater_is_flagged_and_freed(design, which):
    with tempfile.TemporaryDirectory() as tmp:
        y1 = _read(design, design.rows(), tmp, "y1.csv")
        cal = calibration(fit_mfrm(y1)[0], y1)
        # year 2: new papers, the same raters, one of them 1.5 logits harsher
        d2 = replace(design, seed=design.seed + 1)
        sev = np.random.default_rng(design.seed).normal(0, design.severity_sd, design.n_raters)
        j = which % design.n_raters
        rows = _drifted_rows(d2, sev, j)
        y2 = _read(d2, rows, tmp, "y2.csv")
    est, out = fit_mfrm(y2, cal)
    rater = f"R{j + 1}"
    mine = [x for x in out if x["facet"] == "rater" and str(x["element"]) == rater]
    assert mine and mine[0]["drift"] and mine[0]["freed"], (out, rater)
    assert mine[0]["displacement"] > 0.8


def _drifted_rows(design, sev, j):
    """New papers (``design.seed``) read by last year's raters (``design.seed - 1``: their severities
    ``sev``, rater j's raised by 1.5 logits, the thresholds and criteria), as design.rows() draws them."""
    from ratercal_cli.models.pcm import sample_scores

    year1 = np.random.default_rng(design.seed - 1)   # year 1's thresholds and criteria, as rows() drew them
    year1.normal(0, design.severity_sd, design.n_raters)
    m = design.high - design.low
    steps = np.linspace(-1.5, 1.5, m) + year1.normal(0, 0.2, m)
    crit = year1.normal(0, 0.4, max(design.criteria, 1))
    rng = np.random.default_rng(design.seed)         # new papers
    s = sev.copy()
    s[j] += 1.5
    out = []
    for p in range(design.n_papers):
        who = rng.choice(design.n_raters, 2, replace=False)
        theta = rng.normal(0, 1.2)
        for c in range(max(design.criteria, 1)):
            x = sample_scores(rng, np.full(2, theta), steps[None, :] + (s[who] + crit[c])[:, None]).astype(int)
            for i in range(2):
                out.append({"group": None, "paper": f"Q{p + 1}", "rater": f"R{who[i] + 1}", "order": i + 1,
                            "criterion": f"c{c + 1}" if design.criteria else None, "score": int(x[i]) + design.low})
    return out
