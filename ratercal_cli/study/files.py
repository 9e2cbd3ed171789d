"""Readers and writers of the stage files (CSV that people, pandas and R read)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..io import atomic_write, read_csv
from ..ratings import Ratings
from ..vocabulary import adjusted_columns


def fmt(x) -> str:
    """A float as the shortest text that reads back to the same double."""
    return repr(float(x))


def _distinct_text(values, bits, text) -> list:
    """``text`` of each of ``values``, each distinct value formatted once (a set's paper
    numbers, raters and adjusted scores repeat); ``bits``, ``values`` viewed as int64,
    is what is compared, so -0.0 and 0.0 stay apart."""
    if values.size == 0:
        return []
    distinct, back = np.unique(bits, return_inverse=True)
    table = np.array(list(map(text, distinct.view(values.dtype).tolist())), dtype=object)
    return table[back.ravel()].tolist()


class Repeated(NamedTuple):
    """A column ``values[index]`` (a paper's score on each of its ratings): each of ``values``
    is formatted once and the text repeated."""

    values: np.ndarray
    index: np.ndarray


def joined_rows(columns, formats) -> list:
    """Each row of equal-length ``columns`` as CSV text without its newline; ``formats`` one
    callable per column, None for int, :func:`fmt` for float; a column may be
    :class:`Repeated`."""
    cols = []
    for col, f in zip(columns, formats):
        if isinstance(col, Repeated):
            values = np.asarray(col.values, dtype=np.int64 if f is None else np.float64)
            text = list(map(str if f is None else repr if f is fmt else f, values.tolist()))
            cols.append(np.array(text, dtype=object)[np.asarray(col.index)].tolist() if text else [])
        elif f is None:
            ints = np.asarray(col, dtype=np.int64)
            cols.append(_distinct_text(ints, ints, str))
        elif f is fmt:
            floats = np.asarray(col, dtype=np.float64)
            cols.append(_distinct_text(floats, floats.view(np.int64), repr))
        else:
            cols.append(list(map(f, np.asarray(col).tolist())))
    return list(map(",".join, zip(*cols)))


def write_columns(path, header, columns, formats) -> Path:
    """Write equal-length columns under ``header``; ``formats`` as :func:`joined_rows`."""
    rows = joined_rows(columns, formats)
    with atomic_write(path) as fh:
        fh.write(",".join(header) + "\n")
        if rows:
            fh.write("\n".join(rows) + "\n")
    return Path(path)


def read_columns(path, names, types):
    """Read the named columns of a stage CSV as numpy arrays (errors name file:line).

    Stage files are read with numpy's C parser; only when that fails is the file
    read again row by row to name the bad line and field.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            header = fh.readline().strip().split(",")
            if all(n in header for n in names):
                data = np.loadtxt(fh, delimiter=",", usecols=[header.index(n) for n in names],
                                  dtype=np.float64, ndmin=2)
                return [data[:, i].astype(np.int64) if t is int else data[:, i] for i, t in enumerate(types)]
    except FileNotFoundError:
        raise InputError("no such file (run the stage before it)", path) from None
    except ValueError:
        pass
    _, rows = read_csv(path, required=names)
    out = []
    for name, t in zip(names, types):
        vals = []
        for line, row in rows:
            try:
                vals.append(t(row[name]))
            except ValueError:
                raise InputError(f"not a number: {row[name]!r}", path, line, name) from None
        out.append(np.array(vals, dtype=np.float64 if t is float else np.int64))
    return out


def design_params(config, effects=True) -> dict:
    """What a stage's outputs depend on beyond the steps: the rater effects and assignment
    (``effects``) and the rubric's criteria, each only when the config has them (a stage of a
    config without them keeps the parameters it had)."""
    out = {}
    if effects and config.effects is not None and not config.effects.neutral:
        out["effects"] = config.effects.to_dict()
    if config.rubric is not None:
        out["criteria"] = config.rubric.to_dict()
    return out


def header_of(path) -> list:
    """The column names of a stage CSV."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline().strip().split(",")
    except FileNotFoundError:
        raise InputError("no such file (run the stage before it)", path) from None


def read_papers(path):
    (quality,) = read_columns(path, ["quality"], [float])
    return quality


def read_criterion_columns(path, prefix, labels):
    """``(papers, C)``: the columns ``<prefix>_<criterion>`` of pargen's or truegen's file."""
    return np.column_stack(read_columns(path, [f"{prefix}_{c}" for c in labels], [float] * len(labels)))


def read_true_scores(path):
    (true,) = read_columns(path, ["true_score"], [float])
    return true


def _criterion_facet(criterion) -> dict:
    """The facet ``criterion`` of ratings whose criteria are numbered 1, 2, ... in a stage file."""
    from ..rater_effects import criterion_labels

    return {"criterion": (criterion - 1, criterion_labels(criterion.max() if criterion.size else 0))}


def read_stage_ratings(path, max_score, n_papers, n_raters, kept_only=True) -> Ratings:
    """obsgen's ratings.csv -> Ratings (1-based paper and rater numbers in the file; with a
    rubric's ``criterion`` column, each rating's criterion as the facet ``criterion``)."""
    names = ["paper", "rater", "score", "kept"] + (["criterion"] if "criterion" in header_of(path) else [])
    paper, rater, score, kept, *crit = read_columns(path, names, [int] * len(names))
    sel = kept.astype(bool) if kept_only else np.ones(len(score), bool)
    facets = _criterion_facet(crit[0][sel]) if crit else {}
    return Ratings(paper[sel] - 1, rater[sel] - 1, score[sel], max_score, n_papers, n_raters, facets=facets)


#: The adjusted scores of a set, one row per kept rating: what ``equate`` writes for a variant.
ADJUSTED = "adjusted.csv"


def write_adjusted(path, ratings: Ratings, adjusted: dict, paper_of_rating=None) -> Path:
    """``adjusted``'s scores (method code -> :class:`~ratercal_cli.ratings.Adjusted`) as one
    file, a row per rating of ``ratings``: ``paper,rater,score`` (1-based), then per method
    ``X`` (the rating's adjusted score) and ``X_paper`` (its paper's; the PCM's is not the mean
    of its ratings), the columns of ``ratercal adjust FILE``'s output.  With a rubric's criteria
    (the facet ``criterion``) a ``criterion`` column (1, 2, ...) follows ``rater``, and ``X_paper``
    is the paper's score on the rating's criterion (``paper_of_rating``: code -> per rating)."""
    crit = "criterion" in ratings.facets
    columns = [ratings.paper + 1, ratings.rater + 1] + ([ratings.facets["criterion"][0] + 1] if crit else [])
    columns.append(ratings.score)
    for code, adj in adjusted.items():
        columns += [adj.rating, paper_of_rating[code] if crit else Repeated(adj.paper, ratings.paper)]
    head = ["paper", "rater"] + (["criterion"] if crit else []) + ["score"]
    return write_columns(path, [*head, *adjusted_columns(adjusted)], columns,
                         [None] * len(head) + [fmt] * (2 * len(adjusted)))


def read_adjusted(path, methods, max_score, n_papers, n_raters):
    """:func:`write_adjusted`'s file -> ``(ratings, {code: (rating scores, paper scores)})``;
    a paper's score is nan for a paper without ratings.  With criteria the paper scores are
    ``(papers, criteria)`` and the ratings carry the facet ``criterion``."""
    head = ["paper", "rater"] + (["criterion"] if "criterion" in header_of(path) else []) + ["score"]
    cols = read_columns(path, [*head, *adjusted_columns(methods)], [int] * len(head) + [float] * (2 * len(methods)))
    paper, rater, keys, score, values = cols[0], cols[1], cols[2:len(head) - 1], cols[len(head) - 1], cols[len(head):]
    facets = _criterion_facet(keys[0]) if keys else {}
    ratings = Ratings(paper - 1, rater - 1, score, max_score, n_papers, n_raters, facets=facets)
    out = {}
    for code, rating, paper_score in zip(methods, values[0::2], values[1::2]):
        if keys:
            papers = np.full((n_papers, len(facets["criterion"][1])), np.nan)
            papers[paper - 1, keys[0] - 1] = paper_score
        else:
            papers = np.full(n_papers, np.nan)
            papers[paper - 1] = paper_score
        out[code] = (rating, papers)
    return ratings, out
