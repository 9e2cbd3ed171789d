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

from ..errors import ArgumentError
from ..ratings import Ratings

__all__ = ["as_ratings", "check_alpha", "check_choice", "check_count"]


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
    if isinstance(data, Ratings):
        if read:
            raise ArgumentError(next(iter(read)), "applies to a file or a DataFrame; these are Ratings already")
        return data
    if isinstance(data, (str, os.PathLike)):
        from .ratings_file import read_ratings

        return read_ratings(Path(data), **read)
    if type(data).__name__ == "DataFrame" and hasattr(data, "columns"):
        frame_args = {k: v for k, v in read.items() if k in _FRAME_ARGS}
        other = [k for k in read if k not in _FRAME_ARGS]
        if other:
            raise ArgumentError(other[0], "applies to a ratings file, not to a DataFrame")
        return Ratings.from_frame(data, **frame_args)
    raise ArgumentError(argument, f"expected Ratings, a path to a ratings file or a pandas DataFrame, not "
                                  f"{type(data).__name__}")


_FRAME_ARGS = ("scale", "paper_col", "rater_col", "score_col", "group_col", "facet_cols")


def check_alpha(alpha, argument: str = "alpha") -> float:
    """``alpha`` as a float strictly between 0 and 1, else an error naming ``argument``."""
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ArgumentError(argument, f"expected a number between 0 and 1 (e.g. 0.05), not {alpha!r}") from None
    if isinstance(alpha, bool) or not 0 < a < 1:
        raise ArgumentError(argument, f"expected a number between 0 and 1 (e.g. 0.05), not {alpha!r}")
    return a


def check_choice(value, choices, argument: str):
    """``value`` if it is one of ``choices``, else an error naming ``argument`` and the choices."""
    if value not in choices:
        raise ArgumentError(argument, f"expected one of {', '.join(map(str, choices))}, not {value!r}")
    return value


def check_count(value, argument: str, minimum: int = 0, optional: bool = False):
    """``value`` as a whole number of at least ``minimum`` (None allowed with ``optional``), else an error
    naming ``argument``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not (isinstance(value, int) or (hasattr(value, "__index__"))):
        if not (isinstance(value, float) and value.is_integer()):
            raise ArgumentError(argument, f"expected a whole number of at least {minimum}, not {value!r}")
    n = int(value)
    if n < minimum:
        raise ArgumentError(argument, f"expected a whole number of at least {minimum}, not {value!r}")
    return n
