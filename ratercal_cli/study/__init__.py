"""The study's file pipeline: the run folder (``run.py``), the make-like runner (``pipeline.py``) and
the stages mirroring the BASIC chain.

``rater`` (design) -> ``pargen`` (paper qualities) -> ``truegen`` (rater steps,
true scores) -> ``obsgen`` (observed ratings) -> ``equate`` (the methods) ->
``score`` (criteria).  Each stage module holds one stage class and its file reader;
``simulate.py`` runs the generation stages of every set, ``files.py`` reads and writes their CSVs.

As ``rc.study`` it is also the study from Python: :func:`run`, :class:`Spec` and :class:`StudyResults`
(:mod:`ratercal_cli.montecarlo.study`, SimDesign's generate / analyse / summarise), imported on first use.
"""

from .run import Run  # noqa: F401

#: rc.study's names from Python (:mod:`ratercal_cli.montecarlo.study`)
_FROM_PYTHON = ("Spec", "StudyResults", "CRITERIA")


def run(config_or_spec, replications=None, jobs=1, scheduler=None, out=None, quiet=True):
    """``rc.study.run``: :func:`ratercal_cli.montecarlo.study.run` (this name shadows the submodule
    ``run.py`` as an attribute of the package; ``from .run import ...`` still imports the module).

    Parameters
    ----------
    config_or_spec, replications, jobs, scheduler, out, quiet
        As :func:`ratercal_cli.montecarlo.study.run`.

    Returns
    -------
    StudyResults

    Examples
    --------
    >>> rc.study.run("configs/corrected.yaml", replications=10, out="runs/c").summary   # doctest: +SKIP
    """
    from ..montecarlo import study

    return study.run(config_or_spec, replications=replications, jobs=jobs, scheduler=scheduler, out=out,
                     quiet=quiet)


def __getattr__(name):
    if name in _FROM_PYTHON:
        from ..montecarlo import study

        return getattr(study, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    """The names from Python with the package's own (tab completion in a notebook found ``run`` and ``Run``
    alone: ``Spec`` and ``StudyResults`` come on first use)."""
    return sorted(set(globals()) | set(_FROM_PYTHON))
