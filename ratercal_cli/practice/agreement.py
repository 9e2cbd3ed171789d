"""Inter-rater agreement: per rater pair and overall, for incomplete designs.

Every statistic is computed from the pairs of ratings two raters gave the same paper (a paper
with s ratings gives s(s-1)/2 pairs), gathered in one vectorised pass (no loop over raters or
rater pairs; cost linear in the number of such pairs), so only pairs of raters that share papers
appear.

* exact / adjacent agreement: share of pairs with equal scores / scores at most one point apart;
* quadratic-weighted kappa (Cohen 1968) of a rater pair from its K x K table ``O`` (n pairs):
  ``kappa_w = 1 - sum w O / sum w E``, ``w[i, j] = (i - j)^2``, ``E = rowsum x colsum / n``
  (R: ``psych::cohen.kappa`` of the pair's 0..M x 0..M table, its weighted kappa); overall, the same on the
  symmetrised pooled table ``O + O'`` of all pairs (each pair counted in both orders);
* Krippendorff's alpha, ordinal and interval (Krippendorff 2011), from the paper x score counts
  by the ``krippendorff`` package; papers with one rating are not pairable and drop out;
* one-way random ICC for papers scored by varying raters (Shrout & Fleiss 1979, ICC(1) and
  ICC(1,k)), over papers with two or more ratings, unbalanced one-way ANOVA with
  ``k0 = (N - sum n_i^2 / N) / (P - 1)`` (McGraw & Wong 1996): ``ICC(1) = (MSB - MSW) /
  (MSB + (k0 - 1) MSW)``, ``ICC(1,k) = (MSB - MSW) / MSB`` (the reliability of the mean of k0
  ratings), with the F-based 95% intervals.  With equal ratings per paper these are psych's
  ``ICC1`` and ``ICC1k``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..ratings import Ratings
from .text import num, text_table

__all__ = ["rating_pairs", "pair_tables", "weighted_kappa", "icc_oneway", "krippendorff_alpha",
           "agreement"]


def rating_pairs(ratings: Ratings):
    """Every pair of ratings of the same paper: ``(rater_a, rater_b, score_a, score_b)`` with
    ``rater_a < rater_b`` (int arrays), built per number of ratings per paper, vectorised."""
    order = np.argsort(ratings.paper, kind="stable")
    rater, score = ratings.rater[order], ratings.score[order]
    per = ratings.ratings_per_paper()
    per = per[per > 0]
    start = np.r_[0, np.cumsum(per)[:-1]]
    out_a, out_b, out_xa, out_xb = [], [], [], []
    for s in np.unique(per):
        if s < 2:
            continue
        st = start[per == s]
        ia, ib = np.triu_indices(int(s), 1)
        a = (st[:, None] + ia[None, :]).ravel()
        b = (st[:, None] + ib[None, :]).ravel()
        ra, rb, xa, xb = rater[a], rater[b], score[a], score[b]
        swap = ra > rb
        out_a.append(np.where(swap, rb, ra))
        out_b.append(np.where(swap, ra, rb))
        out_xa.append(np.where(swap, xb, xa))
        out_xb.append(np.where(swap, xa, xb))
    if not out_a:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e, e
    return tuple(np.concatenate(v) for v in (out_a, out_b, out_xa, out_xb))


#: :func:`pair_tables` counts into a table of raters^2 x scores^2 cells up to this many (32 MiB), else by sorting
PAIR_TABLE_CELLS = 1 << 22


def pair_tables(ratings: Ratings):
    """The K x K table of every rater pair that shares papers.

    Returns ``(pairs, tables)``: ``pairs`` (Q, 2) rater indices (a < b; a = b for a rater's two readings
    of a paper), ``tables`` (Q, K, K) counts, ``tables[q, x, y]`` papers rater a scored x and rater b
    scored y (a rater's two readings in the file's order).  The pairs of :func:`rating_pairs`, counted a
    distance at a time on the ratings sorted by paper and rater (:func:`.network.paper_pairs`), never
    listed: at 21 of 200 raters a paper and 1M ratings they were 10M pairs, four arrays and a sort of them
    (2.6 s of ``check``, and most of its memory)."""
    from ..network import paper_pairs

    K = ratings.max_score + 1
    J = ratings.n_raters
    order = np.lexsort((ratings.rater, ratings.paper))   # (stable: a rater's readings of a paper in file order)
    paper, rater, score = ratings.paper[order], ratings.rater[order], ratings.score[order]
    cells = J * J * K * K
    counts = np.zeros(cells, dtype=np.int64) if cells <= PAIR_TABLE_CELLS else None
    keys = []
    for d, same in paper_pairs(paper):
        key = ((rater[same].astype(np.int64) * J + rater[same + d]) * K + score[same]) * K + score[same + d]
        if counts is not None:
            counts += np.bincount(key, minlength=cells)
        else:
            keys.append(key)
    if counts is None:   # (many raters: the cells met, by sorting)
        cell, n = np.unique(np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64), return_counts=True)
        key, at = np.unique(cell // (K * K), return_inverse=True)
        tables = np.zeros((key.size, K * K), dtype=np.int64)
        tables[at.ravel(), cell % (K * K)] = n
    else:
        counts = counts.reshape(J * J, K * K)
        key = np.flatnonzero(counts.any(axis=1))
        tables = counts[key]
    return np.column_stack([key // J, key % J]), tables.reshape(key.size, K, K)


def weighted_kappa(tables):
    """Quadratic-weighted kappa of each table (..., K, K); nan where undefined (no expected
    disagreement, e.g. a rater who gave one score only)."""
    t = np.asarray(tables, dtype=np.float64)
    K = t.shape[-1]
    w = (np.arange(K)[:, None] - np.arange(K)[None, :]) ** 2.0
    n = t.sum(axis=(-2, -1))
    exp = t.sum(axis=-1)[..., :, None] * t.sum(axis=-2)[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (exp * w).sum(axis=(-2, -1)) / n
        o = (t * w).sum(axis=(-2, -1))
        return np.where(e > 0, 1.0 - o / e, np.nan)


def _agree(tables):
    t = np.asarray(tables, dtype=np.float64)
    K = t.shape[-1]
    d = np.abs(np.arange(K)[:, None] - np.arange(K)[None, :])
    n = t.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return n, (t * (d == 0)).sum(axis=(-2, -1)) / n, (t * (d <= 1)).sum(axis=(-2, -1)) / n


def score_counts(ratings: Ratings):
    """Paper x score counts (P, K) of the papers with two or more ratings (pairable units)."""
    K = ratings.max_score + 1
    counts = np.bincount(ratings.paper * K + ratings.score,
                         minlength=ratings.n_papers * K).reshape(ratings.n_papers, K)
    return counts[counts.sum(axis=1) >= 2]


def krippendorff_alpha(ratings: Ratings, level: str = "ordinal") -> float:
    """Krippendorff's alpha (``level``: ordinal, interval, nominal) by the ``krippendorff``
    package, from the paper x score counts over the scale ``0..M``; nan when undefined."""
    import krippendorff

    counts = score_counts(ratings)
    if counts.shape[0] == 0 or np.count_nonzero(counts.sum(axis=0)) < 2:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        a = krippendorff.alpha(value_counts=counts, value_domain=np.arange(ratings.max_score + 1),
                               level_of_measurement=level)
    return float(a)


@dataclass
class ICC:
    """One-way random ICC (see the module docstring); ``lo``/``hi``: 95% interval."""

    icc1: float
    icc1_lo: float
    icc1_hi: float
    icc1k: float
    icc1k_lo: float
    icc1k_hi: float
    k0: float
    F: float
    df1: int
    df2: int
    p_value: float
    n_papers: int


def _oneway(ratings: Ratings, score=None):
    """The one-way ANOVA of the P papers with two or more ratings: ``(P, df1, df2, msb, msw, k0)`` (only
    P where it is under 2: the rest NaN)."""
    per = ratings.ratings_per_paper()
    score = ratings.score if score is None else np.asarray(score)
    if (per == 1).any():
        use = per[ratings.paper] >= 2
        paper, x = ratings.paper[use], score[use].astype(np.float64)
    else:   # every rating (no copies of a million: 4 ms)
        paper, x = ratings.paper, np.asarray(score, dtype=np.float64)
    n_i = per[per >= 2].astype(np.float64)
    P, N = n_i.size, float(n_i.sum())
    if P < 2:
        return P, 0, 0, math.nan, math.nan, math.nan
    means_all = np.bincount(paper, weights=x, minlength=ratings.n_papers) / np.maximum(per, 1)
    means = means_all[per >= 2]
    ssb = float(np.sum(n_i * (means - x.mean()) ** 2))
    ssw = float(np.sum((x - means_all[paper]) ** 2))
    df1, df2 = P - 1, int(N - P)
    return P, df1, df2, ssb / df1, ssw / df2, (N - float(np.sum(n_i ** 2)) / N) / df1


def papers_clearly_differ(ratings: Ratings, alpha: float, score=None) -> bool:
    """True where the F test of :func:`icc_oneway` is significant at ``alpha`` beyond doubt, shown
    without the F distribution: F lies more than ``sqrt((1 - alpha) / alpha)`` of its standard
    deviations above its mean under no difference, where Cantelli's inequality bounds its p-value
    below ``alpha``.  (On a large file with any difference between papers F is there: at 1M ratings
    of 2 a paper, F > 1.0124 is.  The F distribution's functions are scipy.special's, 0.09 s CPU to
    import, a tenth of ``adjust -m NO`` on 1M ratings.)  False says nothing: ask :func:`icc_oneway`."""
    P, d1, d2, msb, msw, _ = _oneway(ratings, score)
    if P < 2 or d2 <= 4 or not msb > 0:
        return False
    if msw <= 0:
        return True   # F infinite: p 0
    mean = d2 / (d2 - 2)
    var = 2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4))
    t = msb / msw - mean
    return t > 0 and t * t > var * (1 - alpha) / alpha


def icc_oneway(ratings: Ratings, level: float = 0.95, score=None) -> ICC:
    """ICC(1) and ICC(1,k) of papers with two or more ratings (raters may differ by paper); ``score``:
    a value per rating in place of its score (e.g. the score less its criterion's mean)."""
    from scipy.special import fdtrc, fdtri   # scipy.stats' f.sf and f.ppf, without importing scipy.stats (0.5 s)

    nan = math.nan
    P, df1, df2, msb, msw, k0 = _oneway(ratings, score)
    if P < 2:
        return ICC(nan, nan, nan, nan, nan, nan, nan, nan, 0, 0, nan, P)
    if msb <= 0:
        return ICC(nan, nan, nan, nan, nan, nan, k0, nan, df1, df2, nan, P)
    if msw <= 0:   # every paper's ratings agree exactly: ICC 1, no interval
        return ICC(1.0, nan, nan, 1.0, nan, nan, k0, math.inf, df1, df2, 0.0, P)
    F = msb / msw
    a = (1 - level) / 2
    FL = F / fdtri(df1, df2, 1 - a)
    FU = F * fdtri(df2, df1, 1 - a)
    return ICC(icc1=(msb - msw) / (msb + (k0 - 1) * msw),
               icc1_lo=(FL - 1) / (FL + k0 - 1), icc1_hi=(FU - 1) / (FU + k0 - 1),
               icc1k=(msb - msw) / msb, icc1k_lo=1 - 1 / FL, icc1k_hi=1 - 1 / FU,
               k0=k0, F=F, df1=df1, df2=df2, p_value=float(fdtrc(df1, df2, F)), n_papers=P)


@dataclass
class Agreement:
    """What ``ratercal check`` prints about agreement: ``pairs`` (dicts per rater pair that
    shares papers) and ``overall`` (dict)."""

    pairs: list = field(default_factory=list)
    overall: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def to_dict(self):
        return {"pairs": self.pairs, "overall": self.overall, "notes": self.notes}


def agreement(ratings: Ratings, scale_low: int = 0) -> Agreement:
    """Agreement per rater pair that shares papers, and overall (see the module docstring)."""
    ids = ratings.rater_ids
    pairs, tables = pair_tables(ratings)
    n, exact, adjacent = _agree(tables)
    kappa = weighted_kappa(tables)
    rows = [dict(rater_a=ids[a], rater_b=ids[b], papers=int(m), exact=float(e), adjacent=float(d),
                 kappa_w=float(k)) for (a, b), m, e, d, k in zip(pairs, n, exact, adjacent, kappa)]
    out = Agreement(pairs=rows)
    if not rows:
        out.notes.append("no paper has two ratings: agreement cannot be computed")
        return out
    pooled = tables.sum(axis=0)
    sym = pooled + pooled.T
    N, ex, adj = _agree(pooled)
    icc = icc_oneway(ratings)
    out.overall = dict(rating_pairs=int(N), rater_pairs=len(rows), exact=float(ex), adjacent=float(adj),
                       kappa_w=float(weighted_kappa(sym)),
                       kappa_w_pair_median=float(np.nanmedian(kappa)) if np.isfinite(kappa).any() else math.nan,
                       alpha_ordinal=krippendorff_alpha(ratings, "ordinal"),
                       alpha_interval=krippendorff_alpha(ratings, "interval"),
                       icc=icc.__dict__)
    few = int((n < 10).sum())
    if few:
        out.notes.append(f"{few} of {len(rows)} rater pairs share fewer than 10 papers: their kappas are unstable")
    return out


def reading_agreement(ratings: Ratings) -> dict:
    """:func:`agreement`'s dict on the readings raters gave: with discrepancies resolved, on the
    papers' first two readings (``ratings.first_readings``; ``readings`` says so), the resolved
    pairs' overall figures beside them as ``resolved``.  The resolved pairs agree by construction
    (the third reading is kept with the nearer of the first two): on a district-style file they gave
    exact 40.9% and kappa 0.82 where the first two readings agree 28.4% (issue 28)."""
    first = getattr(ratings, "first_readings", None)
    if first is None:
        return agreement(ratings).to_dict()
    out = agreement(first).to_dict()
    out["readings"] = "first two"
    out["resolved"] = agreement(ratings).to_dict()["overall"]
    return out


#: Rater pairs sharing fewer papers than this are folded into one line of ``check``'s text.
THIN_PAIR = 10


def format_agreement(d: dict, max_pairs: int = 60) -> list:
    """Text lines of an :meth:`Agreement.to_dict`: the overall figures, then the rater pairs (all
    when at most ``max_pairs``, else the ``max_pairs`` with the lowest exact agreement among
    pairs sharing 10+ papers; all are in ``--json``)."""

    if not d["pairs"]:
        return [f"Agreement: {'; '.join(d['notes'])}", ""]
    o, icc = d["overall"], d["overall"]["icc"]
    pct = lambda v: "-" if v is None or not np.isfinite(v) else f"{100 * v:.1f}%"  # noqa: E731
    first = d.get("readings") == "first two"
    L = [f"Agreement ({o['rating_pairs']} pairs of ratings of the same paper, {o['rater_pairs']} rater pairs"
         + ("; on each paper's first two readings, before the third reading resolved a discrepancy" if first else "")
         + "):",
         f"  exact {pct(o['exact'])}, adjacent (within 1) {pct(o['adjacent'])}, quadratic-weighted kappa "
         f"{num(o['kappa_w'], 3)} (median over rater pairs {num(o['kappa_w_pair_median'], 3)})",
         f"  Krippendorff's alpha: ordinal {num(o['alpha_ordinal'], 3)}, interval {num(o['alpha_interval'], 3)}",
         f"  ICC(1) one-way random, {icc['n_papers']} papers: {num(icc['icc1'], 3)} "
         f"[{num(icc['icc1_lo'], 3)}, {num(icc['icc1_hi'], 3)}]; ICC(1,k), mean of k0 = {num(icc['k0'], 2)} ratings: "
         f"{num(icc['icc1k'], 3)} [{num(icc['icc1k_lo'], 3)}, {num(icc['icc1k_hi'], 3)}]",
         # (a staff reader saw 0.66 here beside the rater report's papers' reliability 0.83 and took one for wrong)
         "  (ICC(1,k): the reliability of a paper's raw mean, who read it counted as error; the rater report's",
         "   papers' reliability is of measures net of the raters' severities: the gap is roughly what adjusting can gain)"]
    if first and d.get("resolved"):
        r = d["resolved"]
        L.append(f"  after resolving (the pairs used, closer by construction): exact {pct(r['exact'])}, "
                 f"adjacent {pct(r['adjacent'])}, kappa {num(r['kappa_w'], 3)}")
    pairs = d["pairs"]
    thin = [p for p in pairs if p["papers"] < THIN_PAIR]
    if thin:   # pairs sharing a few papers say little each: one line for them all (all of them, if all are thin)
        pairs = [p for p in pairs if p["papers"] >= THIN_PAIR]
        n = sum(p["papers"] for p in thin)
        ex = sum(p["exact"] * p["papers"] for p in thin if np.isfinite(p["exact"]))
        L.append(f"  {len(thin)} rater pairs sharing fewer than {THIN_PAIR} papers ({n} papers in all; exact "
                 f"{pct(ex / n) if n else '-'}) are folded into this line; every pair in --json")
    shown = pairs
    if len(pairs) > max_pairs:
        big = [p for p in pairs if p["papers"] >= 10] or pairs
        shown = sorted(big, key=lambda p: (p["exact"], p["papers"]))[:max_pairs]
        L.append(f"  the {len(shown)} rater pairs (of {len(pairs)}) with the lowest exact agreement "
                 "among those sharing 10+ papers; every pair in --json")
    rows = [[str(p["rater_a"]), str(p["rater_b"]), str(p["papers"]), pct(p["exact"]), pct(p["adjacent"]),
             num(p["kappa_w"], 2)] for p in shown]
    if rows:
        L += text_table(["rater", "rater", "papers", "exact", "adjacent", "kappa_w"], rows)
    L += [f"  {n}" for n in d["notes"]]
    L.append("")
    return L


# ---- do the file's papers differ? (``adjust``'s warning and ``check --simulate``'s, :mod:`.simulate`)
#: A file whose papers' one-way ANOVA has p at least this has no detectable paper signal.
SIGNAL_ALPHA = 0.05


def _signal_scores(ratings: Ratings):
    """The ratings' scores, with facets each less its cell's mean (a criterion's difficulty is no
    difference between papers)."""
    x = ratings.score.astype(np.float64)
    if ratings.facets:
        cell = ratings.facet_cells()[0]
        x = x - (np.bincount(cell, weights=x) / np.maximum(np.bincount(cell), 1))[cell]
    return x


@dataclass
class PaperSignal(ICC):
    """:func:`paper_signal`: the one-way ANOVA's :class:`ICC` and, where it finds no difference between papers,
    the F test of the papers net of the raters' severities (:func:`papers_net_of_raters`; nan where not made)."""

    net_F: float = math.nan
    net_df1: int = 0
    net_df2: int = 0
    net_p: float = math.nan


#: the test net of the raters is made for at most this many raters (a raters x raters system, solved by its SVD:
#: 0.3 s at 1,000 raters, 27 times that at 3,000)
NET_MAX_RATERS = 1000


def papers_net_of_raters(ratings: Ratings, score=None):
    """``(F, df1, df2, p)``: the F test of the papers' effects in the additive model ``score = paper + rater +
    error`` against the raters' alone (papers of two or more ratings; least squares, the papers' effects
    absorbed: a raters x raters system), or None where it cannot be made (no residual degrees of freedom,
    more than NET_MAX_RATERS raters).  The one-way ANOVA counts a severe rater's gap as disagreement within
    papers: where one rater 1.6 logits harsh read 95% of 2,000 papers, it found F = 1.07 (p 0.06) and
    ``adjust`` warned that the scores "mostly reflect the raters" of a file whose adjustment took the RMSE
    from the truth from 0.996 to 0.617."""
    from scipy import sparse
    from scipy.special import fdtrc

    x = ratings.score.astype(np.float64) if score is None else np.asarray(score, dtype=np.float64)
    per = ratings.ratings_per_paper()
    keep = per[ratings.paper] >= 2
    paper, rater, x = ratings.paper[keep], ratings.rater[keep], x[keep]
    _, paper = np.unique(paper, return_inverse=True)
    raters, rater = np.unique(rater, return_inverse=True)
    N, P, J = x.size, int(paper.max(initial=-1)) + 1, raters.size
    if P < 2 or J > NET_MAX_RATERS:
        return None
    n_p = np.bincount(paper, minlength=P).astype(np.float64)
    n_j = np.bincount(rater, minlength=J).astype(np.float64)
    A = sparse.csr_matrix((np.ones(N), (paper, rater)), shape=(P, J))   # papers x raters: the ratings' counts
    sum_p = np.bincount(paper, weights=x, minlength=P)
    # the raters' effects with the papers' absorbed: (Z'Z - A' D_p^-1 A) b = Z'x - A' D_p^-1 (paper sums)
    C = np.diag(n_j) - (A.T @ sparse.diags(1.0 / n_p) @ A).toarray()
    rhs = np.bincount(rater, weights=x, minlength=J) - A.T @ (sum_p / n_p)
    b, _, rank, _ = np.linalg.lstsq(C, rhs, rcond=None)   # (rank: J less the blocks of raters no paper links)
    r = x - b[rater]
    resid = r - (np.bincount(paper, weights=r, minlength=P) / n_p)[paper]
    rss_full = float(resid @ resid)
    rss_raters = float(np.sum((x - (np.bincount(rater, weights=x, minlength=J) / n_j)[rater]) ** 2))
    df1, df2 = P + rank - J, N - P - rank
    if df1 < 1 or df2 < 1 or not rss_full > 0:
        return None
    F = ((rss_raters - rss_full) / df1) / (rss_full / df2)
    return float(F), int(df1), int(df2), float(fdtrc(df1, df2, F))


def _unselected(ratings: Ratings) -> Ratings:
    """The readings whose agreement says whether the papers differ: with discrepancies resolved, the papers' first
    two (:attr:`~ratercal_cli.ratings.Ratings.first_readings`), since the pairs kept agree by construction (the
    third reading kept with the nearer of the first two): a staff tester's random scores, resolved, gave F(299,
    300) = 8.67, p 8e-67, and no warning, where their first two readings give F = 0.89, p = 0.85."""
    first = getattr(ratings, "first_readings", None)
    return ratings if first is None else first


def paper_signal(ratings: Ratings):
    """Do the file's papers differ?  The one-way random ANOVA of papers of :func:`icc_oneway` (its F test and
    ICC(1,k)) on :func:`_signal_scores`, and where it finds no difference, the test net of the raters'
    severities (:func:`papers_net_of_raters`): a :class:`PaperSignal`; on the first two readings where
    discrepancies were resolved (:func:`_unselected`)."""
    ratings = _unselected(ratings)
    score = _signal_scores(ratings)
    icc = PaperSignal(**icc_oneway(ratings, score=score).__dict__)
    if _no_oneway_signal(icc):
        net = papers_net_of_raters(ratings, score)
        if net is not None:
            icc.net_F, icc.net_df1, icc.net_df2, icc.net_p = net
    return icc


def clear_paper_signal(ratings: Ratings) -> bool:
    """True where :func:`paper_signal`'s F test finds the papers differing beyond doubt, without the F
    distribution (:func:`papers_clearly_differ`): then
    :func:`no_paper_signal` is False, and the warning needs no test."""
    ratings = _unselected(ratings)
    return papers_clearly_differ(ratings, SIGNAL_ALPHA, score=_signal_scores(ratings))


def no_signal_text(icc) -> str:
    """"the file's papers do not differ detectably (the test)": the words of ``check --simulate``'s
    and ``adjust``'s warnings where :func:`no_paper_signal`."""
    test = ("the papers' mean scores do not vary at all" if not np.isfinite(icc.F) else
            f"one-way ANOVA of papers F({icc.df1}, {icc.df2}) = {icc.F:.2f}, p = {icc.p_value:.2f}; reliability "
            f"of a paper's mean score ICC(1,k) = {icc.icc1k:.2f}")
    if np.isfinite(getattr(icc, "net_F", math.nan)):
        test += f"; net of the raters' severities F({icc.net_df1}, {icc.net_df2}) = {icc.net_F:.2f}, p = {icc.net_p:.2f}"
    return f"the file's papers do not differ detectably ({test})"


def no_paper_signal(icc) -> bool:
    """True where :func:`paper_signal` finds no difference between papers: the one-way F test not
    significant at :data:`SIGNAL_ALPHA` (or the papers' means varying no more than their ratings), nor
    the test net of the raters' severities where it was made."""
    return _no_oneway_signal(icc) and not (getattr(icc, "net_p", math.nan) < SIGNAL_ALPHA)


def _no_oneway_signal(icc) -> bool:
    if icc.n_papers < 2 or icc.df2 == 0:
        return False   # nothing to test (one rating per paper): no claim either way
    return not (icc.p_value < SIGNAL_ALPHA)
