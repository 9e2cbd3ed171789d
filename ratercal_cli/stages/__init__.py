"""The pipeline's stages, mirroring the BASIC chain.

``rater`` (design) -> ``pargen`` (paper qualities) -> ``truegen`` (rater steps,
true scores) -> ``obsgen`` (observed ratings) -> ``equate`` (the methods) ->
``score`` (criteria).  Each module holds one stage class and its file reader.
"""

from . import obsgen  # noqa: F401  (defines the generation stages, pargen's chain names obsgen)
from .run import Run  # noqa: F401
