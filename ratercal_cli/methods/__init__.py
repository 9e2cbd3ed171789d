"""The adjustment methods, by their 1990 codes.

=====  ===========================================  ==========================
code   method                                       class
=====  ===========================================  ==========================
NO     no equating (mean of raw scores)             none.NoEquating
MN     mean equating                                mean.MeanEquating
TMN    truncated mean equating                      mean.MeanEquating(truncate=True)
LI     linear equating                              linear.LinearEquating
TLI    truncated linear equating                    linear.LinearEquating(truncate=True)
EQP    equipercentile equating                      equipercentile.EquipercentileEquating
OLS    ordinary least squares (de Gruijter 1984)    pairwise.PairwiseLeastSquares
TLS    truncated least squares                      pairwise.PairwiseLeastSquares(truncate=True)
RAS    Rasch extension (de Gruijter 1984)           pairwise.RaschExtension
PCM    partial credit model (PAIR, Wright-Masters)  pcm.PartialCreditModel
CML    PCM by conditional ML, Warm qualities, fair   cml.ConditionalPCM
RSM    rating scale model by conditional ML          cml.ConditionalPCM(model="rsm")
WLS    weighted least squares (Wilson 1988)          wls.WeightedLeastSquares
PWEQP  EQP averaged with rater precision weights     wls.PrecisionWeightedMean(base="EQP")
SEQP   EQP after log-linear presmoothing (degree 3)  equipercentile.EquipercentileEquating(presmoothing=3)
MML    PCM by marginal ML (EAP quality, fair score)  mml.MarginalRaterModel
MFRM   many-facet rating scale model by marginal ML  mml.MarginalRaterModel(model="rsm")
=====  ===========================================  ==========================
"""

from __future__ import annotations

import importlib

from ..vocabulary import DEFAULT_VARIANT, STUDY_METHODS

# code -> (module, class, fixed keyword arguments)
_REGISTRY = {
    "NO": ("none", "NoEquating", {}),
    "MN": ("mean", "MeanEquating", {"truncate": False}),
    "TMN": ("mean", "MeanEquating", {"truncate": True}),
    "LI": ("linear", "LinearEquating", {"truncate": False}),
    "TLI": ("linear", "LinearEquating", {"truncate": True}),
    "EQP": ("equipercentile", "EquipercentileEquating", {}),
    "OLS": ("pairwise", "PairwiseLeastSquares", {"truncate": False}),
    "TLS": ("pairwise", "PairwiseLeastSquares", {"truncate": True}),
    "RAS": ("pairwise", "RaschExtension", {}),
    "PCM": ("pcm", "PartialCreditModel", {}),
}


def register(code, module, cls, **fixed):
    """Add a method: ``make_method(code)`` builds ``methods.<module>.<cls>(**fixed)``."""
    _REGISTRY[code] = (module, cls, fixed)


# Beyond 1990 (issue 7): CML partial credit and rating scale models with fair scores,
# weighted least squares for the additive model, precision-weighted and presmoothed EQP.
register("CML", "cml", "ConditionalPCM", model="pcm")
register("RSM", "cml", "ConditionalPCM", model="rsm")
register("WLS", "wls", "WeightedLeastSquares")
register("PWEQP", "wls", "PrecisionWeightedMean", base="EQP")
register("SEQP", "equipercentile", "EquipercentileEquating", presmoothing=3)
# Issue 12: the PCM (rater-specific thresholds) and the many-facet rating scale model (shared
# thresholds + rater severity) by marginal ML, which fit every connected design.
register("MML", "mml", "MarginalRaterModel", model="pcm")
register("MFRM", "mml", "MarginalRaterModel", model="rsm")


def is_user_method(code) -> bool:
    """A method of the user's own is named ``module:Class`` (:mod:`.user`)."""
    from .user import is_user_method as check

    return check(code)


def load_class(spec):
    """The class of a method of the user's own (:func:`.user.load_class`)."""
    from .user import load_class as load

    return load(spec)


def add_paths(paths) -> None:
    """Where the user's own methods are imported from first (:func:`.user.add_paths`)."""
    from .user import add_paths as add

    add(paths)


def set_user_timeouts(timeouts) -> None:
    """Bound the user's own methods' fit and transform (:func:`.user.set_timeouts`)."""
    from .user import set_timeouts

    set_timeouts(timeouts)


def method_codes():
    """Every registered method code, the study's ten first.

    Parameters
    ----------
    None

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> method_codes()[:4]
    ('NO', 'MN', 'TMN', 'LI')
    """
    return tuple(STUDY_METHODS) + tuple(c for c in _REGISTRY if c not in STUDY_METHODS)


def make_method(code: str, variant: str = DEFAULT_VARIANT, **params):
    """A fresh estimator for ``code`` (case-insensitive), in the scikit-learn manner.

    Parameters
    ----------
    code : str
        A method code of :func:`method_codes` (``"TLI"``, ``"MFRM"``) or ``"module:Class"``, a method of
        the user's own (:mod:`.user`).
    variant : {"corrected", "faithful"}
        Reaches the methods that have one (the 1990 methods); the others have one version.
    **params
        The estimator's parameters (e.g. ``quality="wle"``).

    Returns
    -------
    RaterAdjuster
        Unfitted: ``fit(ratings)`` learns attributes ending in ``_``, ``transform`` adjusts.

    Raises
    ------
    ArgumentError
        For an unknown code (it names the argument ``code``).

    Examples
    --------
    >>> est = make_method("TLI")
    >>> type(est).__name__, est.truncate, est.variant
    ('LinearEquating', True, 'corrected')
    """
    from .user import is_user_method

    if is_user_method(code):   # a method of the user's own, module:Class (methods/user.py)
        from .user import UserMethod

        return UserMethod(spec=str(code), **params)
    key = str(code).upper()
    if key not in _REGISTRY:
        from ..errors import ArgumentError

        raise ArgumentError("code", f"unknown method {code!r} (known: {', '.join(method_codes())})")
    module, cls, fixed = _REGISTRY[key]
    klass = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
    names = klass._param_names()
    unknown = [p for p in params if p not in names or p in fixed]
    if unknown:   # (it was the constructor's bare TypeError: "__init__() got an unexpected keyword argument")
        from ..errors import ArgumentError

        raise ArgumentError(unknown[0], f"is not a parameter of {key} (its parameters: "
                            f"{', '.join(n for n in names if n not in fixed) or 'none'})")
    if "variant" in names:
        from ..vocabulary import VARIANTS

        if params.get("variant", variant) not in VARIANTS:   # (else only fit said so, as a bare ValueError)
            from ..errors import ArgumentError

            raise ArgumentError("variant", f"must be one of {', '.join(VARIANTS)}, not {params.get('variant', variant)!r}")
        params = {"variant": variant, **params}
    return klass(**fixed, **params)
