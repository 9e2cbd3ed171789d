"""Writers: a :class:`~ratercal_cli.report.tables.Table` as Markdown, CSV and LaTeX.

Printed values are rounded as the dissertation prints them (``Table.rounded``); the CSV keeps six
decimals of the unrounded value so that other programs can re-average them.  A comparison
prints each published value in place: a reproduced value as is, a differing one as
``**regenerated** (published)``.
"""

from __future__ import annotations

import numpy as np

from ..io import csv_text, write_text

_FACET_LABEL = {"raters": "NR={}", "papers": "NP={}", "scale": "NS={}", "quality": "{}"}
_QUALITY = {"normal": "Normal", "skew+": "Skew +", "skew-": "Skew -"}


def row_label(index_names, key, labels=None):
    """Display label of a row: a set by ``labels[code]`` (``0551`` -> ``2+551``); ``(raters, 2+)`` ->
    ``NR=2+``; ..."""
    parts = []
    for name, v in zip(index_names, key):
        if name == "set":
            parts.append((labels or {}).get(v, v))
        elif name == "type":
            parts.append(v.capitalize())
        elif name == "facet":
            continue
        elif name == "level":
            facet = key[list(index_names).index("facet")]
            if facet == "all":
                parts.append("ALL")
            elif facet == "quality":
                parts.append(_QUALITY.get(v, v))
            else:
                parts.append(_FACET_LABEL[facet].format(v))
        else:
            parts.append(str(v))
    return " ".join(parts)


def _fmt(v, decimals):
    return "" if not np.isfinite(v) else f"{v:.{decimals}f}"


def cells(table, comparison=None, bold=("**", "**")):
    """Row labels and printed cells; with a comparison, differences as ``bold(regen) (published)``."""
    d = table.decimals
    shown = table.rounded()
    labels, out = [], []
    for i, key in enumerate(table.index):
        labels.append(row_label(table.index_names, key, table.labels))
        row = []
        for j in range(len(table.columns)):
            s = _fmt(shown[i, j], d)
            if comparison is not None and comparison.present[i, j] and not comparison.reproduced[i, j]:
                pub = _fmt(comparison.published.values[i, j], d)
                s = f"{bold[0]}{s or '-'}{bold[1]} ({pub})"
            row.append(s)
        out.append(row)
    return labels, out


def _head(table):
    return "Data set" if table.index_names == ("set",) else ""


def markdown(table, comparison=None, heading="###"):
    labels, body = cells(table, comparison)
    lines = [f"{heading} {table.title}", ""]
    if comparison is not None:
        lines += [f"**{comparison.summary()}.** Each cell shows the regenerated value; where it differs "
                  "from the published one it is in bold with the published value in parentheses.", ""]
    lines.append("| " + " | ".join([_head(table), *table.columns]) + " |")
    lines.append("|" + "---|" + "---:|" * len(table.columns))
    for lab, row in zip(labels, body):
        lines.append("| " + " | ".join([lab, *row]) + " |")
    if table.note:
        lines += ["", table.note]
    return "\n".join(lines) + "\n"


def csv_table(table):
    """Full values (six decimals), one row per table row, index columns first."""
    rows = []
    for key, vals in zip(table.index, table.values):
        rows.append([*key, *(("" if not np.isfinite(v) else f"{v:.6f}") for v in vals)])
    return csv_text([*table.index_names, *table.columns], rows)


def csv_comparison(comparison):
    """Long format: index..., method, published, regenerated, regenerated_rounded, reproduced."""
    pub, reg = comparison.published, comparison.regenerated
    shown = reg.rounded()
    d = pub.decimals
    rows = []
    for i, key in enumerate(pub.index):
        for j, col in enumerate(pub.columns):
            if not comparison.present[i, j]:
                continue
            rows.append([*key, col, _fmt(pub.values[i, j], d), _fmt(reg.values[i, j], 6),
                         _fmt(shown[i, j], d), int(comparison.reproduced[i, j])])
    return csv_text([*pub.index_names, "method", "published", "regenerated", "regenerated_rounded",
                     "reproduced"], rows)


def _tex_escape(s):
    return s.replace("\\", r"\textbackslash{}").replace("&", r"\&").replace("%", r"\%").replace(
        "_", r"\_").replace("#", r"\#").replace("|", r"$|$")


def latex(table, comparison=None):
    """A booktabs ``table`` environment."""
    labels, body = cells(table, comparison, bold=(r"\textbf{", "}"))
    cols = "l" + "r" * len(table.columns)
    lines = [r"\begin{table}[htbp]", r"\centering", rf"\caption{{{_tex_escape(table.title)}}}",
             rf"\label{{tab:{table.name}}}", r"\small", rf"\begin{{tabular}}{{{cols}}}", r"\toprule",
             " & ".join([_head(table), *table.columns]) + r" \\", r"\midrule"]
    for lab, row in zip(labels, body):
        lines.append(" & ".join([_tex_escape(lab), *row]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if comparison is not None:
        lines.append(rf"\par\footnotesize {_tex_escape(comparison.summary())}; bold: regenerated value differing "
                     r"from the published one (in parentheses).")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_table(out_dir, table, comparison=None, stem=None):
    """Write ``<stem>.md``, ``.csv`` and ``.tex``; return the Markdown text."""
    stem = stem or table.name
    md = markdown(table, comparison)
    write_text(out_dir / f"{stem}.md", md)
    write_text(out_dir / f"{stem}.csv", csv_comparison(comparison) if comparison is not None else csv_table(table))
    write_text(out_dir / f"{stem}.tex", latex(table, comparison))
    return md
