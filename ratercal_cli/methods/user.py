"""A method of the user's own, named ``module:Class`` in a config's ``methods`` (issue 23).

Any class with the estimator interface runs in ``ratercal montecarlo`` (serial, ``--jobs``, Dask)
beside the built-in methods::

    class MyMethod:
        needs_multiple_raters = False        # optional: True to skip one-rater data sets
        def fit(self, ratings):              # a ratercal_cli.ratings.Ratings
            ...
            return self
        def transform(self, ratings):        # per-rating and per-paper adjusted scores:
            return Adjusted(rating=..., paper=...)   # or any object with .rating and .paper,
                                                     # or a (rating, paper) pair

The class is made with no arguments.  ``module`` is imported by name, with the config's own
folder first on the module search path (so ``examples/user_method.yaml`` finds
``examples/user_method.py``); a Dask worker needs the module importable where it runs.
:class:`UserMethod` adapts the class to :class:`~.base.RaterAdjuster`: whatever the user's code
raises while fitting or transforming becomes a :class:`~ratercal_cli.errors.MethodError` naming
the exception, so the study records the failure with its reason and goes on, and scores of the
wrong shape or not finite where the ratings are are refused the same way.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import sys
import warnings
from dataclasses import replace

import numpy as np

from ..errors import MethodError
from ..ratings import Adjusted, Ratings
from .base import RaterAdjuster

SEP = ":"


def is_user_method(code) -> bool:
    """A user method's name is ``module:Class``; the built-in codes have no colon."""
    return SEP in str(code)


def add_paths(paths) -> None:
    """Put ``paths`` (a config's folder) first on ``sys.path`` where they are not there already."""
    for p in reversed(tuple(paths)):
        if p not in sys.path:
            sys.path.insert(0, p)


def load_class(spec: str):
    """The class named by ``module:Class``; ``ImportError``/``AttributeError``/``TypeError`` with a
    message saying what is missing."""
    module, _, name = str(spec).partition(SEP)
    if not module or not name:
        raise ImportError(f"{spec!r}: a method of your own is named module:Class")
    try:
        mod = importlib.import_module(module)
    except SystemExit as exc:   # sys.exit() on import would end ratercal with that status, silently
        raise ImportError(f"module {module!r} called sys.exit({exc.code!r}) on import") from None
    cls = mod
    for part in name.split("."):
        cls = getattr(cls, part, None)
        if cls is None:
            raise AttributeError(f"module {module!r} has no {name!r}")
    if not inspect.isclass(cls) or not callable(getattr(cls, "fit", None)) or not callable(getattr(cls, "transform",
                                                                                                     None)):
        raise TypeError(f"{spec}: expected a class with fit(ratings) and transform(ratings)")
    return cls


def source_digest(spec: str) -> str:
    """Hash of the source file of a user method's module: a resumed Monte Carlo run refuses to mix
    chunks made by two versions of it."""
    cls = load_class(spec)
    try:
        path = inspect.getsourcefile(sys.modules[cls.__module__])
        data = open(path, "rb").read() if path else b""
    except (TypeError, OSError):
        data = b""
    return hashlib.sha256(data).hexdigest()[:16]


#: How far beyond the scale (in multiples of its width) a score may lie: further is not a score
#: (``1e300`` squared overflows the criteria to ``inf``).
SCORE_BOUND = 1e6


def read_only(ratings: Ratings) -> Ratings:
    """``ratings`` with read-only copies of its arrays (paper, rater, score, group, facet levels, the reading
    order, and its first readings' alike): a user method that writes into ``ratings.score`` (an in-place "cap
    at 3") gets an error instead of changing the data every later method is given.  Each is a copy held in
    an immutable ``bytes``, so that ``setflags(write=True)`` is refused too: a read-only *view* of the
    shared array let a method turn the flag back on and zero every later method's scores (a study's
    TLI RMSE 1.07 -> 2.60, nothing recorded), and the caller's own."""

    def frozen(a):
        if a is None:
            return None
        a = np.asarray(a)
        return np.frombuffer(np.ascontiguousarray(a).tobytes(), dtype=a.dtype).reshape(a.shape)

    facets = {name: (frozen(levels), labels) for name, (levels, labels) in ratings.facets.items()}
    first = ratings.first_readings
    return replace(ratings, paper=frozen(ratings.paper), rater=frozen(ratings.rater), score=frozen(ratings.score),
                   group=frozen(ratings.group), facets=facets, reading_order=frozen(ratings.reading_order),
                   first_readings=read_only(first) if isinstance(first, Ratings) else first)


#: ``module:Class`` -> seconds its fit (and its transform) may take (a config's ``timeout``).
TIMEOUTS: dict = {}


def set_timeouts(timeouts) -> None:
    """Bound the user's methods named in ``timeouts`` (``{module:Class: seconds}``) in this process."""
    TIMEOUTS.update(timeouts)


class _TimedOut(Exception):
    pass


@contextlib.contextmanager
def _deadline(spec: str):
    """The block bounded to ``TIMEOUTS[spec]`` seconds by SIGALRM (a method that sleeps hung the
    study for good); only in a process's main thread (local and ``--jobs`` runs: a Dask worker's
    tasks run in threads, where no timer can interrupt them)."""
    import signal
    import threading

    seconds = TIMEOUTS.get(spec)
    if not seconds or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise _TimedOut()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _TimedOut:
        raise MethodError(f"{spec}: took longer than its timeout of {seconds:g} s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _users_code(spec: str):
    """Run the user's code: numpy's floating-point warnings stay inside (its results are checked
    instead, :func:`_coerce`); ``sys.exit()`` and any exception become a :class:`MethodError`
    naming ``spec``, which the study records as the method's failure."""
    try:
        with _deadline(spec), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            yield
    except MethodError:
        raise
    except SystemExit as exc:   # would end ratercal with the user's status and no word
        raise MethodError(f"{spec}: called sys.exit({exc.code!r})") from None
    except Exception as exc:   # the user's code: any failure is recorded, not fatal
        raise MethodError(f"{spec}: {type(exc).__name__}: {exc}") from exc


def _coerce(out, ratings: Ratings, spec: str) -> Adjusted:
    if isinstance(out, tuple) and len(out) == 2:
        rating, paper = out
    elif isinstance(out, dict):
        rating, paper = out.get("rating"), out.get("paper")
    else:
        rating, paper = getattr(out, "rating", None), getattr(out, "paper", None)
    try:
        rating = np.asarray(rating, dtype=np.float64)
        paper = np.asarray(paper, dtype=np.float64)
    except (TypeError, ValueError):
        raise MethodError(f"{spec}: transform must give per-rating and per-paper scores (.rating, .paper)") from None
    if rating.shape != (ratings.n_ratings,) or paper.shape != (ratings.n_papers,):
        raise MethodError(f"{spec}: transform gave {rating.size} rating and {paper.size} paper scores for "
                          f"{ratings.n_ratings} ratings and {ratings.n_papers} papers")
    scored = ratings.ratings_per_paper() > 0
    if not np.isfinite(paper[scored]).all():
        raise MethodError(f"{spec}: {int((~np.isfinite(paper[scored])).sum())} paper score(s) not finite")
    if not np.isfinite(rating).all():
        raise MethodError(f"{spec}: {int((~np.isfinite(rating)).sum())} rating score(s) not finite")
    width = max(ratings.max_score, 1)
    off = (np.abs(paper[scored] - ratings.max_score / 2) > SCORE_BOUND * width).sum() \
        + (np.abs(rating - ratings.max_score / 2) > SCORE_BOUND * width).sum()
    if off:
        raise MethodError(f"{spec}: {int(off)} score(s) more than {SCORE_BOUND:g} times the scale's width "
                          f"(0-{ratings.max_score}) away from it: not scores")
    return Adjusted(rating=rating, paper=paper)


class UserMethod(RaterAdjuster):
    """The adapter of a user's ``module:Class`` (module docstring)."""

    def __init__(self, spec: str = ""):
        self.spec = spec

    @property
    def code(self):
        return self.spec

    @property
    def needs_multiple_raters(self):
        return bool(getattr(load_class(self.spec), "needs_multiple_raters", False))

    def _fit(self, ratings: Ratings, **fit_params) -> None:
        with _users_code(self.spec):
            est = load_class(self.spec)()
            est.fit(read_only(ratings), **fit_params)
        self.estimator_ = est

    def _transform(self, ratings: Ratings, training: bool, **params) -> Adjusted:
        with _users_code(self.spec):
            out = self.estimator_.transform(read_only(ratings), **params)
        return _coerce(out, ratings, self.spec)


class ClassMethod(UserMethod):
    """:class:`UserMethod` of a class given as an object (``rc.study.Spec(methods=[MyMethod])``), not
    named ``module:Class``: the same interface, read-only data and failures recorded."""

    def __init__(self, cls=None):
        self.cls = cls
        self.spec = getattr(cls, "__qualname__", str(cls))

    @property
    def needs_multiple_raters(self):
        return bool(getattr(self.cls, "needs_multiple_raters", False))

    def _fit(self, ratings: Ratings, **fit_params) -> None:
        with _users_code(self.spec):
            est = self.cls()
            est.fit(read_only(ratings), **fit_params)
        self.estimator_ = est


class InstanceMethod(UserMethod):
    """:class:`UserMethod` of an estimator given as an instance (``rc.study.Spec(methods=[MyMethod(k=3)])``):
    each data set fits a fresh copy of it (as scikit-learn's ``clone``), on read-only data, its failures
    recorded, as :class:`ClassMethod` does for a class (an instance's error ended the whole study, and one
    that wrote into ``ratings.score`` changed the data of every method after it)."""

    def __init__(self, instance=None):
        self.instance = instance
        self.spec = type(instance).__qualname__

    @property
    def needs_multiple_raters(self):
        return bool(getattr(self.instance, "needs_multiple_raters", False))

    def _fit(self, ratings: Ratings, **fit_params) -> None:
        import copy

        with _users_code(self.spec):
            est = copy.deepcopy(self.instance)
            est.fit(read_only(ratings), **fit_params)
        self.estimator_ = est
