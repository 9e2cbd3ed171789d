"""What the library's functions take as ratings, and the checks of their common arguments.

Wherever a function takes :class:`~ratercal_cli.ratings.Ratings` (``check``, ``adjust``, ``compare``,
``fit``) it also takes a path (read by :func:`.ratings_file.read_ratings`) or a pandas DataFrame (by
:meth:`Ratings.from_frame`), with the same column arguments (``paper_col``, ``rater_col``,
``score_col``, ``group_col``, ``facet_cols``, ``scale``).  A bad argument is an
:class:`~ratercal_cli.errors.ArgumentError` naming it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..arguments import check_alpha, check_choice, check_count
from ..errors import ArgumentError
from ..ratings import Ratings, frame_ratings, is_frame

__all__ = ["as_ratings", "with_cluster", "with_discrepancy", "split_read", "READ_ARGS", "check_alpha", "check_choice", "check_count", "results_repr", "results_html"]


def as_ratings(data, argument: str = "ratings", **read) -> Ratings:
    """``data`` as :class:`Ratings`: itself, a file read by :func:`read_ratings` or a DataFrame read by
    :meth:`Ratings.from_frame` (``read``: their keyword arguments, e.g. ``scale="0-5"``).

    Parameters
    ----------
    data : Ratings, str, os.PathLike or pandas.DataFrame
        The ratings, a ratings file, or a DataFrame with one rating per row.
    argument : str
        The caller's name for ``data`` (for the error).
    **read
        ``scale``, ``paper_col``, ``rater_col``, ``score_col``, ``group_col``, ``facet_cols`` (and, for a
        file, the other arguments of :func:`read_ratings`).

    Returns
    -------
    Ratings

    Examples
    --------
    >>> as_ratings("examples/ratings.csv", scale="0-5", group_col="grade").n_raters   # doctest: +SKIP
    11
    """
    unknown = [k for k in read if k not in READ_ARGS]
    if unknown:
        raise ArgumentError(unknown[0], f"is not an argument of this function nor of read_ratings "
                                        f"({', '.join(READ_ARGS)})")
    if isinstance(data, Ratings):
        if read:
            raise ArgumentError(next(iter(read)), "applies to a file or a DataFrame; these are Ratings already")
        return data
    if isinstance(data, (str, os.PathLike)):
        from .ratings_file import read_ratings

        return read_ratings(Path(data), **read)
    if is_frame(data):
        return frame_ratings(data, **read)
    raise ArgumentError(argument, f"expected Ratings, a path to a ratings file or a pandas DataFrame, not "
                                  f"{type(data).__name__}")


def with_cluster(data, cluster, read: dict) -> dict:
    """``read`` with the column ``cluster`` among its ``facet_cols`` where ``data`` is a file or a
    DataFrame (``check(path, cluster="school")`` refused a file with a column ``school``: "not a
    facet of the ratings"), as the command line reads ``--cluster-col``."""
    if cluster is None or isinstance(data, Ratings):
        return read
    facets = tuple(read.get("facet_cols") or ())
    return read if cluster in facets else {**read, "facet_cols": facets + (cluster,)}


def with_discrepancy(data, discrepancy, read: dict) -> dict:
    """``read`` with ``discrepancy`` where ``data`` is a file: ``check`` and ``adjust`` take the file's
    third-reading threshold as an argument of their own (the simulation draws it), which kept it from
    :func:`read_ratings`, so ``check(path, resolve_discrepancies=True, discrepancy=2)`` resolved the file at
    the default 1 (dropping readings the rule keeps).  It is one threshold: the reader gets it too."""
    if discrepancy is None or not isinstance(data, (str, os.PathLike)):
        return read
    return {**read, "discrepancy": discrepancy}


#: the keywords of :func:`.ratings_file.read_ratings` (``check(path, scale="0-5", ...)`` passes them on)
READ_ARGS = ("scale", "paper_col", "rater_col", "score_col", "group_col", "sep", "encoding", "order_col",
             "resolve_discrepancies", "discrepancy", "decimal", "sheet", "fold_labels", "facet_cols", "leave_out",
             "score_cols", "rater_cols")


def split_read(kwargs: dict) -> tuple[dict, dict]:
    """``(read, rest)``: the keywords of ``kwargs`` that :func:`read_ratings` takes, and the others."""
    return ({k: v for k, v in kwargs.items() if k in READ_ARGS},
            {k: v for k, v in kwargs.items() if k not in READ_ARGS})


def _sizes(ratings) -> str:
    src = f"{ratings.source}: " if getattr(ratings, "source", None) else ""
    return f"{src}{ratings.n_ratings} ratings, {ratings.n_papers} papers, {ratings.n_raters} raters"


def results_repr(res, what: str, more: str) -> str:
    """A results object's short repr: what it is, its size and how to see more (never its arrays)."""
    text = f"<{type(res).__name__}: {_sizes(res.ratings)}; {what}; see {more}>"
    return text if len(text) <= 1000 else text[:996] + "...>"


def results_html(res, what: str, frame, rows: int = 10) -> str:
    """A results object in a notebook: its short description and the first ``rows`` of its main table."""
    import html

    head = f"<p><b>{type(res).__name__}</b>: {html.escape(_sizes(res.ratings))}; {html.escape(what)}</p>"
    more = f"<p>first {rows} of {len(frame)} rows</p>" if len(frame) > rows else ""
    return f"<div>{head}{frame.head(rows).to_html(index=False)}{more}</div>"
