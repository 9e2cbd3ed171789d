"""One self-contained HTML file staff can hand on: ``check``, ``adjust`` and ``compare --html FILE``.

The page has no external link: the figures (the Wright map of each group, the methods' MDS map)
are PNGs embedded as ``data:`` URIs, the style is inline.  From the top:

1. **Summary**: per group, whether adjustment is warranted (the tests that found the raters
   differing), the method Chapter 5's rule recommends and why, and at a cut how many papers the
   adjustment moves across it and how many decisions are uncertain.
2. **Raters**: the rater report (severity, S.E., fit, observed and fair averages) with the Wright
   map, and the agreement between raters.
3. **Methods**: how far apart the methods put the papers (RMSD), pass/fail at the cut, the MDS map.
4. **Adjustment**: per rater, each method's mean shift; how far papers moved.
5. **Uncertain decisions**: the papers whose probability of passing lies between 0.05 and 0.95.
6. With ``check --simulate``, **the simulated study of the file's design**: its ranking of the
   methods (RMSE with its Monte Carlo SE, rank, the paired difference from the best, worst-decile
   bias, accuracy at a cut), the recommendation's row marked, and the stress scenario.

:func:`html_report` builds the page from whichever results it is given (a
:class:`~.check.CheckResults`, :class:`~.adjust.AdjustResults`, :class:`~.compare.CompareResults`)
and computes the others it needs from the same ratings: the check (with the Rasch fits), the
recommended method's adjustment, and a comparison of the study's methods.
"""

from __future__ import annotations

import base64
import html
import math
import tempfile
from pathlib import Path

import numpy as np

from ..ratings import Ratings
from .diagnostics import not_warranted_why
from .summary import SURE, in_doubt
from .text import num_cell as _num
from .text import pvalue

#: The methods compared when the report has to compare them itself (those that run on any design
#: first; the ones needing two raters per paper are skipped where they cannot run).
COMPARED = "all"
#: The uncertain decisions listed in the page (the rest are in the adjusted file): a page of thousands
#: of rows is not read; the note says how many there are and that only these are shown.
UNCERTAIN_ROWS = 200

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;
color:#1b1b1b;line-height:1.4;overflow-wrap:anywhere}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #ccd;padding-bottom:.2em;margin-top:1.6em}
h3{margin-bottom:.3em}table{border-collapse:collapse;margin:.5em 0 1em;font-size:.88em}
th,td{border:1px solid #ccd;padding:3px 7px;text-align:right}th{background:#eef}
td:first-child,th:first-child{text-align:left}.summary{background:#f5f7ff;border:1px solid #ccd;padding:10px 16px}
.warn{color:#8a4b00}.yes{color:#0a6b2b;font-weight:bold}.no{color:#8a1f1f;font-weight:bold}
img{max-width:100%;border:1px solid #dde}.note{color:#555;font-size:.85em}
tr.chosen td{background:#e7f6ea;font-weight:bold}
"""


def _esc(x) -> str:
    return html.escape(str(x), quote=True)


def _table(header, rows, cls=None, marked=()) -> str:
    """A table of ``rows`` under ``header``; the rows numbered in ``marked`` of class ``chosen``."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join(("<tr class=\"chosen\">" if k in marked else "<tr>") + "".join(f"<td>{_esc(c)}</td>" for c in r)
                   + "</tr>" for k, r in enumerate(rows))
    return f'<table{f" class={cls!r}" if cls else ""}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img alt="{_esc(alt)}" src="data:image/png;base64,{data}">'


def _tag(ratings: Ratings, name) -> str:
    return ratings.group_tag(name) if ratings.group is not None else "all papers"


def html_report(ratings: Ratings, check=None, adjust=None, compare=None, cut=None, title=None,
                variant="corrected", model=None, confidence: float | None = None, changes=None) -> str:
    """The page (see the module) as text.  Results not given are computed from ``ratings``, with the
    many-facet model the command fitted: ``model`` holds its ``steps_by``, ``anchors`` and
    ``hold_drifted`` (else the page of ``adjust --steps-by``/``--anchors`` showed a free, shared-threshold
    model beside scores from another).  ``confidence``: of the uncertain decisions at the cut (default 0.9);
    ``changes``: the change list of several cuts (:func:`.levels.changes`), whose levels the page shows."""
    from .adjust import adjust as adjust_ratings
    from .check import check as check_ratings
    from .compare import compare as compare_ratings

    model = {k: v for k, v in (model or {}).items() if v is not None and v is not False}
    if check is None:
        check = check_ratings(ratings, **model)
    # a comparison's cut on a rubric's totals (``compare --cut``) is no score of adjust's, which cuts a paper's
    # score on the scale: the adjustment's parts of the page then have no cut (as ``adjust --cut`` on a rubric)
    on_total = compare is not None and ratings.facets and compare.total == "sum"
    given_compare = compare
    if adjust is None:   # facetted ratings (a rubric): the many-facet model, the rule being for one rating a rater
        # (the check's decisions: with its simulation, the page of check --simulate said TMN (shrunk) above the
        # moves of the recommendation made without it, TLI (shrunk), a staff tester's; with --cluster-col, the
        # column's clusters, where deciding again found the network's)
        adjust = adjust_ratings(ratings, "MFRM" if ratings.facets else "recommended", variant,
                                cut=None if on_total else cut, checked=None if ratings.facets else check,
                                **(model if ratings.facets else {}))
    cut = adjust.cut if cut is None else cut
    adjust_cut = None if on_total else cut
    if compare is None:   # the study's methods: no many-facet model to hold at anchors; on a rubric, the papers'
        # mean criterion scores, which adjust's cut (a score on the scale) is on
        compare = compare_ratings(ratings, COMPARED, variant, cut, strict=False, total="mean")
    title = title or f"Rater calibration report: {ratings.source or 'ratings'}"
    summaries = adjust.adjustment_summaries(confidence)
    with tempfile.TemporaryDirectory() as tmp:
        maps = {rep.group: p for rep, p in zip([r for r in check.reports if r.rater_model is not None],
                                                check.wright_maps(Path(tmp) / "wright.png", numbered=True))}
        mds = dict(zip([g.name for g in compare.groups], compare.draw_maps(Path(tmp) / "mds.png", numbered=True)))
        parts = [f"<h1>{_esc(title)}</h1>",
                 f'<p class="note">scale {ratings.scale_low}-{ratings.scale_low + ratings.max_score}; '
                 f"{ratings.n_ratings} ratings, {ratings.n_papers} papers; {variant} methods"
                 + (f"; cut {cut:g}{' on the rubric total' if on_total else ''} (a paper passes with a score "
                    "&gt;= cut)" if cut is not None else "") + "</p>",
                 _summary(ratings, check, adjust, summaries, adjust_cut)]
        for k, rep in enumerate(check.reports):
            name = rep.group
            tag = _report_tag(ratings, check, rep)
            parts.append(f'<h2 id="group-{k}">{_esc(tag)}</h2>')
            parts.append(_raters(rep, maps.get(name)))
            g_cmp = next((g for g in compare.groups if g.name == name), None)
            if g_cmp is not None:
                parts.append(_methods(g_cmp, mds.get(name), cut, compare.total))
            s = next((s for s in summaries if s.group == name), None)
            if s is not None:
                parts.append(_shifts(s))
                parts.append(_uncertain(ratings, adjust, name, adjust_cut, s.sure))
            if getattr(check, "simulations", None) is not None:
                parts.append(_simulation(check.simulations[k], [rep.decision] if rep.decision else []))
        if ratings.facets:   # a rubric: the many-facet model, then the methods and adjustment of each group
            for k, (name, rub) in enumerate(check.rubric or ()):
                parts.append(_rubric(_tag(ratings, name), rub, k))
            for g_cmp in compare.groups:
                parts.append(f"<h2>Methods: {_esc(_tag(ratings, g_cmp.name))}</h2>")
                parts.append(_methods(g_cmp, mds.get(g_cmp.name), cut, compare.total))
            for s in summaries:
                parts.append(f"<h2>Adjustment: {_esc(_tag(ratings, s.group))}</h2>")
                parts.append(_shifts(s))
                parts.append(_uncertain(ratings, adjust, s.group, adjust_cut, s.sure))
        for name, sim in getattr(check, "facet_simulations", None) or ():
            head = None if name is None else f"{ratings.group_tag(name)}, "
            parts.append(f"<h2>Simulation: {_esc(_tag(ratings, name))}</h2>")
            parts.append(_simulation(sim, [rep.decision for rep in check.reports if rep.decision is not None
                                           and (head is None or str(rep.group).startswith(head))]))
        if changes is not None and changes.changes and (len(changes.changes[0].levels.cuts) > 1 or ratings.facets):
            parts.append(_levels(ratings, changes))
        anchored = adjust.anchored if getattr(adjust, "anchored", None) is not None else getattr(check, "anchored", None)
        if anchored is not None:
            parts.append(_anchored(anchored))
        # (the anchors' notes of check --html and compare --html too: a verifying helper found their pages without
        # the rater of the anchor file absent from the data)
        warn = list(ratings.notes) + adjust.warnings
        # (check's notes once: adjust says the same of the same anchors, with its file's prefix and "MFRM: ", and the
        # page listed each twice, a staff helper's)
        warn += [n for n in [*getattr(check, "anchor_notes", []),
                             *(given_compare.warnings if given_compare is not None else [])]
                 if not any(w.endswith(n) for w in warn)]
        if warn:
            parts.append('<h2 id="warnings">Warnings</h2><ul>'
                         + "".join(f'<li class="warn">{_esc(w)}</li>' for w in dict.fromkeys(warn)) + "</ul>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_esc(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


def _summary(ratings, check, adjust, summaries, cut) -> str:
    items = []
    for rep in check.reports:
        tag = _report_tag(ratings, check, rep)
        why = "; ".join(rep.warranted_by) if rep.warranted else not_warranted_why(rep)
        li = [f"<b>{_esc(tag)}</b>: adjustment warranted: "
              + (f'<span class="yes">yes</span> ({_esc(why)})' if rep.warranted else f'<span class="no">no</span> '
                 f"({_esc(why)})"),
              (f"recommended method: <b>{_esc(rep.decision.label)}</b> -- {_esc(rep.decision.short)} "
               f"(Chapter 5's rule: {_esc(rep.recommendation)})"
               + (f'<br><span class="note">{_esc(rep.decision.caveat)}</span>' if rep.decision.caveat else "")
               if rep.decision is not None else
               f"recommended method: <b>{_esc(rep.recommendation)}</b> -- {_esc(rep.reason)}")]
        s = next((s for s in summaries if s.group == rep.group), None)
        m = None if s is None else next((m for m in s.methods if m.method == "recommended"), s.methods[0])
        if m is not None:
            li.append(f"{_esc(m.heading)} moved papers "
                      f"by {_num(m.mean_move)} on average, at most {_num(m.largest_move)}; {m.moved} by 0.5 or more")
            if cut is not None:
                li.append(f"at cut {cut:g}: {len(m.fail_to_pass) + len(m.pass_to_fail)} paper(s) change pass/fail "
                          f"(fail&rarr;pass {len(m.fail_to_pass)}, pass&rarr;fail {len(m.pass_to_fail)})"
                          + (f"; {len(m.uncertain)} decision(s) uncertain" if m.se_source else ""))
            li += [f'<span class="warn">{_esc(w)}</span>' for w in s.warnings]
        g = next((g for g in adjust.groups if g.name == rep.group), None)
        if g is not None and g.signal_warning:
            li.append(f'<span class="warn">{_esc(g.signal_warning)}</span>')
        items.append("<li>" + "<br>".join(li) + "</li>")
    return f'<div class="summary" id="summary"><h2>Summary</h2><ul>{"".join(items)}</ul></div>'


def _report_tag(ratings, check, rep) -> str:
    """A report's heading: its group, or with facets its cell (``criterion=org``), not 'all papers'."""
    return check._tag(rep) if ratings.facets else _tag(ratings, rep.group)


def _rubric(tag, rub, k) -> str:
    """A rubric's many-facet model (:class:`.rubric.RubricReport`): the raters' and every facet's measures,
    the category statistics (Facets Table 8) and the rater x facet bias tables (Tables 13)."""
    from .rater_report import DISPLACEMENT_HEADERS, displacement_cells

    def with_displacement(head, rows, source):
        disp = displacement_cells(source)
        return (head, rows) if disp is None else (head + DISPLACEMENT_HEADERS, [r + d for r, d in zip(rows, disp)])

    out = [f'<h2 id="rubric-{k}">Many-facet model: {_esc(tag)}</h2>',
           f'<p class="note">MFRM (paper + rater + {_esc(" + ".join(rub.facets))}, {_esc(rub.thresholds_text)}; '
           "marginal ML); logits, + = more severe / harder (lower scores)</p>",
           _table(*with_displacement(["rater", "count", "obs avg", "severity", "S.E.", "infit", "outfit"],
                                     [[r["rater"], r["count"], _num(r["observed_average"]), _num(r["severity"]),
                                       _num(r["se"]), _num(r["infit"]), _num(r["outfit"])] for r in rub.raters],
                                     rub.raters), "mfrm-raters")]
    for f, rows in rub.facets.items():
        out.append(f"<h3>{_esc(f)}</h3>")
        out.append(_table(*with_displacement([f, "count", "obs avg", "difficulty", "S.E."],
                                             [[r["level"], r["count"], _num(r["observed_average"]),
                                               _num(r["difficulty"]), _num(r["se"])] for r in rows], rows),
                          "mfrm-facet"))
    for t in rub.categories:
        out.append(f"<h3>Category statistics (Facets Table 8){': ' + _esc(t.label) if t.label else ''}</h3>")
        out.append(_table(["score", "count", "%", "average measure", "expected measure", "outfit", "threshold",
                           "S.E."],
                          [[c, n, _num(p, 0), _num(a), _num(e), _num(o), _num(th), _num(s)] for c, n, p, a, e, o, th, s
                           in zip(t.categories, t.count, t.percent, t.average_measure, t.expected_measure, t.outfit,
                                  t.threshold, t.threshold_se)], "categories"))
        out += [f'<p class="warn">{_esc(w)}</p>' for w in t.warnings]
    for f, b in rub.bias.items():
        out.append(f"<h3>Rater x {_esc(f)} bias (Facets Table 13)</h3>")
        out.append(f'<p class="note">joint MFRM by marginal ML; bias in logits, + = more severe in that {_esc(f)}; '
                   f"points: its effect on the expected score; p Holm-adjusted over the cells; ref 'out': a cell "
                   f"the main effects are not fitted to; {len(b.flagged)} of {len(b.rows)} cells with |t| &gt;= 2, "
                   f"{len(b.significant)} significant at {b.alpha:g} after Holm</p>")
        out.append(_table(["rater", f, "count", "obs avg", "bias", "S.E.", "points", "t", "Holm p", "ref"],
                          [[r["rater"], r["level"], r["count"], _num(r["observed_average"]), _num(r["bias"]),
                            _num(r["se"]), _num(r["bias_points"]), _num(r["t"]), pvalue(r["p_holm"]),
                            "" if r["reference"] else "out"] for r in b.rows], "bias"))
    out += [f'<p class="note">{_esc(n)}</p>' for n in rub.notes]
    return "\n".join(out)


def _raters(rep, wright) -> str:
    out = ['<h3>Raters</h3>']
    rr = rep.rater_report if isinstance(rep.rater_report, dict) else rep.rater_report.to_dict()
    if rr.get("fitted"):
        rows = [[r["rater"], r["count"], _num(r["observed_average"]), _num(r["fair_average"]), _num(r["measure"]),
                 _num(r["se"]), _num(r["infit"]), _num(r["outfit"])] for r in rr["raters"]]
        out.append(f'<p class="note">{_esc(rr["model"])}; logits, + = more severe</p>')
        out.append(_table(["rater", "ratings", "observed average", "fair average", "severity", "S.E.", "infit",
                           "outfit"], rows, "rater-report"))
        sep = rr.get("rater_separation", {})
        out.append(f'<p class="note">rater separation {_num(sep.get("separation"))}, reliability '
                   f'{_num(sep.get("reliability"))}; fixed (all same) chi-square {_num(sep.get("chi2"), 1)}, '
                   f'df {sep.get("chi2_df", "-")}, p {_esc(pvalue(sep.get("chi2_p")))}</p>')
    else:
        out.append(f'<p class="note">no rater model: {_esc(rr.get("reason", ""))}</p>')
    if wright is not None:
        out.append(_img(wright, "Wright map: papers' measures, raters' severities and thresholds on one logit ruler"))
    ag = rep.agreement or {}
    if ag.get("overall"):
        o = ag["overall"]
        icc = o.get("icc") or {}
        out.append("<h3>Agreement</h3>")
        out.append(_table(["statistic", "value"], [
            ["exact agreement", _num(o.get("exact"), 3)], ["adjacent (within a point)", _num(o.get("adjacent"), 3)],
            ["quadratic-weighted kappa", _num(o.get("kappa_w"), 3)],
            ["Krippendorff's alpha (ordinal)", _num(o.get("alpha_ordinal"), 3)],
            ["ICC(1)", _num(icc.get("icc1"), 3)], ["ICC(1,k)", _num(icc.get("icc1k"), 3)]], "agreement"))
        pairs = [p for p in ag.get("pairs", []) if p["papers"] >= 10]
        if pairs:
            out.append(_table(["rater pair", "papers", "exact", "adjacent", "kappa"],
                              [[f'{p["rater_a"]} & {p["rater_b"]}', p["papers"], _num(p["exact"], 3),
                                _num(p["adjacent"], 3), _num(p["kappa_w"], 3)] for p in pairs], "pairs"))
        thin = len(ag.get("pairs", [])) - len(pairs)
        if thin:
            out.append(f'<p class="note">{thin} pair(s) of raters sharing fewer than 10 papers not shown</p>')
    return "\n".join(out)


def _methods(g, mds, cut, total=None) -> str:
    c = g.comparison
    out = ["<h3>Methods compared</h3>",
           f'<p class="note">root mean squared difference between the methods\' paper scores, over {c.n_papers} '
           "papers (Denny's Table 4)</p>",
           _table([""] + list(c.methods), [[m] + [_num(v, 3) for v in row] for m, row in zip(c.methods, c.rmsd)],
                  "rmsd")]
    if g.pass_fail:
        on = {"sum": " on the rubric total", "mean": " on the mean criterion score"}.get(total, "")
        out.append(f'<p class="note">pass/fail at cut {cut:g}{on}, relative to no adjustment (NO; Table 5)</p>')
        out.append(_table(["method", "passing", "failing", "helped (fail\u2192pass)", "hurt (pass\u2192fail)"],
                          [[r["method"], r["passing"], r["failing"], "-" if r["helped"] is None else r["helped"],
                            "-" if r["hurt"] is None else r["hurt"]] for r in g.pass_fail], "pass-fail"))
    if mds is not None:
        out.append(_img(mds, "MDS map of the methods from their RMSDs"))
    return "\n".join(out)


def _shifts(s) -> str:
    hdr = ["rater", "ratings"] + [m.heading for m in s.methods]
    rows = [[r, n] + [_signed(m.rater_shift.get(r)) for m in s.methods]
            for r, n in zip(s.raters, s.ratings_per_rater)]
    moved = [[m.method, m.papers, _num(m.mean_move, 3), _num(m.largest_move, 3), m.largest_paper, m.moved]
             for m in s.methods]
    return "\n".join(["<h3>Adjustment per rater</h3>",
                      '<p class="note">mean shift of each rater\'s ratings, in points (adjusted minus given)</p>',
                      _table(hdr, rows, "shifts"),
                      _table(["method", "papers", "mean move", "largest", "paper", "moved 0.5 or more"], moved,
                             "moved")])


def _simulation(sim, decisions) -> str:
    """``check --simulate``'s study of the file's design (:class:`.simulate.SimulationResult`, or the reason it
    was not run): its ranking, the rows of the recommendations ``decisions`` (a group's, or a rubric group's
    criteria's: :class:`.recommend.Recommendation`) marked, the shrinkage levels named as the recommendation
    names them (``kelley``: shrunk)."""
    from .recommend import LEVEL_WORDS

    if isinstance(sim, str):
        return f'<h3>Simulated study of this design</h3><p class="warn">{_esc(sim)}</p>'
    header, rows = sim.table()
    chosen = {(d.shrinkage, d.method) for d in decisions}
    marked = {k for k, r in enumerate(rows) if (r[0], r[1]) in chosen}
    rows = [[f"{LEVEL_WORDS.get(r[0], r[0])} ({r[0]})", *r[1:], "\u2190 recommended" if k in marked else ""]
            for k, r in enumerate(rows)]
    which = " The recommendation's row is marked." if len(chosen) == 1 else " The rows of the recommendations are marked."
    notes = "".join(f'<p class="note">{_esc(n)}</p>' for n in sim.notes())
    return "\n".join(["<h3>Simulated study of this design</h3>", f'<p class="note">{_esc(sim.description())}'
                      + (which if marked else "") + "</p>", _table([*header, ""], rows, "simulation", marked), notes])


def _anchored(rows) -> str:
    """The anchored elements: displacement, drift, and which were freed (measured afresh) or held."""
    from .anchors import DRIFT_ALPHA, DRIFT_LOGITS

    def status(r):
        return "freed" if r.get("freed") else ("held, drifted" if r.get("drifted") else "held")

    body = [[r["facet"] + (f" ({r['level']})" if r["level"] else ""), r["element"], _num(r["anchor"]),
             _num(r["displacement"]), _num(r["se"]), _num(r["t"]), _num(r.get("p_holm"), 3),
             "DRIFT" if r["drift"] else "", _num(r.get("used", r["anchor"])), status(r)] for r in rows]
    freed = [r for r in rows if r.get("freed")]
    note = ("freed (measured afresh on the scale of the anchors that did not drift): "
            + "; ".join(f"{r['facet']} {r['element']} moved {r['used'] - r['anchor']:+.2f} logits" for r in freed)
            if freed else "no anchored element was freed")
    return "\n".join(['<h2 id="anchors">Anchored elements</h2>',
                      f'<p class="note">displacement: the estimate free of the anchors, on the scale of the anchors '
                      f"that did not drift, minus the anchor (logits); freed: |displacement| &gt; {DRIFT_LOGITS:g} and "
                      f"Holm's p &lt; {DRIFT_ALPHA:g}; used: the value the fit used</p>",
                      _table(["facet", "element", "anchor", "displacement", "S.E.", "t", "Holm p", "drift", "used",
                              "status"], body, "anchored"),
                      f'<p class="note">{_esc(note)}</p>'])


def _signed(x):
    return "-" if x is None or not math.isfinite(x) else f"{x:+.3f}"


def _levels(ratings, changes) -> str:
    """The levels of several cuts (or of one on a rubric's totals, whose pass/fail account the page had not: a staff
    helper's cut at 14 had no word on the page): students per level given and adjusted, the moves between them, the
    scores on a cut and the shrinkage's part (the memo's table and notes), and per group how many are uncertain, at
    the change list's confidence."""
    from .memo import levels_html

    cols = [(ratings.group_tag(lc.group) if ratings.group is not None else "all papers", lc) for lc in changes.changes]
    cuts = ", ".join(f"{c:g}" for c in changes.changes[0].levels.cuts)
    out = [f"<h2>Levels</h2><p class=\"note\">cuts {_esc(cuts)}{' on the rubric totals' if ratings.facets else ''}, "
           f"adjusted by {_esc(changes.method)}</p>", levels_html(cols, "paper")]
    out += [f'<p class="note"><b>{_esc(tag)}</b>: {_esc(lc.uncertain_text())}</p>' for tag, lc in cols
            if lc.uncertain is not None or lc.without_se]
    return "\n".join(out)


def _uncertain(ratings, adjust, name, cut, sure: float = SURE) -> str:
    g = next(g for g in adjust.groups if g.name == name)
    if cut is None:
        return ""
    out = ["<h3>Uncertain decisions</h3>"]
    code = "recommended" if "recommended" in g.uncertainty else next(iter(g.uncertainty), None)
    if code is None:
        out.append('<p class="note">no paper standard errors: run adjust with --bootstrap N (or a model-based '
                   'method: MML, MFRM, CML, RSM)</p>')
        return "\n".join(out)
    u = g.uncertainty[code]
    low = g.ratings.scale_low
    score = np.asarray(g.adjusted[code].paper) + low
    p = np.asarray(u.pass_prob)
    idx = np.flatnonzero(in_doubt(p, sure))
    idx = idx[np.argsort(np.abs(p[idx] - 0.5))]
    shown = (f"; the {UNCERTAIN_ROWS} closest to a coin toss are shown, all {len(idx):,} are in the adjusted "
             f"file's {code}_paper_pass column" if len(idx) > UNCERTAIN_ROWS else "; closest to a coin toss first")
    out.append(f'<p class="note">{len(idx):,} paper(s) by {_esc(code)} whose probability of passing lies between '
               f"{1 - sure:.3g} and {sure:.3g} (standard errors: {u.source}){shown}</p>")
    out.append(_table(["paper", "adjusted score", "S.E.", "P(pass)"],
                      [[g.ratings.paper_ids[i], _num(score[i], 3), _num(u.se[i], 3), _num(p[i], 3)]
                       for i in idx[:UNCERTAIN_ROWS]], "uncertain"))
    return "\n".join(out)


def write_html_report(path, ratings: Ratings, **kwargs) -> Path:
    """:func:`html_report` written atomically to ``path``."""
    from ..io import open_output

    text = html_report(ratings, **kwargs)
    with open_output(path) as fh:
        fh.write(text)
    return Path(path)
