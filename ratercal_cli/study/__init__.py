"""The study's file pipeline: the run folder (``run.py``), the make-like runner (``pipeline.py``) and
the stages mirroring the BASIC chain.

``rater`` (design) -> ``pargen`` (paper qualities) -> ``truegen`` (rater steps,
true scores) -> ``obsgen`` (observed ratings) -> ``equate`` (the methods) ->
``score`` (criteria).  Each stage module holds one stage class and its file reader;
``simulate.py`` runs the generation stages of every set, ``files.py`` reads and writes their CSVs.
"""

from .run import Run  # noqa: F401
