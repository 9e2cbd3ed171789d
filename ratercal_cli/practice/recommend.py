"""One recommendation per group (issue 29): a method and a shrinkage level, with each source's say
and why one wins.

``check`` has five sources of advice, four of which name a method:

* **the rule**: Chapter 5's (:func:`.diagnostics.recommend`), from one data set a cell of 1990;
* **the study**: the corrected Monte Carlo study and its beyond-1990 run (``facet_rmse.csv``, both
  shrinkage levels) at the file's number of raters per paper (:func:`study_say`);
* **the simulation**: ``check --simulate R``, the file's own design (:mod:`.simulate`);
* **the fit**: whether the rater model fits the raters (infit and outfit mean squares), and the
  assignment's evidence (:mod:`.assignment`);
* **the links**: under a confound or in a clustered network, whether the papers the clusters' raters
  share place them on one scale more precisely than they differ (:mod:`.links`).

The decision, in this order:

1. The rule's *data* stops stand: every rater scored every paper, a rater with fewer than 8
   papers, or no test finding the raters differing -> NO.  (Its non-random stop does not: a
   confound the file shows is met by the methods that can meet it, below.)
   Raters in separate groups that share no paper (two or more readings a paper; a group of raters with a
   single rating each, whose ratings every method keeps raw, is not counted) -> NO, unless the
   assignment is given as random: the file cannot tell a group's papers from its raters' severity,
   and every method that puts the groups on one scale assumes papers went to the groups at random
   (schools each read by their own pair: TLI 0.98-1.03 RMSE against NO's 0.78-0.99 on files of a
   graded response generator; and the multi-group MML cannot be fitted across unlinked groups).
2. A simulation of the file's own design decides where it ran (and, if the assignment is
   confounded, where it drew the confound: papers' quality by cluster).
3. A confounded assignment: with clusters that a mean quality per cluster meets (the multi-group
   MML's severities agree with the conditional model's, :data:`.assignment.CLUSTER_FIT_ALPHA`), the
   multi-group MML at its EAP; without, the PCM shrunk (raters compared on the papers they share,
   whatever the papers' distribution: under assignment by quality it beat NO by 0.17 RMSE in the
   rater-effects study; Kelley's shrinkage of its scores was 0.03-0.08 nearer the truth than its WLE on
   six school-confounded files of tests/confounded.py and three of a tester's chains).
   Under a confound, where the raters' network falls into clusters (schools read by their own
   pairs, whatever their quality), or where most papers are read once and some twice (the study's cells
   of one reading assume papers went to raters at random, which few papers read twice can neither
   confirm nor replace; there the pick and the links' NO are shrunk: SINGLE_SHRINKAGE), the pick of 2, 3
   or 4 meets **the links' say** (:mod:`.links`): where the papers the
   clusters' raters share place them less precisely than they differ (the expected gain of moving the
   papers by their raters' least-squares locations, the effects' squares less twice their noise, is not
   above half its standard error, LINK_MARGIN), NO at the pick's shrinkage level (no rater adjustment; the multi-group pick's papers
   shrunk by Kelley's formula: on files of tests/confounded.py, tests/practice/test_links.py, that
   beat both the multi-group MML and the raw scores on average; unshrunk NO, what "left alone" would
   mean, lost to the MML there, the links' say being a weak guide where raters' slopes bias the links).
4. Else the study's say.
5. Else (the study has no say: no rater model) the rule's.

**The fit's say**: the study's data are drawn from the PCM and the simulation's from the rater model
fitted to the file, so both favour the model-based methods (:data:`MODEL_METHODS`) as far as the
file's raters follow that model.  Where they do not -- more than :data:`FIT_SHARE` of the raters with
infit or outfit outside :data:`FIT_RANGE` times what data that fit give -- and the assignment is not
confounded, a model-based pick of steps 2 and 4 gives way to that source's best of the other methods
(on the graded response model's data of ``configs/grm_slopes.yaml`` the PCM, first on the PCM's own
data, was eighth like for like); ``sources["fit"]["changed"]`` says what it changed.  Under a
confound the model-based methods are the ones that meet it, and the fit only adds a caution.

Where a source ranks methods (the study, the simulation), those within Monte Carlo error of the
best (the simulation's: a paired difference whose 95% interval, Student's t over its replications,
holds 0; the study's: a difference under twice its standard error from the two MCSEs) are **equivalent**, and the simplest of them is recommended (:data:`SIMPLICITY`;
unshrunk before shrunk).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import mention

__all__ = ["SIMPLICITY", "Recommendation", "recommend_group", "study_say"]

#: simplest first: leave alone, move the raters' means, then their spreads, their distributions,
#: the least-squares fits on shared papers, the Rasch fits (conditional, then marginal)
SIMPLICITY = ("NO", "MN", "TMN", "LI", "TLI", "EQP", "OLS", "TLS", "RAS", "WLS", "PWEQP", "SEQP", "PCM", "RSM",
              "CML", "MFRM", "MML")
LEVELS = ("none", "kelley", "linear_eb")
#: how a level reads in a label
LEVEL_WORDS = {"none": "unshrunk", "kelley": "shrunk", "linear_eb": "shrunk, linear EB"}
#: a simulation of fewer replications decides with a caveat that it ranks the methods roughly (a staff tester:
#: 10 replications overrode the corrected study's recommendation, five methods within its Monte Carlo error,
#: and nothing said 10 is few)
FEW_REPLICATIONS = 50
#: the rater model "fits" when at most this share of raters has infit or outfit outside FIT_RANGE times
#: the mean square that data which fit give (1 - papers/ratings: 0.5 at two ratings a paper, as the
#: rater report says; Linacre's 0.5-1.5 is for an expectation of 1)
FIT_RANGE = (0.5, 1.5)
FIT_SHARE = 0.25
#: ... among the raters with at least this many ratings in the fit: a mean square's sd is about sqrt(2 / n)
#: times its expectation (chi-square), so n = 30 leaves one of 20 fitting raters outside 0.5-1.5 by chance,
#: where at n = 8 a third of them were (4 of 8 raters of data drawn from the PCM, 5-9 ratings each); with
#: none that many, the fit has no say
MIN_FIT_RATINGS = 30
#: the model-based methods, whose lead in a ranking on data drawn from their model gives way where the
#: rater model misfits (the fit's say)
MODEL_METHODS = ("PCM", "RSM", "CML", "MFRM", "MML")


def simplicity(method: str, shrinkage: str = "none") -> tuple:
    return (SIMPLICITY.index(method) if method in SIMPLICITY else len(SIMPLICITY), LEVELS.index(shrinkage)
            if shrinkage in LEVELS else len(LEVELS))


@dataclass
class Recommendation:
    """One group's decision: ``method`` at ``shrinkage`` (``none``: the method's own unshrunk paper
    scores; ``kelley``: shrunk, the Rasch fits at their EAP), ``multigroup`` (MML/MFRM with a mean
    quality per cluster), the ``source`` that decided, each source's say and the reasons."""

    method: str
    shrinkage: str
    source: str
    reasons: list
    sources: dict = field(default_factory=dict)
    multigroup: bool = False
    equivalent: list = field(default_factory=list)
    #: the deciding source's reason in one clause (the summary line's)
    short: str = ""
    #: what the reader must know of the decision besides (the study's advice an extrapolation to this design)
    caveat: str = ""

    @property
    def label(self) -> str:
        """``MML (multi-group, shrunk)``, ``TLI``, ``TLI (shrunk)``."""
        how = [w for w, on in (("multi-group", self.multigroup),
                               (LEVEL_WORDS.get(self.shrinkage, self.shrinkage), self.shrinkage != "none")) if on]
        return self.method + (f" ({', '.join(how)})" if how else "")

    def given_by(self, code: str) -> bool:
        """Whether ``-m code`` applies this recommendation: its label, or its method at the level the method's
        own scores are at (``MML`` is ``MML (shrunk)``: its EAP fair scores), not the multi-group model."""
        from ..methods.shrinkage import default_level

        return code == self.label or (code == self.method and not self.multigroup
                                      and self.shrinkage == default_level(code))

    def to_dict(self) -> dict:
        from .text import json_clean

        return json_clean({"recommendation": self.method, "recommendation_shrinkage": self.shrinkage,
                           "recommendation_label": self.label, "recommendation_reason": self.short,
                           "recommendation_multigroup": self.multigroup, "recommendation_source": self.source,
                           "recommendation_caveat": self.caveat,
                           "reasons": list(self.reasons), "sources": self.sources,
                           "equivalent": list(self.equivalent)})


def _equivalents(cands, best_key):
    """The simplest of the candidates ``[(method, shrinkage, mean, tie)]`` where ``tie`` says whether it
    is within Monte Carlo error of the best: ``(method, shrinkage, [equivalents])``."""
    ties = [c for c in cands if c[3]]
    pick = min(ties, key=lambda c: simplicity(c[0], c[1]))
    return pick, [m + (f" ({LEVEL_WORDS.get(s, s)})" if s != "none" else "") for m, s, _, t in
                  sorted(ties, key=lambda c: c[2])]


def study_say(ratings, exclude=()) -> dict | None:
    """The study's say at the file's raters-per-paper level: every (method, shrinkage) of the corrected
    study and its beyond-1990 run that fitted every data set, the best by mean RMSE and the simplest
    within twice the MCSE of the difference (``exclude``: methods left out); None where the table has no
    such level."""
    from .study_rule import design_levels, level_rows

    d = design_levels(ratings)
    rows = {}
    for r in level_rows(d["scope"], "raters", d["raters"]):   # (one reading a paper: the one-rater cells' rows)
        if int(r["failed"]) or r["method"] in exclude:
            continue
        key = (r["method"], r["shrinkage"])
        reps = int(r["replications"])
        if key not in rows or reps > rows[key]["replications"]:   # the corrected study's 1,000 over the run's 50
            rows[key] = {"method": r["method"], "shrinkage": r["shrinkage"], "rmse": float(r["rmse"]),
                         "mcse": float(r["rmse_mcse"]), "replications": reps, "study": r["study"]}
    if not rows:
        return None
    best = min(rows.values(), key=lambda r: r["rmse"])
    cands = [(r["method"], r["shrinkage"], r["rmse"],
              r["rmse"] - best["rmse"] <= 2 * math.hypot(r["mcse"], best["mcse"])) for r in rows.values()]
    (m, s, rmse, _), eq = _equivalents(cands, best)
    mine = rows[(m, s)]
    return {"method": m, "shrinkage": s, "rmse": rmse, "mcse": mine["mcse"], "study": mine["study"],
            "replications": mine["replications"], "best": best, "equivalent": eq, "raters": d["raters"],
            "extrapolation": "" if d["exact"] else d["note"].replace("the advice below", "this advice")}


def simulation_say(sim, exclude=()) -> dict | None:
    """The simulation's say: the best (shrinkage, method) over its levels by mean RMSE, and the
    simplest whose paired difference from it has a 95% interval (Student's t on the replications, as
    the simulation's table gives it) that holds 0 (``exclude``: methods left out)."""
    from ..montecarlo.statistics import mean_mcse_rows, t_interval

    if sim is None or isinstance(sim, str):
        return None
    v = sim.values[:, :, 0]
    ok = [i for i in range(v.shape[1]) if np.isfinite(v[:, i]).all() and sim.columns[i][1] not in exclude]
    if not ok:
        return None
    best = min(ok, key=lambda i: (v[:, i].mean(), i))
    cands = []
    for i in ok:
        d = v[:, i] - v[:, best]
        dm, dse, dn = mean_mcse_rows(d[None])
        lo, _ = t_interval(dm, dse, dn)   # (the paired 95% interval its table shows: Student's t, not 2)
        s, m = sim.columns[i]
        cands.append((m, s, float(v[:, i].mean()), i == best or not float(lo[0]) > 0))
    (m, s, rmse, _), eq = _equivalents(cands, None)
    b = sim.columns[best]
    return {"method": m, "shrinkage": s, "rmse": rmse, "best": {"method": b[1], "shrinkage": b[0],
                                                                 "rmse": float(v[:, best].mean())},
            "equivalent": eq, "replications": sim.replications,
            "confound_drawn": bool(getattr(sim.model, "clusters", None) is not None)}


def fit_say(report) -> dict:
    """Whether the rater model fits: the raters (of MIN_FIT_RATINGS ratings or more: ``judged`` False where
    none has) whose infit or outfit is outside :data:`FIT_RANGE`."""
    rr = report.rater_report
    if rr is None or not rr.fitted:
        return {"fitted": False, "reason": rr.reason if rr is not None else "not fitted"}
    expected = (rr.papers or {}).get("fit_expected", 1.0)
    expected = expected if math.isfinite(expected) and expected > 0 else 1.0
    lo, hi = FIT_RANGE[0] * expected, FIT_RANGE[1] * expected
    judged = [r for r in rr.raters if r["fit_count"] >= MIN_FIT_RATINGS]
    if not judged:
        most = max((r["fit_count"] for r in rr.raters), default=0)
        return {"fitted": True, "judged": False, "model": rr.model,
                "reason": f"too few ratings a rater to judge its fit (at most {most} on papers the model measures; "
                          f"{MIN_FIT_RATINGS} needed: a paper read once or rated at one end of the scale by all its "
                          "raters is not measured)"}
    bad = [r["rater"] for r in judged if not (lo <= r["infit"] <= hi and lo <= r["outfit"] <= hi)]
    share = len(bad) / len(judged)
    return {"fitted": True, "judged": True, "misfitting": [str(b) for b in bad], "raters": len(judged), "fits": share <= FIT_SHARE,
            "model": rr.model, "range": [lo, hi], "expected": expected, "changed": None,
            "unjudged": len(rr.raters) - len(judged)}


def _run(study) -> str:
    """`` (beyond-1990 run, 200 replications)`` where the row is that run's."""
    name = {"beyond1990": "beyond-1990"}.get(study["study"], study["study"])   # (as the text names it elsewhere)
    return "" if study["study"] == "corrected" else f" ({name} run, {study['replications']} replications)"


def _label(say) -> str:
    return say["method"] + (f" ({_lv(say['shrinkage'])})" if say["shrinkage"] != "none" else "")


def _lv(s):
    return LEVEL_WORDS.get(s, s)


#: the links' say lets a pick adjust where the expected gain (:func:`.links.link_gain`) is above this many of its
#: standard errors.  Above 0 (the estimate's sign alone), a tester's school files (6 schools read by their own
#: pairs, 75-97% of readings, raters of different slopes: 60 files) got a recommendation worse than NO on 7,
#: the multi-group MML on gains of 0.05-0.51 standard errors (1.004 RMSE against NO's 0.721 at 13 +- 261), and
#: tests/confounded.py's weakly linked files (97%, seeds 1-10) on 2.  At a half: 3 and 0, the mean RMSE over
#: those 70 files 0.683 -> 0.663; tests/confounded.py's district files (third readings by any school's rater, 30
#: files of 150-600 papers) give up the MML for NO (shrunk) on 2 of 30, at a cost of 0.06 and 0.11 RMSE there
#: (0.492 -> 0.498 on average).  A whole standard error gave up 8 of those 30 (0.502).
LINK_MARGIN = 0.5
#: where most papers are read once the study's pick, and the links' NO in its place, are at this level: the study's
#: cells of one reading have no shrunk level (every paper read once gives no reliability), a file's papers read
#: twice give it, and a paper read once is the least reliable.  On a researcher tester's 45 files of this design
#: (400 papers, 8 raters, 1-6, 7-35% read twice by another rater; schools each read by their own rater, papers at
#: random, routed by a pre-score, raters drifting, of different slopes) NO shrunk 0.64-1.16 RMSE where NO 1.20-1.83
SINGLE_SHRINKAGE = "kelley"
#: ... and where the links let the pick adjust there, this method rather than the study's (TMN, which compares
#: raters by their scores alone: their severity only under random assignment, which few papers read twice cannot
#: confirm): it moves each paper by its raters' least-squares effects on the shared papers, the adjustment the
#: links' gain measures.  On 19 files of this design where the links let it adjust (a researcher tester's and a
#: verifier's: schools read first by their own rater, raters who read two schools each, random assignment, slopes)
#: TLS shrunk 0.685 RMSE on average, TMN shrunk 0.794, NO 1.157; TMN shrunk was worse than NO on two (1.193 and
#: 1.228 against 1.101 and 1.084: six raters each reading two of twelve schools), TLS shrunk on none (0.874, 0.790)
SINGLE_LINKED = "TLS"


def _mostly_single(ratings) -> bool:
    """Most papers read once (the study's nearest cells those of one reading: :func:`.study_rule.design_levels`)."""
    from .study_rule import design_levels

    return design_levels(ratings)["raters"] == "1"


def recommend_group(report, ratings, simulation=None, links: bool = True) -> Recommendation:
    """The decision of the module docstring for one group (its :class:`.diagnostics.CheckReport`);
    ``links=False``: without the links' say (a rubric's criterion under its many-facet simulation, whose
    pick places each rater through every criterion it scored, where ``ratings`` are one criterion's)."""
    from .study_rule import cited_rmse

    found = report.assignment_found
    confounded = bool(found is not None and found.confounded)
    multigroup = bool(found is not None and found.multigroup)
    rule = {"method": report.recommendation, "reason": report.reason}
    study = study_say(ratings) if report.study.get("applies") or (confounded and report.warranted) else None
    sim = simulation_say(simulation)
    fit = fit_say(report)
    sources = {"rule": rule, "study": study, "simulation": sim, "fit": fit,
               "assignment": found.to_dict() if found is not None else None}
    reasons = [f"Chapter 5's rule: {rule['method']} ({rule['reason']})"]
    if study is not None:
        best = study["best"]   # (said where it is not the pick: "MML shrunk (0.5295 +- 0.0011; best MML shrunk 0.5295)")
        other = (best["method"], best["shrinkage"]) != (study["method"], study["shrinkage"])
        reasons.append(f"the corrected study{_run(study)} at {study['raters']} rater(s) per paper: {study['method']} "
                       f"{_lv(study['shrinkage'])} ({study['rmse']:.4f} +- {study['mcse']:.4f}"
                       + (f"; best {best['method']} {_lv(best['shrinkage'])} {best['rmse']:.4f}" if other else "")
                       + (f"; equivalent within Monte Carlo error: {', '.join(study['equivalent'])}"
                          if len(study["equivalent"]) > 1 else "") + ")")
    if sim is not None:
        reasons.append(f"the simulation of this design ({sim['replications']} replications"
                       + (", the confound drawn" if sim["confound_drawn"] else "") + f"): {sim['method']} "
                       f"{_lv(sim['shrinkage'])} ({sim['rmse']:.4f}; best {sim['best']['method']} "
                       f"{_lv(sim['best']['shrinkage'])} {sim['best']['rmse']:.4f}"
                       + (f"; equivalent, their paired 95% intervals with that best of every level holding 0 (the "
                          f"table's are with each level's best): {', '.join(sim['equivalent'])}"
                          if len(sim["equivalent"]) > 1 else "") + ")")
    misfit = bool(fit.get("judged") and not fit["fits"])
    if fit.get("judged"):
        say = ("it fits: no objection to the model-based methods" if not misfit else
               "many: a model-based method's lead in the study or the simulation, whose data are drawn from that "
               "model, is not taken" if not confounded else
               "many, but the assignment is confounded and only the model-based methods meet it: read them with care")
        unjudged = fit.get("unjudged", 0)
        reasons.append(f"the rater model's fit: {len(fit['misfitting'])} of {fit['raters']} rater(s)"
                       + (f" with {MIN_FIT_RATINGS}+ ratings the model measures ({unjudged} with fewer not judged; "
                          "those of papers read twice or more and not scored all top or all bottom)" if unjudged else "")
                       + f" with infit or outfit outside {fit['range'][0]:.2f}-{fit['range'][1]:.2f} (0.5-1.5 times "
                       f"{fit['expected']:.2f}, what data that fit give): {say}")

    elif fit.get("fitted"):   # (fitted, but no rater with enough ratings to judge)
        reasons.append(f"the rater model's fit: {fit['reason']}: no say")

    def fit_veto(pick, others):
        """The fit's say on a source's pick: where the rater model misfits (and the assignment is not
        confounded) a model-based pick gives way to the source's best of the other methods (``others()``)."""
        if not (misfit and not confounded and pick["method"] in MODEL_METHODS):
            return pick, ""
        alt = others()
        if alt is None:
            return pick, ""
        fit["changed"] = {"from": _label(pick), "to": _label(alt)}
        return alt, (f"; the fit's say: {len(fit['misfitting'])} of {fit['raters']} raters misfit the rater model, "
                     f"from which this source's data are drawn (a home advantage for the model-based methods: on "
                     f"graded-response data the corrected study's PCM fell from first to eighth like for like), so its best of "
                     f"the other methods, {_label(alt)} ({alt['rmse']:.4f}), rather than {_label(pick)} "
                     f"({pick['rmse']:.4f})")

    def done(method, shrinkage, source, short, why, mg=False, eq=(), caveat=""):
        return Recommendation(method, shrinkage, source, reasons + [f"decided by {source}: {why}"], sources, mg,
                              list(eq), short, caveat)

    data_stop = rule["method"] == "NO" and not rule["reason"].startswith("papers were not randomly assigned")
    others = report.rule_others
    rule_words = "Chapter 5's rule"
    if data_stop and others:   # raters of few papers, each paper of theirs read by a rater of more too
        reasons.append(others["said"])
        rule = {"method": others["method"], "reason": others["reason"]}
        rule_words = f"Chapter 5's rule on the raters other than {', '.join(others['few'])}"
        data_stop = rule["method"] == "NO"
    if data_stop:
        return done("NO", "none", "the rule", f"{rule_words}: {rule['reason']}",
                    "its data conditions (" + rule["reason"] + ") hold whatever the other sources say")
    separate = len(report.counted_components()) if ratings.max_raters_per_paper() > 1 else 0
    if separate > 1 and (found is None or found.given != "random"):
        return done("NO", "none", "the design",
                    f"the raters fall into {separate} groups that share no paper: a group's papers and its raters' "
                    "severity cannot be told apart",
                    f"the raters fall into {separate} groups that share no paper, so the file cannot show whether a "
                    "group's lower scores are its raters' severity or its papers' quality; every method that puts "
                    "the groups on one scale assumes the papers were assigned to the groups at random (where they "
                    "were not, as with schools read by their own raters, it moves good papers down and weak ones "
                    f"up); if they were, say {mention('assignment', 'random')}")
    # the raters fall into clusters that share few papers (the network's, as schools read by their own pairs),
    # whether or not the papers' quality differs by cluster: each cluster placed through its few links
    clustered = bool(found is not None and found.clusters is not None and len(found.cluster_labels) > 1)
    # most papers read once, some twice: every method moves a paper read once by what its rater's raw scores
    # say of the rater, which is its severity only where papers went to raters at random (the study's one-reader
    # cells draw them so); the papers read twice are the file's only measure of severity whatever the assignment,
    # and few of them can neither show a confound (schools each read by their own rater, a sample read again by
    # another: the assignment test's p 0.23) nor place the raters
    single = bool(not (confounded or clustered) and ratings.max_raters_per_paper() > 1
                  and _mostly_single(ratings))

    def links_veto(method, shrinkage):
        """The links' say on a pick of ``method`` at ``shrinkage``, under a confound, where the raters fall
        into clusters, or where most papers are read once: NO (no rater adjustment) where the papers the raters
        share place them less precisely than they differ, at the pick's shrinkage (most papers read once: at
        SINGLE_SHRINKAGE); None where they place them well enough, or the pick adjusts nothing."""
        if not (links and (confounded or clustered or single)) or method == "NO":
            return None
        from .links import link_gain

        g = link_gain(ratings)
        sources["links"] = g
        if g is None:
            return None
        if single:
            shrinkage = SINGLE_SHRINKAGE
        which = "the papers read twice" if single else "the few papers linking the clusters' raters"
        said = (f"the raters' differences, estimated on the papers they share (two-way least squares, papers "
                f"as fixed effects), would move the papers by {g['rms_effect']:.2f} score points on average (root "
                f"mean square), and {which} leave {g['rms_noise']:.2f} points of that uncertain")
        gain = (f"expected gain in squared error, the effects' squares less twice their noise: {g['gain']:.1f} "
                f"+- {g['gain_se']:.1f} over {g['papers']} papers")
        if g["gain"] > LINK_MARGIN * g["gain_se"]:
            reasons.append(f"the links' say: {said}: adjusting is expected to bring the scores nearer the truth "
                           f"({gain})")
            return None
        label = "NO" + (f" ({_lv(shrinkage)})" if shrinkage != "none" else "")
        reasons.append(f"the links' say: {said}: adjusting is not expected to bring the scores nearer the truth "
                       f"({gain}), so {label} rather than {method}")
        shrunk = shrinkage != "none"
        # (it said "their differences, 0.45 points, are no larger than the uncertainty of estimating them, 0.38":
        # the test is the gain, the differences' squares less twice the noise's, against half its standard error)
        who = ("the papers read twice are too few to compare the raters" if single else
               "the clusters' raters share too few papers to be compared")
        expected = (f"adjusting is not expected to bring the scores nearer the truth (its expected gain "
                    f"{g['gain']:.1f} +- {g['gain_se']:.1f}, not above half its standard error)")
        as_pick = ("each paper's mean shrunk toward the mean by its reliability, which the papers read twice give"
                   if single else "each paper's mean shrunk toward the mean, as the pick's was")
        short = (f"{who}: their differences ({g['rms_effect']:.2f} points a paper) would be removed with "
                 f"{g['rms_noise']:.2f} points of error, and {expected}" + (f"; {as_pick}" if shrunk else ""))
        if single:
            why = (f"{method} would move each paper read once by what its rater's scores say of the rater, which is "
                   "the rater's severity only if papers went to raters at random (the study's cells of one reading "
                   "draw them so); where they did not, as with schools each read by their own rater, it takes a "
                   "weak school's papers for a severe rater's. The papers read twice measure severity whatever the "
                   f"assignment, but they are too few for those estimates to be nearer the truth than no adjustment "
                   f"({gain}, not above half its standard error): no paper is adjusted for its raters")
        else:
            why = (f"{method} would move each paper by its raters' estimated severity, but the papers that link the "
                   f"clusters' raters are too few for those estimates to be nearer the truth than no adjustment "
                   f"({gain}, not above half its standard error): no paper is adjusted for its raters")
        return done("NO", shrinkage, "the links", short,
                    why + ("; each paper's mean is shrunk toward the mean of all papers by its reliability (Kelley"
                           + (", from the papers read twice" if single else ", as the pick's scores were")
                           + "), which moves high scores down and low ones up: at a cut above the mean some papers "
                           "that passed on their raw mean fail" if shrunk else ", the scores are left as given")
                    + (". The raters may still differ (the tests above); more papers read twice would show by how much"
                       if single else ". The raters may still differ (the tests above); papers read across the "
                       "clusters would show by how much"))

    if sim is not None and (not confounded or sim["confound_drawn"]):
        pick, vetoed = fit_veto(sim, lambda: simulation_say(simulation, exclude=MODEL_METHODS))
        tie = len(pick["equivalent"]) > 1
        veto = links_veto(pick["method"], pick["shrinkage"])
        if veto is not None:
            return veto
        few = sim["replications"] < FEW_REPLICATIONS
        return done(pick["method"], pick["shrinkage"], "the simulation",
                    f"the simulation of this design ({pick['rmse']:.4f}"
                    + (f", the simplest of {len(pick['equivalent'])} within Monte Carlo error" if tie else "")
                    + (", the rater model misfitting" if vetoed else "") + ")",
                    "it is of this file's own design, the others of the nearest cell or of 1990's"
                    + ("; the simplest of the methods within its Monte Carlo error" if tie else "") + vetoed,
                    mg=multigroup and pick["method"] in ("MML", "MFRM"), eq=pick["equivalent"],
                    caveat=(f"the simulation ran {sim['replications']} replications, which rank the methods roughly "
                            f"({len(pick['equivalent'])} within its Monte Carlo error of the best): "
                            f"{FEW_REPLICATIONS} or more (`--simulate {FEW_REPLICATIONS}`) rank them more firmly")
                    if few else "")
    if confounded:
        # (where the clusters do not meet the confound, the PCM is not placed through them: the links' say on
        # clusters' raters put NO shrunk in its place on 7 of 8 chains of raters, 0.04-0.2 RMSE further from the
        # truth, and nearer on one)
        missed = found is not None and found.clusters_miss
        veto = None if missed else links_veto("MML" if multigroup else "PCM", "kelley")
        if veto is not None:
            return veto
        if multigroup:
            return done("MML", "kelley", "the assignment",
                        f"assignment confounded with quality: a mean quality for each of "
                        f"{len(found.cluster_labels)} clusters ({found.cluster_source})",
                        f"papers of different quality went to different raters ({found.cluster_source} clusters): "
                        "the rule would leave the scores alone and the study's methods assume random assignment; "
                        "the multi-group MML fits a mean quality per cluster, so a weak cluster's papers are not "
                        "taken for severe raters", mg=True)
        return done("PCM", "kelley", "the assignment",
                    "assignment confounded with quality, " + ("its clusters not meeting it" if missed else "no clusters")
                    + ": raters compared on the papers they share",
                    "papers of different quality went to different raters, with "
                    + ("clusters whose means do not meet it" if missed else "no clusters to model") + ": the PCM "
                    "compares raters on the papers they share, whatever the papers' quality distribution (the "
                    f"rater-effects study, assignment by quality: PCM (shrunk) {cited_rmse('rater_effects', 'PCM', 'kelley'):.3f} "
                    f"against the scores left alone {cited_rmse('rater_effects', 'NO'):.3f}), each paper's score "
                    "shrunk toward the mean of all by its reliability (Kelley: 0.03-0.08 RMSE nearer the truth than "
                    "its unshrunk scores on nine confounded files of two generators)")
    if study is not None:
        pick, vetoed = fit_veto(study, lambda: study_say(ratings, exclude=MODEL_METHODS))
        tie = len(pick["equivalent"]) > 1
        veto = links_veto(pick["method"], pick["shrinkage"])
        if veto is not None:
            return veto
        g = sources.get("links")
        if single and g is not None and pick["method"] != SINGLE_LINKED:   # (the links placed the raters: above)
            return done(SINGLE_LINKED, SINGLE_SHRINKAGE, "the links",
                        f"most papers read once: the raters placed on the papers read twice (least squares, truncated "
                        f"to the scale; the expected gain {g['gain']:.1f} +- {g['gain_se']:.1f}), each paper's score "
                        "shrunk by its reliability",
                        f"the study's pick for one reading a paper, {pick['method']}, compares the raters by their "
                        "scores alone, which are their severity only if papers went to raters at random (its cells "
                        "draw them so); the file's few papers read twice cannot confirm that (a rater who read a "
                        "weaker mix of papers, a weaker school's, looks severe), but they place the raters well "
                        "enough to adjust (the "
                        f"links' say), so {SINGLE_LINKED}, which moves each paper by its raters' effects on those shared "
                        "papers, the adjustment the links' gain measures; each paper's score is drawn toward the mean by "
                        "its reliability, which the papers read twice give (Kelley's formula: a paper read once the "
                        "most)", caveat=pick.get("extrapolation", ""))
        if single and pick["shrinkage"] == "none":
            reasons.append(f"most papers are read once: the study's cells of one reading, whose papers are all read "
                           f"once, have no shrunk level; this file's papers read twice give each paper's reliability, "
                           f"so {pick['method']} {_lv(SINGLE_SHRINKAGE)} (each paper's score drawn toward the mean by "
                           "its reliability, Kelley's formula: a paper read once, the least reliable, the most)")
            pick = dict(pick, shrinkage=SINGLE_SHRINKAGE)
        return done(pick["method"], pick["shrinkage"], "the study",
                    f"the corrected study{_run(pick)} at {pick['raters']} rater(s) per paper ({pick['rmse']:.4f} +- "
                    f"{pick['mcse']:.4f}" + (f", the simplest of {len(pick['equivalent'])} within Monte Carlo error"
                                             if tie else "") + (", the rater model misfitting" if vetoed else "") + ")",
                    f"its {pick['replications']:,} replications a cell rank the methods with Monte Carlo errors; "
                    "the rule rests on one data set a cell" + ("; the simplest of the methods within its Monte Carlo error"
                                                              if tie else "") + vetoed, eq=pick["equivalent"],
                    caveat=pick.get("extrapolation", ""))
    return done(rule["method"], "none", "the rule", f"{rule_words}: {rule['reason']}",
                "no other source has a say here")
