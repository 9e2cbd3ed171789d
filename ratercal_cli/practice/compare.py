"""How much do the methods disagree on these data?  Denny's Tables 4 and 5 and Figures 7-10.

Table 4: between every pair of methods, over the papers' adjusted scores, the root
mean squared difference, the maximum absolute difference and the correlation.
Table 5: papers passing and failing at a cut score (Denny used 3.25, an average of
3.5 after rounding), and the papers each method "helped" (pass adjusted, fail
unadjusted) and "hurt" (the reverse) relative to no equating.  Figures 7-10 map
the methods by their RMSDs; Denny used ALSCAL, here classical (Torgerson) MDS
(:func:`ratercal_cli.report.mds.classical_mds`), drawn by the report's
:func:`ratercal_cli.report.figures.mds_figure`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..criteria import passes
from ..ratings import Ratings
from ..report.mds import classical_mds, rmsd_matrix  # noqa: F401  (one MDS and RMSD for the report and compare)



# -- Table 4 -------------------------------------------------------------------------
@dataclass
class MethodComparison:
    """K x K matrices over the papers every method scored."""

    methods: list
    rmsd: np.ndarray
    maxdiff: np.ndarray
    corr: np.ndarray
    n_papers: int

    def to_dict(self):
        return {"methods": list(self.methods), "n_papers": self.n_papers,
                **{k: _nan_to_none(getattr(self, k)) for k in ("rmsd", "maxdiff", "corr")}}


def method_differences(paper_scores) -> MethodComparison:
    """RMSD, max |difference| and Pearson r between every pair of methods' paper scores.

    ``paper_scores``: ``{code: array over papers}``; papers where any method has a
    non-finite score are left out of every pair.
    """
    methods = list(paper_scores)
    X = np.vstack([np.asarray(paper_scores[m], dtype=np.float64) for m in methods])
    X = X[:, np.isfinite(X).all(axis=0)]
    n = X.shape[1]
    if n == 0:
        nan = np.full((len(methods),) * 2, np.nan)
        return MethodComparison(methods, nan, nan.copy(), nan.copy(), 0)
    rmsd = rmsd_matrix(X)
    maxdiff = np.array([np.abs(x - X).max(axis=1) for x in X])   # row by row: memory methods x papers
    Xc = X - X.mean(axis=1, keepdims=True)
    ss = np.sqrt((Xc * Xc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = (Xc @ Xc.T) / np.outer(ss, ss)
    corr = np.clip(corr, -1.0, 1.0)
    np.fill_diagonal(corr, np.where(ss > 0, 1.0, np.nan))
    return MethodComparison(methods, rmsd, maxdiff, corr, n)


# -- Table 5 -------------------------------------------------------------------------
def pass_fail(paper_scores, cut: float, reference: str = "NO"):
    """Per method: passing (score >= cut), failing, helped and hurt relative to ``reference``.

    Papers with a non-finite score in a method count for neither; helped/hurt are
    ``None`` when ``reference`` is not among the methods.
    """
    ref = paper_scores.get(reference)
    ref_pass = None if ref is None else passes(ref, cut)
    ref_ok = None if ref is None else np.isfinite(ref)
    rows = []
    for m, s in paper_scores.items():
        s = np.asarray(s, dtype=np.float64)
        ok = np.isfinite(s)
        passed = ok & passes(s, cut)
        row = {"method": m, "passing": int(passed.sum()), "failing": int((ok & ~passed).sum())}
        if ref_pass is not None:
            both = ok & ref_ok
            row["helped"] = int((both & passed & ~ref_pass).sum())
            row["hurt"] = int((both & ~passed & ref_pass).sum())
        else:
            row["helped"] = row["hurt"] = None
        rows.append(row)
    return rows


# -- text ----------------------------------------------------------------------------
def format_matrix(methods, M, nd=4) -> str:
    w = max(nd + 3, max(len(m) for m in methods))
    lines = [" " * w + "".join(m.rjust(w + 1) for m in methods)]
    for m, row in zip(methods, M):
        lines.append(m.ljust(w) + "".join(("-" if not np.isfinite(v) else f"{v:.{nd}f}").rjust(w + 1)
                                          for v in row))
    return "\n".join(lines)


#: what a paper's score is, with facets, by ``total`` (without facets: its score on the scale)
PAPER_SCORES = {None: "scores", "sum": "rubric totals", "mean": "mean criterion scores"}


def format_comparison(cmp: MethodComparison, pf_rows, cut, total: str | None = None) -> str:
    what = PAPER_SCORES[total]
    out = [f"Between methods, over {cmp.n_papers} papers' adjusted {what} (Denny's Table 4)", "",
           "root mean squared difference", format_matrix(cmp.methods, cmp.rmsd), "",
           "maximum difference", format_matrix(cmp.methods, cmp.maxdiff), "",
           "correlation", format_matrix(cmp.methods, cmp.corr), ""]
    if pf_rows:
        on = "" if total is None else f" on the {what[:-1]}"
        out.append(f"Pass/fail at cut {cut:g}{on} (score >= cut passes) relative to NO (Denny's Table 5)")
        out.append(f"{'method':<8}{'passing':>9}{'failing':>9}{'helped':>8}{'hurt':>6}")
        for r in pf_rows:
            h = "-" if r["helped"] is None else r["helped"]
            u = "-" if r["hurt"] is None else r["hurt"]
            out.append(f"{r['method']:<8}{r['passing']:>9}{r['failing']:>9}{h:>8}{u:>6}")
    return "\n".join(out)


def _nan_to_none(a):
    return [[None if not math.isfinite(v) else float(v) for v in row] for row in np.asarray(a)]


# -- the comparison of a ratings file ------------------------------------------------
@dataclass
class GroupComparison:
    """One group's comparison: the papers' adjusted ``scores`` per method (input scale), Table 4
    (``comparison``), Table 5 (``pass_fail``, None without a cut), the MDS ``coordinates`` and
    ``eigenvalues``, and the ``warnings`` of applying the methods (without the file's prefix)."""

    name: object
    ratings: Ratings
    scores: dict
    comparison: MethodComparison
    pass_fail: list | None
    coordinates: np.ndarray
    eigenvalues: np.ndarray
    warnings: list

    def __repr__(self) -> str:
        return (f"<GroupComparison {self.name!r}: {self.ratings.n_papers} papers; methods "
                f"{' '.join(self.comparison.methods)}; {len(self.warnings)} warning(s)>")


def compare(ratings, methods="all", variant: str = "corrected", cut: float | None = None,
            strict: bool | None = None, anchors=None, steps_by: str | None = None, total: str = "sum",
            shared_raters: bool = False, hold_drifted: bool = False, **read) -> "CompareResults":
    """How far apart do the methods put these papers?  Denny's Tables 4 and 5 and Figures 7-10, group
    by group.

    Parameters
    ----------
    ratings : Ratings, path or pandas.DataFrame
        From :func:`read_ratings` or :meth:`Ratings.from_frame` (a path or DataFrame is read by them);
        groups are compared one by one.
    methods : str or list of str, default "all"
        Method codes (``"TLI,MN"``, ``["TLI", "MML"]``) or ``"all"`` (the study's ten); ``NO`` (no
        equating) is always among them, first.
    variant : {"corrected", "faithful"}
    cut : float, optional
        Cut score: papers passing (score >= cut) and those each method helped or hurt relative to NO;
        with facets, on the papers' scores as ``total`` makes them (the rubric total with ``"sum"``).
    strict : bool, optional
        A method that cannot be applied raises (default: where it is the one method named beside NO; among
        several, or ``"all"``, it is skipped with a warning).
    anchors, steps_by : optional
        The MFRM held at a calibration, and thresholds per level of a facet (as :func:`adjust`).
    hold_drifted : bool
        Hold an anchored element that drifted at its anchor (as :func:`adjust`).
    total : {"sum", "mean"}
        With facets, the papers' scores compared (and cut): their rubric total (the default, as ``adjust``'s
        ``X_total`` and ``ratercal compare --total``) or the mean of their criterion scores.
    shared_raters : bool
        With facets: each classical method with one parameter set per rater over all the criteria
        (as :func:`adjust`).

    **read
        Where ``ratings`` is a path or a DataFrame, the keywords of :func:`read_ratings` (``scale="0-5"``,
        ``paper_col=``, ``group_col=``, ...) it is read with.

    Returns
    -------
    CompareResults
        Per group a :class:`GroupComparison`; labelled tables (:meth:`CompareResults.to_frame`,
        :meth:`CompareResults.scores_frame`), the JSON and text of ``ratercal compare``.

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> r = rc.read_ratings("examples/ratings.csv", scale="0-5")   # doctest: +SKIP
    >>> rc.compare(r, "TLI,MN", cut=3.25).to_frame()               # doctest: +SKIP
    """
    from ..vocabulary import VARIANTS
    from .adjust import apply_group, parse_methods, where
    from .coerce import as_ratings, check_choice
    from .cut import check_cut

    ratings = as_ratings(ratings, **read)
    codes, is_all = parse_methods(methods, ("all",), allow_user=True)
    check_choice(variant, VARIANTS, "variant")
    check_choice(total, ("mean", "sum"), "total")
    cut = check_cut(cut, ratings, total)   # (with facets, on the papers' scores compared: the mean or the total)
    if "NO" not in codes:
        codes = ["NO"] + codes
    # (one method named: its failure is the run's error; among several, it is skipped with a warning, as with
    # "all": one method that cannot be fitted on one group cancelled a run of nine, 149 of 172 random designs)
    strict = (not is_all and len([c for c in codes if c != "NO"]) <= 1) if strict is None else strict
    if shared_raters:
        from .adjust import shared_raters_need_facets

        shared_raters_need_facets(ratings)
    groups = []
    mfrm = {}
    from .anchors import as_anchors

    anchors = as_anchors(anchors)
    if (anchors is not None or steps_by is not None) and "MFRM" in codes:
        from .anchors import fit_mfrm
        from .check import one_group

        if anchors is not None:
            one_group(ratings, "anchors")
        mfrm = {name: fit_mfrm(g, anchors, steps_by, hold_drifted=hold_drifted)[0] for name, g in ratings.by_group()}
    else:   # as adjust: anchors left unused would look like an anchored comparison
        from .anchors import require_mfrm

        require_mfrm(codes, anchors=anchors, steps_by=steps_by)
    for name, g in ratings.by_group():
        prefix = where(ratings, name)
        if g.facets:   # each method as adjust applies it to facetted ratings; a paper's mean or total
            from .adjust import _adjust_facets
            from .rubric import paper_total

            ga = _adjust_facets(name, g, prefix, codes, variant, strict, mfrm.get(name), shared_raters)
            notes = list(ga.warnings)
            scores = {c: paper_total(ga.cells[c][1], ratings.scale_low, total) for c in codes if c in ga.cells}
        else:
            applied, notes = apply_group(g, codes, variant, strict, prefix)
            if name in mfrm and "MFRM" in applied.adjusted:
                applied.adjusted["MFRM"] = mfrm[name].transform(g)
            scores = {c: applied.adjusted[c].paper + ratings.scale_low for c in codes if c in applied.adjusted}
        if anchors is not None and name in mfrm:
            from .anchors import absent_anchors_note, unanchored_raters_note

            notes += ["MFRM: " + n for n in (absent_anchors_note(g, anchors), unanchored_raters_note(g, anchors)) if n]
        if cut is not None and not g.facets:   # (as adjust warns: compare's "hurt" were mostly such ties, a helper's)
            from .summary import grid_warning

            rpp = g.ratings_per_paper()
            has = rpp > 0
            w = grid_warning((g.paper_mean() + ratings.scale_low)[has], cut, rpp[has])
            if w:
                notes.append(w)
        if len(scores) < 2:
            from ..errors import RatercalError

            raise RatercalError(f"{prefix}fewer than two methods could be applied; nothing to compare")
        cmp = method_differences(scores)
        coords, eig = classical_mds(np.nan_to_num(cmp.rmsd), 2)
        groups.append(GroupComparison(name, g, scores, cmp, pass_fail(scores, cut) if cut is not None else None,
                                      coords, eig, notes))
    return CompareResults(ratings, variant, cut, groups, total if ratings.facets else None)


@dataclass
class CompareResults:
    """What :func:`compare` found.

    Attributes
    ----------
    ratings : Ratings
        The ratings compared.
    variant : str
        ``"corrected"`` or ``"faithful"``.
    cut : float or None
        The cut score of Table 5.
    groups : list of GroupComparison
        Per group: the papers' scores by each method, Table 4, Table 5, the MDS coordinates.
    total : {"sum", "mean"} or None
        With facets, the papers' scores compared and cut: their rubric totals or mean criterion scores.

    Examples
    --------
    >>> res = rc.compare("examples/ratings.csv", "MN,TLI", cut=3.25)   # doctest: +SKIP
    >>> res.to_frame(table="pass_fail")                                  # doctest: +SKIP
    """

    ratings: Ratings
    variant: str
    cut: float | None
    groups: list
    #: with facets, the papers' scores compared and cut: ``"sum"`` (rubric totals) or ``"mean"``; else None
    total: str | None = None

    def _tag(self, g):
        return self.ratings.group_tag(g.name) if self.ratings.group is not None else ""

    @property
    def warnings(self) -> list:
        """Every group's warnings with the file's and group's prefix, as the CLI prints them."""
        from .adjust import where

        return [where(self.ratings, g.name) + w for g in self.groups for w in g.warnings]

    def to_dict(self) -> dict:
        """The JSON of ``ratercal compare --json`` (without the maps' ``png``)."""
        r = self.ratings
        return {"file": r.source, "variant": self.variant, "scale": f"{r.scale_low}-{r.scale_low + r.max_score}",
                "warnings": list(r.notes),
                "groups": [{"group": g.name, "comparison": g.comparison.to_dict(), "pass_fail": g.pass_fail,
                            "cut": self.cut, "total": self.total,
                            "mds": {"methods": g.comparison.methods, "coordinates": g.coordinates.tolist(),
                                    "eigenvalues": g.eigenvalues.tolist()}, "warnings": g.warnings}
                           for g in self.groups]}

    def summary(self) -> str:
        """The text of ``ratercal compare``: per group Table 4, Table 5 (with a cut) and the MDS
        coordinates."""
        texts = []
        for g in self.groups:
            cmp, tag = g.comparison, self._tag(g)
            text = format_comparison(cmp, g.pass_fail, self.cut, self.total)
            mds = "\n".join(f"{m:<6}{x:>9.4f}{y:>9.4f}" for m, (x, y) in zip(cmp.methods, g.coordinates[:, :2]))
            head = f"{self.ratings.source or ''}" + (f"  {tag}" if tag else "") + f"  ({self.variant} methods)"
            texts.append(f"{head}\n\n{text}\n\nMDS coordinates (classical, from RMSDs)\n{mds}")
        return ("\n\n" + "=" * 72 + "\n\n").join(texts)

    def __repr__(self) -> str:
        from .coerce import results_repr

        methods = list(dict.fromkeys(m for g in self.groups for m in g.comparison.methods))
        return results_repr(self, f"methods {' '.join(methods)} ({self.variant}), {len(self.groups)} group(s)"
                                  f"{'' if self.cut is None else f', cut {self.cut:g}'}",
                            ".summary(), .to_frame(table='table4'|'pass_fail'|'papers'), .paper_frame(), .to_dict()")

    def _repr_html_(self) -> str:
        from .coerce import results_html

        return results_html(self, f"{self.variant} methods; Table 4", self.to_frame())

    def to_frame(self, table: str = "table4"):
        """``table="table4"`` (default): Table 4 as a long table: per group and pair of methods (in the
        order compared), the papers' RMSD, maximum difference and correlation; ``"pass_fail"``:
        :meth:`pass_fail_frame`; ``"papers"``: :meth:`paper_frame`."""
        from .coerce import check_choice
        from .frames import frame

        check_choice(table, ("table4", "pass_fail", "papers"), "table")
        if table == "pass_fail":
            return self.pass_fail_frame()
        if table == "papers":
            return self.paper_frame()

        rows = []
        for g in self.groups:
            c = g.comparison
            for a, ma in enumerate(c.methods):
                for b, mb in enumerate(c.methods):
                    rows.append({"group": g.name, "method": ma, "other": mb, "papers": c.n_papers,
                                 "rmsd": c.rmsd[a, b], "maxdiff": c.maxdiff[a, b], "corr": c.corr[a, b]})
        return self._grouped(frame(rows))

    def pass_fail_frame(self):
        """Table 5: per group and method, papers passing and failing at the cut, helped and hurt."""
        from .frames import frame

        return self._grouped(frame([{"group": g.name, **row} for g in self.groups for row in (g.pass_fail or [])]))

    def paper_frame(self):
        """Per paper (groups and papers in natural order) each method's adjusted score on the input
        scale, as :meth:`AdjustResults.paper_frame` has them (:meth:`scores_frame`, its former name)."""
        return self.scores_frame()

    def scores_frame(self):
        """The papers' adjusted scores (input scale), one column per method; rows per group and
        paper in natural order."""
        from .frames import columns_frame

        cols = {"group": [], "paper": []}
        methods = list(dict.fromkeys(c for g in self.groups for c in g.scores))
        for c in methods:
            cols[c] = []
        for g in self.groups:
            cols["group"] += [g.name] * g.ratings.n_papers
            cols["paper"] += list(g.ratings.paper_ids)
            for c in methods:
                cols[c] += list(g.scores.get(c, np.full(g.ratings.n_papers, np.nan)))
        return self._grouped(columns_frame(cols, ("group", "paper")))

    def _grouped(self, df):
        if self.ratings.group is None:
            return df.drop(columns="group") if "group" in df else df
        return df.rename(columns={"group": self.ratings.group_name or "group"})

    def map_targets(self, png) -> list:
        """Each group's MDS map file (``png`` or ``NAME_GROUP.png`` beside it), refused where two
        groups' names would give one file (on a case-insensitive file system too)."""
        from .text import group_paths

        return group_paths(png, [g.name for g in self.groups], self.ratings.group_name)

    def draw_maps(self, png, numbered: bool = False) -> list:
        """Draw each group's classical MDS map of the methods (Figures 7-10) to :meth:`map_targets` (or with
        ``numbered``, a page's own files, ``NAME_1.png``, ... whatever the groups are called); every target is
        checked before any is drawn.  Returns the paths."""
        from ..io import output_target
        from ..report.figures import mds_figure

        targets = ([png.with_name(f"{png.stem}_{i}{png.suffix}") for i in range(len(self.groups))] if numbered else
                   self.map_targets(png))
        for t in targets:
            output_target(t)
        for g, target in zip(self.groups, targets):
            tag = self._tag(g)
            title = "Methods mapped by RMSD (classical MDS)" + (f", {tag}" if tag else "")
            mds_figure(target, g.comparison.methods, g.coordinates, title, g.eigenvalues, explain=True)
        return targets
