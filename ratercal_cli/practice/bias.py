"""Rater x facet interaction (bias) tables, as Facets' Tables 13 and 14, fitted jointly with the
main effects by marginal maximum likelihood.

The model is the many-facet rating scale model with one location per rater x level cell:

    P(x | theta) ~ exp(x (theta - l[j, f]) - sum_{k<=x} kappa[k]),   theta ~ N(mu, sigma^2),
    l[j, f] = severity[j] + difficulty[f] + bias[j, f]

(Linacre's ``?,?B,?B,R``), fitted in one marginal ML fit (:func:`ratercal_cli.methods.mml.fit_mml`
with the cells as the further facet), so the papers' measures, the main effects, the thresholds and
every interaction are estimated together.  The interaction is the part of a cell's location that the
rater effect plus the level effect do not explain, those main effects fitted by least squares to the
cells' locations.  With ``X`` the incidence of the cells on raters and levels and ``S`` the *reference
cells* (those taken to be free of interaction, the main effects are fitted to), ``bias = l - X (X_S)^+ l_S``.  With every cell in ``S``
this is ``(I - X X^+) l``, the sum-to-zero interaction (for a complete design:
``l[j, f] - l[j, .] - l[., f] + l[., .]``).

Purification.  Under sum-to-zero a single large interaction is shared out over its row and column: a
rater 1 logit harsher on one of four criteria shows 0.69 there and about -0.23 on each of its other
three, which with 80 readings a cell reach Holm significance in most samples.  As DIF analysis does
with the items of its matching criterion (Lord, 1980, *Applications of IRT*, ch. 14; Candell &
Drasgow, 1988, Applied Psychological Measurement 12, 253-260; the anchor-selection framework of Kopf,
Zeileis & Strobl, 2015, Applied Psychological Measurement 39, 83-103) the cells are purified stepwise:
start with every cell in ``S``; while some cell of ``S`` is significant after Holm (over all cells, at
``alpha``), take the one with the largest |t| out of ``S`` (its interaction is then its contrast with
the main effects of the remaining reference cells) and recompute every interaction and its S.E.; stop
when none of ``S`` is.  A cell is taken out only while its rater and its level each keep at least two
reference cells and the reference cells still identify every main effect (else its interaction would be a
contrast with nothing).  Holm is applied at each step, as in the purification with multiple-comparison
adjustment of Hladka, Martinkova & Magis.  One step changes only ``S``: the fit, and so the cells'
locations and their covariance, are the same, each interaction a linear contrast of them.  The
p-values of cells taken out are conditional on their selection (reported as such: they are the cells
the procedure found); ``purify=False`` gives the plain sum-to-zero table.

Its standard errors are from the fit's information by the delta method, ``t = bias / S.E.`` with
count - 1 degrees of freedom (as Facets), p two-sided, Holm-adjusted over the cells, and |t| >= 2
flagged as Facets flags.  + = the rater is more severe in that level than its overall severity and
the level's difficulty predict.

Facets estimates each interaction after the main analysis with every other measure held at its
value; with two ratings per paper the paper's measure then absorbs much of a bias (the note in
:func:`.rater_report.rater_group_bias`).  The joint fit here does not.

In score points, per cell: the observed minus expected average score of its ratings under the
main-effects model (Facets' "Obs-Exp Average": negative where the rater scores lower there than
the main effects predict), and the bias's effect on the expected score, the mean over the cell's
ratings of ``E(theta_i; l + bias) - E(theta_i; l)`` at the papers' EAP measures (negative for + bias).

The pairwise table (Facets Table 14): within each level, every two raters' cell locations
``l[A, f] - l[B, f]`` (their severities with their biases there), S.E. from the joint covariance,
t, Holm over all pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..methods.mml import PRIOR_LOCATION_SD, PRIOR_STEP_SD, fit_mml
from ..methods.quality import expected_score
from ..ratings import Ratings
from .multiplicity import holm
from .text import num, pvalue, text_table

#: Facets flags an interaction whose |t| reaches this.
T_FLAG = 2.0


@dataclass
class BiasTable:
    """Rater x ``facet`` interactions (``rows``: one dict per observed cell; ``reference``: whether the
    main effects are fitted to it) and the pairwise contrasts (``pairs``), from one joint fit (``fit``:
    its :class:`MMLFit`)."""

    facet: str
    rows: list
    pairs: list
    alpha: float
    fit: object = None
    notes: list = field(default_factory=list)
    #: (rater, level) of the cells taken out of the reference cells, in the order taken (module docstring)
    purified: list = field(default_factory=list)

    @property
    def flagged(self) -> list:
        return [r for r in self.rows if abs(r["t"]) >= T_FLAG]

    @property
    def significant(self) -> list:
        return [r for r in self.rows if math.isfinite(r["p_holm"]) and r["p_holm"] < self.alpha]

    def to_dict(self) -> dict:
        return {"facet": self.facet, "model": "MFRM (rater x " + self.facet + " interaction, joint marginal ML)",
                "alpha": self.alpha, "rows": self.rows, "pairs": self.pairs, "flagged": len(self.flagged),
                "significant": len(self.significant),
                "purified": [list(c) for c in self.purified], "notes": self.notes}

    def format_text(self, all_pairs: bool = False) -> list:
        f = self.facet
        L = [f"Rater x {f} bias/interaction (Facets Table 13; joint MFRM by marginal ML; bias in logits, "
             f"+ = more severe in that {f}; p Holm-adjusted over cells; |t| >= {T_FLAG:g} flagged; ref 'out': a cell "
             f"the main effects are not fitted to, its bias measured against the others'):"]
        rows = [[str(r["rater"]), str(r["level"]), str(r["count"]), num(r["observed_average"], 2),
                 num(r["obs_minus_exp"], 2), num(r["bias"], 2), num(r["se"], 2), num(r["bias_points"], 2),
                 num(r["t"], 2), str(r["df"]), pvalue(r["p"]),
                 pvalue(r["p_holm"]) + (" *" if math.isfinite(r["p_holm"]) and r["p_holm"] < self.alpha else ""),
                 "<" if abs(r["t"]) >= T_FLAG else "", "" if r["reference"] else "out"] for r in self.rows]
        L += text_table(["rater", f, "count", "obs avg", "obs-exp", "bias", "S.E.", "points", "t", "df", "p",
                         "Holm p", "", "ref"], rows)
        L.append(f"  {len(self.flagged)} of {len(self.rows)} cells with |t| >= {T_FLAG:g}; "
                 f"{len(self.significant)} significant at {self.alpha:g} after Holm")
        shown = self.pairs if all_pairs else [p for p in self.pairs if abs(p["t"]) >= T_FLAG]
        L.append("")
        L.append(f"Rater pairs within each {f} (Facets Table 14: contrast = rater A's minus rater B's severity "
                 f"there, bias included; {'all' if all_pairs else f'|t| >= {T_FLAG:g}'}, "
                 f"{len(shown)} of {len(self.pairs)} pairs):")
        if shown:
            L += text_table([f, "rater A", "rater B", "contrast", "S.E.", "t", "p", "Holm p"],
                            [[str(p["level"]), str(p["rater_a"]), str(p["rater_b"]), num(p["contrast"], 2),
                              num(p["se"], 2), num(p["t"], 2), pvalue(p["p"]), pvalue(p["p_holm"])] for p in shown])
        L += [f"  {n}" for n in self.notes]
        return L


def _incidence(cell_rater, cell_level) -> np.ndarray:
    """The cells' incidence on raters and levels (a column per rater, then per level)."""
    C = cell_rater.size
    X = np.zeros((C, int(cell_rater.max()) + 1 + int(cell_level.max()) + 1))
    X[np.arange(C), cell_rater] = 1.0
    X[np.arange(C), int(cell_rater.max()) + 1 + cell_level] = 1.0
    return X


def _interaction_projector(cell_rater, cell_level, reference=None):
    """``I - X (X_S)^+ E_S`` over the observed cells: each cell's location less the rater + level effects
    fitted by least squares to the reference cells ``S`` (``reference``: bool per cell, None = all).  ``X``
    their incidence on raters and levels, ``E_S`` the rows of ``S``."""
    C = cell_rater.size
    X = _incidence(cell_rater, cell_level)
    S = np.ones(C, bool) if reference is None else np.asarray(reference, bool)
    fit_main = np.zeros((X.shape[1], C))
    fit_main[:, S] = np.linalg.pinv(X[S])
    return np.eye(C) - X @ fit_main


def _can_leave_reference(c, reference, cell_rater, cell_level) -> bool:
    """Whether cell ``c`` may leave the reference cells: its rater and its level keep two reference cells
    each, and the remaining reference cells identify as many main-effect contrasts as all the cells do."""
    rest = reference.copy()
    rest[c] = False
    if np.sum(rest & (cell_rater == cell_rater[c])) < 2 or np.sum(rest & (cell_level == cell_level[c])) < 2:
        return False
    X = _incidence(cell_rater, cell_level)
    return np.linalg.matrix_rank(X[rest]) == np.linalg.matrix_rank(X)


def _cell_tests(bias, se, count):
    """t, df and two-sided p of each cell's interaction, and Holm's p over the cells."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, bias / np.where(se > 0, se, 1.0), np.nan)
    df = count.astype(np.int64) - 1
    p = _two_sided(t, df)
    return t, df, p, holm(p)


def _two_sided(t, df):
    """Two-sided p of each ``t`` on ``df`` degrees of freedom (nan where ``df`` < 1 or ``t`` is not finite),
    in one call of the t distribution: a call a cell took 25,000 calls and most of check's CPU on four
    grades of 60 raters (the same values to the bit)."""
    t, df = np.asarray(t, dtype=np.float64), np.asarray(df)
    ok = (df > 0) & np.isfinite(t)
    p = np.full(t.shape, np.nan)
    p[ok] = 2 * stats.t.sf(np.abs(t[ok]), df[ok])
    return p


def bias_table(ratings: Ratings, levels, level_ids, facet: str = "facet", main_expected=None, alpha: float = 0.05,
               scale_low: int = 0, n_nodes: int | None = None, step_sd: float = PRIOR_STEP_SD,
               location_sd: float = PRIOR_LOCATION_SD, purify: bool = True, threshold_levels=None) -> BiasTable:
    """Rater x ``facet`` interactions of ``ratings`` (module docstring).

    ``levels``: (n,) int level of each rating (0..F-1), ``level_ids`` their labels.
    ``main_expected``: (n,) each rating's expected score (0..M) under the main-effects model, for the
    observed-minus-expected column (None: left nan).  ``purify``: take significant cells out of the
    reference cells stepwise (module docstring); False: the sum-to-zero interaction.
    ``threshold_levels``: (n,) int, the thresholds' level of each rating (``--steps-by`` the same facet as
    ``levels``, so each cell lies in one level): the joint fit gives each level its own thresholds, as
    the main-effects model does (None: shared thresholds).
    """
    levels = np.asarray(levels, dtype=np.int64)
    F = len(level_ids)
    key = ratings.rater * F + levels
    ukeys, cell = np.unique(key, return_inverse=True)
    cell = cell.ravel()
    cell_rater, cell_level = ukeys // F, ukeys % F
    if threshold_levels is None:
        fit = fit_mml(ratings, model="rsm", facet=cell, n_nodes=n_nodes, step_sd=step_sd, location_sd=location_sd)
        g_of = np.zeros(ratings.n_ratings, dtype=np.int64)
    else:   # the levels only index the thresholds: their effects are the cells' (held at 0)
        g_of = np.asarray(threshold_levels, dtype=np.int64)
        fit = fit_mml(ratings, model="rsm", facet=np.column_stack([cell, g_of]), n_nodes=n_nodes, step_sd=step_sd,
                      location_sd=location_sd, threshold_facet=1, anchor=lambda lay: lay.fix("facet1", None, 0.0))
    # the cells' locations l = severity[j] + gamma[cell] as rows over the fit's free coordinates
    K = ratings.max_score + 1
    lay = fit.layout
    jj = np.searchsorted(np.flatnonzero(ratings.ratings_per_rater() > 0), cell_rater)
    natural = lay.severity_rows[jj].toarray()
    natural[np.arange(ukeys.size), lay.index("facet0")] += 1.0
    L_rows = natural @ lay.free_map()[0].toarray()
    cov = fit.cov
    loc = fit.item_tau[:, -1] / (K - 1)                       # item u's location (each row of kappa sums to 0)
    u_of = {(int(j), int(c)): u for u, (j, c) in enumerate(fit.items[:, :2])}
    l_hat = np.array([loc[u_of[(int(j), c)]] for c, j in enumerate(cell_rater)])
    count = np.bincount(cell, minlength=ukeys.size)
    reference = np.ones(ukeys.size, bool)
    purified = []
    while True:
        Pj = _interaction_projector(jj, cell_level, reference)
        B_rows = Pj @ L_rows
        bias = Pj @ l_hat
        se = np.sqrt(np.maximum(np.einsum("ip,pq,iq->i", B_rows, cov, B_rows), 0.0))
        # a cell with no interaction to estimate (its rater seen in one level only, or its level by one rater
        # only): the projector's row is 0, and what is left is rounding noise, not a t to test
        fixed = np.abs(Pj).max(axis=1) < 1e-9
        bias[fixed], se[fixed] = 0.0, np.nan
        t, df, p, p_holm = _cell_tests(bias, se, count)
        if not purify:
            break
        candidates = [c for c in np.argsort(-np.abs(np.nan_to_num(t)), kind="stable")
                      if reference[c] and p_holm[c] < alpha]
        leaving = next((c for c in candidates if _can_leave_reference(c, reference, jj, cell_level)), None)
        if leaving is None:
            break
        reference[leaving] = False
        purified.append(int(leaving))
    total = np.bincount(cell, weights=ratings.score, minlength=ukeys.size)
    if main_expected is None:
        ome = np.full(ukeys.size, np.nan)
    else:
        ome = np.bincount(cell, weights=ratings.score - np.asarray(main_expected, float), minlength=ukeys.size) / count
    # the bias's effect on the expected score of the cell's ratings, at the papers' EAP measures
    theta = fit.eap[ratings.paper]
    thr = np.atleast_2d(fit.thresholds)
    kappa_cum = np.column_stack([np.zeros(thr.shape[0]), np.cumsum(thr, axis=1)])[g_of]   # each rating's
    x = np.arange(K)
    l_main = (l_hat - bias)[cell]
    e1 = expected_score(theta, x[None, :] * l_hat[cell][:, None] + kappa_cum)
    e0 = expected_score(theta, x[None, :] * l_main[:, None] + kappa_cum)
    points = np.bincount(cell, weights=e1 - e0, minlength=ukeys.size) / count
    rows = [dict(rater=ratings.rater_ids[cell_rater[c]], level=level_ids[cell_level[c]], count=int(count[c]),
                 observed_average=float(total[c] / count[c]) + scale_low, obs_minus_exp=float(ome[c]),
                 bias=float(bias[c]), se=float(se[c]), bias_points=float(points[c]), t=float(t[c]), df=int(df[c]),
                 p=float(p[c]), p_holm=float(p_holm[c]), reference=bool(reference[c])) for c in range(ukeys.size)]
    pairs = []
    for f in range(F):
        here = np.flatnonzero(cell_level == f)
        for a in range(here.size):
            for b in range(a + 1, here.size):
                ca, cb = here[a], here[b]
                row = L_rows[ca] - L_rows[cb]
                d = float(l_hat[ca] - l_hat[cb])
                s = float(np.sqrt(max(row @ cov @ row, 0.0)))
                t = d / s if s > 0 else math.nan
                df = int(count[ca] + count[cb]) - 2
                pairs.append(dict(level=level_ids[f], rater_a=ratings.rater_ids[cell_rater[ca]],
                                  rater_b=ratings.rater_ids[cell_rater[cb]], contrast=d, se=s, t=t, df=df))
    for pair, p in zip(pairs, _two_sided([q["t"] for q in pairs], [q["df"] for q in pairs]).tolist()):
        pair["p"] = p
    for r, v in zip(pairs, holm([r["p"] for r in pairs])):
        r["p_holm"] = float(v)
    notes = list(fit.notes)
    one = sorted({str(ratings.rater_ids[j]) for j in np.unique(cell_rater)
                  if np.sum(cell_rater == j) < 2}, key=str)
    if one:
        notes.append(f"rater(s) seen in one {facet} only: their interaction is 0 by definition ({', '.join(one)})")
    lone = [str(level_ids[f]) for f in np.unique(cell_level) if np.sum(cell_level == f) < 2]
    if lone:
        notes.append(f"{facet} level(s) scored by one rater only: the interaction is 0 by definition "
                     f"({', '.join(lone)})")
    out = [f"{rows[c]['rater']} {rows[c]['level']}" for c in purified]
    if out:
        notes.append(f"purified: {', '.join(out)} taken out of the cells the main effects are fitted to (largest |t| "
                     f"first, while significant after Holm; 'out' in the table); each one's bias is its contrast with "
                     f"the rater and {facet} effects of the other cells")
    return BiasTable(facet=facet, rows=rows, pairs=pairs, alpha=alpha, fit=fit, notes=notes,
                     purified=[(rows[c]["rater"], rows[c]["level"]) for c in purified])
