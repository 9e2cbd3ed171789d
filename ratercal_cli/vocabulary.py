"""The study's words, in one place: variants, generators, methods, facets and their levels.

Every module that names a variant, a generator, the study's methods, a facet of the factorial
or the order of a facet's levels takes it from here, so a new level (a fourth quality shape,
four raters per paper) is added once.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

#: The methods' variants: what the 1990 listings compute (bugs included), what they should.
VARIANTS = ("faithful", "corrected")
#: Shrinkage of the paper scores, a dimension of the study like the variant: ``none`` (each method's
#: own unshrunk scores; the Rasch fits, corrected PCM, CML, RSM, MML, MFRM: fair averages at Warm's
#: WLE) and ``kelley`` (shrunk toward the mean: Kelley's regressed score,
#: :mod:`ratercal_cli.methods.shrinkage`; the Rasch fits: at the EAP under a normal distribution).
SHRINKAGES = ("none", "kelley")
#: The study's levels: :data:`SHRINKAGES` and ``linear_eb``, one empirical-Bayes linear operator
#: applied alike to every method's unshrunk scores (the like-for-like comparison, issue 29; not a
#: level a method or ``adjust`` gives of itself).
STUDY_SHRINKAGES = SHRINKAGES + ("linear_eb",)
#: The variant of a practitioner's file (``ratercal adjust FILE``) and of a method made without one.
DEFAULT_VARIANT = "corrected"

#: Data generators of a config: the 1990 programs, and the seeded modern ones.
GENERATORS = ("basic1990", "pcm", "sequential", "grm", "linear")
#: Generators any one replication can be made with on its own (not basic1990's chain of states).
REPLICABLE_GENERATORS = ("pcm", "sequential", "grm", "linear")
#: Generators that score with a rater model's steps, so take rater effects and criteria
STEP_GENERATORS = ("pcm", "sequential", "grm")

#: The ten methods of the study, in the tables' order.
STUDY_METHODS = ("NO", "MN", "TMN", "LI", "TLI", "EQP", "OLS", "TLS", "RAS", "PCM")
#: The methods the study ran on one-rater sets.
ONE_RATER_METHODS = ("NO", "MN", "TMN", "LI", "TLI", "EQP")
#: Why a method that needs two raters per paper is not run on one-rater data.
NEEDS_TWO_RATERS = "needs two or more raters per paper"



def label_tag(label) -> str:
    """A method's label with its qualifiers beside its code, for a bracket of its own: "TLI (shrunk)" ->
    "TLI, shrunk" ("recommended (TLI, shrunk)", where "recommended (TLI (shrunk))" doubled the brackets);
    "MML (multi-group, shrunk)" -> "MML, multi-group, shrunk"; a bare code as it is."""
    base, _, rest = str(label).partition(" (")
    return f"{base}, {rest[:-1]}" if rest.endswith(")") else str(label)


def adjusted_columns(methods) -> list:
    """The columns of adjusted scores wherever they are written (``ratercal adjust FILE``'s
    output, a run's ``equate/<variant>/adjusted.csv``, a kept Monte Carlo replication): per
    method ``X``, the rating's adjusted score, and ``X_paper``, its paper's."""
    return [c for m in methods for c in (m, f"{m}_paper")]


#: Raters per paper: "2+" is two, and a third when the first two differ by more than a point.
RATERS_PER_PAPER = ("1", "2", "2+", "3")
#: Paper-quality shapes by their digit in a set code (PARGEN.BAS ``DIST``).
QUALITY_SHAPES = {1: "normal", 2: "positive", 3: "negative"}
QUALITY_CODES = {v: k for k, v in QUALITY_SHAPES.items()}
#: How the dissertation's tables label a quality shape (Tables 8-14).
QUALITY_TABLE_LEVELS = {"normal": "normal", "positive": "skew+", "negative": "skew-"}

#: The facets of the factorial, in the tables' order, and the scopes of the summaries.
FACETS = ("all", "raters", "papers", "scale", "quality")
SCOPES = ("multi-rater", "one-rater")

#: Tables 9 and 10: the nine raters of Table 3 by type (rater L = 3I + J + 5).
RATER_TYPES = {
    "severity": {"lenient": (1, 2, 3), "average": (4, 5, 6), "stringent": (7, 8, 9)},
    "spread": {"wide": (1, 4, 7), "medium": (2, 5, 8), "narrow": (3, 6, 9)},
}


def scope(cell) -> str:
    """``one-rater`` or ``multi-rater``: the matrix methods and the PCM run on the latter only."""
    return "one-rater" if cell.raters_per_paper == "1" else "multi-rater"


def facet_levels(cell, quality_labels=None):
    """The ``(facet, level)`` pairs a cell belongs to, e.g. 2+551 -> all, raters 2+, papers 500,
    scale 0-5, quality normal.  One-rater cells have no ``raters`` level (Table 14).
    ``quality_labels`` maps the shape to its printed level (the tables' ``skew+``)."""
    q = quality_labels.get(cell.quality, cell.quality) if quality_labels else cell.quality
    out = [("all", "all")]
    if cell.raters_per_paper != "1":
        out.append(("raters", cell.raters_per_paper))
    return out + [("papers", str(cell.papers)), ("scale", f"0-{cell.max_score}"), ("quality", q)]


def _leading_int(text, default=math.inf):
    """The leading digits of ``text`` as an int ("2+" -> 2, "0-9" -> 0), else ``default``."""
    digits = text[:len(text) - len(text.lstrip("0123456789"))]
    return int(digits) if digits else default


def level_key(facet, level):
    """Table order of a facet's levels: the known order, then the number, then the text (a total
    order, so rows never depend on set iteration, i.e. on the hash seed)."""
    if facet == "raters":
        k = RATERS_PER_PAPER.index(level) if level in RATERS_PER_PAPER else len(RATERS_PER_PAPER)
    elif facet == "papers":
        k = int(level)
    elif facet == "scale":
        k = int(level.split("-")[1])
    elif facet == "quality":
        order = list(QUALITY_SHAPES.values()) + list(QUALITY_TABLE_LEVELS.values())
        k = order.index(level) % len(QUALITY_SHAPES) if level in order else len(QUALITY_SHAPES)
    else:
        k = 0
    return FACETS.index(facet), k, _leading_int(level), level


def cell_sort_key(cell):
    """Table order of data sets: raters per paper, papers, scale, quality."""
    return (level_key("raters", cell.raters_per_paper)[1], cell.papers, cell.max_score,
            level_key("quality", cell.quality)[1])


#: The files a report writes (``ratercal report RUN [--out DIR]``), per subfolder of DIR, as patterns of their
#: names: what a report may remove of its own when stale (:func:`.report._prune`) and what ``simulate --force``
#: removes of a replaced run's report (:func:`own_report_files`), leaving any file of the user's beside them.
#: (As narrow as the names written: two-digit table and figure numbers, the facet figures by name; a verifying
#: helper's table_notes.md, table2024_draft.csv, fig1_scan_of_paper.png and my_by_facet.png were pruned as stale.)
REPORT_FILES = {
    "tables": re.compile(r"(table\d\d_[a-z0-9_]+|rmsd_between_methods)\.(md|csv|tex)"),
    "comparison": re.compile(r"table\d\d_[a-z0-9_]+\.(md|csv|tex)"),
    "figures": re.compile(r"(fig\d\d_[A-Za-z0-9_]+|rmse_by_facet|maxdiff_by_facet|mds_methods|published_vs_regenerated)"
                          r"\.png"),
}


#: the mark of a report's folder (:mod:`ratercal_cli.report`: written first; a folder with files and no mark nor
#: report of ratercal's is not written into)
REPORT_MARK = ".ratercal-report"


def own_report_files(out) -> list:
    """The files of a report in ``out`` that the report writes: ``report.md``, its mark and, in its subfolders,
    the names of :data:`REPORT_FILES`."""
    out = Path(out)
    files = [out / name for name in ("report.md", REPORT_MARK) if (out / name).is_file()]
    for sub, pattern in REPORT_FILES.items():
        if (out / sub).is_dir():
            files += [p for p in (out / sub).iterdir() if p.is_file() and pattern.fullmatch(p.name)]
    return files
