"""Is adjustment warranted?  :func:`check` runs every group's diagnostics
(:func:`~ratercal_cli.practice.diagnostics.check_ratings`: the tests, the rater report, agreement,
Chapter 5's rule and the corrected study's advice) and, with two or more groups, the rater x group
bias; it returns a :class:`CheckResults`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ArgumentError, InputError, MethodError
from ..ratings import Ratings
from .diagnostics import ALPHA, CheckReport, check_ratings, not_warranted_why
from .text import GROUP_RULE, group_paths, json_clean

__all__ = ["check", "CheckResults"]


def check(ratings: Ratings, assignment: str = "auto", alpha: float = ALPHA, rasch: bool = True,
          anchors=None, steps_by: str | None = None, calibrate: bool = False,
          simulate: int | None = None, cut: float | None = None, seed: int | None = None,
          jobs: int = 1, methods=None, scheduler=None, hold_drifted: bool = False,
          cluster: str | None = None, discrepancy: int | None = None, **read) -> "CheckResults":
    """Test whether the raters differ and say which adjustment is warranted, group by group.

    Parameters
    ----------
    ratings : Ratings
        From :func:`read_ratings` or :meth:`Ratings.from_frame`; with groups, each group is checked
        on its own and the rater x group bias follows.
    assignment : {"auto", "random", "nonrandom"}
        How papers were assigned to raters (Chapter 5's rule: non-random -> no equating); ``auto``
        (default): what the file shows (:mod:`.assignment`: clusters in the rater network, the
        quality of the papers each rater read, CML against MML severities).
    discrepancy : int, optional
        The file's third-reading rule (a third reading when the first two differ by more than it):
        ``simulate`` draws it (``check --discrepancy``, default 1).
    cluster : str, optional
        A facet of ``ratings`` (read with ``facet_cols``) that is each paper's cluster (school,
        class): the multi-group model's clusters instead of the rater network's.
    alpha : float
        Significance level of the tests.
    rasch : bool
        Fit the Rasch models (the per-rater fit, the rater report, the bias); False is
        ``check --no-rasch``.
    anchors : Anchors, optional
        A calibration (:func:`~ratercal_cli.practice.anchors.read_anchors`): each anchored element's
        displacement and drift (:attr:`CheckResults.anchored`); the measurement reports show the
        anchored fit's measures (the values used: an anchor, or where it drifted, the element measured
        afresh on the other anchors' scale).  One group only.
    hold_drifted : bool
        Hold an anchored element that drifted at its anchor
        (:func:`~ratercal_cli.practice.anchors.fit_mfrm`).
    steps_by : str, optional
        A facet whose levels get their own thresholds in the many-facet model.
    calibrate : bool
        Also fit the MFRM free and keep its calibration (:attr:`CheckResults.calibration`,
        ``--write-anchors``).  One group only.
    simulate, cut, seed, jobs, methods, scheduler
        ``check --simulate R``: rank ``methods`` (default: the study's ten, MML and MFRM) for each
        group's own design by R simulated replications of it
        (:func:`~ratercal_cli.practice.simulate.simulate_design`; with facets, the many-facet design
        as ``adjust`` treats it), with the decision accuracy at ``cut`` (on the file's scale), from
        ``seed``, in ``jobs`` processes or on the Dask cluster at ``scheduler``.

    **read
        Where ``ratings`` is a path or a DataFrame, the keywords of :func:`read_ratings` (``scale="0-5"``,
        ``paper_col=``, ``group_col=``, ...) it is read with.

    Returns
    -------
    CheckResults
        Per group a :class:`~ratercal_cli.practice.diagnostics.CheckReport`; the recommendations,
        labelled tables (:meth:`CheckResults.to_frame`), the JSON (:meth:`CheckResults.to_dict`) and
        the text (:meth:`CheckResults.summary`) of ``ratercal check``.

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> r = rc.read_ratings("examples/ratings.csv", scale="0-5", group_col="grade",
    ...                     resolve_discrepancies=True)                               # doctest: +SKIP
    >>> res = rc.check(r)                                                             # doctest: +SKIP
    >>> res.recommendation                                                            # doctest: +SKIP
    {'5': 'MML', '8': 'MML', '11': 'MML'}
    """
    from .assignment import ASSIGNMENTS
    from .coerce import as_ratings, with_cluster, with_discrepancy, check_alpha, check_choice, check_count
    from .cut import check_cut

    ratings = as_ratings(ratings, **with_discrepancy(ratings, discrepancy, with_cluster(ratings, cluster, read)))
    if ratings.n_ratings == 0:   # (a result of no group and no test came back, where adjust refuses: a verifier)
        raise InputError("no ratings to check", ratings.source)
    check_choice(assignment, ASSIGNMENTS, "assignment")
    alpha = check_alpha(alpha)
    simulate = check_count(simulate, "simulate", minimum=2, optional=True)
    seed = check_count(seed, "seed", optional=True)
    jobs = check_count(jobs, "jobs", minimum=1)
    discrepancy = check_count(discrepancy, "discrepancy", optional=True)   # (-1 ran: a third reading of every paper)
    cut = check_cut(cut, ratings)   # as adjust and compare: a cut off the scale made every accuracy 1.0
    from .anchors import check_steps_by

    check_steps_by(ratings, steps_by)
    cluster_codes = cluster_labels = None
    if cluster is not None:
        from .assignment import pop_cluster

        if cluster not in ratings.facets:
            raise ArgumentError("cluster", f"{cluster!r} is not a facet of the ratings (facets: "
                                           f"{', '.join(ratings.facets) or 'none'})")
        ratings, cluster_codes, cluster_labels = pop_cluster(ratings, cluster)
    anchored_est = anchored_rows = None
    from .anchors import as_anchors

    anchors = as_anchors(anchors)
    if anchors is not None:   # refused before the diagnostics and fits, not after them
        from .anchors import fit_mfrm

        one_group(ratings, "anchors")
        anchors.check_ratings(ratings, steps_by)
        anchored_est, anchored_rows = fit_mfrm(ratings, anchors, steps_by, hold_drifted=hold_drifted)
    groups = ratings.by_group()
    sims = None
    if ratings.facets:
        res = _check_facets(ratings, groups, assignment, alpha, rasch, steps_by, est=anchored_est,
                            cluster=None if cluster is None else (cluster, cluster_codes, cluster_labels))
        if simulate is not None:
            _simulate_rubric(res, groups, simulate, discrepancy, dict(cut=cut, seed=seed, jobs=jobs, methods=methods,
                                                                      scheduler=scheduler))
    else:
        reports = [check_ratings(g, group=name, scale_low=ratings.scale_low, assignment=assignment, alpha=alpha,
                                 rasch=rasch, **_group_clusters(ratings, k, g, cluster, cluster_codes, cluster_labels))
                   for k, (name, g) in enumerate(groups)]
        bias = None
        if ratings.group is not None and len(groups) > 1 and rasch:
            from .rater_report import rater_group_bias

            bias = rater_group_bias(groups, ratings.group_name, alpha=alpha, scale_low=ratings.scale_low,
                                    models=[r.rater_model for r in reports])
        if simulate is not None:   # the file's own design, confound and reading rule included
            from .simulate import STRESS, shrinkage_levels, simulate_groups

            sims = simulate_groups(ratings, simulate, cut=cut, seed=seed, jobs=jobs, methods=methods,
                                   scheduler=scheduler, discrepancy=discrepancy, stress=STRESS,
                                   clusters=[r.assignment_found.clusters if r.assignment_found is not None
                                             and r.assignment_found.multigroup else None for r in reports],
                                   shrinkages=[shrinkage_levels(r.assignment_found) for r in reports])
            for rep, sim in zip(reports, sims):
                found = rep.assignment_found
                if found is not None and found.confounded and not found.multigroup and not isinstance(sim, str):
                    sim.caveats.append(NO_CLUSTERS_CAVEAT)
                if found is not None and found.confounded is None and not isinstance(sim, str):
                    sim.caveats.append(untested_caveat(found))
        if sims is not None:   # the simulation has its say in the one recommendation
            from .recommend import recommend_group

            for rep, (_, g), sim in zip(reports, groups, sims):
                rep.decision = recommend_group(rep, g, sim)
        res = CheckResults(ratings, reports, bias, simulations=sims)
        if bias is not None and len(groups) > 1:
            res.group_interaction = _joint_group_bias(ratings, alpha)
    if anchors is not None or calibrate:
        from .anchors import calibration, fit_mfrm

        one_group(ratings, "anchors" if anchors is not None else "calibrate")
        if calibrate:
            res.calibration = calibration(fit_mfrm(ratings, steps_by=steps_by)[0], ratings, steps_by=steps_by)
        if anchors is not None:
            from .anchors import absent_anchors_note, unanchored_raters_note

            res.anchored = anchored_rows
            res.anchor_notes = [n for n in (absent_anchors_note(ratings, anchors),
                                            unanchored_raters_note(ratings, anchors)) if n]
            if not ratings.facets:
                _anchored_rater_reports(res, anchored_est)
            _displacement_in_reports(res)
    return res


#: the simulation's warning where the assignment is confounded and it has no clusters to draw
NO_CLUSTERS_CAVEAT = ("the assignment is non-random and has no clusters to model (or none that a mean quality per "
                      "cluster meets): this simulation draws quality "
                      "independent of who read what, so it cannot see the confound and its ranking is not the "
                      "recommendation's; see the stress scenario")




def untested_caveat(found) -> str:
    """The simulation's warning where the assignment was not tested (``--no-rasch`` with ``--assignment
    auto``, or no test could be made): ``found.reason`` says why."""
    return (f"the assignment: not tested ({found.reason}); this simulation draws quality independent of who read what, so "
            "a confound would not show in it, and linear_eb (a level for random assignment only) is not ranked: "
            "run check without --no-rasch, or say --assignment random or nonrandom")


def _rubric_clusters(g, parts, reps):
    """A rubric group's clusters per paper (or None): those of the cell whose check found the assignment
    confounded with clusters (the cell with the most papers; the first of a tie), mapped to the group's
    papers; None where no cell did, or some paper of the group is not in that cell."""
    cands = [(part, rep.assignment_found) for (_, part), rep in zip(parts, reps)
             if rep.assignment_found is not None and rep.assignment_found.multigroup]
    if not cands:
        return None
    part, found = max(cands, key=lambda c: c[0].n_papers)
    at = {p: k for k, p in enumerate(g.paper_ids)}
    out = np.full(g.n_papers, -1, dtype=np.int64)
    out[[at[p] for p in part.paper_ids]] = found.clusters
    return None if (out[g.ratings_per_paper() > 0] < 0).any() else out


def _simulate_rubric(res, groups, replications, discrepancy, kw) -> None:
    """``check --simulate`` of a rubric: each group's many-facet design as the essay path draws its own
    (:func:`.simulate.simulate_groups`): the papers keep their raters, quality drawn about each cluster's
    mean where a cell's check found the assignment confounded with clusters (:func:`_rubric_clusters`),
    third readings by the file's rule (``discrepancy``, in any cell), and the stress scenario; then each
    cell's one recommendation has the group's simulation's say (:func:`.recommend.recommend_group`)."""
    from .recommend import recommend_group
    from .rubric import cell_parts
    from .simulate import STRESS, simulate_groups

    parts, reps, k = [], [], 0
    for _, g in groups:
        p = cell_parts(g)
        parts.append(p)
        reps.append(res.reports[k:k + len(p)])
        k += len(p)
    clusters = [_rubric_clusters(g, p, r) for (_, g), p, r in zip(groups, parts, reps)]
    sims = simulate_groups(res.ratings, replications, discrepancy=discrepancy, stress=STRESS, clusters=clusters,
                           **kw)
    for sim, rs, p, cl in zip(sims, reps, parts, clusters):
        if isinstance(sim, str):
            continue
        if cl is None and any(r.assignment_found is not None and r.assignment_found.confounded for r in rs):
            sim.caveats.append(NO_CLUSTERS_CAVEAT)
        for rep, (_, part) in zip(rs, p):
            rep.decision = recommend_group(rep, part, sim, links=False)
    res.facet_simulations = [(name, sim) for (name, _), sim in zip(groups, sims)]


def _anchored_rater_reports(res, est) -> None:
    """Without facets: each rater report from the anchored fit (Facets reports the measure it used, the
    anchor where an element is held), not from a free fit beside the anchors."""
    from .rater_report import from_estimator, report_and_model

    for rep in res.reports:
        if rep.rater_report is None or not rep.rater_report.fitted:
            continue
        model = from_estimator(est, res.ratings)
        model.name = "rating scale model by marginal ML (MFRM) on the anchors' scale, paper measures by EAP"
        rep.rater_report, _ = report_and_model(res.ratings, model, res.ratings.scale_low)


def _group_clusters(ratings, k, g, column, codes, labels) -> dict:
    """``check_ratings``' cluster arguments for group ``k`` (``g``) from each rating's cluster code."""
    if codes is None:
        return {}
    from .assignment import paper_clusters

    mine = codes if ratings.group is None else codes[ratings.group == k]
    return {"clusters": paper_clusters(g, mine, column), "cluster_labels": labels,
            "cluster_source": f"column {column}"}


def _displacement_in_reports(res) -> None:
    """The anchored elements' displacements as columns of the measurement reports (as Facets shows
    them): the many-facet report's raters and facet levels with facets, else the rater report."""
    from .rater_report import attach_displacement

    for _, rep in res.rubric or ():
        attach_displacement(rep.raters, res.anchored)
        for f, rows in rep.facets.items():
            attach_displacement(rows, res.anchored, facet=f, key="level")
    if not res.rubric:
        for rep in res.reports:
            if rep.rater_report is not None and rep.rater_report.fitted:
                attach_displacement(rep.rater_report.raters, res.anchored)


def _joint_group_bias(ratings: Ratings, alpha: float):
    """Rater x group interaction fitted jointly with the main effects (one MFRM over every group, the
    group a further facet: :func:`.bias.bias_table`), beside the group-by-group table; None where the
    raters of the groups are not linked."""
    from ..errors import MethodError
    from .bias import bias_table

    from ..methods import make_method

    try:
        main = make_method("MFRM").fit(ratings, facet=ratings.group)
        if main.thin_raters_.size:   # left out of the fit (its expectations are of the others' ratings):
            ratings = ratings.subset(~np.isin(ratings.rater, main.thin_raters_))   # out of the table too
            main = make_method("MFRM").fit(ratings, facet=ratings.group)
        return bias_table(ratings, ratings.group, ratings.group_ids, ratings.group_name or "group", alpha=alpha,
                          scale_low=ratings.scale_low, main_expected=main.rating_expected_)
    except MethodError:
        return None


def one_group(ratings: Ratings, option: str) -> None:
    """A calibration is of one analysis: an error naming the argument ``option`` for ratings in several
    groups."""
    if ratings.group is not None and len(ratings.group_ids) > 1:
        from ..errors import ArgumentError

        raise ArgumentError(option, f"a calibration is of one analysis, and these ratings are in "
                            f"{len(ratings.group_ids)} groups ({ratings.group_name}); give one group's file")


def _check_facets(ratings, groups, assignment, alpha, rasch, steps_by=None, est=None, cluster=None):
    """Facetted ratings (``--facet-col``): the checks of one rating per paper and rater within each
    cell (criterion, ...), then per group the many-facet model, its category statistics and the rater
    x facet bias (:func:`.rubric.rubric_check`).  ``cluster``: ``(column, each rating's cluster code,
    labels)`` of ``--cluster-col``, each cell's clusters instead of its rater network's."""
    from .rubric import cell_parts, cell_tag, rubric_check

    reports, rubric, unfitted = [], [], []
    for k, (name, g) in enumerate(groups):
        if cluster is not None:   # each rating's cluster code, in the group's and then the cell's order
            column, codes, labels_ = cluster
            mine = codes if ratings.group is None else codes[ratings.group == k]
            cell = g.facet_cells()[0]
        parts = cell_parts(g)
        names = [cell_tag(ratings, labels) if name is None else f"{ratings.group_tag(name)}, {cell_tag(ratings, labels)}"
                 for labels, _ in parts]
        kws = [{} if cluster is None else _group_clusters(part, 0, part, column, mine[cell == c], labels_)
               for c, (_, part) in enumerate(parts)]
        reports += check_cells([part for _, part in parts], names, kws, assignment, alpha, [rasch] * len(parts))
        if rasch:   # (a group whose raters are not linked has no many-facet model: said, the other groups checked;
            try:      # it stopped the check of every group, its error not naming the group: a tester's 3-paper group)
                rubric.append((name, rubric_check(g, alpha=alpha, steps_by=steps_by, est=est)))
            except MethodError as exc:
                if len(groups) == 1:
                    raise
                unfitted.append((name, str(exc).splitlines()[0]))
    return CheckResults(ratings, reports, None, rubric, rubric_unfitted=unfitted)


def check_cells(parts, names, kws, assignment, alpha, rasch) -> list:
    """The checks of a rubric group's cells (:func:`.rubric.cell_parts`: each criterion's ratings, ``names``
    their labels, ``kws`` their clusters' arguments, ``rasch`` per cell), as ``check`` and ``adjust -m
    recommended`` make them: each cell's :func:`.diagnostics.check_ratings`, and the cells read in one design
    (the same papers by the same raters) taking one assignment verdict (:func:`.assignment.shared_verdict`):
    a cell whose verdict that changes is checked again with it (its recommendation follows the assignment),
    its Rasch fits kept."""
    from .assignment import shared_verdict

    scale_low = parts[0].scale_low if parts else 0
    reports = [check_ratings(part, group=name, scale_low=scale_low, assignment=assignment, alpha=alpha, rasch=r,
                             links=False, **kw) for part, name, kw, r in zip(parts, names, kws, rasch)]
    readings = [_readings(part) for part in parts]
    designs: dict = {}
    for k, key in enumerate(readings):
        designs.setdefault(frozenset(key), []).append(k)
    for cells in designs.values():
        founds = [reports[k].assignment_found for k in cells]
        shared = shared_verdict(founds, [names[k] for k in cells], lambda: _totals_evidence(
            [parts[k] for k in cells], [readings[k] for k in cells], kws[cells[0]], alpha))
        for k, old, new in zip(cells, founds, shared):
            if new is not old:
                reports[k] = check_ratings(parts[k], group=names[k], scale_low=scale_low, assignment=assignment,
                                           alpha=alpha, rasch=True, links=False, found=new, fits=reports[k], **kws[k])
    return reports


def _readings(ratings) -> list:
    """Each rating's (paper label, rater label): the design it was read in."""
    return list(zip(np.asarray(ratings.paper_ids, dtype=object)[ratings.paper].tolist(),
                    np.asarray(ratings.rater_ids, dtype=object)[ratings.rater].tolist()))


def _totals_evidence(parts, keys, kw, alpha):
    """:func:`.assignment.assignment_evidence` on the readings' totals over ``parts`` (cells read in one design:
    each (paper, rater) once in every cell; ``keys``: their :func:`_readings`), a rating scale of ``sum(M_c)``
    points; ``kw``: the first cell's clusters' arguments (its papers are the totals')."""
    from dataclasses import replace

    from .assignment import ALPHA as ASSIGNMENT_ALPHA, assignment_evidence

    first = parts[0]
    at = {key: i for i, key in enumerate(keys[0])}
    total = np.zeros(first.n_ratings, dtype=np.int64)
    for part, key in zip(parts, keys):
        total[[at[k] for k in key]] += part.score
    ratings = replace(first, score=total, max_score=int(sum(part.max_score for part in parts)))
    return assignment_evidence(ratings, alpha=min(alpha, ASSIGNMENT_ALPHA), severities=False, **kw)


@dataclass
class CheckResults:
    """What :func:`check` found, group by group.

    Attributes
    ----------
    ratings : Ratings
        The ratings checked.
    reports : list of CheckReport
        One per group, in the groups' natural order (:meth:`report` finds one by its label).
    bias : dict or None
        The rater x group bias (with groups and the Rasch fits).
    recommendation : dict
        ``{group: method}``, each group's one recommendation.

    Examples
    --------
    >>> res = rc.check("examples/ratings.csv", scale="0-5")   # doctest: +SKIP
    >>> res.to_frame("raters").head()                          # doctest: +SKIP
    """

    ratings: Ratings
    reports: list
    bias: dict | None = None
    #: facetted ratings: ``[(group, RubricReport)]``, the many-facet model of each group
    rubric: list | None = None
    #: with anchors: each anchored element's displacement (:func:`.anchors.displacement`)
    anchored: list | None = None
    #: with anchors: what the anchors' reader should know (anchored elements not in the data)
    anchor_notes: list = field(default_factory=list)
    #: with ``calibrate``: the free MFRM's :class:`~.anchors.Anchors`
    calibration: object = None
    #: with groups: the rater x group interaction of one joint MFRM (:class:`.bias.BiasTable`)
    group_interaction: Any = None
    #: per group, ``check --simulate``'s :class:`~.simulate.SimulationResult` (or why it could not run)
    simulations: list | None = None
    #: facetted ratings: ``[(group, SimulationResult or reason)]``, the many-facet design of each group
    facet_simulations: list | None = None
    #: facetted ratings: ``[(group, reason)]``, the groups whose many-facet model could not be fitted
    rubric_unfitted: list = field(default_factory=list)

    @property
    def recommendation(self) -> dict:
        """``{group: method}``, the one recommendation of each group (:mod:`.recommend`; group None
        without groups); its shrinkage level in :attr:`recommendation_shrinkage`, its reasons in
        ``report(group).decision``."""
        return {r.group: (r.decision.method if r.decision is not None else r.recommendation) for r in self.reports}

    @property
    def recommendation_shrinkage(self) -> dict:
        """``{group: "none", "kelley" or "linear_eb"}``: the shrinkage level of :attr:`recommendation`."""
        return {r.group: (r.decision.shrinkage if r.decision is not None else "none") for r in self.reports}

    @property
    def rule(self) -> dict:
        """``{group: method}`` by Chapter 5's rule alone."""
        return {r.group: r.recommendation for r in self.reports}

    @property
    def _labels(self) -> dict:
        """``{group: label}`` of the one recommendations, with their qualifiers (``MML (shrunk)``), as the
        command line prints them."""
        return {r.group: (r.decision.label if r.decision is not None else r.recommendation) for r in self.reports}

    def __repr__(self) -> str:
        from .coerce import results_repr

        return results_repr(self, f"{len(self.reports)} group(s); recommended {self._labels}",
                            ".summary(), .to_frame('raters'|'tests'|'bias'|'agreement'), .to_dict(), .report(group)")

    def _repr_html_(self) -> str:
        from .coerce import results_html

        return results_html(self, f"recommended {self._labels}", self.to_frame("raters"))

    def report(self, group=None) -> CheckReport:
        """The :class:`CheckReport` of ``group`` (its label; None: the only one)."""
        if group is None and len(self.reports) == 1:
            return self.reports[0]
        for r in self.reports:
            if r.group == group or str(r.group) == str(group):
                return r
        raise ArgumentError("group", f"no group {group!r}; groups: {', '.join(str(r.group) for r in self.reports)}")

    def _tag(self, report):
        if self.ratings.facets:
            return str(report.group)
        return self.ratings.group_tag(report.group) if self.ratings.group is not None else ""

    # -- outputs -------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON of ``ratercal check --json`` (without its ``png``): the file, scale, group column,
        warnings of reading, per group the report, and the bias."""
        r = self.ratings
        return {"file": r.source, "scale": f"{r.scale_low}-{r.scale_low + r.max_score}",
                "group_column": r.group_name, "warnings": list(r.notes) + self.anchor_notes,
                "groups": [dict(rep.to_dict(), **self._simulation(k)) for k, rep in enumerate(self.reports)],
                "bias": json_clean(self.bias),
                **({"facets": list(r.facets), "rubric": [{"group": name, **rep.to_dict()} for name, rep in self.rubric]
                    + [{"group": name, "fitted": False, "reason": why} for name, why in self.rubric_unfitted]}
                   if self.rubric is not None else {}),
                **({"anchors": json_clean(self.anchored)} if self.anchored is not None else {}),
                **({"group_interaction": json_clean(self.group_interaction.to_dict())}
                   if self.group_interaction is not None else {}),
                **({"simulations": [{"group": name, **self._one_simulation(sim)}
                                    for name, sim in self.facet_simulations]}
                   if self.facet_simulations is not None else {})}

    def short_summary(self) -> str:
        """The lines ``check``'s text starts with: per group the one recommendation (:mod:`.recommend`)
        and which source decided, whether adjustment is warranted, the assignment, and each source's
        method."""
        from .simulate import column_name

        lines = ["SUMMARY"]
        for rep in self.reports:
            tag = self._tag(rep) or "all papers"   # a group (grade=5), a rubric's cell (criterion=org)
            why = "; ".join(rep.warranted_by) if rep.warranted else not_warranted_why(rep)
            dec = rep.decision
            if dec is None:
                lines.append(f"  {tag}: adjustment warranted: {'yes' if rep.warranted else 'no'} ({why}); "
                             f"recommended {rep.recommendation} -- {rep.reason}")
                continue
            found = rep.assignment_found
            untested = " (not tested)" if found is not None and found.confounded is None else ""
            assignment = f"assignment {rep.assignment}{untested}"
            if dec.source == "the design":   # (raters in groups that share no paper: "random" would contradict it)
                assignment = "assignment not testable (the raters' groups share no paper)"
            others = [f"Chapter 5's rule {rep.recommendation}"] + [
                f"the {k} {column_name((dec.sources[k]['shrinkage'], dec.sources[k]['method']))}"
                for k in ("study", "simulation") if dec.sources.get(k)]
            lines.append(f"  {tag}: recommended {dec.label} -- {dec.short}; adjustment warranted: "
                         f"{'yes' if rep.warranted else 'no'} ({why}); {assignment}; "
                         + ", ".join(others))
        return "\n".join(lines)

    def _simulation(self, k) -> dict:
        """``{"simulation": ...}`` of group ``k`` (its result, or ``{"error": reason}``), or nothing."""
        if self.simulations is None:
            return {}
        return self._one_simulation(self.simulations[k])

    @staticmethod
    def _one_simulation(sim) -> dict:
        return {"simulation": {"error": sim} if isinstance(sim, str) else sim.to_dict()}

    def summary(self) -> str:
        """The text of ``ratercal check``: the short summary, each group's report, then the bias table."""
        parts = [self.short_summary(), ""]
        for k, rep in enumerate(self.reports):
            if k:
                parts.append("\n" + GROUP_RULE + "\n")
            parts.append(rep.format_text(self.ratings.source or "", self._tag(rep)))
            if self.simulations is not None:
                sim = self.simulations[k]
                parts.append("\n" + (sim if isinstance(sim, str) else sim.format_text()))
        if self.bias is not None:
            from .rater_report import format_bias

            parts += ["\n" + GROUP_RULE + "\n", "\n".join(format_bias(self.bias))]
        if self.group_interaction is not None:
            parts += ["", "\n".join(self.group_interaction.format_text())]
        for name, rep in self.rubric or ():
            head = self.ratings.group_tag(name) if name is not None else ""
            parts += ["\n" + GROUP_RULE + "\n", (f"{head}\n\n" if head else "") + rep.format_text()]
        for name, why in self.rubric_unfitted:
            parts += ["\n" + GROUP_RULE + "\n", f"{self.ratings.group_tag(name)}\n\nMany-facet Rasch model: not fitted ({why})"]
        for name, sim in self.facet_simulations or ():
            head = self.ratings.group_tag(name) if name is not None else ""
            parts += ["\n" + GROUP_RULE + "\n", (f"{head}\n\n" if head else "")
                      + (sim if isinstance(sim, str) else sim.format_text())]
        if self.anchored is not None:
            from .anchors import format_displacement

            parts += ["\n" + GROUP_RULE + "\n", "\n".join(format_displacement(self.anchored)
                                                          + [f"  {n}" for n in self.anchor_notes])]
        return "\n".join(parts)

    def to_frame(self, table: str = "raters"):
        """A labelled table (rows in natural order of group, then rater):

        ``"raters"``: per rater the papers, mean, SD, score counts and the tests against the
        other raters, with the rater report's measure, S.E., fit and fair average where fitted;
        ``"tests"``: the overall tests per group; ``"bias"``: the rater x group bias;
        ``"agreement"``: agreement per rater pair.
        """
        from .frames import frame

        rows, order = getattr(self, f"_{table}_rows", None), None
        if rows is None:
            raise ArgumentError("table", f"expected raters, tests, bias or agreement, not {table!r}")
        rows, order = rows()
        gname = self.ratings.group_name or "group"
        if self.ratings.group is None:
            rows = [{k: v for k, v in row.items() if k != "group"} for row in rows]
            order = tuple(c for c in order if c != "group")
        df = frame(rows, order=order)
        return df.rename(columns={"group": gname})

    def _raters_rows(self):
        rows = []
        for rep in self.reports:
            measured = {x["rater"]: x for x in rep.rater_report.raters}
            for x in rep.raters:
                row = {"group": rep.group, "rater": x["rater"], "papers": x["papers"], "mean": x["mean"],
                       "sd": x["sd"]}
                row.update({str(s): c for s, c in zip(range(rep.scale_low, rep.scale_high + 1), x["counts"])})
                row.update({k: x[k] for k in ("chi2", "chi2_p_holm", "ks_d", "ks_p_holm")})
                m = measured.get(x["rater"])
                for k in ("measure", "se", "infit", "outfit", "fair_average"):
                    row[k] = m[k] if m else np.nan
                rows.append(row)
        return rows, ("group", "rater")

    def _tests_rows(self):
        return [{"group": rep.group, "test": t.test, "statistic": t.statistic,
                 "df": ", ".join(str(d) for d in t.df), "p": t.p_value, "note": t.note}
                for rep in self.reports for t in rep.tests], ("group",)

    def _bias_rows(self):
        rows = [] if self.bias is None else [dict(r) for r in self.bias["rows"]]
        return rows, ("group", "rater")

    def _agreement_rows(self):
        return [{"group": rep.group, **p} for rep in self.reports for p in rep.agreement.get("pairs", [])], \
            ("group", "rater_a", "rater_b")

    def wright_maps(self, png, numbered: bool = False) -> list:
        """Draw each fitted group's Wright map (papers' measures, raters' severities, thresholds) to
        ``png`` (one group) or ``NAME_GROUP.png`` beside it (two groups on one name refused:
        :func:`.text.group_paths`), or with ``numbered`` ``NAME_1.png``, ``NAME_2.png``, ... (a page's own
        files, whatever the groups are called); returns the paths written."""
        from .rater_report import wright_map

        maps = []
        targets = ([png.with_name(f"{png.stem}_{i}{png.suffix}") for i in range(len(self.reports))] if numbered else
                   group_paths(png, [rep.group for rep in self.reports], self.ratings.group_name))
        for rep, target in zip(self.reports, targets):
            model = rep.rater_model
            if model is None:
                continue
            tag = self._tag(rep)
            wright_map(target, rep.rater_report, model.measure[model.measured],
                       "Wright map" + (f", {tag}" if tag else ""), scale_low=rep.scale_low)
            maps.append(target)
        return maps
