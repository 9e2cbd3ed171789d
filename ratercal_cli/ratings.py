"""The container every method and criterion accepts: one data set of ratings.

A rating is (paper, rater, score).  Papers and raters are held as dense integer
indices ``0..n_papers-1`` and ``0..n_raters-1``; the labels they came with are kept
in ``paper_ids`` and ``rater_ids`` so that outputs can name them again.  Raters are
in natural order (R1, R2, ..., R10: :func:`natural_key`), papers in the order first seen.

Scores are held as ``0..max_score``; ``scale_low`` is the bottom of the scale they were
given on (a file's ``1-6`` is held as ``0..5`` with ``scale_low=1``), which labelled
outputs add back.  A practitioner's file analysed by group (``--group-col grade``) is one
:class:`Ratings` with a ``group`` per rating; a paper belongs to one group (the same
paper label in two groups is two papers), :meth:`Ratings.by_group` gives each group's
ratings as a data set of its own, and every method applies to one group at a time.

Ratings are kept in the order they were written (for simulated data: the order of
the BASIC .OBS file, paper by paper); the faithful methods depend on nothing else.
In Denny's simulated sets rater index ``j`` is BASIC rater ``j + 1``, so the last
rater (index 8) is the one the BASIC pairwise programs use as reference.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .arguments import check_count
from .errors import ArgumentError, InputError, arg

_DIGITS = re.compile(r"(\d+)")


def natural_key(label):
    """Sort key of a label: numbers first, by value, then other labels in natural order (R1, R2,
    R10: runs of digits compare as numbers); ties ("1", "01", "1.0"; "R1", "R01") by the label
    itself, so the order never depends on the order of a file.  "nan" and "inf" sort as text."""
    label = str(label)
    try:
        value = float(label)
    except ValueError:
        value = math.nan
    if math.isfinite(value):
        return (0, value, label)
    parts = tuple((0, len(p.lstrip("0")), p.lstrip("0")) if k % 2 else (1, 0, _unaccented(p), p)
                  for k, p in enumerate(_DIGITS.split(label)))
    return (1, parts, label)


def _unaccented(text: str) -> str:
    """``text`` without its accents (``École`` -> ``Ecole``, ``Ōtaki`` -> ``Otaki``), case kept: text sorts by it
    first, so that accented names sit among their letters (the app listed Escuela, Zürich, École, Ōtaki)."""
    if text.isascii():
        return text
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def _whole_numbers(values, name) -> np.ndarray:
    """``values`` as a contiguous int64 array; a number that is not whole (a score of 2.5), nan or None is
    an :class:`ArgumentError` (a ``ValueError``, as the constructors' other refusals: ``from_frame``'s were
    ratercal's errors, ``from_labels``' plain ValueErrors) naming ``name`` (casting cut 2.5 to 2 without a word)."""
    a = np.asarray(values)
    if a.dtype.kind not in "iub":
        try:
            f = a.astype(np.float64)
        except (TypeError, ValueError):   # (the first value that is not a number, not the first value: '3' of [3, 'x'])
            at, bad = next(((k, v) for k, v in enumerate(a.ravel().tolist()) if not _is_number(v)), (0, a.ravel()[0]))
            raise ArgumentError(name, f"expected whole numbers, not {bad!r} (at {at})") from None
        bad = ~(np.isfinite(f) & (f == np.round(f)))
        if bad.any():
            raise ArgumentError(name, f"expected whole numbers, not {float(f[bad][0])!r} (at {int(np.flatnonzero(bad)[0])})")
    return np.ascontiguousarray(a, dtype=np.int64)


# -- the scale -----------------------------------------------------------------------
@dataclass(frozen=True)
class Scale:
    """The rating scale ``low..high`` (whole numbers)."""

    low: int
    high: int

    @property
    def max_score(self) -> int:
        """M of the methods: scores run ``0..M`` after subtracting ``low``."""
        return self.high - self.low

    def __str__(self):
        return f"{self.low}-{self.high}"


_SCALE_RE = re.compile(r"^\s*(-?\d+)\s*(?:-|\.\.|:|to)\s*(-?\d+)\s*$")


def by_paper(paper, *arrays):
    """``paper`` and ``arrays`` (one value a rating each) in paper order, each paper's ratings in the order
    they come (a stable sort), or as they are where they already come by paper (most files: no sort)."""
    if paper.size and not bool(np.all(paper[1:] >= paper[:-1])):
        order = np.argsort(paper, kind="stable")
        return (paper[order],) + tuple(a[order] for a in arrays)
    return (paper,) + tuple(arrays)


def _whole(x) -> bool:
    """``x`` is a whole number (an int, or a float such as 5.0; not a bool)."""
    try:
        return not isinstance(x, bool) and math.isfinite(float(x)) and float(x) == int(float(x))
    except (TypeError, ValueError):
        return False


def parse_scale(text) -> Scale:
    """``"0-5"``, ``"1..6"``, ``"0:5"``, ``"1 to 6"``, ``(0, 5)`` -> :class:`Scale`.  A single number is refused:
    ``6`` may mean 0-6 or 1-6, and read as 0-6 it let the truncated methods put a 1-6 file's papers
    below 1 (issue 28)."""
    if isinstance(text, Scale):
        return text
    if isinstance(text, (tuple, list)):   # (0, 5), as Ratings.from_frame documents it
        if len(text) != 2 or not all(_whole(x) for x in text):
            raise ArgumentError("scale", f"expected (LOW, HIGH), two whole numbers such as (0, 5), not {text!r}")
        low, high = int(text[0]), int(text[1])
        if high <= low:
            raise ArgumentError("scale", f"the top of the scale must exceed the bottom, not {text!r}")
        return checked_scale(Scale(low, high), text)
    s = str(text).strip()
    m = _SCALE_RE.match(s)
    if m:
        low, high = int(m.group(1)), int(m.group(2))
    elif re.fullmatch(r"\d+", s):
        raise ArgumentError("scale", f"a single number is ambiguous ({s!r}: 0-{s} or 1-{s}?): give LOW-HIGH, "
                            f"e.g. 1-{s}")
    else:
        raise ArgumentError("scale", f"expected LOW-HIGH such as 0-5, not {text!r}")
    if high <= low:
        raise ArgumentError("scale", f"the top of the scale must exceed the bottom, not {text!r}")
    return checked_scale(Scale(low, high), text)


#: The widest scale the methods handle: 0-100 (their arrays grow with the number of
#: score categories, e.g. the PCM's steps x steps pair counts).
MAX_SCALE_POINTS = 100


def checked_scale(scale: Scale, given=None) -> Scale:
    """``scale`` if it spans at most :data:`MAX_SCALE_POINTS` points, else InputError."""
    if scale.max_score > MAX_SCALE_POINTS:
        what = f"{given!r}" if given is not None else f"{scale} (from the scores found; give {arg('scale')})"
        raise ArgumentError("scale", f"scales of at most {MAX_SCALE_POINTS} points from bottom to top (such as "
                            f"0-{MAX_SCALE_POINTS}) are supported, not {what}")
    return scale



@dataclass(frozen=True)
class Ratings:
    """One data set: per-rating arrays of equal length plus the scale.

    Attributes
    ----------
    paper, rater : int arrays, dense indices of each rating's paper and rater.
    score : int array, the observed score, 0..max_score.
    max_score : int, M, the top of the scale (scores are 0..M).
    n_papers, n_raters : sizes; a rater may have no ratings (``n_raters`` is the
        design's number of raters, e.g. 9 in the simulation).
    paper_ids, rater_ids : labels of the indices (default: 1-based numbers).
    scale_low : int, the bottom of the scale the scores were given on (held as
        ``score - scale_low``).
    group : int array or None, each rating's group (an index into ``group_ids``);
        None: one group.
    group_ids : labels of the groups, in natural order; group_name : the grouping's
        name (a file's group column, e.g. ``"grade"``).
    facets : dict ``{name: (levels, labels)}``, further facets of each rating (a level index
        per rating and the levels' labels); empty: none.
    source : str or None, where the ratings came from (a file's name), for messages.
    notes : tuple of str, what reading them found worth saying (the CLI's warnings).
    first_readings : Ratings or None, with discrepancies resolved (``resolve_discrepancies``): the
        papers' first two readings (the third of a resolved paper left out, both first two kept), on
        which agreement is reported; a subset drops it.
    reading_order : int array or None, each rating's place in the order of reading (a file's
        ``order`` column, :attr:`.ratings_file.Columns.order`; sortable, ties in file order): which
        readings of a paper came first.  None: the ratings' order.

    Examples
    --------
    >>> r = Ratings.from_labels(["p1", "p1", "p2", "p2"], ["R2", "R10", "R10", "R1"], [3, 4, 2, 2], max_score=5)
    >>> r.rater_ids, r.n_papers, r.n_ratings
    (('R1', 'R2', 'R10'), 2, 4)
    """

    paper: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    max_score: int
    n_papers: int
    n_raters: int
    paper_ids: tuple = field(default=())
    rater_ids: tuple = field(default=())
    scale_low: int = 0
    group: np.ndarray | None = None
    group_ids: tuple = field(default=())
    group_name: str | None = None
    facets: dict = field(default_factory=dict, compare=False)
    source: str | None = field(default=None, compare=False)
    notes: tuple = field(default=(), compare=False)
    first_readings: object = field(default=None, compare=False, repr=False)
    reading_order: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        paper, rater, score = (_whole_numbers(getattr(self, name), name) for name in ("paper", "rater", "score"))
        if not (paper.shape == rater.shape == score.shape) or paper.ndim != 1:
            raise InputError("paper, rater and score must be 1-d arrays of equal length")
        # (each names the first rating at fault and its value: "score outside 0..5" left the user to search)
        for name, a, top, what in (("paper", paper, self.n_papers - 1, f"an index 0..n_papers - 1 = {self.n_papers - 1}"),
                                   ("rater", rater, self.n_raters - 1, f"an index 0..n_raters - 1 = {self.n_raters - 1}"),
                                   ("score", score, self.max_score, f"0..max_score = {self.max_score} (scores less the "
                                                                    f"scale's low end, {self.scale_low})")):
            bad = np.flatnonzero((a < 0) | (a > top)) if a.size and (a.min() < 0 or a.max() > top) else ()
            if len(bad):
                raise InputError(f"{name}[{int(bad[0])}] = {int(a[bad[0]])} is not {what}"
                                 f"{f' ({len(bad)} such ratings)' if len(bad) > 1 else ''}")
        object.__setattr__(self, "paper", paper)
        object.__setattr__(self, "rater", rater)
        object.__setattr__(self, "score", score)
        if not self.paper_ids:
            object.__setattr__(self, "paper_ids", tuple(range(1, self.n_papers + 1)))
        if not self.rater_ids:
            object.__setattr__(self, "rater_ids", tuple(range(1, self.n_raters + 1)))
        if self.group is not None:
            group = np.ascontiguousarray(self.group, dtype=np.int64)
            if group.shape != paper.shape or (group.size and (group.min() < 0 or group.max() >= len(self.group_ids))):
                raise ValueError("group must give each rating an index into group_ids")
            object.__setattr__(self, "group", group)
        if self.reading_order is not None:
            order = np.ascontiguousarray(self.reading_order, dtype=np.int64)
            if order.shape != paper.shape:
                raise ValueError("reading_order must give each rating its place")
            object.__setattr__(self, "reading_order", order)

    # -- construction -------------------------------------------------------------
    @classmethod
    def from_labels(cls, papers, raters, scores, max_score, rater_ids=None):
        """Build from label sequences; papers keep first-seen order, raters sort in natural
        order (:func:`natural_key`: R1, R2, ..., R10).

        ``rater_ids`` fixes the rater set and order (e.g. ``range(1, 10)`` for the
        nine simulated raters, some of whom may have rated nothing).
        """
        papers = list(papers)
        raters = list(raters)
        paper_ids = tuple(dict.fromkeys(papers))
        if rater_ids is None:
            rater_ids = tuple(sorted(set(raters), key=natural_key))
        rater_ids = tuple(rater_ids)
        pidx = {p: i for i, p in enumerate(paper_ids)}
        ridx = {r: i for i, r in enumerate(rater_ids)}
        unknown = next((r for r in raters if r not in ridx), None)
        if unknown is not None:
            raise ArgumentError("rater_ids", f"rater {unknown!r} rated but is not among rater_ids "
                                             f"({', '.join(map(str, rater_ids))})")
        return cls(
            paper=np.array([pidx[p] for p in papers], dtype=np.int64),
            rater=np.array([ridx[r] for r in raters], dtype=np.int64),
            score=_whole_numbers(scores, "scores"),
            max_score=check_count(max_score, "max_score", 1),   # (2.5 was taken as 2)
            n_papers=len(paper_ids),
            n_raters=len(rater_ids),
            paper_ids=paper_ids,
            rater_ids=rater_ids,
        )

    @classmethod
    def from_frame(cls, df, paper_col="paper", rater_col="rater", score_col="score", scale=None, group_col=None,
                   facet_cols=(), **old) -> "Ratings":
        """Ratings from a pandas DataFrame with one rating per row.

        Parameters
        ----------
        df : pandas.DataFrame
        paper_col, rater_col, score_col : str
            The columns naming the paper and the rater and holding the score (whole numbers;
            a missing score, NaN, None or pandas' NA, leaves the row out); the names :func:`read_ratings` uses.
        scale : str or (int, int), optional
            ``"0-5"`` or ``(0, 5)``; default 0 (or the lowest score, if below) to the highest.
        group_col : str, optional
            A column (e.g. ``"grade"``) whose groups are analysed separately (groups in natural
            order; a paper label in two groups is two papers).
        facet_cols : sequence of str
            Further facets of each rating (e.g. ``["task"]``): kept per rating in ``facets``,
            levels in natural order.
        **old
            ``paper=``, ``rater=``, ``score=``, ``group=``, ``facets=``: the former names of the
            column arguments (a DeprecationWarning).

        Returns
        -------
        Ratings
            Papers in the order first seen, raters in natural order (R1, R2, ..., R10).  A
            duplicate paper-rater pair within a group, a blank label or a score off the scale
            raises :class:`~ratercal_cli.errors.InputError` naming the row and column; rows without a
            score, and the papers left with none, are counted in ``notes`` and issued as
            :class:`UserWarning` (as :func:`read_ratings` does).

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"paper": ["a", "a", "b", "b"], "rater": ["R10", "R2", "R2", "R10"],
        ...                    "score": [3, 4, 2, 2]})
        >>> r = Ratings.from_frame(df, scale="0-5")
        >>> r.rater_ids, r.paper_ids
        (('R2', 'R10'), ('a', 'b'))
        """
        if old:
            import warnings

            renamed = {"paper": "paper_col", "rater": "rater_col", "score": "score_col", "group": "group_col",
                       "facets": "facet_cols"}
            bad = [k for k in old if k not in renamed]
            if bad:
                raise TypeError(f"from_frame() got an unexpected keyword argument {bad[0]!r}")
            warnings.warn(f"Ratings.from_frame({', '.join(f'{k}=' for k in old)}) is now "
                          f"{', '.join(f'{renamed[k]}=' for k in old)}, as in read_ratings", DeprecationWarning,
                          stacklevel=2)
            got = {renamed[k]: v for k, v in old.items()}
            paper_col, rater_col = got.get("paper_col", paper_col), got.get("rater_col", rater_col)
            score_col, group_col = got.get("score_col", score_col), got.get("group_col", group_col)
            facet_cols = got.get("facet_cols", facet_cols)
        out = _from_frame(cls, df, paper_col, rater_col, score_col, scale, group_col, tuple(facet_cols or ()))
        import warnings

        for note in out.notes:   # (rows without a score: as read_ratings issues what it found)
            warnings.warn(note, UserWarning, stacklevel=2)
        return out

    def __repr__(self) -> str:
        """One line: the sizes, the scale, the groups and facets and where they came from (the dataclass's
        own printed every array: 13 KB at 788 ratings)."""
        parts = [f"{self.n_ratings} ratings", f"{self.n_papers} papers", f"{self.n_raters} raters",
                 f"scale {self.scale_low}-{self.scale_low + self.max_score}"]
        if self.group is not None:
            parts.append(f"{len(self.group_ids)} groups ({self.group_name or 'group'})")
        if self.facets:
            parts.append("facets " + ", ".join(self.facets))
        if self.source:
            parts.append(f"from {self.source}")
        return f"<Ratings: {'; '.join(parts)}>"

    # -- views --------------------------------------------------------------------
    @property
    def n_ratings(self) -> int:
        return int(self.score.size)

    def ratings_per_paper(self) -> np.ndarray:
        return np.bincount(self.paper, minlength=self.n_papers)

    def ratings_per_rater(self) -> np.ndarray:
        return np.bincount(self.rater, minlength=self.n_raters)

    def paper_mean(self, values=None) -> np.ndarray:
        """Mean per paper of ``values`` (default: the raw scores), float64."""
        v = self.score if values is None else values
        sums = np.bincount(self.paper, weights=np.asarray(v, dtype=np.float64), minlength=self.n_papers)
        return sums / np.maximum(self.ratings_per_paper(), 1)

    def facet_levels(self):
        """The facets' levels as the rater models take them: None without facets, a level per rating
        for one, (n, F) for several (in ``facets``' order)."""
        if not self.facets:
            return None
        levels = [v for v, _ in self.facets.values()]
        return levels[0] if len(levels) == 1 else np.column_stack(levels)

    def facet_cells(self):
        """``(cell, labels)``: each rating's combination of facet levels (0..C-1, a *cell*: criterion
        "org", or criterion "org" x task 2) and each cell's labels (a tuple of level labels, one per
        facet in ``facets``' order); without facets one cell, ``()``."""
        names = list(self.facets)
        if not names:
            return np.zeros(self.n_ratings, dtype=np.int64), [()]
        # each combination as one number (mixed radix: their order is the rows' lexicographic one),
        # counted by bincount: np.unique(axis=0) sorted the rows, 0.8 s a call at 1M ratings
        sizes = [max(len(self.facets[f][1]), 1) for f in names]
        key = np.zeros(self.n_ratings, dtype=np.int64)
        for f, size in zip(names, sizes):
            key = key * size + np.asarray(self.facets[f][0], dtype=np.int64)
        if math.prod(sizes) <= 1 << 24:
            present = np.flatnonzero(np.bincount(key, minlength=math.prod(sizes)))
            at = np.zeros(math.prod(sizes), dtype=np.int64)
            at[present] = np.arange(present.size)
            cell = at[key]
        else:
            present, cell = np.unique(key, return_inverse=True)
        combos = np.stack(np.unravel_index(present, sizes), axis=1)
        labels = [tuple(self.facets[f][1][k] for f, k in zip(names, row)) for row in combos.tolist()]
        return cell.ravel(), labels

    def max_raters_per_paper(self) -> int:
        counts = self.ratings_per_paper()
        return int(counts.max()) if counts.size else 0

    def subset(self, mask) -> "Ratings":
        """The ratings where ``mask`` is true, with the same papers and raters."""
        mask = np.asarray(mask, dtype=bool)
        return replace(self, paper=self.paper[mask], rater=self.rater[mask], score=self.score[mask],
                       group=None if self.group is None else self.group[mask],
                       facets={k: (v[mask], labels) for k, (v, labels) in self.facets.items()},
                       first_readings=None,
                       reading_order=None if self.reading_order is None else self.reading_order[mask])

    # -- groups -------------------------------------------------------------------
    @classmethod
    def from_groups(cls, parts, group_name=None, **meta) -> "Ratings":
        """One :class:`Ratings` of several groups' (``parts``: ``[(label, Ratings)]``, in order, on
        one scale), each part's papers and ratings in its order, raters the union in natural
        order; :meth:`by_group` gives the parts back.  ``meta``: further fields (``scale_low``,
        ``source``, ``notes``).  One part labelled None: that part itself, with ``meta``."""
        parts = list(parts)
        if len(parts) == 1 and parts[0][0] is None:
            return replace(parts[0][1], **meta)
        first = parts[0][1]
        facets = {}
        for f in first.facets:   # each facet's levels: the union over the parts, in natural order
            labels = tuple(sorted({v for _, p in parts for v in p.facets[f][1]}, key=natural_key))
            code = {v: k for k, v in enumerate(labels)}
            facets[f] = (np.concatenate([np.array([code[v] for v in p.facets[f][1]], dtype=np.int64)[p.facets[f][0]]
                                         for _, p in parts]), labels)
        rater_ids = tuple(sorted({r for _, p in parts for r in p.rater_ids}, key=natural_key))
        ridx = {r: j for j, r in enumerate(rater_ids)}
        offsets = np.cumsum([0] + [p.n_papers for _, p in parts])
        meta.setdefault("scale_low", parts[0][1].scale_low)
        if "first_readings" not in meta and any(p.first_readings is not None for _, p in parts):
            meta["first_readings"] = cls.from_groups([(name, p if p.first_readings is None else p.first_readings)
                                                      for name, p in parts], group_name, scale_low=meta["scale_low"])
        if "reading_order" not in meta and all(p.reading_order is not None for _, p in parts):
            meta["reading_order"] = np.concatenate([p.reading_order for _, p in parts])
        return cls(paper=np.concatenate([p.paper + o for (_, p), o in zip(parts, offsets)]),
                   rater=np.concatenate([np.array([ridx[r] for r in p.rater_ids], dtype=np.int64)[p.rater]
                                         for _, p in parts]),
                   score=np.concatenate([p.score for _, p in parts]), max_score=first.max_score,
                   n_papers=int(offsets[-1]), n_raters=len(rater_ids),
                   paper_ids=tuple(x for _, p in parts for x in p.paper_ids), rater_ids=rater_ids,
                   group_name=group_name, group=np.repeat(np.arange(len(parts)), [p.n_ratings for _, p in parts]),
                   group_ids=tuple(name for name, _ in parts), facets=facets, **meta)

    def by_group(self) -> list:
        """``[(group label, Ratings)]``: each group's ratings as a data set of its own (its papers in
        this one's order, the raters who rated in it in natural order); without groups
        ``[(None, self)]``."""
        if self.group is None:
            return [(None, self)]
        out = []
        first: Any = self.first_readings
        firsts = dict(first.by_group()) if first is not None else {}
        for g, name in enumerate(self.group_ids):
            mask = self.group == g
            papers, paper = np.unique(self.paper[mask], return_inverse=True)
            raters, rater = np.unique(self.rater[mask], return_inverse=True)
            out.append((name, Ratings(paper=paper, rater=rater, score=self.score[mask], max_score=self.max_score,
                                      n_papers=papers.size, n_raters=raters.size,
                                      paper_ids=tuple(self.paper_ids[k] for k in papers),
                                      rater_ids=tuple(self.rater_ids[k] for k in raters),
                                      scale_low=self.scale_low, source=self.source,
                                      facets={k: (v[mask], labels) for k, (v, labels) in self.facets.items()},
                                      first_readings=firsts.get(name),
                                      reading_order=None if self.reading_order is None
                                      else self.reading_order[mask])))
        return out

    def group_tag(self, name) -> str:
        """How messages name a group: ``grade=5`` (empty without groups)."""
        return "" if name is None else f"{self.group_name}={name}"


@dataclass(frozen=True)
class Adjusted:
    """What a method's ``transform`` returns, on the methods' scores 0..M (the file's scale less its lowest
    score: add ``ratings.scale_low`` for the file's own, as :func:`ratercal_cli.adjust`'s frames and files do).

    Attributes
    ----------
    rating : float array
        One adjusted score per rating (same order as the input).
    paper : float array
        One adjusted score per paper (usually the mean of its adjusted ratings; the PCM gives the mean
        expected score over all raters).

    Examples
    --------
    >>> r = Ratings.from_labels(["p1", "p1", "p2", "p2"], ["A", "B", "B", "A"], [3, 4, 2, 2], max_score=5)
    >>> from ratercal_cli import make_method
    >>> make_method("MN").fit_transform(r).paper.round(2).tolist()
    [3.5, 2.0]
    """

    rating: np.ndarray
    paper: np.ndarray


# -- from a DataFrame ------------------------------------------------------------------
def _missing(v) -> bool:
    """A DataFrame cell that holds no value: None, NaN, or pandas' NA and NaT (a nullable ``Int64`` or
    ``string`` column's missing cell is ``pd.NA``, which is neither None nor a float)."""
    if v is None:
        return True
    if isinstance(v, (str, int)):   # (the cells of most columns, from .tolist(): no call into pandas a cell)
        return False
    if isinstance(v, float):
        return v != v
    import pandas as pd

    try:
        return bool(pd.isna(v)) is True and np.ndim(v) == 0
    except (TypeError, ValueError):   # an array-like cell: a value, not a missing one
        return False


def _row(df, k: int) -> str:
    """The name of the DataFrame's ``k``-th row in a message: its index label, or where the index repeats
    (frames concatenated) its position too ("row 0 ... (first at row 0)" named two rows alike)."""
    label = df.index[k]
    return f"row {label}" if df.index.is_unique else f"row {k} by position (index {label})"


def _frame_column(df, name, what):
    if name not in df.columns:
        argument = {"paper": "paper_col", "rater": "rater_col", "score": "score_col", "group": "group_col"}
        raise ArgumentError(argument.get(what, "facet_cols"),
                            f"no column {name!r} (columns: {', '.join(map(str, df.columns))})")
    return df[name]


def _frame_scores(df, column, scale):
    """Each row's score as a whole number or None (missing); the scale (given or from the scores)."""
    values = _frame_column(df, column, "score").tolist()
    scores = []
    for k, v in enumerate(values):
        if _missing(v):
            scores.append(None)
            continue
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise InputError(f"{_row(df, k)}: {v!r} is not a number", field=column) from None
        if not math.isfinite(x) or x != int(x):
            raise InputError(f"{_row(df, k)}: {v!r} is not a whole number", field=column)
        scores.append(int(x))
    present = [s for s in scores if s is not None]
    if not present:
        raise InputError("no usable score", field=column)
    if scale is None:
        low = min(0, min(present))
        scale = checked_scale(Scale(low, max(max(present), low + 1)))
    else:
        scale = parse_scale(scale)
        for k, s in enumerate(scores):
            if s is not None and not scale.low <= s <= scale.high:
                raise InputError(f"{_row(df, k)}: {s} is outside the scale {scale}", field=column)
    return scores, scale


def _frame_labels(df, column, what):
    """The column's labels; a whole float (a column of ids that pandas read as floats: 7.0) as the int it
    is, so that paper 7 is labelled ``7``, as a file and an int column label it, not ``7.0``."""
    values = _frame_column(df, column, what).tolist()
    for k, v in enumerate(values):
        if _missing(v) or str(v).strip() == "":
            raise InputError(f"{_row(df, k)}: blank", field=column)
    values = [int(v) if isinstance(v, float) and v.is_integer() else v for v in values]
    if any(isinstance(v, str) for v in values) and not all(isinstance(v, str) for v in values):
        # numbers beside text (pandas' read_excel of a column of number and text cells): every label as the
        # text a file would hold, so that rater 4 and "4" are one rater, as the command line reads them
        values = [v if isinstance(v, str) else str(v) for v in values]
    return values


def _from_frame(cls, df, paper, rater, score, scale, group, facets):
    scores, scale = _frame_scores(df, score, scale)
    papers, raters = _frame_labels(df, paper, "paper"), _frame_labels(df, rater, "rater")
    groups = _frame_labels(df, group, "group") if group is not None else [None] * len(papers)
    levels = {f: _frame_labels(df, f, f) for f in facets}
    codes = {f: {v: k for k, v in enumerate(sorted(set(vals), key=natural_key))} for f, vals in levels.items()}
    rows = {}
    for k, g in enumerate(groups):
        key = (g, papers[k], raters[k]) + tuple(levels[f][k] for f in facets)
        if key in rows:
            raise InputError(f"{_row(df, k)}: duplicate rating of paper {papers[k]} by rater {raters[k]}"
                             f"{'' if g is None else f' ({group} {g})'} (first at {_row(df, rows[key])})", field=rater)
        rows[key] = k
    parts = []
    for name in sorted(dict.fromkeys(groups), key=natural_key):
        at = [k for k, g in enumerate(groups) if g == name and scores[k] is not None]
        if not at:
            continue
        part = cls.from_labels([papers[k] for k in at], [raters[k] for k in at], [scores[k] - scale.low for k in at],
                               scale.max_score)
        facet_of = {f: (np.array([codes[f][levels[f][k]] for k in at], dtype=np.int64), tuple(codes[f]))
                    for f in facets}
        parts.append((name, replace(part, scale_low=scale.low, facets=facet_of)))
    out = cls.from_groups(parts, group)
    notes = _missing_notes(df, scores, papers, groups, group)
    return replace(out, notes=tuple(out.notes) + notes) if notes else out


#: the reading keywords a DataFrame takes (:meth:`Ratings.from_frame`'s); the others describe a file
FRAME_ARGS = ("scale", "paper_col", "rater_col", "score_col", "group_col", "facet_cols")


def is_frame(data) -> bool:
    """Whether ``data`` is a pandas DataFrame (asked without importing pandas)."""
    return type(data).__name__ == "DataFrame" and hasattr(data, "columns")


def frame_ratings(df, **read) -> Ratings:
    """:meth:`Ratings.from_frame` of ``df`` with the reading keywords ``read`` (those of ``read_ratings``), a
    keyword that describes a file (``sep=``, ``leave_out=``, ...) an ArgumentError naming it: what ``check``,
    ``adjust``, ``compare``, ``read_ratings`` and the estimators do with a DataFrame."""
    other = [k for k in read if k not in FRAME_ARGS]
    if other:
        raise ArgumentError(other[0], "applies to a ratings file, not to a DataFrame")
    return Ratings.from_frame(df, **read)


def _missing_notes(df, scores, papers, groups, group) -> tuple:
    """What the rows without a score left out, as :func:`read_ratings` says it: how many ratings, and the
    papers (in their groups) with no usable rating, which get no adjusted score."""
    missing = [k for k, s in enumerate(scores) if s is None]
    if not missing:
        return ()
    scored = {(groups[k], papers[k]) for k, s in enumerate(scores) if s is not None}
    lost = list(dict.fromkeys((groups[k], papers[k]) for k in missing if (groups[k], papers[k]) not in scored))
    notes = [f"{_row(df, missing[0])}: {len(missing)} rating(s) with no score left out"]
    if lost:
        g, p = lost[0]
        notes.append(f"{_row(df, next(k for k in missing if (groups[k], papers[k]) == lost[0]))}: {len(lost)} "
                     f"paper(s) with no usable rating (e.g. paper {p}{'' if g is None else f', {group} {g}'}) "
                     "get no adjusted score")
    return tuple(notes)
