"""The links' say: whether the papers that raters share place them on one scale more precisely than
they differ (:func:`link_gain`).

Where papers went to raters by cluster (schools each read by their own raters), the raters of two
clusters are compared only on the few papers that link them.  Every method that adjusts across the
clusters moves each paper by its raters' estimated location, and with few links that estimate's noise
can exceed the rater differences it removes (tests/practice/test_links.py: schools read by their own
pair, 97% of readings by it: the multi-group MML further from the truth than leaving the scores alone on
3 of 9 files, 0.649 against 0.634 RMSE on seed 2).

The gain must be above half its standard error (``gain_se``; :data:`.recommend.LINK_MARGIN`, where the
measurements are): on its sign alone, a tester's school files with a gain of 13 +- 261 got a multi-group MML
of 1.004 RMSE against NO's 0.721; a margin of one standard error spared those too, but on tests/confounded.py's
district files (third readings by any school's rater) it gave up the multi-group MML in 8 of 30 files of
150-600 papers, mostly where it was nearer the truth than the shrunk raw means it would have given instead.

It counts noise, not bias: where raters' effects depend on the papers' quality (raters' slopes), the
few linking papers at one school's level mislead the additive fit and the methods alike (seeds 4 and 9
there: even OLS is worse than NO), and the gain can be positive where adjusting loses.

:func:`link_gain` measures this with no model of the ratings beyond an additive one: the two-way
least-squares fit ``score = paper + rater + error`` (the papers as fixed effects, so whatever their
distribution across the clusters), each paper's raters' mean effect ``d_p`` (what an adjustment of
locations moves it by: the raters' effects summing to 0, as the truth is the mean rater's score) and
its sampling variance ``v_p`` through the links.  Moving the papers by ``d_p`` lowers the mean squared
error against the truth by ``sum(true d_p^2) - sum(v_p)``, whose unbiased estimate is
``sum(d_p^2) - 2 sum(v_p)`` (``E d_p^2 = true d_p^2 + v_p``; the rule of Stein's unbiased risk
estimate): the gain.  Where it is not positive, adjusting is not expected to beat leaving the scores
alone.
"""

from __future__ import annotations

import numpy as np

from ..methods.additive import MAX_RATERS, two_way   # (MAX_RATERS: beyond it the gain is not computed)
from ..ratings import Ratings

__all__ = ["MAX_RATERS", "link_gain"]

#: papers at a time in the variances (a papers x raters block)
_BLOCK = 2_000_000


def link_gain(ratings: Ratings) -> dict | None:
    """The two-way least-squares rater effects of ``ratings`` and what adjusting the papers by them is
    expected to gain (module docstring), in squared score points summed over the papers read:
    ``{"effects": sum d_p^2, "noise": sum v_p, "gain": effects - 2 noise, "papers", "raters",
    "residual_sd", "rms_effect", "rms_noise"}`` (the last two per paper, in score points); None where
    it cannot be computed (no paper read twice, no residual degrees of freedom, raters in groups that
    share no paper, more than :data:`MAX_RATERS` raters)."""
    J, P = ratings.n_raters, ratings.n_papers
    paper = np.asarray(ratings.paper, dtype=np.int64)
    rater = np.asarray(ratings.rater, dtype=np.int64)
    x = np.asarray(ratings.score, dtype=np.float64)
    if J < 2 or J > MAX_RATERS or x.size == 0:
        return None
    fit = two_way(paper, rater, x, P, J)
    if not fit.connected:   # (groups that share no paper: their offsets are not estimable)
        return None
    M, xbar, effect, Lp, keep, read, active = fit.M, fit.xbar, fit.effect, fit.Lp, fit.keep, fit.read, fit.active
    fitted = xbar[paper] + effect[rater] - (M @ effect)[paper]
    df = x.size - int(read.sum()) - int(keep.sum())
    if df <= 0:
        return None
    resid = x - fitted
    s2 = float(resid @ resid) / df
    d = M @ effect
    var = np.empty(P)
    step = max(1, _BLOCK // J)
    for a in range(0, P, step):
        Mb = M[a:a + step]
        var[a:a + step] = s2 * np.asarray(Mb.multiply(Mb @ Lp).sum(axis=1)).ravel()
    # the gain's standard error: d = true + e, e ~ N(0, S), S = s2 M Lp M' (rank < raters), so
    # var(d'd) = 2 tr(S^2) + 4 true' S true, taken at d; both in raters x raters terms (G = M'M)
    G = (M.T @ M).toarray()
    LG = Lp @ G
    Md = M.T @ d
    gain_var = 2.0 * s2 * s2 * float(np.sum(LG * LG.T)) + 4.0 * s2 * float(Md @ Lp @ Md)
    d, var = d[read], var[read]
    effects, noise = float(d @ d), float(var.sum())
    papers = int(read.sum())
    return {"effects": effects, "noise": noise, "gain": effects - 2.0 * noise,
            "gain_se": float(np.sqrt(max(gain_var, 0.0))), "papers": papers,
            "raters": int(active.sum()), "residual_sd": float(np.sqrt(s2)),
            "rms_effect": float(np.sqrt(effects / papers)), "rms_noise": float(np.sqrt(noise / papers))}
