"""Adjust a practitioner's ratings: the methods on each group, or the method ``check`` recommends
for each group; :func:`adjust` returns an :class:`AdjustResults`.

The methods are applied by the one service that applies methods
(:func:`ratercal_cli.methods.apply.apply_methods`); this module adds what a practitioner's file
needs around it: method lists as the command line spells them (``TLI,MN``, ``all``,
``recommended``), one pass per group, the warnings a person should read (a method skipped, a
category no rater used, scores left blank), and labelled tables of the results.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentError, MethodError, RatercalError, arg, mention
from ..ratings import Ratings
from ..methods import make_method
from ..methods.base import FIT_FAILURES
from ..vocabulary import DEFAULT_VARIANT, STUDY_METHODS, STUDY_SHRINKAGES, VARIANTS, adjusted_columns
from .cut import check_cut

__all__ = ["RECOMMENDED", "parse_methods", "check_cut", "recommended_method", "apply_group", "adjust", "AdjustResults",
           "GroupAdjustment"]

#: ``adjust(..., "recommended")``: each group gets the method ``check`` recommends for it.
RECOMMENDED = "recommended"


def parse_methods(values, default=("TLI",), allow_recommended=False, allow_user=False):
    """Method codes as the command line takes them -> ``(codes, all?)``.

    ``values``: a code, ``"TLI,MN"``, ``"all"`` (the study's ten) or a list of these;
    case-insensitive; ``recommended`` stays lower case where allowed.  With ``allow_user`` (the library's
    :func:`adjust` and :func:`.compare.compare`, not the command line, which runs no code of the user's but a
    config's), a method of the user's own, ``module:Class`` (:mod:`.methods.user`), as it is written.  An
    unknown code is an :class:`InputError` naming ``--method``.
    """
    from ..methods import method_codes
    from ..methods.user import is_user_method

    if isinstance(values, str):
        values = [values]
    try:
        values = list(values or ())
    except TypeError:
        values = [values]
    odd = [v for v in values if not isinstance(v, str)]
    if odd:
        raise ArgumentError("methods", f"expected method codes such as 'TLI' or a list of them, not {odd[0]!r}")
    raw = [v.strip() if allow_user and is_user_method(v) else v.strip().upper()
           for val in values for v in val.split(",") if v.strip()]
    if not raw:
        raw = [d.upper() for d in default]
    known = method_codes()
    is_all = "ALL" in raw
    # "all" stands for the study's ten where it is named: "all,MML" is the ten and MML
    raw = [c for m in raw for c in (STUDY_METHODS if m == "ALL" else
                                    [RECOMMENDED if allow_recommended and m == RECOMMENDED.upper() else m])]
    bad = [m for m in raw if m not in known and m != RECOMMENDED and not (allow_user and is_user_method(m))]
    for m in raw:   # (a module or class that is not there: named here, not a traceback from the first fit)
        if allow_user and is_user_method(m):
            from ..methods.user import load_class

            try:
                load_class(m)
            except (ImportError, AttributeError, TypeError) as exc:
                raise ArgumentError("methods", str(exc)) from None
    if bad:
        extra = ", recommended" if allow_recommended else ""
        raise ArgumentError("methods", f"unknown method {bad[0]} (known: {', '.join(known)}, all{extra})")
    return list(dict.fromkeys(raw)), is_all


def where(ratings: Ratings, name) -> str:
    """The prefix of a group's messages: ``FILE: grade=5: `` (parts left out when unknown)."""
    tag = ratings.group_tag(name) if ratings.group is not None else ""
    return (f"{ratings.source}: " if ratings.source else "") + (f"{tag}: " if tag else "")


def recommended_method(ratings: Ratings, assignment: str = "auto") -> str:
    """The method ``check`` recommends for one group's ratings (its one recommendation, without
    ``--simulate``: :mod:`.recommend`)."""
    return recommended_decision(ratings, assignment)[0].method


def recommended_decision(ratings: Ratings, assignment: str = "auto", clusters: dict | None = None,
                         links: bool = True):
    """``(Recommendation, Assignment)`` of one group's ratings, as ``check`` (without ``--simulate``)
    decides them; ``clusters``: ``check_ratings``' cluster arguments (a column's clusters); ``links``:
    as :func:`.diagnostics.check_ratings` (False for a rubric's criterion)."""
    from .diagnostics import check_ratings

    rep = check_ratings(ratings, assignment=assignment, rasch=ratings.max_raters_per_paper() > 1, links=links,
                        **(clusters or {}))
    return rep.decision, rep.assignment_found


def _at_level(est, ratings, adj, shrinkage):
    """``adj`` at the study's shrinkage level ``shrinkage`` (:func:`~ratercal_cli.methods.shrinkage.shrunk_papers`):
    the paper scores of that level, each rating moved by as much as its paper was, and kept on the scale
    where the method's scores stay on it (TLI (shrunk) moved a top rating of a paper moved up past the top:
    1.08 on a 0-1 scale, with no word)."""
    from ..methods.shrinkage import shrunk_papers
    from ..ratings import Adjusted
    from .uncertainty import ON_THE_SCALE

    paper = np.asarray(shrunk_papers(est, ratings, adj.paper, (shrinkage,), centring="additive")[shrinkage],
                       dtype=np.float64)   # (a file's raters measured on the papers they share: CENTRINGS)
    if np.array_equal(paper, np.asarray(adj.paper), equal_nan=True):
        return adj
    move = paper - np.asarray(adj.paper, dtype=np.float64)
    rating = np.asarray(adj.rating, dtype=np.float64) + move[ratings.paper]
    if getattr(est, "code", None) in ON_THE_SCALE:
        np.clip(rating, 0.0, float(ratings.max_score), out=rating)
    return Adjusted(rating=rating, paper=paper)


def apply_group(ratings: Ratings, codes, variant=DEFAULT_VARIANT, strict=True, prefix=""):
    """The methods on one group's ratings: ``(Applied, [notes])``; a failure under ``strict`` is one
    error line starting with ``prefix``.  Notes (:func:`.notes.method_notes`): methods skipped, raters
    with too few ratings and the methods that left them unadjusted, scores no rater gave (named on the
    scale), adjusted scores that are not finite or outside the scale."""
    from ..methods.apply import apply_methods
    from .notes import method_notes

    try:
        applied = apply_methods(ratings, codes, variant, strict=strict)
    except RatercalError as exc:
        raise RatercalError(f"{prefix}{exc.marked()}") from None
    return applied, method_notes(applied, ratings, ratings.scale_low)


@dataclass
class GroupAdjustment:
    """One group's adjustment: ``adjusted`` ``{code: Adjusted}`` (scores ``0..M``, as the methods
    give them), the fitted ``estimators``, the methods ``skipped`` with their reasons, the
    ``recommended`` method (when asked for) and the ``warnings`` (full lines, as the CLI prints them)."""

    name: object
    ratings: Ratings
    adjusted: dict
    estimators: dict
    skipped: dict
    recommended: str | None = None
    warnings: list = field(default_factory=list)
    #: facetted ratings: ``{code: (cell labels, papers x cells scores 0..M)}`` (:mod:`.rubric`)
    cells: dict = field(default_factory=dict)
    #: ``{code: PaperUncertainty}``: each paper's SE and pass probability (:mod:`.uncertainty`)
    uncertainty: dict = field(default_factory=dict)
    #: a rubric's recommendation: each cell's own (its label, in :func:`.rubric.cells`' order), where
    #: ``recommended`` joins them
    recommended_cells: list | None = None

    def __repr__(self) -> str:
        return (f"<GroupAdjustment {self.name!r}: {self.ratings.n_ratings} ratings, {self.ratings.n_papers} papers; "
                f"methods {' '.join(self.adjusted)}; skipped {list(self.skipped) or 'none'}; "
                f"{len(self.warnings)} warning(s)>")
    #: the warning that the group's papers do not differ detectably ("" when they do)
    signal_warning: str = ""


def _facets_at_level(ratings, fa, code, level, clusters=None):
    """``(Adjusted, papers x cells scores)``: method ``code`` on facetted ratings at the study's shrinkage
    ``level`` (:func:`.simulate.rubric_level_scores`, as ``check --simulate`` ranks it), each rating moved
    by as much as its paper's score in its cell was from ``fa`` (the method's own :class:`.rubric.FacetAdjustment`;
    None: the many-facet models, whose rating is its paper's score in the cell)."""
    from ..methods.apply import mean_over_cells
    from ..ratings import Adjusted
    from .simulate import rubric_level_scores

    got, errors = rubric_level_scores(ratings, [code], [level], clusters)
    if errors:
        raise MethodError(errors[(level, code)])
    scores = got[(level, code)]
    cell = ratings.facet_cells()[0]
    rating = scores[ratings.paper, cell] if fa is None else \
        np.asarray(fa.adjusted.rating, dtype=np.float64) + (scores - fa.cell_scores)[ratings.paper, cell]
    return Adjusted(rating=rating, paper=mean_over_cells(scores)), scores


def _adjust_facets(name, ratings, prefix, codes, variant, strict, mfrm=None, shared_raters=False,
                   assignment="auto", clusters=None, shrinkage=None):
    """A group's facetted ratings: each method by :func:`.rubric.adjust_facets` (the marginal models
    with the facets as effects, the others within each cell, or over all cells with ``shared_raters``);
    ``recommended`` by :func:`_recommended_facets`."""
    from ..methods.apply import non_finite_count
    from .rubric import adjust_facets

    adjusted, estimators, skipped, cells, warnings = {}, {}, {}, {}, []
    label, by_cell = None, None
    if RECOMMENDED in codes:
        label, adjusted[RECOMMENDED], cells[RECOMMENDED], warnings, by_cell = _recommended_facets(
            ratings, prefix, assignment, clusters, strict, variant)
        estimators[RECOMMENDED] = []
    for code in (c for c in codes if c != RECOMMENDED):
        try:
            fa = adjust_facets(code, ratings, variant, strict=strict, prefix=prefix,
                               est=mfrm if code == "MFRM" else None, shared_raters=shared_raters)
        except RatercalError as exc:
            if strict:
                raise RatercalError(f"{prefix}{exc.marked()}" if prefix and not str(exc).startswith(prefix)
                                    else exc.marked()) \
                    from None
            skipped[code] = str(exc)
            warnings.append(f"{prefix}{code} skipped: {exc}")
            continue
        adjusted[code], estimators[code], cells[code] = fa.adjusted, fa.estimators, (fa.labels, fa.cell_scores)
        warnings += [w if w.startswith(prefix) else prefix + f"{code}: {w}" for w in fa.warnings]
        if shrinkage is not None and (shared_raters or (code == "MFRM" and mfrm is not None)):
            warnings.append(f"{prefix}{code} left at its own scores: --shrinkage applies to a rubric's methods "
                            "within each criterion and to the free many-facet fits, not with --shared-raters or "
                            "anchors")
        elif shrinkage is not None:   # every named method at that level, as check --simulate ranks it
            try:
                adjusted[code], scores = _facets_at_level(ratings, fa, code, shrinkage)
                cells[code] = (fa.labels, scores)
            except FIT_FAILURES as exc:
                if strict:
                    raise RatercalError(f"{prefix}{code} at shrinkage {shrinkage}: {exc}") from None
                warnings.append(f"{prefix}{code} left at its own scores: shrinkage {shrinkage}: {exc}")
        if (n := non_finite_count(fa.adjusted)):
            warnings.append(f"{prefix}{code}: {n} adjusted score(s) are not finite and are left blank")
    warnings += _short_totals(ratings, prefix)
    return GroupAdjustment(name, ratings, adjusted, estimators, skipped, label, warnings, cells,
                           recommended_cells=by_cell if by_cell is not None and len(set(by_cell)) > 1 else None)


#: how ``adjust -m recommended`` applies a rubric's decisions (its warnings, README "Rubrics")
RUBRIC_RECOMMENDED = ("each criterion gets check's recommendation for it (its rule, study and fit, decided on that "
                      "criterion's ratings); MML and MFRM are applied as the many-facet model fitted to all the "
                      "criteria at once (a rater's severity shared across them, multi-group where a criterion's "
                      "assignment is confounded with clusters), as check --simulate ranks them, and their scores "
                      "in that criterion kept; the other methods within that criterion")


def _recommended_facets(ratings, prefix, assignment, clusters, strict, variant):
    """``adjust -m recommended`` on one group's facetted ratings (a rubric): ``(label, Adjusted, (cell
    labels, papers x cells scores), warnings)``.  Each cell's decision is what ``check`` decides for it
    (:func:`.check.check_cells`: its own ratings, the assignment verdict shared by the cells read in one
    design), applied as
    ``check --simulate`` ranks it (:func:`.simulate.rubric_level_scores`, :data:`RUBRIC_RECOMMENDED`);
    ``clusters``: ``(column, each rating's cluster code, labels)`` of ``--cluster-col``, or None."""
    from types import SimpleNamespace

    from ..methods.apply import mean_over_cells
    from ..ratings import Adjusted
    from .check import _group_clusters, _rubric_clusters, check_cells
    from .diagnostics import ALPHA
    from .rubric import MODEL_BASED, adjust_facets, cell_parts, cell_tag

    cell, labels = ratings.facet_cells()
    parts = cell_parts(ratings)
    kws = [{} if clusters is None else _group_clusters(part, 0, part, clusters[0], clusters[1][cell == c], clusters[2])
           for c, (_, part) in enumerate(parts)]
    tags = [cell_tag(ratings, lab) for lab, _ in parts]
    checked = check_cells([part for _, part in parts], tags, kws, assignment, ALPHA,
                          [part.max_raters_per_paper() > 1 for _, part in parts])
    decisions = [rep.decision for rep in checked]
    reps = [SimpleNamespace(assignment_found=rep.assignment_found) for rep in checked]
    warnings = [f"{prefix}{t}: recommended {d.label} ({d.reasons[-1]})" for t, d in zip(tags, decisions)]
    warnings.append(f"{prefix}recommended on a rubric: {RUBRIC_RECOMMENDED}")
    scores = np.full((ratings.n_papers, len(labels)), np.nan)
    rating = np.full(ratings.n_ratings, np.nan)
    for key in dict.fromkeys((d.method, d.shrinkage, d.multigroup) for d in decisions):
        code, level, multigroup = key
        cl = _rubric_clusters(ratings, parts, reps) if multigroup else None
        if multigroup and cl is None:
            warnings.append(f"{prefix}recommended {code}: the confounded criterion's clusters do not cover every "
                            "paper of the rubric; fitted as one group")
        try:
            fa = None if code in MODEL_BASED else adjust_facets(code, ratings, variant, strict=strict, prefix=prefix)
            got, at = _facets_at_level(ratings, fa, code, level, cl)
        except (RatercalError, *FIT_FAILURES) as exc:
            msg = f"{prefix}recommended {code} at shrinkage {level}: {exc}"
            if strict:
                raise RatercalError(msg) from None
            warnings.append(msg + "; left blank")
            continue
        mine = [c for c, d in enumerate(decisions) if (d.method, d.shrinkage, d.multigroup) == key]
        scores[:, mine] = at[:, mine]
        took = np.isin(cell, mine)
        rating[took] = np.asarray(got.rating, dtype=np.float64)[took]
    names = list(dict.fromkeys(d.label for d in decisions))
    label = names[0] if len(names) == 1 else "; ".join(f"{t}: {d.label}" for t, d in zip(tags, decisions))
    adj = Adjusted(rating=rating, paper=mean_over_cells(scores))
    return label, adj, (labels, scores), warnings, [d.label for d in decisions]


def _read_once(ratings, adjusted, prefix=""):
    """A warning where no paper was read twice and a method moved the raters: with nothing to compare them on, it
    compared their score distributions, which are their severity only where papers went to raters at random,
    which nothing in such a file can check (a tester's file: MN and TLI moved 60-73 of 300 papers by half a
    point or more with no word)."""
    moved = [c for c in adjusted if c not in ("NO", RECOMMENDED)]
    if not moved or ratings.max_raters_per_paper() > 1:
        return []
    return [f"{prefix}no paper was read twice: {', '.join(moved)} compared the raters by their scores alone, which "
            "are their severity only if the papers were dealt to the raters at random; nothing in the file can "
            "check that (a weaker set of papers looks like a severe rater)"]


def _short_totals(ratings, prefix=""):
    """A warning when some papers were scored in fewer cells (criteria) than others: their X_total
    (a sum over the cells each was scored in) is not comparable with the others'."""
    cell, labels = ratings.facet_cells()
    pairs = np.unique(ratings.paper * len(labels) + cell)
    n = np.bincount(pairs // len(labels), minlength=ratings.n_papers)
    short = np.flatnonzero((n > 0) & (n < n.max()))
    if not short.size:
        return []
    names = ", ".join(f"{ratings.paper_ids[p]} ({n[p]} of {n.max()})" for p in short[:5])
    return [f"{prefix}{short.size} paper(s) scored in fewer cells than the others ({names}"
            f"{' and more' if short.size > 5 else ''}): their X_total sums only those cells; "
            f"give {mention('total', 'mean')} to compare them"]


def _uncertainty(g: GroupAdjustment, variant, cut, n_boot, seed, k, prefix="", shrinkage=None):
    """Each method's paper SEs in one group: posterior for MML/MFRM, bootstrap (``n_boot``) for the
    equating and least-squares methods, seeded by ``(seed, group number, method number)``."""
    from .uncertainty import paper_uncertainty

    if getattr(g.ratings, "facets", None) or g.cells:   # facetted ratings: no paper SEs yet
        if n_boot:   # said, not silently dropped (the columns X_paper_se were simply missing)
            g.warnings.append(f"{prefix}{mention('bootstrap')}: no paper standard errors on ratings with facets (a "
                              "rubric) yet; no X_paper_se or pass-probability columns are written")
        return
    low = g.ratings.scale_low
    done = {}
    for j, (code, adj) in enumerate(g.adjusted.items()):
        est = g.estimators.get(code)
        key = id(adj)
        level = shrinkage if code != RECOMMENDED else ("none" if "(unshrunk)" in str(g.recommended) else None)
        if key not in done:   # ``recommended`` is the same fit as its method
            done[key] = paper_uncertainty(g.ratings, code, est, adj, n_boot, [seed, k, j], variant,
                                          None if cut is None else cut - low, level=level)
        found = done[key]
        if found is not None:
            g.uncertainty[code] = found
            line = prefix + found.note
            if found.note and line not in g.warnings:   # once, though "recommended" shares its fit
                g.warnings.append(line)
    if n_boot:   # (a staff helper's PCM with --bootstrap 200: no word, and its memo said "give a bootstrap")
        from .uncertainty import BOOTSTRAP_METHODS, POSTERIOR_METHODS

        for c in g.adjusted:   # (a line a method, named first: a memo of another leaves it out)
            if c not in g.uncertainty:
                g.warnings.append(
                    f"{prefix}{f'recommended {g.recommended}' if c == RECOMMENDED else c}: no standard errors from "
                    f"{mention('bootstrap', n_boot)}, which does not draw its scores (it draws "
                    f"{', '.join(BOOTSTRAP_METHODS)}; {', '.join(POSTERIOR_METHODS)} have the model's): no "
                    "X_paper_se, pass probability or uncertain students for it")


def resolved_any(ratings) -> bool:
    """Whether any paper of ``ratings`` had a discrepancy resolved (a third reading kept with the nearer of the
    first two): its first two readings are not the ratings kept.  (A group with none resolved carries the first
    readings of a file whose other groups have: a verifying helper's grade B was warned.)"""
    first = getattr(ratings, "first_readings", None)
    if first is None or first is ratings:
        return False
    return not (first.n_ratings == ratings.n_ratings and all(
        np.array_equal(np.sort(a), np.sort(b)) for a, b in (
            (first.paper * first.n_raters + first.rater, ratings.paper * ratings.n_raters + ratings.rater),
            (first.paper * (first.max_score + 1) + first.score, ratings.paper * (ratings.max_score + 1) + ratings.score))))


def _resolved_se_warning(g: GroupAdjustment) -> str:
    """The warning beside paper standard errors of resolved ratings: the third reading kept with the nearer of the
    first two leaves pairs that agree by construction, and every method's SE (the model's posterior, the
    bootstrap's) takes the raters for more consistent than they are.  On ratings drawn from a partial credit model
    (tests/practice/test_resolved_uncertainty.py) the 90% intervals of MML, MFRM and TLI's bootstrap covered the
    true scores 54-66% of the time resolved (five seeds), 86-91% on every reading, and their scores lay farther from
    the truth; a verifying helper's eight designs (graded response with slopes, harsh raters, high and low
    reliability, 120 papers) 48-84% resolved, 85-94% not.  The command line and the app said nothing."""
    named = [f"recommended {g.recommended}" if c == RECOMMENDED else c for c in g.uncertainty]
    return (f"{', '.join(named)}: discrepancies resolved "
            f"({mention('resolve_discrepancies', True)}): the pairs kept agree by construction, so the raters look "
            "more consistent than they are and the standard errors, pass probabilities and uncertain students "
            "understate the uncertainty (in simulations their 90% intervals covered the truth as little as "
            "half the time); adjusting every reading keeps them honest, and its scores nearer the truth")


def _signal_warning(g: GroupAdjustment, prefix="") -> str:
    """A warning where the group's papers do not differ detectably (the test ``check --simulate``
    uses, :func:`.agreement.paper_signal`): on random scores MFRM put all 202 papers at 3.536 with an
    S.E. of 0.0003, failed 86 of 87 passing papers and called none uncertain, with no word (issue 28)."""
    from .agreement import clear_paper_signal, no_paper_signal, no_signal_text, paper_signal

    if clear_paper_signal(g.ratings):   # (most files: no F distribution needed)
        return ""
    icc = paper_signal(g.ratings)
    if not no_paper_signal(icc):
        return ""
    model = [c for c in g.adjusted if c in ("MML", "MFRM") or (c == RECOMMENDED and g.recommended in ("MML", "MFRM"))]
    return (f"{prefix}{no_signal_text(icc)}: the adjusted scores and any pass/fail at a cut mostly reflect the "
            "raters, not the papers"
            + (f"; {', '.join(model)} put every paper near the mean with small standard errors, so few decisions "
               "look uncertain though none is sure" if model else ""))


def shared_raters_need_facets(ratings):
    """``--shared-raters`` is about facets: an error without them."""
    if not ratings.facets:
        raise ArgumentError("shared_raters", "shares a rater's parameters across the levels of a facet; these "
                            f"ratings have none (give {arg('facet_cols')} or {arg('score_cols')})")


def _adjust_group(name, ratings, prefix, codes, variant, strict, assignment, mfrm=None, shared_raters=False,
                  shrinkage=None, clusters=None, decided=None):
    if ratings.facets:
        return _adjust_facets(name, ratings, prefix, codes, variant, strict, mfrm, shared_raters, assignment,
                              clusters, shrinkage)
    want = [c for c in codes if c != RECOMMENDED]
    warnings, rec, dec = [], None, None
    if RECOMMENDED in codes:   # (decided: check's, with its simulation's say)
        dec, found = decided if decided is not None else recommended_decision(ratings, assignment, clusters)
        rec = dec.method
        warnings.append(f"{prefix}recommended {dec.label} ({dec.reasons[-1]})")
        if not dec.multigroup:
            want = list(dict.fromkeys(want + [rec]))
    # MML and MFRM named where assignment is confounded with clusters: the multi-group model, as
    # the recommendation fits it (one normal quality for all reads a weak school's raters as severe)
    marginal = _multigroup_marginal(ratings, want, assignment, clusters)
    if marginal is not None and not marginal[1].multigroup:   # (clusters that do not meet the confound: one group,
        warnings.append(f"{prefix}{', '.join(marginal[0])} fitted as one group: {marginal[1].reason}")   # said)
        marginal = None
    if marginal is not None:
        want = [c for c in want if c not in marginal[0]]
    applied, notes = apply_group(ratings, want, variant, strict, prefix)
    warnings += [prefix + n for n in notes]
    warnings += _read_once(ratings, applied.adjusted, prefix)
    adjusted, estimators = dict(applied.adjusted), dict(applied.estimators)
    if marginal is not None:
        codes_mg, found_mg = marginal
        for code in codes_mg:
            est = make_method(code, clusters=found_mg.clusters)
            try:
                adjusted[code], estimators[code] = est.fit_transform(ratings), est
            except FIT_FAILURES as exc:
                if strict:
                    raise RatercalError(f"{prefix}{code} (multi-group): {exc}") from None
                warnings.append(f"{prefix}{code} (multi-group) skipped: {exc}")
        warnings.append(f"{prefix}assignment {found_mg.assignment}: {found_mg.reason}")
    if mfrm is not None and "MFRM" in adjusted:   # anchored: the MFRM fitted on the calibration's scale
        adjusted["MFRM"], estimators["MFRM"] = mfrm.transform(ratings), mfrm
    if shrinkage is not None:   # --shrinkage: every named method at that level of the study
        for code in list(adjusted):
            try:
                adjusted[code] = _at_level(estimators[code], ratings, adjusted[code], shrinkage)
            except FIT_FAILURES as exc:
                if strict:
                    raise RatercalError(f"{prefix}{code} at shrinkage {shrinkage}: {exc}") from None
                warnings.append(f"{prefix}{code} left at its own scores: shrinkage {shrinkage}: {exc}")
    if dec is not None and dec.multigroup:   # the marginal model with a mean quality per cluster
        est = make_method(rec, clusters=found.clusters)
        try:
            adjusted[RECOMMENDED] = _at_level(est, ratings, est.fit_transform(ratings), dec.shrinkage)
            estimators[RECOMMENDED] = est
        except FIT_FAILURES as exc:
            raise RatercalError(f"{prefix}recommended {dec.label}: {exc}") from None
    elif rec is not None and rec in applied.skipped:   # (skipped among several: what was asked for is missing)
        raise RatercalError(f"{prefix}recommended {dec.label}: {applied.skipped[rec]}")
    elif rec is not None and rec in applied.adjusted:
        est = applied.estimators[rec]
        adjusted[RECOMMENDED] = _at_level(est, ratings, applied.adjusted[rec], dec.shrinkage)
        estimators[RECOMMENDED] = est
        if rec not in codes:
            # the scores outside the scale are the ones written, at the recommendation's shrinkage: a new user's
            # "MN: 36 adjusted rating(s) ... fall outside the scale" was of the unshrunk MN, which the output
            # does not hold (its MN (shrunk) all inside 1-6)
            from ..methods.apply import Applied
            from .notes import out_of_scale_notes

            own = {prefix + n for n in out_of_scale_notes(Applied(adjusted={rec: applied.adjusted[rec]}), ratings,
                                                          ratings.scale_low)}
            written = out_of_scale_notes(Applied(adjusted={rec: adjusted[RECOMMENDED]}), ratings, ratings.scale_low,
                                         {rec: f"{RECOMMENDED} {dec.label}"})
            warnings = [w for w in warnings if w not in own] + [prefix + n for n in written]
            del adjusted[rec], estimators[rec]
    return GroupAdjustment(name, ratings, adjusted, estimators, dict(applied.skipped),
                           None if dec is None else dec.label, warnings)


def _simulated_decisions(ratings: Ratings, codes, assignment: str, cluster, simulate, discrepancy=None,
                         checked=None):
    """With ``simulate``: each group's ``(Recommendation, Assignment)`` as ``check(simulate=R)`` makes
    them (its default seed), the simulation of the file's own design having its say, so that
    ``recommended`` applies what ``check --simulate R`` printed; with ``checked`` (a check of these
    ratings), its decisions; None without either."""
    if simulate is None and checked is None:
        return None
    name = "simulate" if checked is None else "checked"
    if RECOMMENDED not in codes:
        raise ArgumentError(name, f"goes with {arg('methods', RECOMMENDED, cli='-m recommended')}: it decides "
                            "the recommendation")
    if ratings.facets:
        raise ArgumentError(name, "is not available for a rubric yet: run check with it and name the method "
                            "it recommends for each criterion")
    if checked is not None:
        groups = [(name, g.n_ratings) for name, g in ratings.by_group()]
        if [(rep.group, rep.n_ratings) for rep in checked.reports] != groups:
            raise ArgumentError("checked", "is a check of other ratings: its groups or their ratings differ")
        return [(rep.decision, rep.assignment_found) for rep in checked.reports]
    from ..arguments import check_count
    from .check import check

    checked = check(ratings, assignment=assignment, simulate=check_count(simulate, "simulate", 2), cluster=cluster,
                    discrepancy=discrepancy)
    return [(rep.decision, rep.assignment_found) for rep in checked.reports]


#: the marginal models, fitted with a mean quality per cluster where assignment is confounded
MARGINAL = ("MML", "MFRM")


def _multigroup_marginal(ratings: Ratings, want, assignment: str, clusters):
    """``(the MML/MFRM among want, the assignment found)`` where they should be the multi-group model
    (assignment confounded with clusters, as :func:`.assignment.decide_assignment` decides it for
    ``check`` and the recommendation), else None.  Without a cluster column, a rater network that does
    not split into clusters ends it before any fit (there is no second group, whatever ``assignment``
    says), and one whose :func:`.assignment.modularity_bound` is below the modularity kept before the
    search for them."""
    named = [c for c in want if c in MARGINAL]
    if not named or assignment == "random":
        return None
    from ..network import shared_papers
    from .assignment import MIN_MODULARITY, decide_assignment, modularity_bound, network_clusters

    network = None
    if not clusters:   # the network's clusters, found once and handed on; none: one group, whatever is said
        W = shared_papers(ratings)
        if modularity_bound(W) < MIN_MODULARITY - 1e-9:   # no split can be kept: no search
            return None
        network = network_clusters(ratings, W)
        if network[0] is None:
            return None
    found = decide_assignment(ratings, assignment, severities=False, network=network, **(clusters or {}))
    return (named, found) if found.multigroup or found.clustered else None


def adjust(ratings: Ratings, methods="TLI", variant: str = DEFAULT_VARIANT, assignment: str = "auto",
           strict: bool | None = None, cut: float | None = None, bootstrap: int = 0,
           seed: int = 0, anchors=None, steps_by: str | None = None,
           shared_raters: bool = False, hold_drifted: bool = False, shrinkage: str | None = None,
           cluster: str | None = None, simulate: int | None = None,
           discrepancy: int | None = None, checked=None, **old) -> "AdjustResults":
    """Adjust the scores of ``ratings`` by one or more methods, group by group.

    Parameters
    ----------
    ratings : Ratings, path or pandas.DataFrame
        From :func:`read_ratings` or :meth:`Ratings.from_frame` (a path or DataFrame is read by
        them); with groups (``group_col=``), each group is adjusted on its own, as Denny adjusted each
        grade.
    methods : str or list of str, default "TLI"
        Method code(s) (``"TLI"``, ``"TLI,MN"``, ``["TLI", "MML"]``), ``"all"`` (the study's ten)
        or ``"recommended"``: each group's one recommendation as :func:`check` (without
        ``simulate``) makes it (:mod:`.recommend`: the method at its shrinkage level, the multi-group
        MML where assignment is confounded with clusters), its scores under the name ``recommended``;
        with facets (a rubric) each criterion's, applied as :data:`RUBRIC_RECOMMENDED` says.  With
        ``simulate``, as :func:`check` with ``simulate`` makes it.
    variant : {"corrected", "faithful"}
        The 1990 methods as they should compute, or as the QuickBASIC programs did.
    assignment : {"auto", "random", "nonrandom"}
        How papers were assigned to raters (``auto``: what the file shows): for ``recommended``, and
        for MML and MFRM, fitted with a mean quality per cluster where it is confounded with clusters.
    shrinkage : {None, "none", "kelley", "linear_eb"}
        The named methods' paper scores at a shrinkage level of the study
        (:mod:`ratercal_cli.methods.shrinkage`): ``none`` unshrunk (the Rasch fits at Warm's WLE),
        ``kelley`` shrunk (Kelley's formula; the Rasch fits at their EAP), ``linear_eb`` the study's
        like-for-like level (one empirical-Bayes linear operator on every method's unshrunk scores);
        None: each method's own (MML and MFRM at the EAP, the others unshrunk).  ``recommended`` has
        its own level.
    simulate : int, optional
        With ``"recommended"``: decide as :func:`check` with ``simulate=R`` does (``R`` replications of
        the file's own design, check's default seed), so the scores are those of the recommendation
        ``check --simulate R`` printed.  Not yet for a rubric.  ``discrepancy``: the file's
        third-reading threshold the simulation draws (as :func:`check`'s).
    checked : CheckResults, optional
        With ``"recommended"``: :func:`check`'s results for these same ratings (made with ``simulate``,
        say): each group's decision in them is applied, so that the scores are of the recommendation
        those results show, without running their simulation again (the local app's way).
    cluster : str, optional
        A facet of ``ratings`` that is each paper's cluster (school): for ``recommended``, MML and
        MFRM, the clusters of the multi-group model instead of the rater network's (as :func:`check`).
    strict : bool, optional
        A method that cannot be applied to a group raises :class:`~ratercal_cli.errors.RatercalError`
        (default: where it is the one method named; among several, or ``"all"``, it is skipped with a
        warning, and the run fails only where no method could be applied).
    cut : float, optional
        A cut score on the input's scale (a paper passes with a score >= cut): the summary
        (:meth:`AdjustResults.adjustment_summaries`) names the papers whose pass/fail changed, and
        each paper gets the probability that it passes.
    bootstrap : int
        Draws of the bootstrap over papers giving the equating and least-squares methods' paper SEs
        (0: none); MML and MFRM always get their posterior SDs (:mod:`.uncertainty`).
    seed : int
        The bootstrap's seed: the same seed gives the same SEs.
    shared_raters : bool
        With facets (a rubric's criteria): each classical method once over all the criteria with one
        parameter set per rater, instead of within each criterion on its own (:mod:`.rubric`).
    anchors, steps_by, hold_drifted : optional
        MFRM on a calibration (:func:`~ratercal_cli.practice.anchors.read_anchors`): an anchored element
        that drifted is freed and measured on the other anchors' scale, unless ``hold_drifted``
        (:func:`~ratercal_cli.practice.anchors.fit_mfrm`); thresholds per level of the facet ``steps_by``.

    **read
        Where ``ratings`` is a path or a DataFrame, the keywords of :func:`read_ratings` (``scale="0-5"``,
        ``paper_col=``, ``group_col=``, ...) it is read with.

    Returns
    -------
    AdjustResults
        Per rating and per paper adjusted scores on the file's scale (:meth:`AdjustResults.to_frame`,
        :meth:`AdjustResults.paper_frame`), the fitted estimators, the warnings.

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> r = rc.read_ratings("examples/ratings.csv", scale="0-5", group_col="grade")  # doctest: +SKIP
    >>> res = rc.adjust(r, "TLI,MN")                                                 # doctest: +SKIP
    >>> res.paper_frame().head()                                                     # doctest: +SKIP
    """
    from .assignment import ASSIGNMENTS
    from .coerce import as_ratings, with_cluster, with_discrepancy, check_choice, check_count, split_read

    read, old = split_read(old)   # a path or DataFrame's read_ratings keywords (scale=, paper_col=, ...)
    if old:
        methods = _old_method_argument(old, methods)
    ratings = as_ratings(ratings, **with_discrepancy(ratings, discrepancy, with_cluster(ratings, cluster, read)))
    codes, is_all = parse_methods(methods, allow_recommended=True, allow_user=True)
    check_choice(variant, VARIANTS, "variant")
    check_choice(assignment, ASSIGNMENTS, "assignment")
    bootstrap = check_count(bootstrap, "bootstrap")
    seed = check_count(seed, "seed")
    decided = _simulated_decisions(ratings, codes, assignment, cluster, simulate, discrepancy, checked)
    cl: list | None = None
    if cluster is not None:
        from .assignment import pop_cluster
        from .check import _group_clusters

        if cluster not in ratings.facets:
            raise ArgumentError("cluster", f"{cluster!r} is not a facet of the ratings")
        ratings, codes_, labels_ = pop_cluster(ratings, cluster)
        if ratings.facets:   # each rating's cluster code: a rubric's criteria are checked one by one
            cl = [(cluster, codes_ if ratings.group is None else codes_[ratings.group == k], labels_)
                  for k in range(len(ratings.by_group()))]
        else:
            cl = [_group_clusters(ratings, k, g, cluster, codes_, labels_)
                  for k, (_, g) in enumerate(ratings.by_group())]
    cut = check_cut(cut, ratings)
    if int(bootstrap) == 1:   # one draw has no spread: the SE columns would be left blank
        raise ArgumentError("bootstrap", "one bootstrap draw gives no standard error; give 0 (none) or N >= 2 "
                            "(e.g. 200)")
    # (one method named: its failure is the run's error; among several, it is skipped with a warning, as with
    # "all": one method that cannot be fitted on one group cancelled a run of nine, 149 of 172 random designs.
    # ``recommended`` is one of them: "-m recommended,MML" on raters in two groups that share no paper stopped
    # on MML, where "-m NO,MML" skipped it; the recommendation's own failure stops the run either way)
    strict = (not is_all and len(codes) <= 1) if strict is None else strict
    from .anchors import as_anchors

    anchors = as_anchors(anchors)
    mfrm, anchored = {}, None
    if (anchors is not None or steps_by is not None) and "MFRM" in codes:
        from .anchors import fit_mfrm
        from .check import one_group

        if anchors is not None:
            one_group(ratings, "anchors")
        for name, g in ratings.by_group():
            mfrm[name], rows = fit_mfrm(g, anchors, steps_by, hold_drifted=hold_drifted)
            anchored = rows if anchors is not None else None
    else:
        from .anchors import require_mfrm

        require_mfrm(codes, anchors=anchors, steps_by=steps_by)
    if shared_raters:
        shared_raters_need_facets(ratings)
    if shrinkage is not None and shrinkage not in STUDY_SHRINKAGES:
        raise ArgumentError("shrinkage", f"must be one of {', '.join(STUDY_SHRINKAGES)}, not {shrinkage!r}")
    groups = [_adjust_group(name, g, where(ratings, name), codes, variant, strict, assignment, mfrm.get(name),
                            shared_raters, shrinkage, None if cl is None else cl[k],
                            None if decided is None else decided[k])
              for k, (name, g) in enumerate(ratings.by_group())]
    done = [c for c in codes if any(c in g.adjusted for g in groups)]
    if not done:
        raise RatercalError(f"{ratings.source + ': ' if ratings.source else ''}no method could be applied")
    for k, g in enumerate(groups):
        _uncertainty(g, variant, cut, int(bootstrap), int(seed), k, where(ratings, g.name), shrinkage)
        if g.uncertainty and resolved_any(g.ratings):
            g.warnings.append(where(ratings, g.name) + _resolved_se_warning(g))
        g.signal_warning = _signal_warning(g, where(ratings, g.name))
        if g.signal_warning:
            g.warnings.append(g.signal_warning)
        if anchors is not None and "MFRM" in g.adjusted:
            from .anchors import absent_anchors_note, unanchored_raters_note

            for note in (absent_anchors_note(g.ratings, anchors), unanchored_raters_note(g.ratings, anchors)):
                if note:   # (MFRM's: the memo of another method named beside it leaves them out)
                    g.warnings.append(where(ratings, g.name) + "MFRM: " + note)
    res = AdjustResults(ratings, variant, done, groups, cut, int(bootstrap), shrinkage=shrinkage)
    res.anchored = anchored
    return res


def _old_method_argument(old: dict, methods):
    """``adjust(method=...)``, the former name of ``methods`` (a DeprecationWarning)."""
    import warnings

    bad = [k for k in old if k != "method"]
    if bad:   # (as check's and compare's: an ArgumentError naming the keywords there are)
        from .coerce import READ_ARGS

        raise ArgumentError(bad[0], f"is not an argument of adjust nor of read_ratings ({', '.join(READ_ARGS)})")
    warnings.warn("adjust(method=) is now adjust(methods=), as in compare and check", DeprecationWarning,
                  stacklevel=3)
    return old["method"]


@dataclass
class AdjustResults:
    """What :func:`adjust` made.

    Attributes
    ----------
    ratings : Ratings
        The ratings adjusted.
    variant : str
        ``"corrected"`` or ``"faithful"``.
    methods : list of str
        The methods applied to at least one group, in the order asked for.
    groups : list of GroupAdjustment
        Per group: the adjusted scores, the fitted estimators, what was skipped and why, the warnings.
    cut, bootstrap : float or None, int
        As given to :func:`adjust`.

    Examples
    --------
    >>> res = rc.adjust("examples/ratings.csv", ["TLI", "MFRM"])   # doctest: +SKIP
    >>> res.paper_frame().head()                                    # doctest: +SKIP
    """

    ratings: Ratings
    variant: str
    methods: list
    groups: list
    cut: float | None = None
    bootstrap: int = 0
    #: with anchors: each anchored element's displacement and drift (:func:`.anchors.displacement`)
    anchored: list | None = None
    #: ``--shrinkage``: the level of the study every named method's scores were put at (None: each its own)
    shrinkage: str | None = None

    def adjustment_summaries(self, confidence: float | None = None) -> list:
        """Per group, how far each method moved each rater and the papers and, at the cut, whose
        pass/fail changed and whose is uncertain at ``confidence`` (default 0.9; :func:`.summary.summarise`);
        ``recommended`` names the method applied."""
        from .summary import summarise

        if confidence is not None:
            from .levels import check_confidence

            confidence = check_confidence(confidence)
        return [summarise(g.ratings, {c: g.adjusted[c] for c in self.methods if c in g.adjusted},
                          g.ratings.scale_low, self.cut, g.name, {RECOMMENDED: g.recommended},
                          g.uncertainty, confidence, self._unshrunk(g) if self.cut is not None else None)
                for g in self.groups]

    def _unshrunk(self, g) -> dict:
        """``{code: paper scores (0..M)}`` of the group's methods applied at a shrunk level (MML's and MFRM's own
        EAP fair scores, a recommendation "(shrunk)"), at their unshrunk level: the summary's account of which
        moves at the cut are the shrinkage's (every one pass -> fail at a cut above the mean, where nothing
        said so).  Made once a group."""
        cache = self.__dict__.setdefault("_unshrunk_cache", {})
        if id(g) in cache:
            return cache[id(g)]
        from ..methods.shrinkage import own_shrinkage, shrunk_papers

        out = {}
        for code in self.methods:
            est, adj = g.estimators.get(code), g.adjusted.get(code)
            if est is None or adj is None:
                continue
            try:
                own = None if own_shrinkage(est) else est.transform(g.ratings).paper   # (its own scores: unshrunk)
                none = np.asarray(shrunk_papers(est, g.ratings, own, ("none",))["none"], dtype=np.float64)
            except FIT_FAILURES:
                continue
            if not np.allclose(none, np.asarray(adj.paper, dtype=np.float64), rtol=0, atol=1e-9, equal_nan=True):
                out[code] = none
        cache[id(g)] = out
        return out

    def _unshrunk_totals(self, g, code, total: str = "sum"):
        """A rubric group's papers' totals (:func:`.rubric.paper_total`) by the many-facet ``code`` (MFRM, MML, one
        model on all the criteria) at its unshrunk level, its WLE (its own scores are its EAP's), as
        :meth:`_unshrunk` gives an essay's: the levels' account of what the shrinkage moved (None where ``code``
        is not one such model, or its scores are not shrunk)."""
        from .rubric import model_cell_scores, paper_total

        ests = g.estimators.get(code)
        est = ests[0] if isinstance(ests, list) and len(ests) == 1 else None
        if est is None or code not in g.cells or getattr(est, "quality", None) != "eap" \
                or getattr(est, "quality_wle_", None) is None:
            return None
        cells = model_cell_scores(est, g.ratings, est.quality_wle_)
        if np.allclose(cells, g.cells[code][1], rtol=0, atol=1e-9, equal_nan=True):
            return None
        return paper_total(cells, g.ratings.scale_low, total)

    def __repr__(self) -> str:
        from .coerce import results_repr

        return results_repr(self, f"methods {' '.join(self.methods)} ({self.variant}), {len(self.groups)} group(s)",
                            ".summary(), .paper_frame(), .to_frame(table='ratings'|'papers'), .to_dict()")

    def _repr_html_(self) -> str:
        from .coerce import results_html

        return results_html(self, f"methods {' '.join(self.methods)} ({self.variant})", self.paper_frame())

    def summary(self) -> str:
        """The summary ``ratercal adjust`` prints on standard error: per group how far each method
        moved each rater and the papers (and, with a cut, whose pass/fail changed)."""
        return self.summary_text()

    def summary_text(self, confidence: float | None = None) -> str:
        """The summary ``ratercal adjust`` prints on standard error (:meth:`summary`); ``confidence``: of
        the uncertain decisions at the cut (default 0.9)."""
        r = self.ratings
        text = "\n".join(s.format_text(f"{r.source + ', ' if r.source else ''}"
                                       f"{r.group_tag(s.group) if r.group is not None else 'all papers'}")
                         for s in self.adjustment_summaries(confidence))
        if self.anchored is not None:
            from .anchors import format_displacement

            text += "\n\n" + "\n".join(format_displacement(self.anchored))
        return text

    def uncertainty_by_group(self) -> dict:
        """``{group: {code: PaperUncertainty}}``, as :func:`write_adjusted` takes them."""
        return {g.name: g.uncertainty for g in self.groups}

    @property
    def warnings(self) -> list:
        """The warning lines of every group, in order (what the CLI prints to standard error)."""
        return [w for g in self.groups for w in g.warnings]

    @property
    def recommended(self) -> dict:
        """``{group: method}`` recommended (when ``"recommended"`` was asked for)."""
        return {g.name: g.recommended for g in self.groups if g.recommended is not None}

    def by_group(self) -> dict:
        """``{group: {code: Adjusted}}`` (scores ``0..M``), as :func:`write_adjusted` takes them."""
        return {g.name: g.adjusted for g in self.groups}

    def recommended_lines(self) -> dict:
        """``{group: the method applied}`` as the adjusted file's ``recommended_method`` column takes it: the
        recommendation's label, or for a rubric whose criteria got different methods each rating's own
        criterion's (``(a label a rating of the group, the joined label)``; a researcher tester: every line of a long rubric carried the
        joined "criterion=ideas: ...; criterion=org: ..." where the column says the method each line got)."""
        from .rubric import cells

        out = {}
        for g in self.groups:
            if g.recommended_cells is not None:   # (each rating's, and the joined label for a line of several)
                cell, _ = cells(g.ratings)
                out[g.name] = ([g.recommended_cells[c] for c in cell.tolist()], g.recommended)
            elif g.recommended is not None:
                out[g.name] = g.recommended
        return out

    def cells_by_group(self, total: str = "sum") -> dict | None:
        """With facets, ``{group: {code: (paper score in each rating's cell 0..M, paper total on the
        file's scale)}}`` per rating of the group, as :func:`write_adjusted` takes them; else None."""
        if not self.ratings.facets:
            return None
        from .rubric import cells, paper_total

        out = {}
        for g in self.groups:
            cell, _ = cells(g.ratings)
            out[g.name] = {code: (scores[g.ratings.paper, cell],
                                  paper_total(scores, self.ratings.scale_low, total)[g.ratings.paper])
                           for code, (_, scores) in g.cells.items()}
        return out

    def rating_scores(self, code) -> np.ndarray:
        """Method ``code``'s adjusted score of each rating of :attr:`ratings`, on the scale of the
        input (nan where the method was not applied or gave no finite score)."""
        return self._scores(code, "rating", self.ratings.n_ratings, lambda r: r.group)

    def paper_scores(self, code) -> np.ndarray:
        """Method ``code``'s adjusted score of each paper of :attr:`ratings`, on the input's scale."""
        return self._scores(code, "paper", self.ratings.n_papers, self._paper_group)

    def _paper_group(self, r):
        group = np.zeros(r.n_papers, dtype=np.int64)
        group[r.paper] = r.group
        return group

    def _scores(self, code, kind, n, group_of):
        r = self.ratings
        made = [c for c in dict.fromkeys(c for g in self.groups for c in g.adjusted)]
        if code not in made:   # (a method not applied gave every paper NaN, silently)
            raise ArgumentError("code", f"{code!r} was not applied (methods: {', '.join(made) or 'none'})")
        out = np.full(n, np.nan)
        if r.group is None:
            adj = self.groups[0].adjusted.get(code)
            return out if adj is None else getattr(adj, kind) + r.scale_low
        of = group_of(r)
        for k, g in enumerate(self.groups):
            adj = g.adjusted.get(code)
            if adj is not None:
                out[of == k] = getattr(adj, kind) + r.scale_low
        return out

    def rating_paper_scores(self, code) -> np.ndarray:
        """Per rating, its paper's adjusted score (with facets: the paper's score in the rating's cell,
        e.g. its criterion), on the input's scale: the ``X_paper`` column."""
        r = self.ratings
        if not r.facets:
            return self.paper_scores(code)[r.paper]
        from .rubric import cells

        out = np.full(r.n_ratings, np.nan)
        for k, g in enumerate(self.groups):
            if code not in g.cells:
                continue
            mask = np.ones(r.n_ratings, dtype=bool) if r.group is None else r.group == k
            cell, _ = cells(g.ratings)
            out[mask] = g.cells[code][1][g.ratings.paper, cell] + r.scale_low
        return out

    def paper_totals(self, code, total: str = "sum") -> np.ndarray:
        """With facets: each paper's rubric total (:func:`.rubric.paper_total`: the sum of its cell
        scores, or their mean) on the input's scale; without facets its adjusted score."""
        r = self.ratings
        if not r.facets:
            return self.paper_scores(code)
        from .rubric import paper_total

        out = np.full(r.n_papers, np.nan)
        of = self._paper_group(r) if r.group is not None else np.zeros(r.n_papers, dtype=np.int64)
        for k, g in enumerate(self.groups):
            if code in g.cells:
                out[of == k] = paper_total(g.cells[code][1], r.scale_low, total)
        return out

    def to_frame(self, table: str = "ratings", total: str = "sum"):
        """``table="ratings"`` (default): per rating (in the ratings' order): group (if any), paper, rater,
        (facets,) score, then per method ``X`` (the rating adjusted) and ``X_paper`` (its paper's adjusted
        score; with facets the paper's score in the rating's cell, and ``X_total`` the paper's rubric
        total), as the CLI's file; ``"papers"``: :meth:`paper_frame`."""
        from .coerce import check_choice

        if table in ("sum", "mean"):   # the former first argument, total
            table, total = "ratings", table
        check_choice(table, ("ratings", "papers"), "table")
        check_choice(total, ("sum", "mean"), "total")
        if table == "papers":
            return self.paper_frame()
        r = self.ratings
        cols = self._label_columns(r.paper, r.rater, r.group)
        for f, (lev, labels) in r.facets.items():
            cols[f] = [labels[k] for k in lev]
        cols["score"] = r.score + r.scale_low
        for code in self.methods:
            rating_col, paper_col = adjusted_columns([code])
            cols[rating_col] = self.rating_scores(code)
            cols[paper_col] = self.rating_paper_scores(code)
            if r.facets:
                cols[f"{code}_total"] = self.paper_totals(code, total)[r.paper]
            for kind, name in (("se", "se"), ("pass_prob", "pass")):
                v = self._uncertain(code, kind)
                if v is not None:
                    cols[f"{paper_col}_{name}"] = v[r.paper]
        if RECOMMENDED in self.methods:   # (the file's column, which the README promised and the frame lacked)
            cols["recommended_method"] = self._recommended_method_column()
        return _columns_frame(cols)

    def _recommended_method_column(self) -> list:
        """Each rating's method under ``recommended`` (:meth:`recommended_lines`), as the file's column."""
        r = self.ratings
        said = np.full(r.n_ratings, "", dtype=object)
        of = r.group if r.group is not None else np.zeros(r.n_ratings, dtype=np.int64)
        lines = self.recommended_lines()
        for k, g in enumerate(self.groups):
            v = lines.get(g.name)
            if v is not None:
                said[of == k] = v[0] if isinstance(v, tuple) else v
        return said.tolist()

    def _each_group(self, code):
        """``(the group's papers as a mask over :attr:`ratings`' papers, its scale's low end, its
        :class:`.uncertainty.PaperUncertainty` of ``code``)`` for each group that has one."""
        r = self.ratings
        of = self._paper_group(r) if r.group is not None else np.zeros(r.n_papers, dtype=np.int64)
        for k, g in enumerate(self.groups):
            u = g.uncertainty.get(code)
            if u is not None:
                yield of == k, g.ratings.scale_low, u

    def _uncertain(self, code, kind):
        """Per paper of :attr:`ratings`: ``se`` or ``pass_prob`` of ``code`` (None where no group has it)."""
        out, found = np.full(self.ratings.n_papers, np.nan), False
        for at, _, u in self._each_group(code):
            if getattr(u, kind) is not None:
                out[at], found = getattr(u, kind), True
        return out if found else None

    def _interval(self, code, z):
        """Per paper of :attr:`ratings`: the interval ``(low, high)`` of ``code``'s adjusted score on the file's
        scale at the normal quantile ``z``, made as its pass probability is (:meth:`.uncertainty.PaperUncertainty.interval`);
        None where no group has standard errors."""
        low, high, found = np.full(self.ratings.n_papers, np.nan), np.full(self.ratings.n_papers, np.nan), False
        for at, base, u in self._each_group(code):
            lo, hi = u.interval(z)
            low[at], high[at], found = lo + base, hi + base, True
        return (low, high) if found else None

    def _level_probability(self, code, cuts, level):
        """Per paper of :attr:`ratings`: the probability that ``code``'s adjusted score lies in its ``level``
        (0..len(cuts), -1: none) of the ascending ``cuts`` on the file's scale, ``P(S >= lower cut) - P(S >= upper
        cut)`` made as the pass probability is (:meth:`.uncertainty.PaperUncertainty.pass_probability`); None where
        no group has standard errors."""
        n = self.ratings.n_papers
        passes = np.full((len(cuts) + 2, n), np.nan)   # P(S >= edge), edges -inf, cuts..., inf
        passes[0], passes[-1] = 1.0, 0.0
        found = False
        for at, base, u in self._each_group(code):
            for j, c in enumerate(cuts):
                passes[j + 1, at] = u.pass_probability(c - base)
            found = True
        if not found:
            return None
        lv = np.clip(np.asarray(level), 0, len(cuts))
        p = passes[lv, np.arange(n)] - passes[lv + 1, np.arange(n)]
        return np.where((np.asarray(level) >= 0) & np.isfinite(self._uncertain(code, "se")), p, np.nan)

    def _cut_distance(self, code, cuts):
        """Per paper of :attr:`ratings`: how many standard errors ``code``'s adjusted score lies from its nearest
        of ``cuts`` (the file's scale), in the normal its pass probability is made of: ``min |Phi^-1 P(S >= cut)|``
        (the score's distance over its SE for the bootstrap's normal, the quality's over its SD for a model's),
        so that a student is uncertain at a confidence exactly where this is under its normal quantile; None
        where no group has standard errors."""
        from scipy.special import ndtri

        out, found = np.full(self.ratings.n_papers, np.inf), False
        for at, base, u in self._each_group(code):
            with np.errstate(divide="ignore", invalid="ignore"):
                out[at] = np.min([np.abs(ndtri(u.pass_probability(c - base))) for c in cuts], axis=0)
            found = True
        return np.where(np.isfinite(self._uncertain(code, "se")), out, np.nan) if found else None

    def paper_frame(self):
        """Per paper (papers and groups in natural order): group (if any), paper, ratings, the mean of
        its scores, and each method's adjusted score."""
        r = self.ratings
        group = self._paper_group(r) if r.group is not None else None
        cols = self._label_columns(np.arange(r.n_papers), None, group)
        cols["ratings"] = n = r.ratings_per_paper()
        cols["mean"] = np.where(n > 0, r.paper_mean() + r.scale_low, np.nan)   # (a paper without ratings had 0.0)
        for code in self.methods:
            cols[code] = self.paper_scores(code)
            se = self._uncertain(code, "se")   # (to_frame had the SEs; this, the per-paper table, not)
            if se is not None:
                cols[f"{code}_se"] = se
            if r.facets:
                cols[f"{code}_total"] = self.paper_totals(code)
        return _columns_frame(cols, order=[c for c in (r.group_name or "group", "paper") if c in cols])

    def _label_columns(self, paper, rater, group):
        r = self.ratings
        cols = {}
        if group is not None:
            cols[r.group_name or "group"] = [r.group_ids[k] for k in group]
        cols["paper"] = [r.paper_ids[k] for k in paper]
        if rater is not None:
            cols["rater"] = [r.rater_ids[k] for k in rater]
        return cols

    def to_dict(self, confidence: float | None = None) -> dict:
        """JSON-ready: the file, scale, variant, methods, the warnings of reading the file (as
        ``check --json`` has them) and per group the methods applied, skipped (with reasons), the
        recommendation, the warnings and the summary (its uncertain papers at ``confidence``, default 0.9)."""
        r = self.ratings
        return {"file": r.source, "scale": f"{r.scale_low}-{r.scale_low + r.max_score}", "variant": self.variant,
                "methods": list(self.methods), "warnings": list(r.notes),
                "cut": self.cut, "bootstrap": self.bootstrap,
                "groups": [{"group": g.name, "methods": [c for c in self.methods if c in g.adjusted],
                            "recommended": g.recommended, "skipped": dict(g.skipped), "warnings": list(g.warnings),
                            "summary": s.to_dict()}
                           for g, s in zip(self.groups, self.adjustment_summaries(confidence))],
                **({"anchors": self.anchored} if self.anchored is not None else {})}

    def short_summary(self) -> str:
        """A few lines: what was adjusted, by which methods, per group."""
        r = self.ratings
        head = (f"{r.source or 'ratings'}: {r.n_ratings} ratings, {r.n_papers} papers, {len(self.groups)} "
                f"group(s); methods {' '.join(self.methods)} ({self.variant})")
        lines = [head]
        for g in self.groups:
            tag = r.group_tag(g.name) if r.group is not None else "all"
            used = [c for c in self.methods if c in g.adjusted]
            line = f"  {tag}: {' '.join(used) or 'none'}"
            if g.recommended is not None:
                line += f" (recommended {g.recommended})"
            if g.skipped:
                line += "; skipped " + ", ".join(f"{c} ({why})" for c, why in g.skipped.items())
            lines.append(line)
        return "\n".join(lines)


def _columns_frame(cols, order=()):
    from .frames import columns_frame

    return columns_frame(cols, order)
