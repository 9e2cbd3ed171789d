"""The app's long work, as functions a worker process runs (:mod:`.jobs`): read a file with the columns
page's settings, check and adjust it, write the files.  Module-level functions of picklable values
(:class:`Source`, the library's results objects), so that a Cancel can end the process they run in;
nothing here knows the web framework.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import RatercalError, naming_flags

__all__ = ["Source", "check_file", "adjust_file", "check_years", "adjust_years", "BOOTSTRAP", "SETTING_NAMES"]

#: The app's bootstrap draws (each student's standard error, so the uncertain ones can be named).
BOOTSTRAP = 200

#: The library's arguments as the columns page names them (an error says which setting to change).
SETTING_NAMES = {"paper_col": "Student (paper)", "rater_col": "Rater", "score_col": "Score", "group_col": "Group",
                 "order_col": "Order of reading", "scale": "Scale", "cut": "Cut scores", "levels": "Level names",
                 "score_cols": "Criterion columns", "rater_cols": "Rater columns", "facet_cols": "Facet columns",
                 "sheet": "Sheet", "sep": "Separator", "decimal": "Decimal mark", "encoding": "Encoding", "resolve": "Resolve third readings",
                 "discrepancy": "Resolve third readings", "method": "Adjust by", "methods": "Adjust by",
                 "anchors": "Years", "leave_out": "Leave out raters", "fold_labels": "Merge look-alike labels",
                 "resolve_discrepancies": "Resolve third readings", "simulate": "Simulate the methods"}


def _named(name: str) -> str:
    """How the page names a setting in check's and adjust's words: "Leave out raters", as labelled."""
    return f"\u201c{SETTING_NAMES[name]}\u201d" if name in SETTING_NAMES else name


@dataclass
class Source:
    """An uploaded file as the worker needs it: the name the user gave it (shown, never opened), our copy
    ``path``, whether it is a workbook, and the columns page's settings."""

    name: str
    path: Path
    workbook: bool
    settings: dict

    @property
    def stem(self) -> str:
        s = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(self.name).stem)[:60].strip("._")
        return s or "ratings"


def user_message(src: Source, exc) -> str:
    """The one line of a library error as the page says it: the settings by their labels on the page,
    the file by the name the user gave it (never our copy's path)."""
    render = getattr(exc, "render", None)
    text = render(lambda name: SETTING_NAMES.get(name, name)) if render else str(exc)
    return text.replace(str(src.path), src.name)


def read(src: Source):
    """The file's :class:`~ratercal_cli.practice.ratings_file.RatingsTable` by the page's settings."""
    from ..practice.ratings_file import read_ratings_table

    s = src.settings
    try:
        table = read_ratings_table(src.path, s["scale"] or None, s["paper"] or "paper",
                                   s["rater"] or "rater", (s["score"] if not s["score_cols"] else None) or "score",
                                   s["group"], s.get("sep") or "auto", s.get("encoding") or None, s["order"], s["resolve"],
                                   s["discrepancy"], decimal=s.get("decimal") or "point" if not src.workbook else "point",
                                   sheet=s["sheet"] if src.workbook else None, facet_cols=tuple(s["facets"]),
                                   score_cols=s["score_cols"] or None, rater_cols=s["rater_cols"] or None,
                                   leave_out=s.get("leave_out") or (),   # (the reader splits it: "Smith, J" whole)
                                   fold_labels=bool(s.get("fold_labels")))
    except RatercalError as exc:   # name the file as the user knows it, not our copy
        raise RatercalError(user_message(src, exc)) from None
    # the results, the report and the memo name the file as the user knows it, not our copy
    table.warnings = [w.replace(str(src.path), src.name) for w in table.warnings]
    if s.get("scale_doubtful"):   # (the command line says as much where no --scale is given: server._doubtful_scale)
        table.warnings.insert(0, f"{src.name}: \u201cScale\u201d {s['scale']} is the lowest and highest scores "
                                 "found in the file, not a scale given: if the rubric's is another (a score typed "
                                 "outside it, or no one gave its lowest or highest), set it on the columns page")
    table.path = Path(src.name)
    return table


def cuts(settings: dict, ratings):
    """The performance levels of the page's cuts and names, and the one cut of a pass/fail (or None)."""
    from ..practice.levels import check_levels, parse_levels

    levels = parse_levels(settings["cut"] or None, settings["levels"] or None, settings.get("decimal", "point"))
    check_levels(levels, ratings)
    one_cut = levels.cuts[0] if levels is not None and len(levels.cuts) == 1 and not ratings.facets else None
    return levels, one_cut


def confidence(settings: dict) -> float:
    """The confidence (0-1) at which a student is uncertain: the page's percentage (90 by default)."""
    return int(settings.get("confidence") or 90) / 100


def simulated(src: Source, ratings, checked, method: str):
    """The check whose decisions ``recommended`` applies where the page's check ran the simulation
    (``Simulate the methods``): so the file is adjusted by the method the page recommends, the
    simulation's pick, without simulating again; None otherwise (adjust decides as check does)."""
    return checked if method == "recommended" and src.settings.get("simulate") and not ratings.facets else None


def report_page(src: Source, ratings, checked, adjusted, one_cut, change_list) -> str:
    """The report to download, as ``ratercal adjust --html`` writes it: with the levels of several cuts, their
    uncertain students at the page's confidence and what the shrinkage did (the app's left them out, a staff
    tester's)."""
    from ..practice.html_report import html_report

    return html_report(ratings, check=checked, adjust=adjusted, cut=one_cut, confidence=confidence(src.settings),
                       changes=change_list)


def check_file(job, src: Source) -> dict:
    """Read, check, adjust by the recommended method (the many-facet model for a rubric), the report; a
    reason naming a setting names it as the page labels it (\u201cLeave out raters\u201d)."""
    from ..practice.adjust import adjust
    from ..practice.check import check
    from ..practice.levels import changes

    job.stage("Reading the file")
    try:
        with naming_flags(_named):
            table = read(src)
            levels, one_cut = cuts(src.settings, table.ratings)
            ratings = table.ratings
            job.stage("Checking the raters: tests, rater report, agreement")
            sim = src.settings.get("simulate") or None
            # (the file's third-reading rule drawn in the simulation, as check --simulate's --discrepancy: the app
            # drew none, and recommended MN (shrunk) where the command line TMN (shrunk) on a tester's file)
            checked = check(ratings, simulate=sim, cut=one_cut if sim else None,
                            discrepancy=int(src.settings.get("discrepancy", 1)) if sim else None)
            method = "MFRM" if ratings.facets else "recommended"
            job.stage(f"Adjusting by {'the many-facet model' if ratings.facets else 'the recommended method'}")
            adjusted = adjust(ratings, method, cut=one_cut, bootstrap=0 if ratings.facets else BOOTSTRAP,
                              checked=simulated(src, ratings, checked, method))
            change_list = changes(adjusted, levels=levels, confidence=confidence(src.settings))
            job.stage("Writing the report")
            report = app_words(report_page(src, ratings, checked, adjusted, one_cut, change_list))
    except RatercalError as exc:
        raise RatercalError(user_message(src, exc)) from None
    return dict(table=table, checked=checked, adjusted=adjusted, levels=levels, change_list=change_list,
                report=report, method=method)


#: the command line's pointers in the library's warnings, and what the app says instead ("": a clause of advice the
#: app has no setting for, left out): a staff tester's rubric was told to "give total='mean'", a later year's memo
#: that "--write-anchors writes this run's measures" (the app links the next year itself)
APP_CLAUSES = ((f"; give {_named('total')} mean to compare them", ""),
               ("; --write-anchors writes this run's measures, theirs with them, for the next", ""),
               ("as check --simulate ranks them", "as the simulation ranks them"),
               (f"; if they were, say {_named('assignment')} random", ""),
               ("have no anchor in the calibration", "have no anchor in the earlier year"),
               ("(left since the calibration?)", "(left since the earlier year?)"),
               ("named otherwise than in the calibration?", "named otherwise than in the earlier year?"),
               ("anchored element(s) of the calibration not in the data", "the earlier year's element(s) not in this "
                                                                          "year's file"))


def app_words(text: str) -> str:
    """``text`` (check's reasons, the report, the memo) with its pointers to the command line in the app's words:
    the memo and report made in the app told a staff tester to run `check --simulate R` (:data:`APP_CLAUSES`)."""
    from ..practice.recommend import FEW_REPLICATIONS

    text = text.replace("`check --simulate R`", "Simulate the methods, on the columns page,").replace(
        f"`--simulate {FEW_REPLICATIONS}`", "Simulate the methods, on the columns page")
    for cli, app in APP_CLAUSES:   # (as written, and as a page escapes it: "run&#x27;s")
        text = text.replace(cli, app).replace(html.escape(cli), html.escape(app))
    return text


def memo_settings(src: Source, ratings, levels, method, adjusted, extra=None) -> dict:
    """Every setting the adjustment was made with, as the memo lists them (blank ones left out)."""
    s = src.settings
    shown = {"input": src.name, "sheet": s.get("sheet"), "paper column": s["paper"],
             "rater column": s["rater"] if not s["rater_cols"] else None,
             "score column": s["score"] if not s["score_cols"] else None,
             "criterion columns": ", ".join(s["score_cols"]), "rater columns": ", ".join(s["rater_cols"]),
             "facet columns": ", ".join(s["facets"]), "group column": s["group"], "order column": s["order"],
             "scale": f"{ratings.scale_low}-{ratings.scale_low + ratings.max_score}",
             "decimal mark": "comma" if s.get("decimal") == "comma" and not src.workbook else None,
             "third readings resolved": f"yes (discrepancy above {s['discrepancy']})" if s["resolve"] else "no",
             "raters left out": s.get("leave_out"),
             "cuts": s["cut"], "levels": ", ".join(levels.names) if levels is not None else None,
             "method": method, "variant": adjusted.variant,
             "bootstrap draws": BOOTSTRAP if not ratings.facets else None, "bootstrap seed": 0,
             "uncertain at": f"{confidence(s):.0%} confidence (the interval crosses a cut)" if levels is not None
             and not ratings.facets else None, **(extra or {})}
    return {k: v for k, v in shown.items() if v not in (None, "")}


def adjust_file(job, src: Source, table, checked, method: str, out: Path, anchors=None, extra=None,
                hold_drifted: bool = False, linked: bool = False) -> dict:
    """Adjust by ``method`` (on ``anchors``, a calibration, where given); write the adjusted file (the
    input's format and layout), the change list, the report and the memo into the folder ``out``; ``linked``: the
    first of years linked through their raters (its memo says it sets their scale)."""
    from ..io import sha256_file
    from ..practice.adjust import adjust
    from ..practice.levels import changes
    from ..practice.memo import memo_html
    from ..practice.output import like_input, write_adjusted_file, write_table

    ratings = table.ratings
    try:
        levels, one_cut = cuts(src.settings, ratings)
        job.stage(f"Adjusting by {method}" + (" on the earlier year's scale" if anchors is not None else ""))
        with naming_flags(_named):   # (its warnings name the page's settings, as check's do)
            adjusted = adjust(ratings, method, cut=one_cut, bootstrap=0 if ratings.facets else BOOTSTRAP,
                              anchors=anchors, hold_drifted=hold_drifted,
                              checked=simulated(src, ratings, checked, method) if anchors is None else None)
        _confounded_note(adjusted, checked, method)
        change_list = changes(adjusted, levels=levels, confidence=confidence(src.settings))
        out.mkdir(parents=True, exist_ok=True)
        suffix = ".xlsx" if src.workbook else (".tsv" if table.delimiter == "\t" else ".csv")
        job.stage("Writing the adjusted file")
        files = {"adjusted": (out / f"adjusted{suffix}", f"{src.stem}.adjusted{suffix}")}
        # (with a byte-order mark, as the change list: a download is opened in Excel, which without it reads
        # UTF-8 accents in the system's code page, "JosÃ©"; the command line keeps its input's)
        write_adjusted_file(files["adjusted"][0], table, adjusted, bom=True)
        ch_suffix = ".xlsx" if src.workbook else ".csv"
        files["changes"] = (out / f"changes{ch_suffix}", f"{src.stem}.changes{ch_suffix}")
        header, rows, labels = change_list.written(table.columns.paper)
        write_table(files["changes"][0], header, rows, bom=True, sheet="changes", labels=labels, **like_input(table))
        job.stage("Writing the report and the memo")
        report = app_words(report_page(src, ratings, checked, adjusted, one_cut, change_list))
        files["report"] = (out / "report.html", f"{src.stem}.report.html")
        files["report"][0].write_text(report, encoding="utf-8")
        memo = app_words(memo_html(adjusted, checked, memo_settings(src, ratings, levels, method, adjusted, extra),
                                   sha256_file(src.path), levels=levels, change_list=change_list, linked=linked))
        files["memo"] = (out / "memo.html", f"{src.stem}.memo.html")
        files["memo"][0].write_text(memo, encoding="utf-8")
    except RatercalError as exc:
        raise RatercalError(user_message(src, exc)) from None
    return dict(adjusted=adjusted, change_list=change_list, report=report, files=files)


def _confounded_note(adjusted, checked, method: str) -> None:
    """A warning on each group adjusted by a method that compares raters by their papers' scores where the page's
    check found the papers' quality differing by rater (a staff helper chose TLI on such a file: its reader of the
    weakest school's papers lifted them +0.35 on average, no word but the memo's "To check")."""
    from ..practice.adjust import where
    from ..practice.memo import _reports
    from ..practice.recommend import MODEL_METHODS

    if method in ("recommended", *MODEL_METHODS) or checked is None:
        return
    r = adjusted.ratings
    for g in adjusted.groups:
        rep = next(iter(_reports(checked, r, g.name)), None)
        found = getattr(rep, "assignment_found", None)
        if found is not None and found.confounded and method in g.adjusted:
            dec = getattr(rep, "decision", None)
            g.warnings.append(f"{where(r, g.name)}{method}: the check found the papers' quality differing by rater "
                              f"({found.reason}): {method} compares the raters by their papers' scores and takes a "
                              "weaker set of papers for a harsher rater"
                              + (f"; the check recommends {dec.label}" if dec is not None else ""))


# -- several years, linked through the raters they share ------------------------------------------
def link_rows(anchored, ratings, earlier) -> dict:
    """What the page says of a year's link: each shared rater (held at its anchor, or freed for drift),
    the raters new this year, and the criteria and thresholds held (from :func:`.anchors.displacement`'s
    rows of :attr:`AdjustResults.anchored`)."""
    from ..practice.anchors import RATER, analysis_elements

    raters = [r for r in anchored if r["facet"] == RATER]
    others = [r for r in anchored if r["facet"] != RATER]
    before = {a.element for a in earlier.of(RATER).values()}
    new = [x for x in analysis_elements(ratings)[RATER] if x not in before]
    return {"raters": raters, "drifted": [r for r in raters if r.get("freed") or r.get("drifted")],
            "freed": [r for r in raters if r.get("freed")], "new": new, "others": others,
            "others_freed": [r for r in others if r.get("freed")],
            "largest_other": max(others, key=lambda r: abs(r["displacement"]), default=None)}


def link_years(job, sources: list, tables: list, hold_drifted: bool = False) -> list:
    """Each year in order adjusted by the many-facet model, the first free (its scale the origin), each
    later one held to the earlier year's measures of the raters (and criteria and thresholds) they share
    (:func:`.anchors.fit_mfrm`: an anchored rater that drifted is freed unless ``hold_drifted``).  The
    earlier year's measures are those of its own (anchored) fit, so a third year is on the first one's
    scale too.  ``[(anchors or None, anchored fit, displacement rows)]`` per year."""
    from ..errors import InputError
    from ..practice.anchors import calibration, fit_mfrm

    from ..practice.anchors import RATER, analysis_elements

    for k in range(1, len(tables)):   # before any fit: a year that shares no rater links nothing
        if not set(analysis_elements(tables[k].ratings)[RATER]) & set(analysis_elements(tables[k - 1].ratings)[RATER]):
            raise InputError(f"shares no rater with {sources[k - 1].name}: nothing links the two years (the raters "
                             "are matched by their labels)", sources[k].name)
    out, previous = [], None
    for k, (src, table) in enumerate(zip(sources, tables)):
        ratings = table.ratings
        anchors = None
        if previous is not None:   # (the whole calibration: what this year has not is left unused and said, where
            anchors = previous       # the raters who left and a criterion named otherwise were dropped unsaid)
        job.stage(f"Year {k + 1} ({src.name}): the many-facet model"
                  + (f" on year {k}'s scale" if anchors is not None else ", the scale's origin"))
        try:
            est, rows = fit_mfrm(ratings, anchors, hold_drifted=hold_drifted)
        except RatercalError as exc:
            raise RatercalError(user_message(src, exc)) from None
        previous = _carried(previous, calibration(est, ratings))
        out.append((anchors, est, rows))
    return out


def _carried(earlier, latest):
    """The calibration a next year is held to: ``latest`` (this year's measures, on the first year's scale) and
    the raters and criteria an ``earlier`` one measured that this year had not, at their last measures, on the same
    scale (a rater who skipped year 2 was measured afresh in year 3, named as new, a verifying helper's).  The
    thresholds are this year's."""
    from ..practice.anchors import THRESHOLD, Anchors

    if earlier is None:
        return latest
    have = {a.key for a in latest.elements}
    kept = [a for a in earlier.elements if a.facet != THRESHOLD and a.key not in have]
    return Anchors(latest.model, latest.scale, list(latest.elements) + kept, latest.path)


def check_years(job, sources: list) -> list:
    """Several years (earliest first): each read, linked (:func:`link_years`), checked on its anchors,
    adjusted by the many-facet model on them, its change list and report.  A dict per year."""
    from ..practice.adjust import adjust
    from ..practice.check import check
    from ..practice.levels import changes

    tables = []
    for k, src in enumerate(sources):
        job.stage(f"Reading year {k + 1} ({src.name})")
        tables.append(read(src))
        r = tables[-1].ratings
        if r.group is not None and len(r.group_ids) > 1:
            raise RatercalError(f"{src.name}: Group: years are linked one group at a time, and {r.group_name} has "
                                f"{len(r.group_ids)} groups here; leave Group at none, or upload one group's files")
    chain = link_years(job, sources, tables)
    out = []
    for k, (src, table, (anchors, _, _)) in enumerate(zip(sources, tables, chain)):
        ratings = table.ratings
        try:
            levels, one_cut = cuts(src.settings, ratings)
            job.stage(f"Year {k + 1} ({src.name}): checking the raters")
            checked = check(ratings, anchors=anchors)
            job.stage(f"Year {k + 1} ({src.name}): adjusting")
            adjusted = adjust(ratings, "MFRM", cut=one_cut, anchors=anchors)
            change_list = changes(adjusted, levels=levels, confidence=confidence(src.settings))
            report = app_words(report_page(src, ratings, checked, adjusted, one_cut, change_list))
        except RatercalError as exc:
            raise RatercalError(user_message(src, exc)) from None
        link = None if anchors is None else link_rows(adjusted.anchored, ratings, anchors)
        out.append(dict(table=table, checked=checked, adjusted=adjusted, levels=levels, change_list=change_list,
                        report=report, anchors=anchors, link=link, method="MFRM"))
    return out


def adjust_years(job, sources: list, tables: list, checks: list, hold_drifted: bool, out: Path) -> list:
    """The files of every year (:func:`adjust_file` into ``out/yearK``), each later year on the earlier
    one's scale (:func:`link_years`, with ``hold_drifted``)."""
    chain = link_years(job, sources, tables, hold_drifted)
    results = []
    for k, (src, table, checked, (anchors, _, rows)) in enumerate(zip(sources, tables, checks, chain)):
        extra = {"year": f"{k + 1} of {len(sources)}"}
        if anchors is not None:
            link = link_rows(rows, table.ratings, anchors)
            drifted = ", ".join(f"{r['element']} ({r['displacement']:+.2f} logits)" for r in link["drifted"])
            extra.update({"linked to": f"year {k} ({sources[k - 1].name}): its measures of the {len(link['raters'])} "
                                       "raters both years share, the criteria and thresholds held as anchors",
                          # (the raters held at their anchors: a freed one was listed here too, a staff tester's)
                          "anchored raters": ", ".join(r["element"] for r in link["raters"] if not r.get("freed")),
                          "drifted raters": "none" if not drifted else drifted + (
                              ": held at their anchors" if hold_drifted else
                              ": freed (measured afresh on the other anchors' scale)")})
        res = adjust_file(job, src, table, checked, "MFRM", out / f"year{k + 1}", anchors=anchors, extra=extra,
                          hold_drifted=hold_drifted, linked=k == 0)
        res["anchors"] = anchors
        res["link"] = None if anchors is None else link_rows(res["adjusted"].anchored, table.ratings, anchors)
        results.append(res)
    return results
