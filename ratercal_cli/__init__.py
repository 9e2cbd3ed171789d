"""ratercal: rater calibration methods and the Denny (1990) simulation study.

The library a notebook uses (the command line calls the same functions)::

    import ratercal_cli as rc

    ratings = rc.read_ratings("examples/ratings.csv", scale="0-5", group_col="grade")
    rc.check(ratings).summary()                 # the text of `ratercal check`
    rc.adjust(ratings, "TLI,MN").paper_frame()  # a DataFrame, papers and raters in natural order
    rc.compare(ratings, "all", cut=3.25).to_frame()

Names are imported on first use (PEP 562), so ``import ratercal_cli`` and the command line stay
quick.
"""

def _version() -> str:
    """The version, written once: ``project.version`` in pyproject.toml, read from the installed
    package's metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ratercal")
    except PackageNotFoundError:   # the source tree without an install
        return "0+unknown"


#: public name -> the module that defines it
_EXPORTS = {
    "Ratings": "ratings",
    "Adjusted": "ratings",
    "read_ratings": "practice.ratings_file",
    "check": "practice.check",
    "CheckResults": "practice.check",
    "adjust": "practice.adjust",
    "AdjustResults": "practice.adjust",
    "compare": "practice.compare",
    "CompareResults": "practice.compare",
    "fit": "practice.fit",
    "read_anchors": "practice.anchors",
    "Anchors": "practice.anchors",
    "FitResults": "methods.results",
    "make_method": "methods",
    "method_codes": "methods",
    "RatercalError": "errors",
    "InputError": "errors",
    "MethodError": "errors",
    "ArgumentError": "errors",
    "NotFittedError": "errors",
}

#: public name -> a module exported whole (``rc.study.run(...)``)
_MODULES = {"study": "study"}   # run, Spec, StudyResults from montecarlo/study.py

__all__ = ["__version__", *_EXPORTS, *_MODULES]


def __getattr__(name):
    if name == "__version__":   # read on first use: importlib.metadata is 0.02 s of every command
        globals()[name] = value = _version()
        return value
    if name in _MODULES:
        import importlib

        module = importlib.import_module(f"{__name__}.{_MODULES[name]}")
        globals()[name] = module
        return module
    if name in _EXPORTS:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
