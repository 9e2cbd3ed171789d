"""The dissertation's published tables, in the report's layout, read from ``ratercal_cli/data/denny1990/``.

Tables 7, 12 and 14 were typed from the dissertation's tables.  Tables 8, 9, 10, 11 and 13 were
typed from the OCR of Chapter 4 (pp. 77-88).  Table 8's OCR is scrambled column by column; it
was reassembled and checked against the text ("EQP ... lowest overall average RMSE (.82)", "PCM
.90 on 100-paper sets and .84 on 500-paper sets", "EQP 1.04, TLI 1.12, NO 1.28 on 0-9 scales",
...) and against the facet means of the published Table 7 (the tests check every value to within
0.011).  Table 11's OCR is too garbled to recover by facet: only its ALL row is kept, the
correlations as the text (p. 86) quotes them and the z values that survive legibly.

Every table is a list of rows ``(index..., method values...)``; ``None`` (an empty CSV field)
marks "not published".
"""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from importlib import resources

from ..vocabulary import STUDY_METHODS

#: report table name -> (data file, index columns)
FILES = {
    "table07_rmse": ("table7_rmse.csv", ("code",)),
    "table12_maxdiff": ("table12_maxdiff.csv", ("code",)),
    "table14_one_rater_rmse": ("table14_one_rater_rmse.csv", ("facet", "level")),
    "table08_rmse_by_facet": ("table8_rmse_by_facet.csv", ("facet", "level")),
    "table13_maxdiff_by_facet": ("table13_maxdiff_by_facet.csv", ("facet", "level")),
    "table09_rater_level": ("table9_rater_level.csv", ("type", "facet", "level")),
    "table10_rater_spread": ("table10_rater_spread.csv", ("type", "facet", "level")),
    "table11_correlation": ("table11_correlation.csv", ("facet", "level")),
    "table11_fisher_z": ("table11_fisher_z.csv", ("facet", "level")),
}


def _data_csv(name):
    text = resources.files("ratercal_cli").joinpath("data", "denny1990", name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _num(v):
    v = (v or "").strip()
    return float(v) if v else None


@lru_cache(maxsize=None)
def published_tables():
    """``{name: (index_names, columns, rows)}`` for every published table the report compares.

    Names match the regenerated tables of :mod:`ratercal_cli.report.tables`; a table's columns
    are the study's methods it has, in the tables' order; the set tables are indexed by the
    programs' code (``0551``).
    """
    out = {}
    for name, (fname, index) in FILES.items():
        records = _data_csv(fname)
        columns = tuple(m for m in STUDY_METHODS if m in records[0])
        rows = [(*(r[k] for k in index), *(_num(r.get(m)) for m in columns)) for r in records]
        out[name] = (("set",) if index == ("code",) else index, columns, rows)
    return out
