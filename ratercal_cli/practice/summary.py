"""What the person who signs off adjusted scores must see: how far each method moved each
rater and the papers, and, at a cut score, whose pass/fail changed.

For one group of ratings and the methods applied to it (``{code: Adjusted}``, scores ``0..M``):

* per rater, the mean shift of its ratings (adjusted minus given), in points;
* over the papers, how far the paper's adjusted score moved from the mean of its given scores:
  the mean and the largest distance (and which paper), and how many moved by 0.5 or more;
* with a cut (a paper passes when its score >= cut): how many pass unadjusted and adjusted,
  the papers that went fail->pass and pass->fail (named), and a warning when the cut falls on
  the grid of raw averages (with two ratings a paper's average is a multiple of 1/2, with
  three of 1/3): every paper averaging exactly the cut passes unadjusted, and a method that
  moves it down by a hair fails it, so a handful of points of the scale decide many papers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..criteria import passes
from ..ratings import Ratings
from .text import json_clean, num, text_table

#: A paper "moved" when its adjusted score is this far or farther from its raw average.
MOVED = 0.5
#: How many papers a list of pass/fail changes names before "and N more".
NAMED = 10
#: A paper's decision is uncertain when its probability of passing is within this of 1/2 ... of
#: 0 and 1: between 0.05 and 0.95.
SURE = 0.95


def sure_of(confidence: float | None) -> float:
    """The pass probability above which (and below 1 minus which) a decision is sure at ``confidence``
    (the two-sided interval's, default 0.9: :data:`SURE`)."""
    return SURE if confidence is None else 0.5 + float(confidence) / 2


def in_doubt(pass_prob, sure: float = SURE) -> np.ndarray:
    """Whether each pass probability lies strictly between ``1 - sure`` and ``sure`` (nan: False): the
    uncertain decisions of the summary, the HTML page and the change list at one cut."""
    p = np.asarray(pass_prob, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return (p > 1 - sure) & (p < sure)


@dataclass
class MethodSummary:
    """One method on one group: per-rater mean shifts, paper movement, pass/fail changes."""

    method: str
    applied: str                     # the method actually applied (``recommended`` -> e.g. "TLI")
    rater_shift: dict                # rater label -> mean (adjusted - given) over its ratings
    papers: int
    mean_move: float
    largest_move: float
    largest_paper: object
    moved: int                       # papers moved by MOVED or more
    passing_raw: int | None = None
    passing: int | None = None
    fail_to_pass: list = field(default_factory=list)
    pass_to_fail: list = field(default_factory=list)
    se_source: str | None = None     # "bootstrap" or "posterior" when papers have SEs
    mean_se: float | None = None
    uncertain: list = field(default_factory=list)   # papers passing with probability in (0.05, 0.95)
    #: a method applied at a shrunk level: (fail -> pass, pass -> fail) at the cut had it not shrunk
    unshrunk_moves: tuple | None = None

    @property
    def heading(self) -> str:
        """The method as a table heads it: its code, or "recommended (TLI, shrunk)" (the method applied beside it)."""
        from ..vocabulary import label_tag

        return self.method if self.method == self.applied else f"{self.method} ({label_tag(self.applied)})"

    def to_dict(self):
        return json_clean(self.__dict__.copy())


@dataclass
class AdjustmentSummary:
    """:func:`summarise` of one group: per method a :class:`MethodSummary`, and warnings."""

    group: object
    cut: float | None
    methods: list
    raters: list                     # rater labels in the ratings' (natural) order
    ratings_per_rater: list
    warnings: list = field(default_factory=list)
    #: uncertain: a pass probability between 1 - sure and sure (``--confidence`` c: sure = (1 + c) / 2)
    sure: float = SURE

    def to_dict(self) -> dict:
        return json_clean({"group": self.group, "cut": self.cut, "moved_threshold": MOVED, "sure": self.sure,
                           "warnings": self.warnings, "methods": [m.to_dict() for m in self.methods]})

    def format_text(self, title="") -> str:
        """The lines ``adjust`` prints on standard error."""
        L = [f"summary{f' ({title})' if title else ''}: how far the adjustment moved raters and papers"]
        hdr = ["rater", "ratings"] + [f"{m.method} shift" if m.method == m.applied else m.heading for m in self.methods]
        rows = [[str(r), str(n)] + [_signed(m.rater_shift.get(r)) for m in self.methods]
                for r, n in zip(self.raters, self.ratings_per_rater)]
        L += ["  " + line for line in text_table(hdr, rows)]
        L.append(f"  papers moved (adjusted score minus the mean of its given scores; {MOVED:g} or more counted):")
        prow = [[m.method, str(m.papers), num(m.mean_move, 3), num(m.largest_move, 3), str(m.largest_paper),
                 str(m.moved)] for m in self.methods]
        L += ["  " + line for line in text_table(["method", "papers", "mean", "largest", "paper", f">= {MOVED:g}"],
                                                   prow)]
        if self.cut is not None:
            L.append(f"  at cut {self.cut:g} (a paper passes with a score >= cut):")
            for m in self.methods:
                L.append(f"    {m.method}: {m.passing_raw} pass unadjusted, {m.passing} adjusted; "
                         f"fail->pass {len(m.fail_to_pass)}{_names(m.fail_to_pass)}, "
                         f"pass->fail {len(m.pass_to_fail)}{_names(m.pass_to_fail)}")
                if m.unshrunk_moves is not None:
                    L.append(f"      {shrinkage_words(m.unshrunk_moves, len(m.fail_to_pass), len(m.pass_to_fail))}")
        for m in self.methods:
            if m.se_source is None:
                continue
            line = f"  {m.method}: papers' standard errors ({m.se_source}) average {num(m.mean_se, 3)}"
            if self.cut is not None:
                line += (f"; {len(m.uncertain)} paper(s) pass with a probability between {1 - self.sure:.3g} and "
                         f"{self.sure:.3g}{_names(m.uncertain)}")
            L.append(line)
        L += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(L)


def _signed(x):
    return "-" if x is None or not np.isfinite(x) else f"{x:+.3f}"


def _names(papers):
    if not papers:
        return ""
    more = f" and {len(papers) - NAMED} more" if len(papers) > NAMED else ""
    return " (" + ", ".join(str(p) for p in papers[:NAMED]) + more + ")"


def pcm_shift_note(methods) -> str:
    """What the rater shift of the PCM (``methods``: the columns that are the PCM's) means: a rating's
    adjusted score there is its own rater's expected score at the paper's quality (PCM.BAS's ``sc(r)``),
    which keeps the rater's severity, so the shift is near 0 whatever the raters (on 240 papers of six
    raters 2 logits apart: -0.09 to +0.08, where MML's were -0.87 to +0.82); the paper scores carry the
    adjustment."""
    return (f"{', '.join(methods)}: a rating's adjusted score is its own rater's expected score at the paper's "
            "quality (the PCM as PCM.BAS writes it), which keeps that rater's severity, so its rater shift stays "
            f"near 0 whatever the raters; the paper scores ({methods[0]}_paper: every rater's mean expected "
            "score) carry the adjustment")


def grid_warning(raw_average, cut, n_ratings) -> str | None:
    """The warning when papers' raw averages sit exactly on ``cut`` (see the module), else None."""
    on = np.isclose(raw_average, cut, rtol=0, atol=1e-9)
    n = int(on.sum())
    if not n:
        return None
    ks = sorted({int(k) for k in n_ratings[on]})
    grid = " and ".join(f"1/{k}" for k in ks if k > 1) or "1"
    return (f"the cut {cut:g} falls on the grid of raw averages (multiples of {grid}): {n} paper(s) average "
            f"exactly {cut:g} and pass unadjusted (score >= cut), so any method that lowers them by a hair "
            "fails them; pass counts at this cut say more about the grid than about the raters -- consider "
            "a cut between grid points")


def shrinkage_words(unshrunk: tuple, up: int, down: int) -> str:
    """What a shrunk method's moves at the cut owe to the shrinkage: ``unshrunk`` (fail -> pass, pass -> fail)
    had it not shrunk, beside its own ``up`` and ``down``."""
    a, b = unshrunk
    return (f"unshrunk it would move fail->pass {a}, pass->fail {b}: the difference is the shrinkage's, which "
            f"pulls each score toward the group's mean, the more the fewer and less consistent its ratings (papers "
            f"{'above' if down > b else 'below'} the mean and near the cut cross it "
            f"{'downward' if down > b else 'upward'})" if (a, b) != (up, down) else
            f"unshrunk it would move as many across the cut (fail->pass {a}, pass->fail {b}): these moves are not "
            f"the shrinkage's")


def summarise(ratings: Ratings, adjusted: dict, scale_low: int = 0, cut: float | None = None, group=None,
              applied: dict | None = None, uncertainty: dict | None = None,
              confidence: float | None = None, unshrunk: dict | None = None) -> AdjustmentSummary:
    """The summary of one group (see the module).  ``adjusted``: ``{code: Adjusted}`` on ``0..M``;
    ``cut`` on the file's scale; ``applied``: ``{code: method actually applied}`` (``recommended``);
    ``uncertainty``: ``{code: PaperUncertainty}`` (:mod:`.uncertainty`); ``confidence``: a paper is
    uncertain when its pass probability is between (1 - c) / 2 and (1 + c) / 2 (default 0.9); ``unshrunk``:
    ``{code: paper scores on 0..M}`` of the methods applied at a shrunk level, at their unshrunk one (the
    moves at the cut that are the shrinkage's are told apart)."""
    sure = sure_of(confidence)
    applied = {k: v for k, v in (applied or {}).items() if v is not None}
    uncertainty = uncertainty or {}
    n_r = ratings.ratings_per_rater()
    rpp = ratings.ratings_per_paper()
    has = rpp > 0
    raw = ratings.paper_mean() + scale_low
    ids = ratings.paper_ids
    out = []
    for code, adj in adjusted.items():
        rating = np.asarray(adj.rating, dtype=np.float64)
        ok = np.isfinite(rating)
        diff = np.where(ok, rating - ratings.score, 0.0)
        s = np.bincount(ratings.rater, weights=diff, minlength=ratings.n_raters)
        c = np.bincount(ratings.rater, weights=ok.astype(float), minlength=ratings.n_raters)
        shift = {ratings.rater_ids[j]: float(s[j] / c[j]) for j in range(ratings.n_raters) if c[j] > 0}
        paper = np.asarray(adj.paper, dtype=np.float64) + scale_low
        fine = has & np.isfinite(paper)
        move = np.abs(paper - raw)[fine]
        at = np.flatnonzero(fine)
        big = int(np.argmax(move)) if move.size else None
        m = MethodSummary(code, applied.get(code, code), shift, int(fine.sum()),
                          float(move.mean()) if move.size else float("nan"),
                          float(move[big]) if big is not None else float("nan"),
                          ids[at[big]] if big is not None else None, int((move >= MOVED - 1e-12).sum()))
        if cut is not None:
            p_raw, p_adj = passes(raw, cut), passes(paper, cut)
            m.passing_raw = int((fine & p_raw).sum())
            m.passing = int((fine & p_adj).sum())
            m.fail_to_pass = [ids[i] for i in np.flatnonzero(fine & p_adj & ~p_raw)]
            m.pass_to_fail = [ids[i] for i in np.flatnonzero(fine & ~p_adj & p_raw)]
            if unshrunk and code in unshrunk:
                p_none = passes(np.asarray(unshrunk[code], dtype=np.float64) + scale_low, cut)
                m.unshrunk_moves = (int((fine & p_none & ~p_raw).sum()), int((fine & ~p_none & p_raw).sum()))
        u = uncertainty.get(code)
        if u is not None:
            m.se_source = u.source
            se = np.asarray(u.se)[fine]
            m.mean_se = float(np.nanmean(se)) if np.isfinite(se).any() else float("nan")
            if u.pass_prob is not None:
                m.uncertain = [ids[i] for i in np.flatnonzero(fine & in_doubt(u.pass_prob, sure))]
        out.append(m)
    warnings = []
    if cut is not None:
        w = grid_warning(raw[has], cut, rpp[has])
        if w:
            warnings.append(w)
    pcm = [m.method for m in out if str(m.applied).split(" ")[0] == "PCM"]
    if pcm:
        warnings.append(pcm_shift_note(pcm))
    active = np.flatnonzero(n_r > 0)
    return AdjustmentSummary(group, cut, out, [ratings.rater_ids[j] for j in active],
                             [int(n_r[j]) for j in active], warnings, sure)
