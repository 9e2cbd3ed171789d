"""Category statistics: how each score category of the scale worked (Facets' Table 8, Winsteps'
Table 3.2; Linacre 2002, "Optimizing rating scale category effectiveness", J. Appl. Meas. 3, 85-106).

For the ratings ``i`` of one scale (the whole file with shared thresholds; one rater's or one
facet level's ratings where they have their own steps), with ``m_i`` the measure of the rating
(the paper's measure minus the rater's severity and the facets' difficulties: where the rating
sits on the logit ruler relative to the rater and criterion) and ``P_ik`` the fitted model's
probability of category ``k``:

* count and % of the ratings in category k;
* average measure: the mean of ``m_i`` over the ratings in category k ("Avge Meas"), which should
  rise with the categories;
* expected measure: ``sum_i P_ik m_i / sum_i P_ik``, what the average would be if the data fitted
  the model ("Exp. Meas");
* outfit mean square (Linacre's category outfit, as Winsteps' Table 3.2 and Facets' Table 8 give it):
  ``sum_{i: x_i = k} z_ik^2 / sum_i P_ik z_ik^2`` with ``z_ik^2 = (k - E_i)^2 / V_i`` (``E_i``, ``V_i``
  the rating's model mean and variance): the squared standardized residuals of the ratings observed in
  category k over their expected sum under the model, over all the ratings (Winsteps Help, "Category
  mean-square fit statistics").  Its expected value is 1 for every category where the data fit (a
  little below where the measures were fitted to few ratings each: 0.77-0.95 with 8 ratings a paper);
  above 2 the category's ratings are noise.  (Averaging ``z^2`` over the ratings in category k has
  no such expectation: data drawn from the model gave 1.95, 0.90, 0.63, 0.60, 0.96, 1.73 on 1-6.)
* the Rasch-Andrich threshold into category k (the point where k and k-1 are equally probable)
  with its model SE, from the fit.

Warnings: thresholds that do not rise (disordered: a category that is never the most probable),
average measures that do not rise, categories with fewer than 10 ratings (Linacre's guideline 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .text import num, text_table

#: Linacre's guideline: at least this many ratings in a category for stable thresholds.
MIN_COUNT = 10


@dataclass
class CategoryTable:
    """One scale's category statistics (arrays over categories 0..M; the threshold of category 0 is nan)."""

    categories: np.ndarray     # scores on the file's scale
    count: np.ndarray
    percent: np.ndarray
    average_measure: np.ndarray
    expected_measure: np.ndarray
    outfit: np.ndarray
    threshold: np.ndarray
    threshold_se: np.ndarray
    label: str = ""
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        def clean(a):
            return [None if not np.isfinite(v) else round(float(v), 6) for v in np.asarray(a, dtype=float)]

        return {"label": self.label, "category": [int(c) for c in self.categories],
                "count": [int(c) for c in self.count], "percent": clean(self.percent),
                "average_measure": clean(self.average_measure), "expected_measure": clean(self.expected_measure),
                "outfit": clean(self.outfit), "threshold": clean(self.threshold),
                "threshold_se": clean(self.threshold_se), "warnings": list(self.warnings)}

    def format_text(self) -> list:
        head = ["Score", "Count", "%", "Avge Meas", "Exp. Meas", "Outfit MnSq", "Threshold", "S.E."]
        rows = [[str(c), str(int(n)), num(p, 0), num(a, 2), num(e, 2), num(o, 2), num(t, 2), num(s, 2)]
                for c, n, p, a, e, o, t, s in zip(self.categories, self.count, self.percent, self.average_measure,
                                                  self.expected_measure, self.outfit, self.threshold,
                                                  self.threshold_se)]
        title = "Category statistics (Facets Table 8)" + (f": {self.label}" if self.label else "")
        return [title, *text_table(head, rows)] + [f"  warning: {w}" for w in self.warnings]


def category_statistics(score, measure, probabilities, thresholds, thresholds_se=None, low: int = 0,
                        label: str = "") -> CategoryTable:
    """The statistics of one scale (module docstring).

    score : (n,) int, 0..M; measure : (n,) logits, the rating's measure ``m_i``;
    probabilities : (n, K) the model's category probabilities of each rating;
    thresholds, thresholds_se : (M,) Rasch-Andrich thresholds into categories 1..M (logits);
    low : the bottom of the file's scale (reported categories are ``low + k``).
    Ratings of papers at an extreme score should be left out by the caller (their measure is not finite).
    """
    score = np.asarray(score, dtype=np.int64)
    measure = np.asarray(measure, dtype=np.float64)
    P = np.asarray(probabilities, dtype=np.float64)
    K = P.shape[1]
    k = np.arange(K)
    E = P @ k
    V = P @ (k * k) - E * E
    count = np.bincount(score, minlength=K).astype(float)
    n = max(score.size, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = np.bincount(score, weights=measure, minlength=K) / count
        expected = (P * measure[:, None]).sum(axis=0) / P.sum(axis=0)
        z2 = (k[None, :] - E[:, None]) ** 2 / V[:, None]       # (n, K): each rating's z^2 were it in category k
        observed = np.bincount(score, weights=z2[np.arange(score.size), score], minlength=K)
        outfit = np.where(count > 0, observed / (P * z2).sum(axis=0), np.nan)
    thr = np.r_[np.nan, np.asarray(thresholds, dtype=float)]
    thr_se = np.r_[np.nan, np.full(K - 1, np.nan) if thresholds_se is None else np.asarray(thresholds_se, float)]
    warnings = []
    cats = low + k
    if np.any(np.diff(thr[1:]) <= 0):
        bad = [f"{cats[j + 1]} ({thr[j + 1]:.2f}) not above {cats[j]} ({thr[j]:.2f})"
               for j in range(1, K - 1) if thr[j + 1] <= thr[j]]
        warnings.append(f"disordered thresholds: the threshold into {'; '.join(bad)}: some category is never "
                        "the most probable; consider combining categories")
    seen = np.flatnonzero(count > 0)
    if np.any(np.diff(avg[seen]) <= 0):
        warnings.append("average measures do not rise with the categories: raters do not use the "
                        "categories in the order of the scale")
    few = [str(c) for c, m in zip(cats, count) if m < MIN_COUNT]
    if few:
        warnings.append(f"categories with fewer than {MIN_COUNT} ratings ({', '.join(few)}): their thresholds "
                        "are imprecise")
    return CategoryTable(categories=cats, count=count.astype(np.int64), percent=100.0 * count / n,
                         average_measure=avg, expected_measure=expected, outfit=outfit, threshold=thr,
                         threshold_se=thr_se, label=label, warnings=warnings)


def model_category_tables(score, theta, item_tau, thresholds, thresholds_se=None, groups=None, group_ids=(),
                          low: int = 0, mask=None) -> list:
    """Category tables of a fitted Rasch rater model, from its pieces.

    score : (n,) 0..M; theta : (n,) the measure of each rating's paper; item_tau : (n, K) the
    cumulative parameters of each rating's item (rater and facet levels);
    thresholds, thresholds_se : (M,) shared Rasch-Andrich thresholds, or (G, M) one row per group
    with ``groups`` (n,) each rating's row (the rater for the PCM, the level for thresholds per level)
    and ``group_ids`` their labels; ``mask`` (n,) ratings to use (e.g. papers not at an extreme score).

    A rating's measure is its paper's measure minus its item's location, ``(tau[M] - sum thr) / M``
    (``tau[k] = k loc + sum_{h<=k} thr[h]``), and its probabilities those of the fitted model.
    """
    from ..methods.quality import category_probabilities

    score = np.asarray(score, dtype=np.int64)
    theta = np.asarray(theta, dtype=np.float64)
    item_tau = np.asarray(item_tau, dtype=np.float64)
    thr = np.atleast_2d(np.asarray(thresholds, dtype=np.float64))
    se = None if thresholds_se is None else np.atleast_2d(np.asarray(thresholds_se, dtype=np.float64))
    g = np.zeros(score.size, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    keep = np.ones(score.size, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    M = item_tau.shape[1] - 1
    loc = (item_tau[:, M] - thr[g].sum(axis=1)) / M
    P = category_probabilities(theta, item_tau)
    out = []
    for k in range(thr.shape[0]):
        sel = keep & (g == k)
        if not sel.any():
            continue
        label = str(group_ids[k]) if len(group_ids) else ""
        out.append(category_statistics(score[sel], theta[sel] - loc[sel], P[sel], thr[k],
                                       None if se is None else se[k], low=low, label=label))
    return out
