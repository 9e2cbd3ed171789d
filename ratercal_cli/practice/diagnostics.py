"""Is adjustment warranted?  The tests of Denny (1990, pp. 7-8) and Chapter 5's rule.

Denny's "When adjustment is not recommended": (1) when rater differences are not
statistically significant -- "an F-test in an analysis of variance" for the means,
"a homogeneity of variance test" for the spreads, "a chi-square test ... at any
point on the rating scale", "a Kolmogorov-Smirnov test does the same but with
slightly more power"; (2) when papers are not randomly assigned to raters; (3) when
all raters score all papers.  Chapter 5 (p. 103): "With fewer than 8 papers per
rater or with non-random assignment of papers to raters, no equating ... With 8 to
20 papers per rater and random assignment ..., truncated mean equating ... With
more than 20 papers per rater, truncated linear equating".

Whether the raters are linked (every rater reachable from every other through
papers they share) decides whether the pairwise and PCM methods can put all
raters on one scale; it is computed as the connected components of the
paper-rater graph.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING
from dataclasses import asdict, dataclass, field, replace

import numpy as np
from scipy import stats

from ..errors import MethodError
from ..fit_stats import fit_rows
from ..methods.base import MIN_RATINGS
from ..methods.cml import ConditionalPCM, conditional_work, too_costly
from ..methods.mml import MarginalRaterModel
from ..network import rater_components as rater_labels
from ..ratings import Ratings
from ..vocabulary import NEEDS_TWO_RATERS
from .agreement import agreement, reading_agreement  # noqa: F401
from .multiplicity import holm
from .rater_report import RATER_MODEL, RaterReport, fit_rater_model, report_and_model
from .study_rule import study_recommendation
from .text import json_clean, num, pvalue, text_table

if TYPE_CHECKING:   # only for the annotation (assignment.py does not import this module either way)
    from .assignment import Assignment

ALPHA = 0.05
#: Cochran's rule: a chi-square with over 20% of expected counts below 5 is not trusted.
SPARSE_NOTE = "approximate, not counted"
FEW_PAPERS = 8      # fewer than this per rater: no equating
MANY_PAPERS = 20    # more than this per rater: TLI; 8..20: TMN


# -- small pieces --------------------------------------------------------------------
def score_table(ratings: Ratings) -> np.ndarray:
    """Counts ``[rater, score]``, shape ``(n_raters, M + 1)``."""
    k = ratings.max_score + 1
    return np.bincount(ratings.rater * k + ratings.score,
                       minlength=ratings.n_raters * k).reshape(ratings.n_raters, k)


def rater_summary(ratings: Ratings):
    """Per rater: number of ratings (= papers), mean and SD (n - 1 divisor) of the scores."""
    n = ratings.ratings_per_rater()
    s = ratings.score.astype(np.float64)
    sums = np.bincount(ratings.rater, weights=s, minlength=ratings.n_raters)
    sq = np.bincount(ratings.rater, weights=s * s, minlength=ratings.n_raters)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / n
        var = (sq - n * mean * mean) / (n - 1)
    sd = np.sqrt(np.where(n > 1, np.maximum(var, 0.0), np.nan))
    return n, mean, sd


def _groups(ratings: Ratings, min_size=1):
    order = np.argsort(ratings.rater, kind="stable")
    counts = ratings.ratings_per_rater()
    parts = np.split(ratings.score[order].astype(np.float64), np.cumsum(counts)[:-1])
    return [g for g in parts if g.size >= min_size]


def _quiet(fn, *args, **kw):
    """``(fn(*args, **kw), "")`` with the warnings scipy and numpy give on degenerate data (a rater
    whose scores do not vary: division by zero, log of zero) silenced, since the caller reports a
    non-finite statistic itself; ``(None, reason)`` where scipy refuses the data (its ``ValueError``),
    the reason naming the test and scipy's message.  Any other exception is a bug and propagates."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kw), ""
        except ValueError as exc:
            message = (str(exc).splitlines() or [type(exc).__name__])[0]
            return None, f"scipy's {fn.__name__} refused the data: {message}"


@dataclass
class TestResult:
    """A test's statistic, degrees of freedom and p-value (NaN when undefined)."""

    test: str
    statistic: float
    df: tuple
    p_value: float
    note: str = ""

    def significant(self, alpha=ALPHA) -> bool:
        return bool(np.isfinite(self.p_value) and self.p_value < alpha)


def _nan_result(test, note):
    return TestResult(test, math.nan, (), math.nan, note)


# -- the tests -----------------------------------------------------------------------
def anova_means(ratings: Ratings) -> TestResult:
    """One-way ANOVA F of the rater means (scipy ``f_oneway``), raters with ratings."""
    groups = _groups(ratings)
    n = sum(g.size for g in groups)
    if len(groups) < 2 or n <= len(groups):
        return _nan_result("ANOVA F, rater means", "needs two raters and more ratings than raters")
    res, refused = _quiet(stats.f_oneway, *groups)
    df = (len(groups) - 1, n - len(groups))
    if res is None or not np.isfinite(res.statistic):
        return TestResult("ANOVA F, rater means", math.nan, df, math.nan, refused or "no variation within raters")
    return TestResult("ANOVA F, rater means", float(res.statistic), df, float(res.pvalue))


def variance_tests(ratings: Ratings):
    """Homogeneity of the raters' spreads: Levene (mean-centred, as SPSS ONEWAY), Brown-Forsythe
    (median-centred Levene) and Bartlett; raters with two or more ratings."""
    groups = _groups(ratings, min_size=2)
    n = sum(g.size for g in groups)
    out = []
    for name, fn, kw in (("Levene, rater spreads", stats.levene, {"center": "mean"}),
                         ("Brown-Forsythe, rater spreads", stats.levene, {"center": "median"}),
                         ("Bartlett, rater spreads", stats.bartlett, {})):
        if len(groups) < 2:
            out.append(_nan_result(name, "needs two raters with two or more ratings"))
            continue
        res, refused = _quiet(fn, *groups, **kw)
        df = (len(groups) - 1,) if fn is stats.bartlett else (len(groups) - 1, n - len(groups))
        if res is None or not np.isfinite(res.statistic):
            note = refused or ("a rater gave one score only" if fn is stats.bartlett else "no variation")
            out.append(TestResult(name, math.nan, df, math.nan, note))
        else:
            out.append(TestResult(name, float(res.statistic), df, float(res.pvalue)))
    return out


def _chi2(table):
    """``(statistic, df, p, share of expected counts < 5)`` of a contingency table without its empty
    rows and columns; ``(None, reason)`` when it cannot be computed."""
    table = table[:, table.sum(axis=0) > 0]
    table = table[table.sum(axis=1) > 0]
    if table.shape[0] < 2 or table.shape[1] < 2:
        return None, "needs two raters and two scores"
    res, refused = _quiet(stats.chi2_contingency, table, correction=False)
    if res is None:
        return None, refused
    small = float((res.expected_freq < 5).mean())
    return (float(res.statistic), int(res.dof), float(res.pvalue), small), ""


def chi_square_raters(ratings: Ratings) -> TestResult:
    """Pearson chi-square of the rater x score table (independence of score and rater)."""
    got, why = _chi2(score_table(ratings))
    if got is None:
        return _nan_result("chi-square, rater x score", why)
    stat, dof, p, small = got
    note = f"{small:.0%} of expected counts < 5: {SPARSE_NOTE}" if small > 0.2 else ""
    return TestResult("chi-square, rater x score", stat, (dof,), p, note)


def per_rater_tests(ratings: Ratings):
    """Each rater against the pooled others: chi-square of the 2 x (M+1) table and
    two-sample Kolmogorov-Smirnov (scipy ``ks_2samp``); p-values Holm-adjusted over raters.

    Returns a dict of arrays (NaN for a rater without ratings): ``chi2, chi2_df, chi2_p,
    chi2_p_holm, ks_d, ks_p, ks_p_holm``.
    """
    table = score_table(ratings)
    total = table.sum(axis=0)
    r = ratings.n_raters
    out = {k: np.full(r, np.nan) for k in ("chi2", "chi2_df", "chi2_p", "ks_d", "ks_p")}
    groups = np.split(ratings.score[np.argsort(ratings.rater, kind="stable")],
                      np.cumsum(ratings.ratings_per_rater())[:-1])
    for j in range(r):
        if table[j].sum() == 0 or table[j].sum() == total.sum():
            continue
        got, _ = _chi2(np.vstack([table[j], total - table[j]]))
        if got is not None:
            out["chi2"][j], out["chi2_df"][j], out["chi2_p"][j], _ = got
        if max(table[j].sum(), total.sum() - table[j].sum()) > KS_EXACT_MAX_N:
            out["ks_d"][j], out["ks_p"][j] = ks_from_counts(table[j], total - table[j])
            continue
        others = ratings.score[ratings.rater != j]
        res, _ = _quiet(stats.ks_2samp, groups[j], others)
        if res is not None:
            out["ks_d"][j], out["ks_p"][j] = res.statistic, res.pvalue
    out["chi2_p_holm"] = holm(out["chi2_p"])
    out["ks_p_holm"] = holm(out["ks_p"])
    return out


#: scipy's ``ks_2samp`` computes exact p-values up to this sample size (its MAX_AUTO_N),
#: Smirnov's asymptotic distribution above it.
KS_EXACT_MAX_N = 10000


def ks_from_counts(c1, c2):
    """Two-sample two-sided Kolmogorov-Smirnov ``(D, p)`` from score counts, for samples over
    :data:`KS_EXACT_MAX_N` (scipy's asymptotic branch): ``D = max |F1 - F2|`` over the
    categories, ``p = kstwo.sf(D, round(n1 n2 / (n1 + n2)))``, what ``stats.ks_2samp`` gives
    from the sorted samples, in time linear in the categories instead of the ratings."""
    n1, n2 = int(c1.sum()), int(c2.sum())
    diffs = np.cumsum(c1) / n1 - np.cumsum(c2) / n2
    min_s = np.clip(-diffs.min(), 0, 1)
    max_s = diffs.max()
    d = min_s if min_s > max_s else max_s
    m, n = sorted([float(n1), float(n2)], reverse=True)
    p = np.clip(stats.kstwo.sf(d, np.round(m * n / (m + n))), 0, 1)
    return float(d), float(p)


def ks_summary(per, rater_ids) -> TestResult:
    """The KS row of the overall tests: D and Holm p of ONE rater, the one with the smallest Holm p.

    Holm's adjusted p is monotone in the raw p, so that rater is the one with the smallest
    raw p (the first of equals); its name is in the row's label.
    """
    p_raw, p_holm = per["ks_p"], per["ks_p_holm"]
    ok = np.isfinite(p_holm) & np.isfinite(p_raw)
    if not ok.any():
        return _nan_result("KS, each rater vs others", "no rater has ratings to compare with others")
    j = int(np.flatnonzero(ok)[np.argmin(p_raw[ok])])
    return TestResult(f"KS, rater {rater_ids[j]} vs others (smallest Holm p)", float(per["ks_d"][j]), (),
                      float(p_holm[j]))


def counted_groups(components, papers_of) -> list:
    """The groups of ``components`` (lists of raters that share no paper with another list) that hold a rater
    Chapter 5's rule counts: ``papers_of(rater)`` at least MIN_RATINGS.  A group of raters of a single rating
    each (a new rater's one reading of a paper no one else read) is kept raw by every method, and is no
    group that cannot be put on the others' scale (:meth:`CheckReport.counted_components`, the check's note)."""
    return [c for c in components if any(papers_of(x) >= MIN_RATINGS for x in c)]


def rater_components(ratings: Ratings):
    """Groups of raters linked by shared papers (:func:`network.rater_components`),
    as lists of rater indices (raters without ratings left out), largest first."""
    labels = rater_labels(ratings)
    comps = {}
    for j in np.flatnonzero(labels >= 0):
        comps.setdefault(int(labels[j]), []).append(int(j))
    return sorted(comps.values(), key=lambda c: (-len(c), c[0]))


# -- Chapter 5's rule ----------------------------------------------------------------
def _who(raters, n=4):
    """``rater R3`` or ``raters R3, R7`` (at most ``n`` named, then how many more)."""
    raters = [str(r) for r in raters]
    if not raters:
        return "a rater"
    more = f" and {len(raters) - n} more" if len(raters) > n else ""
    return ("rater " if len(raters) == 1 else "raters ") + ", ".join(raters[:n]) + more


def _fold_remedy(ratings: Ratings, labels) -> str:
    """The remedy where Chapter 5's rule stops for raters of few papers whose labels are another rater's written
    otherwise ("3.0" beside "3", "r2" beside "R2": :func:`.ratings_file.label_key`): merging them, not leaving
    their readings out (a tester's rater "3.0", 3 papers, was one rater "3" exported as a decimal); "" where
    none is."""
    from ..errors import mention
    from .ratings_file import label_key

    keys: dict = {}
    for label in ratings.rater_ids:
        keys.setdefault(label_key(str(label), zeros=True), []).append(str(label))
    alike = [(str(label), [o for o in keys[label_key(str(label), zeros=True)] if o != str(label)]) for label in labels]
    alike = [(label, others) for label, others in alike if others]
    if not alike:
        return ""
    said = "; ".join(f"{label!r} is {' or '.join(map(repr, others))} written otherwise" for label, others in alike)
    flag = mention("fold_labels", True)
    give = "fold_labels=True" if flag.startswith("fold_labels") else flag
    return f"; {said}: merge them ({give}) and check again"


def _leave_out(ratings: Ratings, labels) -> str:
    """The remedy where Chapter 5's rule stops for raters of few papers whose every paper another rater read
    too: leaving their readings out lets the others be adjusted (a staff member was told only "no
    adjustment", for 60 students, because one rater read 2 of their papers); "" where a paper of theirs has
    no other reading."""
    few = _read_by(ratings, labels)
    theirs = few > 0
    if not theirs.any() or (ratings.ratings_per_paper()[theirs] == few[theirs]).any():
        return ""
    return (f"; every paper {'they' if len(labels) > 1 else 'this rater'} read was read by another rater too: "
            f"leave out {'their' if len(labels) > 1 else 'the'} {int(few.sum())} reading(s) ({leave_out_words(labels)}) "
            "and check again: the rule then looks at the others")


def _read_by(ratings: Ratings, labels) -> np.ndarray:
    """Each paper's number of readings by the raters ``labels``."""
    ids = {label: j for j, label in enumerate(ratings.rater_ids)}
    by = np.isin(ratings.rater, [ids[label] for label in labels if label in ids])
    return np.bincount(ratings.paper[by], minlength=ratings.n_papers)


def _going_on(ratings: Ratings, labels) -> str:
    """The rule's remedy where a rater of FEW_PAPERS or more papers read each paper of the few-paper raters'
    too: the one recommendation goes on with the others (:attr:`CheckReport.rule_others`), which the rule's line
    says (a staff tester read "leave out ... and check again" beside a recommendation already made without it)."""
    one = len(labels) == 1
    return (f"; a rater of {FEW_PAPERS} or more papers read each paper {'this rater' if one else 'they'} read too: "
            f"the recommendation goes on with the other raters (to leave {'its' if one else 'their'} "
            f"{int(_read_by(ratings, labels).sum())} reading(s) out instead: {leave_out_words(labels)})")


def _read_alone(ratings: Ratings, labels, alone) -> str:
    """Where the rule's stop stands because papers of the few-paper raters' (``alone``, indices) were read by no
    rater of FEW_PAPERS or more: those papers named (a staff tester was given the stop without the paper that made
    it)."""
    if not alone.size:
        return ""
    one = len(labels) == 1
    names = [str(ratings.paper_ids[p]) for p in alone[:3]]
    return (f"; {alone.size} paper(s) {'this rater' if one else 'they'} read no rater of {FEW_PAPERS} or more papers "
            f"read ({', '.join(names)}{' ...' if alone.size > 3 else ''}): nothing places "
            f"{'this rater' if one else 'them'} against the others (leaving {'its' if one else 'their'} readings out, "
            f"{leave_out_words(labels)}, adjusts the others and leaves {'that paper' if alone.size == 1 else 'those papers'} "
            "without an adjusted score where no other rater read it)")


def _set_aside(few, method: str, why: str) -> str:
    """The one recommendation's reason where raters of few papers, each read by a rater of more too, do not
    stop the others' adjustment (:attr:`CheckReport.rule_others`)."""
    one = len(few) == 1
    who, its, it = (f"rater {few[0]}", "its", "it does") if one else (f"raters {', '.join(few)}", "their", "they do")
    return (f"{who} scored fewer than {FEW_PAPERS} papers{'' if one else ' each'}, but a rater of {FEW_PAPERS} or more "
            f"read each of {its} papers too, so {it} not stop the others' adjustment: Chapter 5's rule on the other "
            f"raters: {method} ({why})" + ("" if method == "NO" else f"; {its} own readings are adjusted with the rest "
                                                                  f"(to leave them out instead: {leave_out_words(few)})"))


def leave_out_words(labels) -> str:
    """How to leave the raters ``labels`` out, in the words of the interface in use: ``--leave-out X`` (each
    label quoted as a shell needs), the app's setting, the library's ``leave_out=[...]``."""
    import shlex

    from ..errors import mention

    names = [str(label) for label in labels]
    flag = mention("leave_out")   # (--leave-out on the command line, the app's setting, the library's argument)
    if flag == "leave_out":
        return f"leave_out={names!r}"
    if flag.startswith("--"):   # (one option a rater, each quoted as a shell needs: 'Mrs Z', 'Smith, J')
        return " ".join(f"{flag} {shlex.quote(n)}" for n in names)
    return f"{flag}: {', '.join(names)}"


def recommend(min_papers: int, assignment: str = "random", warranted: bool | None = True,
              all_scored_all: bool = False, fewest=(), under=()):
    """(method, reason) by Denny's Chapter 5 rule and pp. 7-8; the reason names the raters the
    deciding rule is about.

    ``assignment``: "random" or "nonrandom"; ``min_papers``: the fewest papers any
    rater scored, ``fewest`` the raters who scored that many, ``under`` every rater with fewer
    than :data:`FEW_PAPERS`; ``warranted``: whether any test found raters differing (None:
    not known).
    """
    if all_scored_all:
        return "NO", "every rater scored every paper, so rater effects touch all papers alike"
    if assignment == "nonrandom":
        return "NO", "papers were not randomly assigned to raters (Chapter 5: no equating)"
    if min_papers < FEW_PAPERS:
        others = [r for r in under if r not in fewest]
        also = f"; {_who(others)} also fewer than {FEW_PAPERS}" if others else ""
        return "NO", (f"{_who(fewest)} scored only {min_papers} paper(s), fewer than {FEW_PAPERS}{also}: "
                      "rater means are unstable (Chapter 5: no equating)")
    if warranted is False:
        return "NO", "no test found the raters differing significantly: no adjustment is necessary"
    if min_papers <= MANY_PAPERS:
        return "TMN", (f"the fewest papers a rater scored is {min_papers} ({_who(fewest)}), within "
                       f"{FEW_PAPERS} to {MANY_PAPERS}: truncated mean equating (rater spreads are unstable)")
    return "TLI", (f"every rater scored more than {MANY_PAPERS} papers (fewest {min_papers}, {_who(fewest)}): "
                   "truncated linear equating")


# -- the report ----------------------------------------------------------------------
@dataclass
class CheckReport:
    """Everything ``ratercal check`` prints for one group of ratings."""

    group: str | None
    scale_low: int
    scale_high: int
    n_ratings: int
    n_papers: int
    ratings_per_paper: dict
    raters: list                   # per rater dicts: rater, papers, mean, sd, counts, tests
    tests: list                    # TestResult
    components: list               # lists of rater labels
    min_papers: int
    assignment: str
    alpha: float
    warranted: bool
    warranted_by: list
    recommendation: str
    reason: str
    #: the deciding tests that found no difference at ``alpha`` (a memo that named only the one that did read as if
    #: every test had, a staff tester: the ANOVA's p 0.415 beside the KS's 0.002)
    found_none: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    #: where the rule stops at raters of fewer than FEW_PAPERS papers each of whose papers a rater of more read
    #: too: the rule on those others (``method``, ``reason``, ``few``: the raters set aside), which the one
    #: recommendation follows (:func:`.recommend.recommend_group`); {} elsewhere
    rule_others: dict = field(default_factory=dict)
    #: the per-rater fit table of the PCM (:class:`RaschFit`: :attr:`rasch_fit`, :attr:`rasch_notes`)
    rasch: RaschFit | None = field(default=None, repr=False, compare=False)
    rater_report: RaterReport | None = None            # the Facets-style rater report
    agreement: dict = field(default_factory=dict)      # agreement.Agreement.to_dict()
    study: dict = field(default_factory=dict)          # study_rule.study_recommendation()
    #: how papers were assigned to raters: what the file shows (:class:`.assignment.Assignment`)
    assignment_found: Assignment | None = field(default=None, repr=False, compare=False)
    #: the one recommendation (:class:`.recommend.Recommendation`): method, shrinkage, reasons
    decision: object = field(default=None, repr=False, compare=False)
    #: the fitted rater model behind ``rater_report`` (None: not fitted), for the bias analysis
    #: and the Wright map; not part of :meth:`to_dict`
    rater_model: object = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        # the one recommendation (the command line's), Chapter 5's rule beside it where it differs: the field
        # ``recommendation`` is the rule's pick (``to_dict``'s "rule"), which the repr once gave as the recommendation
        said = self.recommendation if self.decision is None else self.decision.label
        rule = "" if said == self.recommendation else f" (Chapter 5's rule: {self.recommendation})"
        return (f"<CheckReport {self.group!r}: {self.n_ratings} ratings, {self.n_papers} papers, "
                f"{len(self.raters)} raters; recommended {said}{rule}; see .format_text(), .to_dict()>")

    @property
    def rasch_fit(self) -> list:
        """Per rater: infit/outfit mean squares of the PCM (:func:`rasch_fit`), fitted when first read."""
        return self.rasch.rows if self.rasch is not None else []

    @property
    def rasch_notes(self) -> list:
        return self.rasch.notes if self.rasch is not None else []

    def to_dict(self) -> dict:
        d = asdict(replace(self, rater_model=None, assignment_found=None, decision=None, rasch=None))
        del d["rater_model"], d["decision"]
        items = list(d.items())   # (the table where it always stood, after the notes)
        at = list(d).index("rasch")
        d = dict(items[:at] + [("rasch_fit", self.rasch_fit), ("rasch_notes", self.rasch_notes)] + items[at + 1:])
        d["rule"] = {"recommendation": d.pop("recommendation"), "reason": d.pop("reason")}
        others = d.pop("rule_others")
        if others:
            d["rule"]["others"] = others
        if self.decision is not None:
            d.update(self.decision.to_dict())
        d["assignment_found"] = self.assignment_found.to_dict() if self.assignment_found is not None else None
        d["rater_report"] = self.rater_report.to_dict() if self.rater_report is not None else {}
        d["linked"] = len(self.components) <= 1
        return json_clean(d)

    def counted_components(self) -> list:
        """The groups of raters that share no paper with each other (:attr:`components`) that hold a rater
        Chapter 5's rule counts (two or more ratings, MIN_RATINGS): a new rater's single rating on a paper no one
        else read made a group of its own, and the recommendation left every paper alone, where every method
        keeps that rating raw and adjusts the rest (a tester's file: NO 0.649 RMSE, the recommendation without
        that rating 0.543)."""
        papers = {str(r["rater"]): r["papers"] for r in self.raters}
        return counted_groups(self.components, lambda x: papers.get(str(x), 0))

    def format_text(self, title="", group_label=None) -> str:
        """The tables a person reads at a glance; ``group_label`` defaults to ``[group]``."""
        L = []
        if group_label is None and self.group is not None:
            group_label = f"[{self.group}]"
        head = title + (f"  {group_label}" if group_label else "")
        L.append(f"{head}  scale {self.scale_low}-{self.scale_high}: {self.n_ratings} ratings, "
                 f"{self.n_papers} papers, {len(self.raters)} raters".strip())
        rpp = ", ".join(f"{k} rating(s): {v}" for k, v in self.ratings_per_paper.items())
        L.append(f"papers with {rpp}")
        counted = self.counted_components()
        if len(self.components) <= 1:
            linked = "yes (one linked group)"
        elif len(counted) <= 1:   # (the others single ratings on papers no one else read: kept raw)
            alone = [str(x) for c in self.components if c not in counted for x in c]
            linked = (f"yes, but for {len(alone)} rater(s) of a single rating on a paper no one else read (kept raw): "
                      + ", ".join(alone[:8]) + (" ..." if len(alone) > 8 else ""))
        else:
            linked = (f"NO: {len(self.components)} separate groups: "
                      + " | ".join(" ".join(map(str, c)) for c in self.components))
        L.append(f"raters linked through shared papers: {linked}")
        L.append("")
        scores = list(range(self.scale_low, self.scale_high + 1))
        hdr = (["rater", "papers", "mean", "sd"] + [str(s) for s in scores]
               + ["chi2 p*", "KS D", "KS p*"])
        rows = []
        for r in self.raters:
            rows.append([str(r["rater"]), str(r["papers"]), num(r["mean"], 2), num(r["sd"], 2)]
                        + [str(c) for c in r["counts"]]
                        + [pvalue(r["chi2_p_holm"]), num(r["ks_d"], 3), pvalue(r["ks_p_holm"])])
        L += text_table(hdr, rows)
        L.append("  * Holm-adjusted over raters; each rater against the pooled others")
        L.append("")
        trows = [[t.test, num(t.statistic, 3), ", ".join(str(d) for d in t.df) or "-", pvalue(t.p_value),
                  ("*" if t.significant(self.alpha) else "") + (f" {t.note}" if t.note else "")]
                 for t in self.tests]
        L += text_table(["test", "statistic", "df", "p", ""], trows)
        L.append("")
        if self.rater_report is not None:
            L += self.rater_report.format_text()
        if self.agreement:
            from .agreement import format_agreement

            L += format_agreement(self.agreement)
        if self.rater_report is not None and self.rater_report.fitted:
            pass   # the rater report's infit/outfit replace the PCM table (still in --json: rasch_fit)
        elif self.rasch_fit:
            L.append("Rasch fit per rater (PCM by conditional ML, Warm qualities): mean squares and z;")
            L.append("  relative = the rater's mean square over the raters' median (flag: > 1.5 noisy, < 0.67 muted)")
            frows = [[str(r["rater"]), str(r["n"]), num(r["infit"], 2), num(r["infit_z"], 1), num(r["outfit"], 2),
                      num(r["outfit_z"], 1), num(r["relative"], 2), r["flag"]] for r in self.rasch_fit]
            L += text_table(["rater", "n", "infit", "z", "outfit", "z", "relative", ""], frows)
            L += [f"  {n}" for n in self.rasch_notes]
            L.append("")
        elif self.rasch_notes:
            L.append(f"Rasch fit per rater: not computed ({'; '.join(self.rasch_notes)})")
            L.append("")
        if self.warranted:
            L.append(f"rater differences significant at {self.alpha:g}: yes ({'; '.join(self.warranted_by)})")
        else:
            L.append(f"rater differences significant at {self.alpha:g}: no")
        fewest = [str(r["rater"]) for r in self.raters if r["papers"] == self.min_papers]
        L.append(f"papers per rater: fewest {self.min_papers} ({', '.join(fewest[:4])}"
                 f"{f' and {len(fewest) - 4} more' if len(fewest) > 4 else ''}); assignment of papers to raters: "
                 f"{self.assignment}" + (" (assumed; say --assignment nonrandom if not)" if self.assignment == "random"
                                         and (self.assignment_found is None or self.assignment_found.given != "auto")
                                         else ""))
        if self.assignment_found is not None:
            L += self.assignment_found.lines()
        L.append(f"CHAPTER 5 RULE: {self.recommendation} -- {self.reason}")
        if self.study.get("lines"):
            L += self.study["lines"]
        if self.decision is not None:
            L.append(f"RECOMMENDATION: {self.decision.label} -- {self.decision.reasons[-1]}")
            L += [f"  {r}" for r in self.decision.reasons[:-1]]
            if self.decision.caveat:
                L.append(f"  note: {self.decision.caveat}")
        L += [f"note: {n}" for n in self.notes]
        return "\n".join(L)


def not_warranted_why(report) -> str:
    """Why adjustment is not warranted, in a line: no test found the raters differing, or (one rater) none could
    be run."""
    return "a single rater: no test to run" if len(report.raters) == 1 else "no test found the raters differing"


class RaschFit:
    """``check``'s per-rater fit table of the PCM (:func:`rasch_fit`: ``rows``, ``notes``), fitted when first read.
    The text shows it only where the rater report could not be fitted (the report's infit and outfit replace it),
    so ``check`` fits it for ``--json`` and the library's readers: at 800 raters, 1M ratings, the conditional
    PCM of 4,000 parameters took 10 of check's 19 s of CPU for a table the text did not print.  ``rows`` and
    ``notes`` given: the table as it is (``--no-rasch``'s note, or none)."""

    def __init__(self, ratings: Ratings | None = None, work=None, rows=None, notes=None):
        self._ratings, self._work = ratings, work
        self._rows, self._notes = rows, notes

    def _fit(self):
        if self._rows is None:
            self._rows, self._notes = rasch_fit(self._ratings, self._work)
            self._ratings = self._work = None   # (the ratings let go once fitted)

    @property
    def rows(self) -> list:
        self._fit()
        return self._rows

    @property
    def notes(self) -> list:
        self._fit()
        return self._notes


def rasch_fit(ratings: Ratings, work=None):
    """Infit/outfit per rater from the CML PCM, with each rater's mean square relative
    to the raters' median: with two ratings per paper the mean squares sit well below
    1 even for data that fit, so raters are compared with each other, not with 1.  From the PCM by
    marginal ML (``MML``) where the conditional fit would cost too much (:func:`.cml.too_costly`; ``work``:
    :func:`.cml.conditional_work` of ``ratings`` where the caller has it)."""
    if ratings.max_raters_per_paper() < 2:
        return [], [NEEDS_TWO_RATERS]
    heavy = too_costly(ratings, parameters=ratings.n_raters * ratings.max_score, work=work)   # (the PCM's)
    try:
        est = (MarginalRaterModel(model="pcm") if heavy else
               ConditionalPCM(model="pcm", standard_errors=False)).fit(ratings)   # the table shows no SE
    except MethodError as exc:
        return [], [str(exc)]
    if est.all_thin_:   # every rater has one rating: nothing was fitted (found by tests/property)
        return [], ["every rater has only one rating: there is nothing to estimate"]
    rows, notes = fit_rows(est.rater_fit_, ratings.rater_ids), list(est.notes_)
    if heavy:
        notes.insert(0, f"{heavy}; infit and outfit are the partial credit model's by marginal ML (MML) instead")
    if rows:
        med = float(np.median([(r["infit"] + r["outfit"]) / 2 for r in rows]))
        for r in rows:
            rel = (r["infit"] + r["outfit"]) / 2 / med if med > 0 else math.nan
            r["relative"] = rel
            r["flag"] = "noisy" if rel > 1.5 else "muted" if rel < 1 / 1.5 else ""
    return rows, notes


def _cited(test: str, p: float) -> str:
    """``ANOVA F, rater means, p = 0.006`` (``p < .001`` below it): a test as the summary, the memo and the reasons
    cite it, whether or not it found the raters differing."""
    return f"{test}, p {'< .001' if p < 0.001 else f'= {p:.3f}'}"


def _unselected_basis(ratings: Ratings, model):
    """``(ratings, rater model)`` the assignment test reads: with discrepancies resolved, the papers' first two
    readings and a rater model of them.  The third reading kept with the nearer of the first two drops a harsh
    rater's readings where the third agrees with the other: a staff tester's harsh rater reading 95% of papers
    assigned at random looked less harsh in the resolved file's model, its papers weaker, and the test called
    the assignment nonrandom (chi2(7) = 104.8; on every reading 6.8, p = 0.45) and the recommendation the PCM."""
    first = getattr(ratings, "first_readings", None)
    if first is None or first.n_papers != ratings.n_papers:
        return ratings, model
    try:   # (the model alone: the rater report of these readings is not shown)
        return first, fit_rater_model(first)
    except MethodError:
        return first, None


def check_ratings(ratings: Ratings, group=None, scale_low: int = 0, assignment: str = "auto",
                  alpha: float = ALPHA, rasch: bool = True, clusters=None, cluster_labels=(),
                  cluster_source: str = "", links: bool = True, found=None, fits=None) -> CheckReport:
    """Run every test and the rule on one group's ratings (scores ``0..M`` + ``scale_low``);
    ``links``: the recommendation hears the links' say (:func:`.recommend.recommend_group`; not for a
    rubric's criterion, whose many-facet pick places the raters through every criterion);
    ``rasch=False`` skips the Rasch fit per rater (``check --no-rasch``).  ``assignment``: ``auto``
    (the file's evidence decides, :mod:`.assignment`), ``random`` or ``nonrandom``; ``clusters``: a
    cluster per paper (``--cluster-col``), else the rater network's.  ``found``: the assignment decided
    beside this check (an :class:`.assignment.Assignment`: a rubric's criteria read in one design share
    one, :func:`.assignment.shared_verdict`), and ``fits`` an earlier report of the same ratings whose
    Rasch fits (rater report, model, fit table) are taken rather than made again."""
    from .assignment import ALPHA as ASSIGNMENT_ALPHA, ASSIGNMENTS, Assignment, decide_assignment

    if assignment not in ASSIGNMENTS:
        raise ValueError(f"assignment must be one of {', '.join(ASSIGNMENTS)}, not {assignment!r}")
    n, mean, sd = rater_summary(ratings)
    table = score_table(ratings)
    per = per_rater_tests(ratings)
    active = np.flatnonzero(n > 0)
    raters = []
    for j in active:
        raters.append({"rater": ratings.rater_ids[j], "papers": int(n[j]),
                       "mean": float(mean[j]) + scale_low, "sd": float(sd[j]),
                       "counts": [int(c) for c in table[j]],
                       **{k: float(v[j]) for k, v in per.items()}})
    anova = anova_means(ratings)
    var = variance_tests(ratings)
    chi = chi_square_raters(ratings)
    ks = ks_summary(per, ratings.rater_ids)
    tests = [anova] + var + [chi, ks]
    # Levene (mean) is the homogeneity test the text describes; the others are shown for reference.
    deciding = [anova, var[0], ks] + ([] if SPARSE_NOTE in chi.note else [chi])
    warranted_by = [_cited(t.test, t.p_value) for t in deciding if t.significant(alpha)]
    found_none = [_cited(t.test, t.p_value) for t in deciding if np.isfinite(t.p_value) and not t.significant(alpha)]
    rpp = np.bincount(ratings.ratings_per_paper())
    ratings_per_paper = {int(k): int(v) for k, v in enumerate(rpp) if v and k}
    comps = rater_components(ratings)
    min_papers = int(n[active].min()) if active.size else 0
    used_papers = ratings.ratings_per_paper() > 0
    all_scored_all = bool(active.size > 1 and (ratings.ratings_per_paper()[used_papers] == active.size).all())
    fewest = [r["rater"] for r in raters if r["papers"] == min_papers]
    under = [r["rater"] for r in raters if r["papers"] < FEW_PAPERS]
    skipped = "skipped (--no-rasch)"
    # the conditional fits' cost, asked by both Rasch fits below (0.4 s at 1M ratings, 3 of 200 raters a paper)
    work = conditional_work(ratings) if rasch and fits is None and ratings.max_raters_per_paper() > 1 else None
    if fits is not None:
        rr, model = fits.rater_report, fits.rater_model
    elif rasch:
        rr, model = report_and_model(ratings, scale_low=scale_low, work=work)
    else:   # check --no-rasch: no model is fitted
        rr, model = RaterReport(model=RATER_MODEL, fitted=False, reason=skipped), None
    # the rater model's fixed (all same) chi-square, which the report prints beside the tests, counts as one: the
    # raters' severities with each paper's quality taken out (the tests above compare raw ratings, read as
    # independent); "no test found the raters differing" stood under its p of 0.009
    # (by the Wald test of the severities with their covariances where the model has them, the CML's: Facets'
    # fixed chi-square, which takes them as independent, called identical raters differing in 10% of files at
    # p < .05, a researcher's 12%, and sent them to adjustment)
    sep = rr.rater_separation if rr.fitted else {}
    wald = np.isfinite(sep.get("wald_p", np.nan))
    model_p = sep.get("wald_p" if wald else "chi2_p", np.nan)
    if np.isfinite(model_p):
        (warranted_by if model_p < alpha else found_none).append(_cited(
            "Wald chi-square of the rater model's severities" if wald else "fixed (all same) chi-square of the rater model",
            model_p))
    warranted = bool(warranted_by)
    if found is None and (rasch or assignment != "auto"):
        basis, basis_model = _unselected_basis(ratings, model) if rasch else (ratings, model)
        found = decide_assignment(basis, assignment, model=basis_model if getattr(basis_model, "measured", None)
                                  is not None else None, clusters=clusters, cluster_labels=cluster_labels,
                                  cluster_source=cluster_source, alpha=min(alpha, ASSIGNMENT_ALPHA),
                                  severities=rasch) \
            if rasch else Assignment(given=assignment, assignment=assignment, confounded=assignment == "nonrandom",
                                     reason="as given (the evidence needs the Rasch fits: --no-rasch)")
    elif found is None:
        found = Assignment(given="auto", assignment="random", confounded=None,
                           reason="the evidence needs the Rasch fits, left out by --no-rasch: "
                                  "taken as random")
    assignment = found.assignment
    # the rule counts the raters the methods adjust: one with a single rating keeps its raw score in every
    # method (methods/base.py's thin raters), and a stray rating by a new rater vetoed adjusting 120 papers
    counted = [r for r in raters if r["papers"] >= MIN_RATINGS] or raters
    rule_min = min((r["papers"] for r in counted), default=0)
    under_ids = [r["rater"] for r in counted if r["papers"] < FEW_PAPERS]
    rec, reason = recommend(rule_min, assignment, warranted, all_scored_all,
                            [r["rater"] for r in counted if r["papers"] == rule_min], under_ids)
    if active.size == 1:   # (no test could run: "no test found the raters differing" told a staff member otherwise)
        rec, reason = "NO", f"one rater ({raters[0]['rater']}) scored every paper: no other to compare it with"
    rule_others = {}
    if rec == "NO" and under_ids and reason.startswith(("rater ", "raters ")):
        fold = _fold_remedy(ratings, under_ids)
        # the rule on the other raters, where a rater of more papers read each of the few-paper raters' too (not
        # where their labels are another's written otherwise: merged, not set aside): one rater of 3 such papers
        # stopped the adjustment of 150 (NO 1.02 RMSE where the study's pick, those readings kept, 0.72, on files
        # of a graded response generator)
        solid = [r for r in counted if r["papers"] >= FEW_PAPERS]
        # (each of their papers that no rater of FEW_PAPERS or more read)
        alone = np.flatnonzero((_read_by(ratings, under_ids) > 0) & (_read_by(ratings, [r["rater"] for r in solid]) == 0))
        if not fold and len(solid) > 1 and not alone.size:
            least = min(r["papers"] for r in solid)
            method, why = recommend(least, assignment, warranted, all_scored_all,
                                    [r["rater"] for r in solid if r["papers"] == least])
            few = [str(r) for r in under_ids]
            rule_others = {"method": method, "reason": why, "few": few, "said": _set_aside(few, method, why)}
            reason += _going_on(ratings, under_ids)
        else:
            reason += fold or (_read_alone(ratings, under_ids, alone) + _leave_out(ratings, under_ids))
    notes = []
    if len(counted) < len(raters):
        thin = [str(r["rater"]) for r in raters if r["papers"] < MIN_RATINGS]
        notes.append(f"rater(s) with a single rating, kept raw by every method and not counted by Chapter 5's rule: "
                     f"{', '.join(thin[:8])}{' ...' if len(thin) > 8 else ''}")
    if len(counted_groups(comps, lambda j: n[j])) > 1:
        notes.append("the raters fall into separate groups with no paper in common: OLS, TLS, RAS and "
                     "PCM cannot put them on one scale")
    if ratings.max_raters_per_paper() < 2:
        notes.append("one rating per paper: only NO, MN, TMN, LI, TLI and EQP apply")
    few = [str(r["rater"]) for r in counted if r["papers"] < FEW_PAPERS]
    if few:
        notes.append(f"rater(s) with fewer than {FEW_PAPERS} papers: {', '.join(few)}")
    if ratings.max_raters_per_paper() > 1:
        notes.append("the F, chi-square and KS tests treat ratings as independent; with several "
                     "raters per paper they are approximate")
    if fits is not None:
        table = fits.rasch
    elif rasch:
        table = RaschFit(ratings, work)
    else:
        table = RaschFit(rows=[], notes=[skipped])
    # raters differ: a test above, or the rater model's fixed (all same) chi-square
    differ = warranted
    study = study_recommendation(ratings, rr.fitted, differ, rr.reason) if not (
        all_scored_all or assignment == "nonrandom") else {}
    report = CheckReport(rasch=table, rater_report=rr, rater_model=model,
                       agreement=reading_agreement(ratings), study=study,
                       group=group, scale_low=scale_low, scale_high=scale_low + ratings.max_score,
                       n_ratings=ratings.n_ratings, n_papers=int(used_papers.sum()),
                       ratings_per_paper=ratings_per_paper, raters=raters, tests=tests,
                       components=[[ratings.rater_ids[j] for j in c] for c in comps],
                       min_papers=min_papers, assignment=assignment, assignment_found=found, alpha=alpha,
                       warranted=warranted, warranted_by=warranted_by, found_none=found_none, recommendation=rec,
                       reason=reason, notes=notes, rule_others=rule_others)
    from .recommend import recommend_group

    report.decision = recommend_group(report, ratings, links=links)
    return report
