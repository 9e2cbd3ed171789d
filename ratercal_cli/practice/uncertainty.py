"""Each paper's uncertainty: a standard error of its adjusted score and, at a cut, the
probability that it passes.

Two sources, as the methods differ:

* **Equating and least-squares methods** (NO, MN, TMN, LI, TLI, EQP, SEQP, PWEQP, OLS, TLS, RAS,
  WLS): a paper's adjusted score is (a weighted) mean of its ratings, each moved by its rater's
  estimated parameters.  Its error has two parts, taken as independent:

  - the rater parameters', by a **bootstrap over papers**: draw the papers with replacement
    (each keeps all its ratings), refit the method on the draw, and adjust the *original* papers
    with the refitted parameters; the variance of a paper's score over the draws.  A draw in
    which a rater of the paper has no rating (so no parameter) leaves that paper out of that
    draw's variance; a draw the method cannot fit is not counted.  Seeded: the same seed and
    ``n_boot`` give the same numbers;
  - the paper's own ratings': the pooled variance of adjusted ratings about their paper's
    score (papers with two or more ratings), divided by the paper's number of ratings.

  ``se = sqrt(bootstrap variance + within variance / k)``.

* **MML and MFRM**: the model's own: the posterior SD of the paper's fair average, the fair-score
  curve at the nodes of the fit's grid under the paper's posterior there (as the fit's EAP and
  posterior SD are of its quality: :meth:`.mml.MarginalRaterModel.fair_score_sd`), and the pass
  probability ``P(fair(theta) >= cut)``, the normal's with the fit's EAP and posterior SD.
* **CML and RSM**: the same with the paper's Warm (WLE) quality and its standard error in place of
  the posterior (the sampling distribution of the WLE, taken as normal, through the curve by
  Gauss-Hermite, 21 nodes).

The pass probability of the bootstrap methods is ``Phi((score - cut) / se)``, the normal's
``P(S >= cut)``; for a method whose scores stay on the scale (:data:`ON_THE_SCALE`) the normal is
censored at the scale's ends (a score it would put beyond an end is that end), which changes only a
cut at the lowest score: every paper passes it, ``P = 1`` (the plain normal said 0.5 for a paper at
the bottom).  At the top the censored normal is the plain one (``P(S >= top)``).  The PCM (PAIR)
has no standard error of its qualities: it gets neither (no columns).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import mention
from ..methods import make_method
from ..methods.base import FIT_FAILURES
from ..ratings import Adjusted, Ratings

#: Methods whose paper SE comes from the bootstrap over papers.
BOOTSTRAP_METHODS = ("NO", "MN", "TMN", "LI", "TLI", "EQP", "SEQP", "PWEQP", "OLS", "TLS", "RAS", "WLS")
#: Methods whose paper SE comes from the model: the quality's mean and SD attributes, and what they are.
MODEL_METHODS = {"MML": ("quality_eap_", "quality_eap_se_", "posterior"),
                 "MFRM": ("quality_eap_", "quality_eap_se_", "posterior"),
                 "CML": ("quality_", "quality_se_", "WLE"), "RSM": ("quality_", "quality_se_", "WLE")}
POSTERIOR_METHODS = tuple(MODEL_METHODS)
#: Bootstrap methods whose paper scores cannot leave the scale: the raw mean, the truncated methods,
#: the equipercentile ones (onto the scale's distribution) and RAS (``M e s / (M - s (1 - e))``).
#: MN, LI, OLS and WLS can (the notes count their scores outside it).
ON_THE_SCALE = ("NO", "TMN", "TLI", "TLS", "EQP", "SEQP", "PWEQP", "RAS")


def no_se_reason(label: str, bootstrap: int = 0) -> str:
    """Why method ``label`` (``PCM (shrunk)``) gave no paper standard errors, and what would: a bootstrap where it
    draws the method (and none was given), else a model's (a staff helper's PCM was told to "give a bootstrap",
    with one given and with none, where the bootstrap never draws it)."""
    base = str(label).split(" ")[0]
    if base in BOOTSTRAP_METHODS and not bootstrap:
        return f"{label} gives none without a bootstrap, {mention('bootstrap')} N"
    if base in BOOTSTRAP_METHODS or base in POSTERIOR_METHODS:   # (drawn, or a model's: none came for these)
        return f"{label} gives none for them"
    return f"the bootstrap does not draw {label}: MML or MFRM give each one's from their model"


@dataclass
class PaperUncertainty:
    """Per paper (the ratings' papers, scores ``0..M``): ``se`` and, at a cut, ``pass_prob``
    (nan where not known); ``source``: "bootstrap" or "posterior"; ``draws``: bootstrap draws
    fitted (and ``failed`` not)."""

    method: str
    se: np.ndarray
    pass_prob: np.ndarray | None
    source: str
    draws: int = 0
    failed: int = 0
    note: str = ""     # why SEs are missing, for a warning line
    #: what the interval is made of (:meth:`interval`): a model's papers' quality, ``(mean, sd, fair)`` (the
    #: posterior's or the WLE's normal and the fitted fair-score curve, as ``pass_prob`` is), else None: the
    #: adjusted ``scores`` (0..M) +- z SE, kept on ``0..top`` where the method's scores stay on the scale
    quality: tuple | None = None
    scores: np.ndarray | None = None
    top: float | None = None

    def interval(self, z: float):
        """Each paper's interval ``(low, high)`` on 0..M at the normal quantile ``z`` (1.645: 90%), made
        as ``pass_prob`` is, so that a cut lies inside it exactly where the pass probability is between
        ``Phi(-z)`` and ``Phi(z)``: a model's, the fair scores of ``mean -+ z sd`` of the quality (the
        fair-score curve flattens near the scale's ends, where ``score +- z SE`` of the fair score's SE
        passed a cut the probability did not: 3.019-3.702 at cut 3 with p = 0.74); the bootstrap's,
        the score +- z SE, censored at the scale's ends for a method whose scores stay on it (as its
        pass probability is).  Nan where the SE is missing."""
        se = np.asarray(self.se, dtype=np.float64)
        low, high = np.full(se.size, np.nan), np.full(se.size, np.nan)
        if self.quality is not None:
            mean, sd, fair = self.quality
            ok = np.isfinite(mean) & np.isfinite(sd) & np.isfinite(se)
            if ok.any():
                ends = np.concatenate([mean[ok] - z * sd[ok], mean[ok] + z * sd[ok]])
                f = np.asarray(fair(ends), dtype=np.float64)
                low[ok], high[ok] = f[:ok.sum()], f[ok.sum():]
            return low, high
        if self.scores is None:
            return low, high
        ok = np.isfinite(se)
        s = np.asarray(self.scores, dtype=np.float64)
        low[ok], high[ok] = s[ok] - z * se[ok], s[ok] + z * se[ok]
        if self.top is not None:
            np.clip(low, 0.0, self.top, out=low)
            np.clip(high, 0.0, self.top, out=high)
        return low, high

    def pass_probability(self, cut: float) -> np.ndarray:
        """Each paper's ``P(score >= cut)`` (``cut`` on 0..M; nan where the SE is missing): a model's, the
        normal of its quality beyond the quality whose fair score is the cut; the bootstrap's,
        ``Phi((score - cut) / SE)``, censored at the scale's ends where the method's scores stay on it
        (a cut at the lowest score: 1).  ``pass_prob`` is this at the run's cut."""
        # the normal cdf (scipy.stats' norm.cdf is ndtr), imported where a cut needs it: scipy.special
        # is 0.09 s CPU, a tenth of adjust -m NO on 1M ratings, which computes no probability
        from scipy.special import ndtr

        se = np.asarray(self.se, dtype=np.float64)
        prob = np.full(se.size, np.nan)
        if self.quality is not None:
            mean, sd, fair = self.quality
            ok = np.isfinite(mean) & np.isfinite(sd)
            if ok.any():
                t_cut = _fair_inverse(fair, cut)
                prob[ok] = ndtr(-(t_cut - mean[ok]) / np.maximum(sd[ok], 1e-12))   # norm.sf(x) = ndtr(-x)
            return prob
        s = np.asarray(self.scores, dtype=np.float64)
        with np.errstate(all="ignore"):
            prob = ndtr((s - cut) / se)
        exact = se == 0
        prob[exact] = (s[exact] >= cut).astype(float)
        if self.top is not None and cut <= 0:   # the lowest score: every score on the scale passes
            prob[:] = 1.0
        prob[~np.isfinite(se)] = np.nan
        return prob


def resample_papers(ratings: Ratings, rng) -> Ratings:
    """A bootstrap draw: the papers with ratings drawn with replacement, each drawn copy a paper
    of its own with all the original's ratings (raters as in ``ratings``)."""
    rpp = ratings.ratings_per_paper()
    papers = np.flatnonzero(rpp > 0)
    order = np.argsort(ratings.paper, kind="stable")
    starts = np.concatenate([[0], np.cumsum(rpp)[:-1]])
    pick = papers[rng.integers(0, papers.size, papers.size)]
    counts = rpp[pick]
    total = int(counts.sum())
    first = np.repeat(np.cumsum(counts) - counts, counts)
    rows = order[np.repeat(starts[pick], counts) + np.arange(total) - first]
    return Ratings(np.repeat(np.arange(pick.size), counts), ratings.rater[rows], ratings.score[rows],
                   ratings.max_score, int(pick.size), ratings.n_raters, rater_ids=ratings.rater_ids,
                   scale_low=ratings.scale_low)


def within_variance(ratings: Ratings, adj: Adjusted) -> float:
    """Pooled variance of the adjusted ratings about their paper's adjusted score, over papers
    with two or more finite adjusted ratings (``sum (x - paper)^2 / sum (k - 1)``)."""
    r = np.asarray(adj.rating, dtype=np.float64)
    p = np.asarray(adj.paper, dtype=np.float64)[ratings.paper]
    ok = np.isfinite(r) & np.isfinite(p)
    k = np.bincount(ratings.paper[ok], minlength=ratings.n_papers)
    use = ok & (k[ratings.paper] >= 2)
    dof = float((k[k >= 2] - 1).sum())
    return float(((r[use] - p[use]) ** 2).sum() / dof) if dof > 0 else float("nan")


def bootstrap_paper_se(ratings: Ratings, code: str, adj: Adjusted, n_boot: int, seed=0, variant="corrected",
                       cut=None) -> PaperUncertainty:
    """The bootstrap SE of every paper's adjusted score by ``code`` (see the module); ``cut`` on
    ``0..M``."""
    rng = np.random.default_rng(seed)
    draws = np.full((n_boot, ratings.n_papers), np.nan)
    failed = 0
    for b in range(n_boot):
        boot = resample_papers(ratings, rng)
        try:
            est = make_method(code, variant).fit(boot)
        except FIT_FAILURES:
            failed += 1
            continue
        seen = np.asarray(est.raters_seen_)
        missing = ~seen[ratings.rater]
        sub = ratings.subset(~missing) if missing.any() else ratings
        try:
            with np.errstate(all="ignore"):
                draws[b] = est.transform(sub).paper
        except FIT_FAILURES:
            failed += 1
            continue
        if missing.any():
            draws[b, np.unique(ratings.paper[missing])] = np.nan
    fitted = n_boot - failed
    with np.errstate(all="ignore"), _quiet():
        n_ok = np.isfinite(draws).sum(axis=0)
        boot_var = np.where(n_ok >= 2, np.nanvar(draws, axis=0, ddof=1), np.nan)
    k = ratings.ratings_per_paper()
    within = within_variance(ratings, adj)
    note = ""
    if not np.isfinite(within):
        # no paper has two ratings: a rating's own error cannot be estimated, and the draws' spread
        # alone (the rater parameters' uncertainty) gave a paper scored once SEs of 0.08 and
        # pass probabilities of 0 or 1
        note = (f"{code}: no standard errors: no paper has two ratings, so a paper's own rating error cannot "
                "be estimated (the bootstrap gives only the rater parameters' part)")
        within = np.nan
    with np.errstate(all="ignore"):
        se = np.sqrt(boot_var + within / k)
    se[k == 0] = np.nan
    out = PaperUncertainty(code, se, None, "bootstrap", fitted, failed, note, scores=np.asarray(adj.paper, dtype=np.float64),
                           top=float(ratings.max_score) if code in ON_THE_SCALE else None)
    if cut is not None:
        out.pass_prob = out.pass_probability(cut)
    return out


class _quiet:
    """``warnings`` silenced (nanvar of an all-nan column)."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def posterior_paper_se(est, code: str, cut=None, n_nodes: int = 21, level: str | None = None) -> PaperUncertainty:
    """MML/MFRM: the posterior SD of each paper's fair average and ``P(fair >= cut)`` from the
    fitted estimator's posteriors (CML/RSM: the WLE and its SE; ``cut`` on ``0..M``).  ``level`` ``none``: the
    scores are MML/MFRM's at the WLE (``shrinkage="none"``), and so are their SE and pass probability (they were
    the posterior's: a researcher's paper passed at 3.51 with P(pass) = 0.078, its EAP's 2.95)."""
    mean_attr, sd_attr, source = MODEL_METHODS.get(est.code, MODEL_METHODS["MML"])
    wle = level == "none" and hasattr(est, "quality_wle_") and mean_attr == "quality_eap_"
    if wle:
        mean_attr, sd_attr, source = "quality_wle_", "quality_wle_se_", "WLE"
    mu = np.asarray(getattr(est, mean_attr), dtype=np.float64)
    sd = np.asarray(getattr(est, sd_attr), dtype=np.float64)
    ok = np.isfinite(mu) & np.isfinite(sd)
    se = np.full(mu.size, np.nan)
    if ok.any() and hasattr(est, "fair_score_sd") and not wle:   # MML/MFRM: under each paper's posterior on the fit's grid
        se[ok] = est.fair_score_sd()[ok]
    elif ok.any():   # CML/RSM: the WLE's normal, by Gauss-Hermite
        from ..methods.mml_engine import sorted_unique_rows   # (scipy.sparse: not for the methods without a posterior)

        x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
        w = w / w.sum()
        first, inverse, _ = sorted_unique_rows(np.column_stack([mu[ok], sd[ok]]))   # papers with the same ratings share both
        theta = np.multiply(sd[ok][first, None], x[None, :])
        theta += mu[ok][first, None]
        f = np.asarray(est.fair_scores(theta.ravel())).reshape(theta.shape)
        del theta
        m1 = f @ w
        se[ok] = np.sqrt(np.maximum(np.multiply(f, f, out=f) @ w - m1 * m1, 0.0))[inverse]
    out = PaperUncertainty(code, se, None, source, quality=(mu, sd, est.fair_scores))
    if cut is not None:
        out.pass_prob = out.pass_probability(cut)
    return out


def _fair_inverse(fair, cut, lo=-30.0, hi=30.0):
    """The quality at which the fitted fair score (``fair``: quality -> score, rising) equals ``cut``."""
    f_lo, f_hi = (float(np.asarray(fair(np.array([t])))[0]) for t in (lo, hi))
    if cut <= f_lo:
        return -np.inf
    if cut > f_hi:
        return np.inf
    for _ in range(80):
        mid = (lo + hi) / 2
        if float(np.asarray(fair(np.array([mid])))[0]) >= cut:
            hi = mid
        else:
            lo = mid
    return hi


def paper_uncertainty(ratings: Ratings, code: str, est, adj: Adjusted, n_boot: int = 0, seed=0,
                      variant="corrected", cut=None, level: str | None = None) -> PaperUncertainty | None:
    """The paper SEs of one method: from the model for MML/MFRM/CML/RSM, bootstrap (``n_boot`` > 0) for
    the equating and least-squares methods, None otherwise (``cut`` on ``0..M``; ``level``: the shrinkage the
    scores were put at, :func:`posterior_paper_se`)."""
    base = est.code if est is not None else code
    if getattr(est, "all_thin_", False):   # no rater had two ratings: nothing fitted, every rating raw
        return None
    if base in POSTERIOR_METHODS:
        # the linear EB's scores with the posterior's SE: their interval and pass probability about the score itself,
        # as a bootstrap's are (the posterior's put papers in a level at p_level 0.495, a helper's)
        eb = level == "linear_eb" and MODEL_METHODS[base][2] == "posterior"
        out = posterior_paper_se(est, code, None if eb else cut, level=level)
        if eb and out.quality is not None:
            out.quality, out.scores = None, np.asarray(adj.paper, dtype=np.float64)
            if cut is not None:
                out.pass_prob = out.pass_probability(cut)
        return out
    if base in BOOTSTRAP_METHODS and n_boot > 0:
        return bootstrap_paper_se(ratings, base, adj, n_boot, seed, variant, cut)
    return None
