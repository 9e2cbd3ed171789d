"""Performance levels: several cut scores (``--cut 2.5,3.5,4.5``) with names (``--levels
"Below,Basic,Proficient,Advanced"``), and who moves between levels when the scores are adjusted.

A paper is in level ``k`` when exactly ``k`` cuts are at or below its score (a score equal to a cut
reaches it, as a pass at one cut does: :func:`ratercal_cli.criteria.passes`).  On facetted ratings (a
rubric) the cuts are on the paper's rubric total (``--total sum``: e.g. 4-24 on four criteria of 1-6),
the score a coordinator's cut is written on.

:func:`changes` makes the per-paper change list (each student's given and adjusted score, the change,
both levels and, where the method gives standard errors, the probability that the student is in the
level the adjustment put him in); :class:`LevelChanges` counts the moves between levels.

**Uncertain** means: the interval of the adjusted score at a stated confidence (:data:`CONFIDENCE`, 90%:
``adjusted ± 1.645 SE``) crosses a cut, so the student could be in another level.  With one cut it is the
pass/fail rule of the summary (a probability of passing between 0.05 and 0.95).  It was "the probability
of the adjusted level below 0.95", which with several cuts summed both sides of a level: a student in
the middle of a level one point wide, 0.5 from either cut at an SE of 0.33, lay in it with probability
0.87 and was called uncertain though no 90% interval reached a cut.  Where the levels are narrower than
the interval itself, most students are uncertain at any usual confidence, and the summary says so with
the expected classification accuracy (Rudner 2001: the mean probability of the level each student is
put in), rather than naming everyone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentError, arg
from .cut import check_cut, score_range
from .summary import SURE, in_doubt, sure_of

__all__ = ["Levels", "parse_cuts", "parse_levels", "changes", "ChangeList", "LevelChanges", "score_range",
           "CONFIDENCE", "check_confidence"]

#: The confidence of the interval that makes a student's level uncertain: two-sided 90%, the summary's
#: pass/fail rule at one cut (a pass probability between 1 - SURE and SURE, SURE = 0.95).
CONFIDENCE = round(2 * SURE - 1, 6)


def check_confidence(confidence) -> float:
    """``confidence`` as a float strictly between 0 and 1; an ArgumentError naming ``confidence`` otherwise."""
    try:
        c = float(confidence)
    except (TypeError, ValueError):
        raise ArgumentError("confidence", f"expected a number between 0 and 1 (e.g. 0.9), not {confidence!r}") \
            from None
    if not 0 < c < 1:
        raise ArgumentError("confidence", f"must lie strictly between 0 and 1 (e.g. 0.9), not {c:g}")
    return c


def z_of(confidence: float) -> float:
    """The normal quantile of a two-sided interval at ``confidence`` (0.90: 1.645)."""
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def parse_cuts(cut, decimal: str = "point") -> tuple:
    """``cut`` (None, a number, ``"2.5,3.5"`` or a sequence) -> an ascending tuple of floats; an
    :class:`~ratercal_cli.errors.ArgumentError` naming ``cut`` for text that is not numbers, non-finite or repeated cuts.
    With ``decimal="comma"`` (a file written with decimal commas, ``--decimal comma``) the comma is the decimal
    mark in the cuts too, and they are separated by semicolons or spaces: ``3,5`` is 3.5 (it was the cuts 3
    and 5, silently), ``2,5;3,5`` two cuts; a cut written with both marks is refused."""
    if cut is None:
        return ()
    comma = decimal == "comma"
    if isinstance(cut, (int, float)):
        items = [cut]
    elif isinstance(cut, str) and comma:
        items = [s for s in cut.replace(";", " ").split() if s]
        both = next((s for s in items if "," in s and "." in s), None)
        if both is not None:
            raise ArgumentError("cut", f"with a decimal comma, write each cut with a comma and separate them with "
                                f"semicolons (e.g. 2,5;3,5), not {both!r}")
        items = [s.replace(",", ".") for s in items]
    elif isinstance(cut, str):
        items = [s for s in (p.strip() for p in cut.split(",")) if s]
    else:
        items = list(cut)
    example = "2,5;3,5;4,5" if comma else "2.5,3.5,4.5"
    out = []
    for item in items:
        try:
            v = float(item)
        except (TypeError, ValueError):
            raise ArgumentError("cut", f"expected numbers separated by {'semicolons' if comma else 'commas'} (e.g. "
                                f"{example}), not {item!r}") from None
        out.append(v)   # a cut that is not finite is refused with the scale (check_levels)
    finite = [v for v in out if math.isfinite(v)]
    if len(set(finite)) != len(finite):
        raise ArgumentError("cut", "a cut is given twice")
    if finite != sorted(finite):
        raise ArgumentError("cut", f"give the cuts in ascending order (e.g. {example})")
    return tuple(out)


def _default_names(cuts) -> tuple:
    if len(cuts) == 1:
        return ("fail", "pass")
    return (f"below {cuts[0]:g}", *(f"{a:g} to {b:g}" for a, b in zip(cuts, cuts[1:])), f"{cuts[-1]:g} and above")


@dataclass(frozen=True)
class Levels:
    """Ascending ``cuts`` and the ``names`` of the ``len(cuts) + 1`` levels they make."""

    cuts: tuple
    names: tuple

    def level(self, scores) -> np.ndarray:
        """Each score's level (0 .. len(cuts)); -1 where the score is not finite."""
        s = np.asarray(scores, dtype=float)
        out = np.searchsorted(np.asarray(self.cuts, dtype=float), s, side="right").astype(np.int64)
        return np.where(np.isfinite(s), out, -1)

    def crossed(self, low, high) -> np.ndarray:
        """Whether the interval ``low..high`` (a paper's at some confidence: ``score -+ z SE``, or a model's,
        :meth:`.uncertainty.PaperUncertainty.interval`) holds a cut (its ends in different levels); False where
        either end is missing."""
        lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        ok = np.isfinite(lo) & np.isfinite(hi)
        return ok & (self.level(lo) != self.level(hi))

    def narrowest(self) -> float:
        """The width of the narrowest level between two cuts (inf with one cut)."""
        return float(np.min(np.diff(self.cuts))) if len(self.cuts) > 1 else math.inf


def parse_levels(cut, names=None, decimal: str = "point") -> Levels | None:
    """The :class:`Levels` of ``--cut`` and ``--levels`` (None without cuts).  ``names``: one more than
    the cuts, comma-separated or a sequence (default: fail/pass for one cut, ranges for several);
    ``decimal``: the cuts' decimal mark (:func:`parse_cuts`)."""
    cuts = parse_cuts(cut, decimal)
    if not cuts:
        if names:
            raise ArgumentError("levels", f"names the levels that cuts make; give the cuts with {arg('cut')}")
        return None
    if names is None or (isinstance(names, str) and not names.strip()):
        return Levels(cuts, _default_names(cuts))
    items = [s.strip() for s in names.split(",")] if isinstance(names, str) else [str(s).strip() for s in names]
    if len(items) != len(cuts) + 1:
        raise ArgumentError("levels", f"{len(cuts)} cut(s) make {len(cuts) + 1} levels, and {len(items)} name(s) "
                            "are given")
    if any(not s for s in items) or len(set(items)) != len(items):
        raise ArgumentError("levels", "each level needs its own non-blank name")
    return Levels(cuts, tuple(items))


def check_levels(levels: Levels | None, ratings, total: str = "sum") -> None:
    """An :class:`InputError` naming ``--cut`` for a cut off the scale (or off the rubric total's range)."""
    if levels is None:
        return
    for c in levels.cuts:
        check_cut(c, ratings, total)


def raw_scores(ratings, total: str = "sum") -> np.ndarray:
    """Each paper's given score on the file's scale: the mean of its ratings, or on facetted ratings
    its rubric total of the cells' mean given scores (:func:`.rubric.paper_total`)."""
    if not ratings.facets:
        return ratings.paper_mean() + ratings.scale_low
    from .rubric import paper_total

    cell, labels = ratings.facet_cells()
    k = len(labels)
    at = ratings.paper * k + cell
    s = np.bincount(at, weights=ratings.score, minlength=ratings.n_papers * k)
    n = np.bincount(at, minlength=ratings.n_papers * k)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (s / n).reshape(ratings.n_papers, k)
    return paper_total(mean, ratings.scale_low, total)


@dataclass
class LevelChanges:
    """How many papers each level holds before and after, and the moves between them (``moves[i][j]``:
    papers given level ``i`` and adjusted into level ``j``), for one group and method."""

    group: object
    method: str
    levels: Levels
    before: list
    after: list
    moves: list
    uncertain: int | None = None
    #: the interval's confidence (uncertain: its interval crosses a cut)
    confidence: float = CONFIDENCE
    #: per cut, the papers whose interval holds it
    at_cut: list | None = None
    #: the expected classification accuracy: the mean probability of the adjusted level (Rudner 2001)
    accuracy: float | None = None
    #: the papers' median standard error
    median_se: float | None = None
    papers: int = 0
    #: the interval is a model's (MML, MFRM, CML, RSM): the fair scores of its quality's interval, not the
    #: adjusted score +- z SE (:meth:`.uncertainty.PaperUncertainty.interval`)
    model: bool = False
    #: the method gave other groups standard errors but none to this one's papers (a group whose
    #: recommendation is NO, beside one adjusted by MML): the method applied here, its uncertain students
    #: not known (not 0); "" where it gave them
    without_se: str = ""
    #: the bootstrap's draws asked for (0: none), for what :meth:`uncertain_text` says of ``without_se``
    bootstrap: int = 0
    #: where the method's scores are shrunk (a recommendation "(shrunk)", MML's and MFRM's own EAP): the
    #: papers that would move (up, down) at its unshrunk level, beside :attr:`up` and :attr:`down`, and
    #: (the papers that move shrunk only, the papers that move unshrunk only)
    unshrunk: tuple | None = None
    by_shrinkage: tuple | None = None
    #: per cut, the papers whose given score is exactly that cut, and how many of them change level
    on_cut: list | None = None
    moved_on_cut: int = 0

    @property
    def too_narrow(self) -> bool:
        """The narrowest level is narrower than the interval of the median SE: most papers are uncertain
        whatever the adjustment."""
        return (self.median_se is not None and math.isfinite(self.median_se)
                and self.levels.narrowest() < 2 * z_of(self.confidence) * self.median_se)

    def uncertain_text(self, noun: str = "paper") -> str:
        """One sentence: how many are uncertain, at what confidence, and why so many where the levels are
        narrow (``noun``: what a paper is called, e.g. student)."""
        if self.without_se:
            from .uncertainty import no_se_reason

            return (f"no standard errors for its {self.papers} {noun}(s) ({no_se_reason(self.without_se, self.bootstrap)}"
                    "), so whose level is uncertain is not known")
        pct = f"{100 * self.confidence:g}%"
        z = z_of(self.confidence)
        how = (f"the fair scores of the {noun}'s quality ± {z:.3g} standard errors" if self.model else
               f"± {z:.3g} standard errors")
        text = (f"{self.uncertain} of {self.papers} {noun}(s) are uncertain at {pct} confidence (the {pct} interval "
                f"of the adjusted score, {how}, crosses a cut")
        if self.at_cut is not None and len(self.levels.cuts) > 1:
            text += ": " + ", ".join(f"{n} at {c:g}" for c, n in zip(self.levels.cuts, self.at_cut))
        text += ")"
        if self.accuracy is not None and math.isfinite(self.accuracy):
            text += f"; expected classification accuracy {self.accuracy:.2f}"
        if self.too_narrow:
            text += (f". The levels (the narrowest {self.levels.narrowest():g} wide) are narrower than the {pct} "
                     f"interval of a typical {noun} (± {z * self.median_se:.2f} at the median standard error "
                     f"{self.median_se:.2f}): these ratings cannot settle most {noun}s' level, adjusted or not")
        return text

    def ties_text(self, noun: str = "paper") -> str:
        """Where given scores sit exactly on a cut (a mean of two readings is a whole or half point, so 2.5, 3.5
        and 4.5 are scores a paper can have): as the summary warns of one cut (:func:`.summary.grid_warning`),
        any method that lowers such a paper by a hair moves it down a level; "" where none does."""
        if not self.on_cut or not sum(self.on_cut):
            return ""
        at = ", ".join(f"{n} at {c:g}" for c, n in zip(self.levels.cuts, self.on_cut) if n)
        return (f"{sum(self.on_cut)} {noun}(s) have a given score exactly on a cut ({at}), in the level above it, and "
                f"{self.moved_on_cut} of the {self.moved} level change(s) are theirs: any method that lowers such a "
                f"score by a hair moves it down a level, so how many change turns on where the cuts fall as much as "
                "on the raters, whether or not each change is right (cuts between the scores a paper can have do not "
                "split such ties)")

    def shrinkage_text(self, noun: str = "paper") -> str:
        """What the level changes owe to the shrinkage (:attr:`unshrunk`, :attr:`by_shrinkage`), in plain words, as
        the summary says it of a cut (:func:`.summary.shrinkage_words`): a shrunk method's pull toward the mean can
        make changes of its own, and keep papers (``noun``) in a level they would leave without it."""
        a, b = self.unshrunk
        only, kept = self.by_shrinkage
        pull = "the pull of each score toward the group's mean, the stronger the fewer and less consistent its ratings"
        if not only and not kept:
            return (f"without the shrinkage ({pull}) the same {noun}s would change level: these changes are not "
                    "the shrinkage's")
        return (f"{only} of these {self.moved} level change(s) come from the shrinkage alone ({pull}): without it "
                f"those {noun}s keep their level, and {kept} {noun}(s) that keep theirs would change level (without "
                f"it {a + b} change level, {a} up, {b} down)")

    def shrinkage_note(self, noun: str = "paper") -> str:
        """:meth:`shrinkage_text` where the levels' account says it (several cuts and the unshrunk moves known), else
        "" (one cut's: the summary's pass/fail account says it)."""
        return self.shrinkage_text(noun) if self.unshrunk is not None and len(self.levels.cuts) > 1 else ""

    def ties_note(self, noun: str = "paper") -> str:
        """:meth:`ties_text` where the levels' account says it (several cuts), else "" (one cut's: the summary's
        grid warning, printed beside the text's levels; the memo and the app, which print no summary warning, say
        :meth:`ties_text` of every cut)."""
        return self.ties_text(noun) if len(self.levels.cuts) > 1 else ""

    @property
    def moved(self) -> int:
        return int(sum(self.moves[i][j] for i in range(len(self.moves)) for j in range(len(self.moves)) if i != j))

    @property
    def up(self) -> int:
        return int(sum(self.moves[i][j] for i in range(len(self.moves)) for j in range(len(self.moves)) if j > i))

    @property
    def down(self) -> int:
        return self.moved - self.up

    def flows(self) -> list:
        """``[(from name, to name, count)]`` of the non-empty moves between different levels."""
        n = self.levels.names
        return [(n[i], n[j], int(self.moves[i][j])) for i in range(len(n)) for j in range(len(n))
                if i != j and self.moves[i][j]]

    def to_dict(self) -> dict:
        return {"group": self.group, "method": self.method, "cuts": list(self.levels.cuts),
                "levels": list(self.levels.names), "before": self.before, "after": self.after,
                "moved": self.moved, "up": self.up, "down": self.down,
                "moves": [{"from": a, "to": b, "papers": c} for a, b, c in self.flows()],
                "uncertain": self.uncertain, "confidence": self.confidence, "uncertain_at_cut": self.at_cut,
                "classification_accuracy": self.accuracy, "median_se": self.median_se,
                "standard_errors": self.uncertain is not None,
                "on_cut": None if self.on_cut is None else dict(zip(map(float, self.levels.cuts), self.on_cut)),
                "moved_on_cut": self.moved_on_cut,
                "unshrunk": None if self.unshrunk is None else {
                    "up": self.unshrunk[0], "down": self.unshrunk[1], "moved_by_shrinkage_alone": self.by_shrinkage[0],
                    "kept_by_shrinkage": self.by_shrinkage[1]}}

    def format_text(self, title: str = "") -> str:
        from .text import text_table

        cuts = ", ".join(f"{c:g}" for c in self.levels.cuts)
        lines = [f"levels{f' ({title})' if title else ''}, {self.method}: cuts {cuts}; {self.moved} paper(s) change "
                 f"level ({self.up} up, {self.down} down)"]
        rows = [[name, str(b), str(a)] for name, b, a in zip(self.levels.names, self.before, self.after)]
        lines += ["  " + line for line in text_table(["level", "given", "adjusted"], rows)]
        for a, b, c in self.flows():
            lines.append(f"  {a} -> {b}: {c}")
        lines += ["  " + note for note in (self.shrinkage_note(), self.ties_note()) if note]
        if self.uncertain is not None or self.without_se:
            lines.append("  " + self.uncertain_text())
        return "\n".join(lines)


#: the change list's own columns (and every level's and interval's): a group or paper column of the input named
#: like one is written under ``group`` or ``paper``
CHANGE_COLUMNS = frozenset({"paper", "ratings", "given", "adjusted", "change", "given_level", "adjusted_level",
                            "unshrunk_level", "moved", "se", "p_level", "se_to_cut", "uncertain", "method"})


@dataclass
class ChangeList:
    """Per paper (groups and papers in natural order): the change list a coordinator checks.  ``rows``
    are dicts with the :attr:`header`'s keys."""

    header: list
    rows: list
    levels: Levels | None
    method: str
    changes: list = field(default_factory=list)   # LevelChanges per group (with levels)

    @property
    def labels(self) -> list:
        """The columns of labels (the group's and ``paper``), kept as text in a workbook."""
        return self.header[:self.header.index("paper") + 1]

    def to_frame(self):
        from .frames import columns_frame

        return columns_frame({h: [r[h] for r in self.rows] for h in self.header})

    def written(self, paper_name: str = "paper") -> tuple:
        """``(header, rows as lists, label columns)`` as the change list is written, its paper column under the
        input's name (``Student ID``: a staff helper's change list called it ``paper``), where no other column
        has that name."""
        taken = set(self.header) | CHANGE_COLUMNS
        name = paper_name if paper_name and paper_name not in taken and not paper_name.startswith(("low", "high")) \
            else "paper"
        header = [name if h == "paper" else h for h in self.header]
        return header, [[row[h] for h in self.header] for row in self.rows], header[:self.header.index("paper") + 1]


def changes(result, method: str | None = None, levels: Levels | None = None, total: str = "sum",
            confidence: float = CONFIDENCE) -> ChangeList:
    """The per-paper change list of an :class:`~.adjust.AdjustResults` for ``method`` (default: its
    first): group, paper, ratings, the given score (mean of its ratings, or rubric total), the adjusted
    one, the change, with ``levels`` both levels and whether it moved, and where the method gave
    standard errors the SE, the probability that the paper lies in its adjusted level (``p_level``), its
    distance to the nearest cut in SEs (``se_to_cut``), the interval at ``confidence`` (``low90``,
    ``high90``) and ``uncertain`` where that interval crosses a cut (module docstring)."""
    confidence = check_confidence(confidence)
    pct = f"{100 * confidence:g}".replace(".", "_")
    r = result.ratings
    method = method or result.methods[0]
    if method not in result.methods:
        raise ArgumentError("method", f"{method} was not applied (applied: {', '.join(result.methods)})")
    raw = raw_scores(r, total)
    adj = result.paper_totals(method, total) if r.facets else result.paper_scores(method)
    se = result._uncertain(method, "se")
    group = result._paper_group(r) if r.group is not None else np.zeros(r.n_papers, dtype=np.int64)
    gname = r.group_name or "group"
    if gname in CHANGE_COLUMNS:   # (a group column named "given" took the given scores' place, a helper's)
        gname = "group"
    header = ([gname] if r.group is not None else []) + ["paper", "ratings", "given", "adjusted", "change"]
    lv_raw = lv_adj = prob = unsure = margin = None
    if levels is not None:
        lv_raw, lv_adj = levels.level(raw), levels.level(adj)
        header += ["given_level", "adjusted_level", "moved"]
    if se is not None:
        header.append("se")
        if levels is not None:
            pp = result._uncertain(method, "pass_prob")
            z = z_of(confidence)
            # the interval made as the method's pass probability is (a model's: the fair scores of its
            # quality's interval), so that the flag and the printed ends agree
            lo, hi = result._interval(method, z)   # (not None: a group has standard errors, se is not None)
            if pp is not None and len(levels.cuts) == 1 and result.cut == levels.cuts[0]:
                prob = np.where(lv_adj == 1, pp, 1 - pp)   # the pass probability the summary uses (censored)
                unsure = in_doubt(pp, sure_of(confidence))   # and the summary's rule on it
            else:
                prob = result._level_probability(method, levels.cuts, lv_adj)
                unsure = levels.crossed(lo, hi)
            margin = result._cut_distance(method, levels.cuts)
            header += ["p_level", "se_to_cut", f"low{pct}", f"high{pct}", "uncertain"]
    applied = result.recommended
    if applied:
        header.append("method")
    n_rat = r.ratings_per_paper()
    # the rows' values a column at a time, as Python numbers (a dict a paper: 500,000 at 1M ratings, where
    # indexing the arrays paper by paper took 2 s of adjust --cut)
    papers = np.lexsort((np.arange(r.n_papers), group))   # papers are in natural order already
    papers = papers[n_rat[papers] > 0].tolist()
    f64 = lambda x: np.asarray(x, dtype=np.float64)   # noqa: E731
    raw_, adj_ = f64(raw), f64(adj)
    cols: dict = {}
    if r.group is not None:
        cols[gname] = [r.group_ids[group[p]] for p in papers]
    cols.update({"paper": [r.paper_ids[p] for p in papers], "ratings": n_rat[papers].tolist(),
                 "given": raw_[papers].tolist(), "adjusted": adj_[papers].tolist(),
                 "change": (adj_ - raw_)[papers].tolist()})
    lv_none, shrunk = None, []
    if levels is not None:
        lv_none = np.full(r.n_papers, -1)   # a shrunk method's levels unshrunk (its groups' where it is shrunk)
        for gi, g in enumerate(result.groups):
            none = result._unshrunk_totals(g, method, total) if r.facets else result._unshrunk(g).get(method)
            if none is not None:
                lv_none[group == gi] = levels.level(none if r.facets else none + r.scale_low)
                shrunk.append(gi)
        names = list(levels.names) + [""]   # (level -1, none: "")
        cols["given_level"] = [names[k] for k in lv_raw[papers].tolist()]
        cols["adjusted_level"] = [names[k] for k in lv_adj[papers].tolist()]
        moved = (lv_raw >= 0) & (lv_adj >= 0) & (lv_raw != lv_adj)
        cols["moved"] = ["yes" if m else "" for m in moved[papers].tolist()]
        if shrunk:   # (which moves are the shrinkage's, student by student: a staff tester asked to review them)
            header.insert(header.index("moved") + 1, "unshrunk_level")
            cols["unshrunk_level"] = [names[k] for k in lv_none[papers].tolist()]
    if se is not None:
        se_ = f64(se)
        cols["se"] = se_[papers].tolist()
        if prob is not None:
            cols["p_level"] = f64(prob)[papers].tolist()
            cols["se_to_cut"] = f64(margin)[papers].tolist()
            cols[f"low{pct}"], cols[f"high{pct}"] = f64(lo)[papers].tolist(), f64(hi)[papers].tolist()
            cols["uncertain"] = ["yes" if u else "" for u in np.asarray(unsure)[papers].tolist()]
    if applied:
        cols["method"] = [applied.get(r.group_ids[group[p]] if r.group is not None else None, "") for p in papers]
    rows = [dict(zip(cols, values)) for values in zip(*cols.values())]
    out = ChangeList(header, rows, levels, method)
    if levels is not None:
        k = len(levels.names)
        for gi, g in enumerate(result.groups):
            keep = (group == gi) & (n_rat > 0) & (lv_raw >= 0) & (lv_adj >= 0)
            moves = np.zeros((k, k), dtype=np.int64)
            np.add.at(moves, (lv_raw[keep], lv_adj[keep]), 1)
            lc = LevelChanges(g.name, method, levels, moves.sum(axis=1).tolist(), moves.sum(axis=0).tolist(),
                              moves.tolist(), confidence=confidence, papers=int(keep.sum()),
                              model=g.uncertainty.get(method) is not None and g.uncertainty[method].quality is not None)
            has = keep & np.isfinite(se) & (se > 0) if prob is not None else None
            if prob is not None and not has.any() and keep.any():
                lc.without_se = str((applied or {}).get(g.name, method))
                lc.bootstrap = int(getattr(result, "bootstrap", 0) or 0)
            elif prob is not None:
                lc.uncertain = int(np.sum(keep & unsure))
                lc.at_cut = ([lc.uncertain] if len(levels.cuts) == 1 else   # one cut: the pass/fail rule's count
                             [int(np.sum(has & (lo < c) & (hi >= c))) for c in levels.cuts])
                lc.accuracy = float(np.mean(prob[has])) if has.any() else None
                lc.median_se = float(np.median(se[has])) if has.any() else None
            on = np.isclose(raw_[:, None], np.asarray(levels.cuts, dtype=np.float64)[None, :], rtol=0, atol=1e-9)
            lc.on_cut = (keep[:, None] & on).sum(axis=0).tolist()
            lc.moved_on_cut = int(np.sum(keep & on.any(axis=1) & (lv_raw != lv_adj)))
            if gi in shrunk:   # (a shrunk method: which of its moves the shrinkage makes)
                ok = keep & (lv_none >= 0)
                lc.unshrunk = (int(np.sum(ok & (lv_none > lv_raw))), int(np.sum(ok & (lv_none < lv_raw))))
                lc.by_shrinkage = (int(np.sum(ok & (lv_adj != lv_raw) & (lv_none == lv_raw))),
                                   int(np.sum(ok & (lv_adj == lv_raw) & (lv_none != lv_raw))))
            out.changes.append(lc)
    return out
