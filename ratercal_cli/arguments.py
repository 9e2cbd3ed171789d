"""Checks of the library's common arguments: each returns the value (as the type wanted) or raises an
:class:`~ratercal_cli.errors.ArgumentError` naming the argument, so ``check(alpha=5)`` is an error
that says ``alpha``, not a silent nonsense or a raw ``int()`` traceback."""

from __future__ import annotations

from .errors import ArgumentError

__all__ = ["check_alpha", "check_choice", "check_count", "check_positive"]


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


def check_positive(value, argument: str) -> float:
    """``value`` as a finite number above 0 (a standard deviation), else an error naming ``argument``."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = float("nan")
    if isinstance(value, bool) or not (x > 0 and x != float("inf")):
        raise ArgumentError(argument, f"expected a number above 0 (e.g. 1.0), not {value!r}")
    return x
