"""Estimator base class shared by every adjustment method.

In the scikit-learn manner: parameters in ``__init__`` (and nothing else there), ``fit(ratings)``
learns rater parameters into attributes ending in ``_`` and returns ``self``,
``transform(ratings)`` returns :class:`~ratercal_cli.ratings.Adjusted` without changing the
estimator; ``get_params``/``set_params`` read and set the ``__init__`` parameters.

A method the 1990 programs ran has a ``variant`` parameter: ``"faithful"`` computes what the
QuickBASIC listing computes (bugs included), ``"corrected"`` (the default, as everywhere) what
the method should.  Methods beyond 1990 have one version and no ``variant``.

A rater with fewer than :data:`MIN_RATINGS` ratings (a *thin* rater) is treated one way by every
method but the faithful variants (the 1990 programs adjust every rater): its ratings are left
out of the fit, keep their raw scores, and count in their paper's score as one unadjusted
rating each -- the paper's score is ``(k * s + sum of the thin raw scores) / (k + t)``, ``s``
the method's score of the paper from its ``k`` other ratings, ``t`` thin ones (for the methods
whose paper score is the mean of its adjusted ratings, exactly that mean).  MN and LI apply
their ``min_ratings`` themselves (their target mean and SD still count every rating).
``thin_raters_`` lists the raters so treated.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..errors import MethodError, NotFittedError
from ..ratings import Adjusted, Ratings, is_frame
from ..vocabulary import DEFAULT_VARIANT, VARIANTS

#: The fitted per-rater attributes :meth:`RaterAdjuster.rater_frame` shows (those a method has),
#: and the per-paper ones of :meth:`RaterAdjuster.paper_frame`.
RATER_ATTRIBUTES = ("n_", "n_ratings_", "mean_", "sd_", "shift_", "slope_", "intercept_", "params_", "b_",
                    "sigma2_", "weights_", "beta_", "severity_", "severity_se_")
RATER_COLUMNS = tuple(a.rstrip("_") for a in RATER_ATTRIBUTES)
PAPER_ATTRIBUTES = ("quality_", "quality_se_", "quality_eap_", "quality_eap_se_", "quality_wle_",
                    "quality_wle_se_", "extreme_")

#: What a fit may raise on data it cannot handle, the failures the methods document: the
#: method's own :class:`MethodError` (one rater per paper, unlinked raters, estimates that
#: diverge, ...), a singular system (``LinAlgError``) and a floating-point failure
#: (``ArithmeticError``).  The study records the method as skipped on that data set (with the
#: reason) instead of stopping.  Anything else (a ``ValueError`` or ``TypeError`` from a bad
#: parameter or a coding error) is a bug and propagates.
FIT_FAILURES = (MethodError, ArithmeticError, np.linalg.LinAlgError)

#: The fewest ratings a rater needs to be adjusted (every method's corrected version; see above).
MIN_RATINGS = 2


class DeferredFit:
    """Mixin of an estimator whose fitted attributes named in ``deferred_attributes`` are computed the
    first time one of them is read: ``_fit`` ends with ``self._defer(state)``, and ``_fit_deferred(state)``
    sets them all from it (what a report reads but the adjusted scores do not need: ``adjust`` then
    never pays for them).  A refit forgets the previous fit's."""

    deferred_attributes: tuple = ()

    def _defer(self, state) -> None:
        for name in self.deferred_attributes:
            self.__dict__.pop(name, None)
        self._deferred_state = state

    def _fit_deferred(self, state) -> None:
        raise NotImplementedError

    def __getattr__(self, name):
        if name in type(self).deferred_attributes and self.__dict__.get("_deferred_state") is not None:
            self._fit_deferred(self.__dict__.pop("_deferred_state"))
            return self.__dict__[name]
        more = getattr(super(), "__getattr__", None)   # (RaterAdjuster's: a fitted attribute before fit)
        if more is not None:
            return more(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class RaterAdjuster:
    """Base class: subclasses implement ``_fit`` and ``_adjust_ratings`` (and may override
    ``_paper_scores``).

    Class attributes
    ----------------
    code : the method's short name (``"MN"``); truncating variants set
        ``truncate=True`` and the registry names them ``"TMN"`` etc.
    needs_multiple_raters : refuse data with one rating per paper (the study did:
        OLS.BAS chains straight to MORE.BAS when MJ = 1).
    """

    code = "?"
    needs_multiple_raters = False
    #: the method applies :meth:`min_ratings_used` itself (MN, LI); the others are given the
    #: ratings of the raters with enough, and the base class leaves the thin raters' ratings alone
    handles_thin_raters = False

    def __getattr__(self, name):
        """A fitted attribute (``severity_``) asked of an estimator not fitted yet: NotFittedError (an
        AttributeError, as scikit-learn's), not "no attribute" (or another attribute's name, where a
        property reads it)."""
        if name.endswith("_") and not name.startswith("_") and "n_raters_" not in self.__dict__:
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first ({name} is learned by fit)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- parameters ----------------------------------------------------------------
    @classmethod
    def _param_names(cls):
        """The ``__init__`` parameters' names (read from its signature once per class)."""
        names = cls.__dict__.get("_init_param_names")
        if names is None:
            sig = inspect.signature(cls.__init__)
            names = tuple(n for n, p in sig.parameters.items() if n != "self" and p.kind not in (p.VAR_POSITIONAL,
                                                                                            p.VAR_KEYWORD))
            cls._init_param_names = names
        return list(names)

    def get_params(self, deep: bool = False) -> dict:
        """The ``__init__`` parameters and their values."""
        return {n: getattr(self, n) for n in self._param_names()}

    def set_params(self, **params):
        """Set ``__init__`` parameters (unknown names are refused); returns ``self``."""
        known = self._param_names()
        for k, v in params.items():
            if k not in known:   # (an ArgumentError, as make_method's: a ValueError too)
                from ..errors import ArgumentError

                raise ArgumentError(k, f"is not a parameter of {type(self).__name__} (parameters: {', '.join(known)})")
            setattr(self, k, v)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    @property
    def faithful(self) -> bool:
        """True for the faithful variant of a 1990 method."""
        return getattr(self, "variant", DEFAULT_VARIANT) == "faithful"

    def min_ratings_used(self) -> int:
        """The fewest ratings a rater needs to be adjusted: 1 for a faithful variant (the 1990
        programs adjust every rater), :data:`MIN_RATINGS` otherwise."""
        return 1 if self.faithful else MIN_RATINGS

    # -- public API ----------------------------------------------------------------
    def fit(self, ratings: Ratings, **fit_params):
        """Learn the rater parameters from ``ratings``; ``fit_params`` (e.g. MML's ``facet``, a level per
        rating) go to the method's ``_fit``.  ``ratings`` may be a DataFrame (one rating a row: ``paper``,
        ``rater``, ``score``), read by :meth:`Ratings.from_frame`."""
        ratings = _as_ratings(ratings)
        if ratings.n_ratings == 0:   # (accepted, then transform failed on a learned attribute never set)
            raise MethodError(f"{self.code}: no ratings to fit")
        variant = getattr(self, "variant", DEFAULT_VARIANT)
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
        if self.needs_multiple_raters and ratings.max_raters_per_paper() < 2:
            raise MethodError(
                f"{self.code} needs papers scored by at least two raters; these data have one rater per paper"
            )
        n = ratings.ratings_per_rater()
        self.thin_raters_ = np.flatnonzero((n > 0) & (n < self.min_ratings_used()))
        fit_on = ratings
        if self.thin_raters_.size and not self.handles_thin_raters:
            fit_on, fit_params = self._without_thin(ratings, fit_params)
        self.all_thin_ = fit_on.n_ratings == 0   # nothing to fit: every rating stays as it is
        if not self.all_thin_:
            self._fit(fit_on, **fit_params)
        self.n_raters_ = ratings.n_raters
        self.max_score_ = ratings.max_score
        self.scale_low_ = ratings.scale_low
        self.rater_ids_ = tuple(ratings.rater_ids)
        self.paper_ids_ = tuple(ratings.paper_ids)
        self.raters_seen_ = ratings.ratings_per_rater() > 0
        self.n_ratings_fitted_ = int(ratings.n_ratings)
        self.n_papers_rated_ = int((ratings.ratings_per_paper() > 0).sum())
        return self

    # -- labelled views ------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "n_raters_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first")

    def results(self, scale_low: int = 0):
        """The Rasch models' estimates as one :class:`~.results.FitResults` (params, cov_params(),
        conf_int(), llf, ...), and the linear equatings' maps (MN, TMN, LI, TLI: each rater's intercept
        and slope) in the same long form; the other methods have none (AttributeError)."""
        self._check_fitted()
        if self.code not in ("MML", "MFRM", "CML", "RSM", "PCM", "MN", "TMN", "LI", "TLI"):
            raise AttributeError(f"{type(self).__name__} ({self.code}) has no FitResults")
        from .results import fit_results

        return fit_results(self, scale_low=scale_low)

    def rater_frame(self):
        """The fitted per-rater parameters as a pandas DataFrame indexed by rater label (natural
        order: R1, R2, ..., R10), one column per attribute of :data:`RATER_ATTRIBUTES` the method
        has (named without the trailing ``_``) and ``seen`` (the rater had ratings in the fit).  A
        Rasch model's columns are its :meth:`results`' rater rows: ``severity``, ``severity_se``,
        ``step 1``, ``step 1_se``, ... (steps numbered from 1 on the 0-based scale)."""
        self._check_fitted()
        df = self._frame(RATER_ATTRIBUTES, self.rater_ids_, "rater", {"seen": self.raters_seen_})
        if self.code in ("MML", "MFRM", "CML", "RSM", "PCM") and not getattr(self, "all_thin_", False):
            view = self.results().frame("rater")
            view.index = view.index.astype(object)
            df = df.drop(columns=[c for c in view.columns if c in df.columns])
            labels = {str(x): x for x in df.index}
            view.index = [labels[x] for x in view.index]
            df = df.join(view)
            # (a parameter the model has not: the CML's PCM has steps a rater and no beta, a column all nan)
            df = df.drop(columns=[c for c in df.columns if c != "seen" and c in RATER_COLUMNS and df[c].isna().all()])
        return df

    def paper_frame(self):
        """The fitted per-paper estimates (the Rasch models' paper measures and S.E.s:
        :data:`PAPER_ATTRIBUTES`) as a DataFrame indexed by paper label in natural order; no
        columns for a method that estimates none."""
        self._check_fitted()
        return self._frame(PAPER_ATTRIBUTES, self.paper_ids_, "paper", {})

    def severity_frame(self, alpha: float = 0.05):
        """The raters' severities as statsmodels lays out estimates: per rater (natural order) the
        severity (logits, + = more severe), its model standard error, ``z = severity / se``, the
        two-sided normal ``p`` of severity 0 (the raters' mean) and the ``1 - alpha`` interval
        ``severity -+ z_(1 - alpha/2) se``.  For the methods that estimate severities with
        standard errors (``severity_``, ``severity_se_``: MML, MFRM)."""
        from scipy import stats

        if not hasattr(self, "n_raters_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first")
        if getattr(self, "severity_se_", None) is None:
            raise AttributeError(f"{type(self).__name__} estimates no rater severities with standard errors")
        sev = np.asarray(getattr(self, "severity_"), dtype=np.float64)
        se = np.asarray(getattr(self, "severity_se_"), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = sev / se
        q = stats.norm.ppf(1 - alpha / 2)
        lo, hi = f"{alpha / 2:g}", f"{1 - alpha / 2:g}"
        return self._frame((), self.rater_ids_, "rater", {"severity": sev, "se": se, "z": z,
                                                           "p": 2 * stats.norm.sf(np.abs(z)),
                                                           lo: sev - q * se, hi: sev + q * se})

    def _frame(self, names, labels, index_name, extra):
        if not hasattr(self, "n_raters_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first")
        import pandas as pd

        from ..ratings import natural_key

        cols = {n.rstrip("_"): getattr(self, n) for n in names
                if np.shape(getattr(self, n, None)) == (len(labels),)}
        cols.update(extra)
        df = pd.DataFrame(cols, index=pd.Index(list(labels), name=index_name))
        return df.iloc[sorted(range(len(labels)), key=lambda k: natural_key(labels[k]))]

    def transform(self, ratings: Ratings, **params) -> Adjusted:
        """Adjusted scores of ``ratings`` (raters the fit saw, same scale); the estimator is unchanged.
        New papers read by some of the fitted raters (``Ratings.from_frame`` of them: their own
        ``rater_ids``) are matched to the fit's raters by label."""
        if not hasattr(self, "n_raters_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first")
        ratings = self._on_fitted_raters(_as_ratings(ratings))
        self._check_same_raters(ratings)
        return self._transform_thin(ratings, False, params)

    def fit_transform(self, ratings: Ratings, **params) -> Adjusted:
        """``fit(ratings).transform(ratings)``, reusing what the fit estimated for these papers."""
        ratings = _as_ratings(ratings)
        return self.fit(ratings, **params)._transform_thin(ratings, True, params)

    # -- thin raters ---------------------------------------------------------------
    def _without_thin(self, ratings: Ratings, params):
        """``ratings`` without the thin raters' ratings, and ``params`` with their per-rating
        arrays (e.g. MML's ``facet``) cut alike."""
        keep = ~np.isin(ratings.rater, self.thin_raters_)
        cut = {k: (np.asarray(v)[keep] if v is not None and np.ndim(v) == 1 and len(v) == ratings.n_ratings
                   else v) for k, v in params.items()}
        return ratings.subset(keep), cut

    def _transform_thin(self, ratings: Ratings, training: bool, params) -> Adjusted:
        """:meth:`_transform`, the thin raters' ratings left as they are (see the module)."""
        if self.handles_thin_raters or not self.thin_raters_.size:
            return self._transform(ratings, training=training, **params)
        thin = np.isin(ratings.rater, self.thin_raters_)
        if not thin.any():
            return self._transform(ratings, training=training, **params)
        rest, cut = self._without_thin(ratings, params)
        rating = ratings.score.astype(np.float64)
        inner = np.full(ratings.n_papers, np.nan)
        if rest.n_ratings and not self.all_thin_:
            adj = self._transform(rest, training=training, **cut)
            rating[~thin] = adj.rating
            inner = np.asarray(adj.paper, dtype=np.float64)
        return Adjusted(rating=rating, paper=self.with_thin_ratings(ratings, inner))

    def without_thin_ratings(self, ratings: Ratings) -> Ratings:
        """``ratings`` without the thin raters' ratings (the ratings the fit used); ``ratings`` itself
        when the method has no thin raters or applies its ``min_ratings`` itself."""
        if self.handles_thin_raters or not self.thin_raters_.size:
            return ratings
        return self._without_thin(ratings, {})[0]

    def with_thin_ratings(self, ratings: Ratings, paper) -> np.ndarray:
        """Paper scores ``paper``, the method's from the ratings without the thin raters'
        (:meth:`without_thin_ratings`; nan for a paper with none), with each thin rater's rating of
        ``ratings`` counted as one unadjusted rating (the module's rule): ``(k * s + sum of the thin raw
        scores) / (k + t)``.  ``paper`` itself where there are no thin ratings."""
        paper = np.asarray(paper, dtype=np.float64)
        if self.handles_thin_raters or not self.thin_raters_.size:
            return paper
        thin = np.isin(ratings.rater, self.thin_raters_)
        if not thin.any():
            return paper
        k = np.bincount(ratings.paper[~thin], minlength=ratings.n_papers)
        t = np.bincount(ratings.paper[thin], minlength=ratings.n_papers)
        raw = np.bincount(ratings.paper[thin], weights=ratings.score[thin].astype(np.float64),
                          minlength=ratings.n_papers)
        with np.errstate(invalid="ignore", divide="ignore"):
            mixed = (np.where(k > 0, k * paper, 0.0) + raw) / (k + t)
        return np.where(k + t > 0, mixed, paper)

    def _transform(self, ratings: Ratings, training: bool) -> Adjusted:
        """Adjusted scores; ``training``: ``ratings`` are the data just fitted (a subclass may reuse
        per-paper estimates of the fit instead of computing them again).  A paper without ratings (of a
        :meth:`Ratings.subset`) has no score: nan, as the Rasch fits give it, not a mean of nothing, 0."""
        rating = np.asarray(self._adjust_ratings(ratings), dtype=np.float64)
        paper = np.asarray(self._paper_scores(ratings, rating), dtype=np.float64)
        rated = ratings.ratings_per_paper() > 0
        return Adjusted(rating=rating, paper=paper if rated.all() else np.where(rated, paper, np.nan))

    def _on_fitted_raters(self, ratings: Ratings) -> Ratings:
        """``ratings`` with their raters numbered as the fit's, where their labels are some of the fit's
        raters' (new papers read by a few of them); else as they are.  Labels match as text: a fit on a
        data frame's whole-number raters (7) scores a file's (``7``), as the file would be read."""
        ids = tuple(ratings.rater_ids)
        if ids == self.rater_ids_:
            return ratings
        at = {str(label): j for j, label in enumerate(self.rater_ids_)}
        if len(at) != len(self.rater_ids_) or not all(str(label) in at for label in ids):
            return ratings
        from dataclasses import replace

        code = np.array([at[str(label)] for label in ids], dtype=np.int64)
        return replace(ratings, rater=code[ratings.rater], n_raters=len(self.rater_ids_), rater_ids=self.rater_ids_,
                       first_readings=None)

    def _check_same_raters(self, ratings: Ratings) -> None:
        """Refuse ratings on another scale, with other raters, or by raters the fit
        never saw (they have no parameters)."""
        low = getattr(self, "scale_low_", ratings.scale_low)   # (an estimator fitted before scale_low_ was kept)
        if (ratings.scale_low, ratings.max_score) != (low, self.max_score_):   # (1-6 and 0-5 both held as 0..5)
            raise MethodError(f"{self.code}: fitted on the scale {low}-{low + self.max_score_}, "
                              f"these ratings are on {ratings.scale_low}-{ratings.scale_low + ratings.max_score}")
        if tuple(ratings.rater_ids) != self.rater_ids_:
            fitted = {str(x) for x in self.rater_ids_}   # (as text, as _on_fitted_raters matches them)
            new = [str(x) for x in ratings.rater_ids if str(x) not in fitted]
            raise MethodError(f"{self.code}: fitted on raters {', '.join(map(str, self.rater_ids_))}; "
                              f"these ratings have raters {', '.join(map(str, ratings.rater_ids))}"
                              + (f" ({', '.join(new)} not among them: no parameters)" if new else ""))
        unseen = np.flatnonzero((ratings.ratings_per_rater() > 0) & ~self.raters_seen_)
        if unseen.size:
            raise MethodError(f"{self.code}: no parameters for rater(s) "
                              f"{', '.join(str(ratings.rater_ids[j]) for j in unseen)} "
                              "(no ratings in the data the method was fitted on)")

    # -- for subclasses ------------------------------------------------------------
    def _fit(self, ratings: Ratings) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _adjust_ratings(self, ratings: Ratings) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _paper_scores(self, ratings: Ratings, adjusted: np.ndarray) -> np.ndarray:
        """Default paper score: the mean of the paper's adjusted ratings (EZEQ.BAS
        ``adj = adj + sc ... PRINT #2, adj / mj``), summed in single precision by the
        faithful variants as the BASIC did."""
        if self.faithful:
            from ._single import paper_mean_single

            return paper_mean_single(ratings, adjusted)
        return ratings.paper_mean(adjusted)


def clip_to_scale(x, max_score):
    """Truncation of TMN/TLI/TLS: ``IF tsc > mp THEN tsc = mp ELSE IF tsc < 0 THEN tsc = 0``."""
    return np.clip(x, 0, max_score)


def fair_score_adjusted(ratings: Ratings, fair) -> Adjusted:
    """Every rating of a paper becomes the paper's fair score ``fair[paper]`` (the Rasch models'
    adjusted score); a paper's score is the mean of its ratings', that fair score itself (nan without
    ratings): to the bit, where the sum of a paper's k equal ratings over k differed from it in the last
    place (an output's ``X_paper`` then formatted again where ``X``'s texts would do, 0.01-0.02 s at 1M
    ratings, :func:`.practice.ratings_file._write_rows`)."""
    fair = np.asarray(fair, dtype=np.float64)
    return Adjusted(rating=fair[ratings.paper], paper=np.where(ratings.ratings_per_paper() > 0, fair, np.nan))


def _as_ratings(data) -> Ratings:
    """``data`` as :class:`Ratings`: itself, or a DataFrame read by :meth:`Ratings.from_frame` (columns
    ``paper``, ``rater``, ``score``; the scale from 0, or the lowest score, to the highest); anything else an
    ArgumentError (a file: ``rc.read_ratings``; the methods sit below the readers of files)."""
    if isinstance(data, Ratings):
        return data
    if is_frame(data):
        return Ratings.from_frame(data)
    from ..errors import ArgumentError

    raise ArgumentError("ratings", f"expected Ratings or a pandas DataFrame (one rating a row), not {type(data).__name__}"
                        " (a file: rc.read_ratings(path, scale=...))")
