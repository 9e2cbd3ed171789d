"""The app's long work, as functions a worker process runs (:mod:`.jobs`): read a file with the columns
page's settings, check and adjust it, write the files.  Module-level functions of picklable values
(:class:`Source`, the library's results objects), so that a Cancel can end the process they run in;
nothing here knows the web framework.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import RatercalError

__all__ = ["Source", "check_file", "adjust_file", "BOOTSTRAP", "SETTING_NAMES"]

#: The app's bootstrap draws (each student's standard error, so the uncertain ones can be named).
BOOTSTRAP = 200

#: The library's arguments as the columns page names them (an error says which setting to change).
SETTING_NAMES = {"paper_col": "Student (paper)", "rater_col": "Rater", "score_col": "Score", "group_col": "Group",
                 "order_col": "Order of reading", "scale": "Scale", "cut": "Cut scores", "levels": "Level names",
                 "score_cols": "Criterion columns", "rater_cols": "Rater columns", "facet_cols": "Facet columns",
                 "sheet": "Sheet", "sep": "Separator", "resolve": "Resolve third readings",
                 "discrepancy": "Resolve third readings", "method": "Adjust by", "methods": "Adjust by",
                 "anchors": "Years"}


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
                                   s["group"], s.get("sep") or "auto", None, s["order"], s["resolve"],
                                   s["discrepancy"],
                                   sheet=s["sheet"] if src.workbook else None, facet_cols=tuple(s["facets"]),
                                   score_cols=s["score_cols"] or None, rater_cols=s["rater_cols"] or None)
    except RatercalError as exc:   # name the file as the user knows it, not our copy
        raise RatercalError(user_message(src, exc)) from None
    # the results, the report and the memo name the file as the user knows it, not our copy
    table.warnings = [w.replace(str(src.path), src.name) for w in table.warnings]
    table.path = Path(src.name)
    return table


def cuts(settings: dict, ratings):
    """The performance levels of the page's cuts and names, and the one cut of a pass/fail (or None)."""
    from ..practice.levels import check_levels, parse_levels

    levels = parse_levels(settings["cut"] or None, settings["levels"] or None)
    check_levels(levels, ratings)
    one_cut = levels.cuts[0] if levels is not None and len(levels.cuts) == 1 and not ratings.facets else None
    return levels, one_cut


def check_file(job, src: Source) -> dict:
    """Read, check, adjust by the recommended method (the many-facet model for a rubric), the report."""
    from ..practice.adjust import adjust
    from ..practice.check import check
    from ..practice.html_report import html_report
    from ..practice.levels import changes

    job.stage("Reading the file")
    try:
        table = read(src)
        levels, one_cut = cuts(src.settings, table.ratings)
        ratings = table.ratings
        job.stage("Checking the raters: tests, rater report, agreement")
        sim = src.settings.get("simulate") or None
        checked = check(ratings, simulate=sim, cut=one_cut if sim else None)
        method = "MFRM" if ratings.facets else "recommended"
        job.stage(f"Adjusting by {'the many-facet model' if ratings.facets else 'the recommended method'}")
        adjusted = adjust(ratings, method, cut=one_cut, bootstrap=0 if ratings.facets else BOOTSTRAP)
        change_list = changes(adjusted, levels=levels)
        job.stage("Writing the report")
        report = html_report(ratings, check=checked, adjust=adjusted, cut=one_cut)
    except RatercalError as exc:
        raise RatercalError(user_message(src, exc)) from None
    return dict(table=table, checked=checked, adjusted=adjusted, levels=levels, change_list=change_list,
                report=report, method=method)


def memo_settings(src: Source, ratings, levels, method, adjusted, extra=None) -> dict:
    """Every setting the adjustment was made with, as the memo lists them (blank ones left out)."""
    s = src.settings
    shown = {"input": src.name, "sheet": s.get("sheet"), "paper column": s["paper"],
             "rater column": s["rater"] if not s["rater_cols"] else None,
             "score column": s["score"] if not s["score_cols"] else None,
             "criterion columns": ", ".join(s["score_cols"]), "rater columns": ", ".join(s["rater_cols"]),
             "facet columns": ", ".join(s["facets"]), "group column": s["group"], "order column": s["order"],
             "scale": f"{ratings.scale_low}-{ratings.scale_low + ratings.max_score}",
             "third readings resolved": f"yes (discrepancy above {s['discrepancy']})" if s["resolve"] else "no",
             "cuts": s["cut"], "levels": ", ".join(levels.names) if levels is not None else None,
             "method": method, "variant": adjusted.variant,
             "bootstrap draws": BOOTSTRAP if not ratings.facets else None, "bootstrap seed": 0, **(extra or {})}
    return {k: v for k, v in shown.items() if v not in (None, "")}


def adjust_file(job, src: Source, table, checked, method: str, out: Path, anchors=None, extra=None) -> dict:
    """Adjust by ``method`` (on ``anchors``, a calibration, where given); write the adjusted file (the
    input's format and layout), the change list, the report and the memo into the folder ``out``."""
    from ..io import sha256_file
    from ..practice.adjust import adjust
    from ..practice.html_report import html_report
    from ..practice.levels import changes
    from ..practice.memo import memo_html
    from ..practice.output import write_adjusted_file, write_table

    ratings = table.ratings
    try:
        levels, one_cut = cuts(src.settings, ratings)
        job.stage(f"Adjusting by {method}" + (" on the earlier year's scale" if anchors is not None else ""))
        adjusted = adjust(ratings, method, cut=one_cut, bootstrap=0 if ratings.facets else BOOTSTRAP,
                          anchors=anchors)
        change_list = changes(adjusted, levels=levels)
        out.mkdir(parents=True, exist_ok=True)
        suffix = ".xlsx" if src.workbook else (".tsv" if table.delimiter == "\t" else ".csv")
        job.stage("Writing the adjusted file")
        files = {"adjusted": (out / f"adjusted{suffix}", f"{src.stem}.adjusted{suffix}")}
        write_adjusted_file(files["adjusted"][0], table, adjusted)
        ch_suffix = ".xlsx" if src.workbook else ".csv"
        files["changes"] = (out / f"changes{ch_suffix}", f"{src.stem}.changes{ch_suffix}")
        write_table(files["changes"][0], change_list.header,
                    [[row[h] for h in change_list.header] for row in change_list.rows], bom=True, sheet="changes",
                    labels=change_list.labels)
        job.stage("Writing the report and the memo")
        report = html_report(ratings, check=checked, adjust=adjusted, cut=one_cut)
        files["report"] = (out / "report.html", f"{src.stem}.report.html")
        files["report"][0].write_text(report, encoding="utf-8")
        memo = memo_html(adjusted, checked, memo_settings(src, ratings, levels, method, adjusted, extra),
                         sha256_file(src.path), levels=levels, change_list=change_list)
        files["memo"] = (out / "memo.html", f"{src.stem}.memo.html")
        files["memo"][0].write_text(memo, encoding="utf-8")
    except RatercalError as exc:
        raise RatercalError(user_message(src, exc)) from None
    return dict(adjusted=adjusted, change_list=change_list, report=report, files=files)
