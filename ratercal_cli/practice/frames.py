"""Labelled tables of the practitioners' results: pandas DataFrames whose rater, paper and group
labels sort in natural order (R1, R2, ..., R10; :func:`ratercal_cli.ratings.natural_key`).

pandas is imported here, on first use, and nowhere on the command line's path: ``ratercal check``
never pays for its import.
"""

from __future__ import annotations

from ..ratings import natural_key


def pandas():
    """The pandas module (imported on first use)."""
    import pandas as pd

    return pd


def frame(rows, columns=None, index=None, order=()):
    """A DataFrame of ``rows`` (dicts); ``order``: columns whose labels are sorted naturally, in
    turn (e.g. ``("group", "rater")``), the sort stable; ``index``: column(s) made the index."""
    pd = pandas()
    rows = list(rows)
    if order:
        rows.sort(key=lambda r: tuple(natural_key(r[c]) for c in order))
    df = pd.DataFrame(rows, columns=columns)
    if index is not None:
        df = df.set_index(index)
    return df


def labelled(values, labels, name):
    """A Series of ``values`` indexed by ``labels`` (index named ``name``), sorted naturally."""
    pd = pandas()
    s = pd.Series(list(values), index=pd.Index(list(labels), name=name))
    return s.iloc[sorted(range(len(s)), key=lambda k: natural_key(s.index[k]))]


def columns_frame(cols, order=()):
    """A DataFrame of ``cols`` (``{name: values}``, equal lengths), rows sorted naturally by the
    columns ``order`` in turn (stable)."""
    pd = pandas()
    df = pd.DataFrame({k: list(v) if not hasattr(v, "dtype") else v for k, v in cols.items()})
    if order and len(df):
        keys = [df[c].tolist() for c in order]
        perm = sorted(range(len(df)), key=lambda i: tuple(natural_key(k[i]) for k in keys))
        df = df.iloc[perm].reset_index(drop=True)
    return df
