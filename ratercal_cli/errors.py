"""Errors a user can cause: plain Python exceptions, one line each, saying where and what.

The library knows nothing of the command line.  An error names the library's own words: the
file and line, the column or config key (``field``), or the *argument* of the function called
(:class:`ArgumentError`, ``scale``, ``paper_col``).  The command line (:mod:`ratercal_cli.commands`)
prints the same message with each argument shown as its flag (``scale`` -> ``--scale``) as
``error: MESSAGE`` with exit status 2.

Raising one::

    raise InputError("not a number", path, line, field="score")      # file:line: score: not a number
    raise ArgumentError("scale", f"expected LOW-HIGH such as 0-5, not {text!r}")   # scale: expected ...
    raise ArgumentError("sheet", f"no sheet {sheet!r}", path)                      # file: sheet: no sheet ...
    raise ArgumentError("anchors", f"applies to the many-facet model: give {arg('method', 'MFRM')}")

:func:`arg` names *another* argument inside a message: the library shows ``method='MFRM'``, the
command line ``--method MFRM``.  ``str(error)`` is the library's text; :meth:`RatercalError.render`
takes a function from argument name to flag and gives the command line's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar

__all__ = ["RatercalError", "InputError", "ArgumentError", "MethodError", "NotFittedError", "arg", "mention",
           "naming_flags"]

_OPEN, _EQ, _CLI, _CLOSE = "\ue000", "\ue001", "\ue003", "\ue002"   # private use: never in a user's text
_REF = re.compile(f"{_OPEN}([^{_EQ}{_CLI}{_CLOSE}]*)(?:{_EQ}([^{_CLI}{_CLOSE}]*))?(?:{_CLI}([^{_CLOSE}]*))?{_CLOSE}")


def arg(name: str, value: object = None, cli: str | None = None) -> str:
    """A mention of the argument ``name`` (with ``value``) inside an error message.

    Parameters
    ----------
    name : str
        The library's argument name, e.g. ``"sep"``.
    value : object, optional
        The value to suggest, e.g. ``"semicolon"``.
    cli : str, optional
        What the command line shows instead of ``--flag value`` (e.g. ``"-m MFRM"``).

    Returns
    -------
    str
        A marker that :meth:`RatercalError.render` turns into ``sep='semicolon'`` (the library) or
        ``--sep semicolon`` (the command line).

    Examples
    --------
    >>> str(ArgumentError("decimal", f"a decimal comma needs {arg('sep', 'semicolon')}"))
    "decimal: a decimal comma needs sep='semicolon'"
    """
    return (f"{_OPEN}{name}{'' if value is None else _EQ + str(value)}{'' if cli is None else _CLI + cli}"
            f"{_CLOSE}")


#: how the interface in use names an argument (the command line's ``flag``); None: the library's names
_NAMING: ContextVar[Callable[[str], str] | None] = ContextVar("ratercal_naming", default=None)


def mention(name: str, value: object = None) -> str:
    """The argument ``name`` (set to ``value``; ``True`` for a switch) in a warning's text, as the
    interface in use names it: ``--fold-labels`` or ``--total mean`` on the command line (inside
    :func:`naming_flags`), ``fold_labels=True`` or ``total='mean'`` from the library.  A warning is
    text kept in results and reports, so it is written once, in the caller's words; an error is
    rendered where it is shown (:func:`arg`)."""
    flag = _NAMING.get()
    if flag is not None:
        return flag(name) + ("" if value is None or value is True else f" {value}")
    return name if value is None else f"{name}={value!r}"


class naming_flags:   # noqa: N801 - used as a context manager, named for what it does
    """``with naming_flags(flag):`` the warnings made inside name arguments by ``flag(name)``."""

    def __init__(self, flag: Callable[[str], str]):
        self.flag = flag

    def __enter__(self):
        self.token = _NAMING.set(self.flag)
        return self

    def __exit__(self, *exc) -> None:
        _NAMING.reset(self.token)


def _library_name(name: str, value: str | None) -> str:
    return name if value is None else f"{name}={value!r}"


def _KEEP(name: str) -> str:   # render(_KEEP): the marks kept, for a message wrapped in another
    raise AssertionError("never called")


def _render(text: str, flag: Callable[[str], str] | None) -> str:
    if flag is _KEEP:
        return text
    if flag is None:
        return _REF.sub(lambda m: _library_name(m.group(1), m.group(2)), text)
    return _REF.sub(lambda m: m.group(3) if m.group(3) is not None else
                    flag(m.group(1)) + ("" if m.group(2) is None else f" {m.group(2)}"), text)


class RatercalError(Exception):
    """A user-facing error: bad input, an impossible design, a refused method.

    Parameters
    ----------
    message : str
        One line; it names the file, line and field (or argument) where it can, and may mention
        arguments with :func:`arg`.

    Attributes
    ----------
    message : str
        The message as given (arguments still marked).
    exit_code : int
        The command line's exit status for it (2).

    Examples
    --------
    >>> str(RatercalError(f"grade=5: {arg('cut')} is off the scale"))
    'grade=5: cut is off the scale'
    """

    exit_code = 2

    def __init__(self, message: object = ""):
        self.message = str(message)
        super().__init__(_render(self.message, None))

    def _text(self, flag: Callable[[str], str] | None) -> str:
        return _render(self.message, flag)

    def render(self, flag: Callable[[str], str] | None = None) -> str:
        """The message, each argument named by ``flag(name)`` (the command line's flags) or, without
        ``flag``, by its name in the library."""
        return self._text(flag)

    def __str__(self) -> str:
        return self.render()

    def marked(self) -> str:
        """The message with its arguments still marked (as :func:`arg` makes them): for a new error
        that wraps this one's text, e.g. ``RatercalError(f"{prefix}{exc.marked()}")``."""
        return self._text(_KEEP)

    def __reduce__(self):   # keep path/line/field across processes (parallel runs pickle errors)
        return (_rebuild, (type(self), self.__dict__))


def _rebuild(cls, state):
    err = cls.__new__(cls)
    Exception.__init__(err, state.get("message", ""))
    err.__dict__.update(state)
    return err


class InputError(RatercalError, ValueError):
    """Bad data or config (a ``ValueError``): names where.

    Parameters
    ----------
    message : str
    path : str or Path, optional
        The file.
    line : int, optional
        Its line (1-based).
    field : str, optional
        The column or config key (starting with ``-``: a command-line flag, raised by
        :mod:`ratercal_cli.commands`).

    Examples
    --------
    >>> str(InputError("not a number", "f.csv", 3, "score"))
    'f.csv:3: score: not a number'
    """

    def __init__(self, message: object, path: object = None, line: int | None = None,
                 field: str | None = None):
        super().__init__(message)
        self.path, self.line, self.field = path, line, field
        self.args = (self.render(),)

    def _where(self) -> str:
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "

    def _field(self, flag: Callable[[str], str] | None) -> str:
        return self.field or ""

    def _text(self, flag: Callable[[str], str] | None) -> str:
        field = self._field(flag)
        return self._where() + (f"{field}: " if field else "") + _render(self.message, flag)


class ArgumentError(InputError):
    """A bad argument of a library function (an :class:`InputError`, so a ``ValueError``).

    Parameters
    ----------
    field : str
        The argument's name in the library (``"scale"``); the command line shows its flag (``--scale``).
    message : str
    path, line : optional
        As :class:`InputError`.

    Examples
    --------
    >>> str(ArgumentError("scale", "expected LOW-HIGH such as 0-5, not 'abc'"))
    "scale: expected LOW-HIGH such as 0-5, not 'abc'"
    """

    def __init__(self, field: str, message: object, path: object = None, line: int | None = None):
        super().__init__(message, path, line, field)

    @property
    def argument(self) -> str:
        """The argument at fault (the same as ``field``)."""
        return self.field or ""

    def _field(self, flag: Callable[[str], str] | None) -> str:
        if flag is _KEEP and self.field:
            return arg(self.field)
        if flag is None or not self.field:
            return self.field or ""
        return flag(self.field)


class MethodError(RatercalError):
    """A method cannot be applied to these ratings (e.g. it needs two raters per paper).

    Parameters
    ----------
    message : str

    Examples
    --------
    >>> isinstance(MethodError("TLI needs papers scored by at least two raters"), RatercalError)
    True
    """


class NotFittedError(RatercalError, AttributeError):
    """``transform`` (or a fitted attribute or frame) asked of an estimator before ``fit`` (an
    ``AttributeError``, as scikit-learn's).

    Parameters
    ----------
    message : str

    Examples
    --------
    >>> issubclass(NotFittedError, AttributeError)
    True
    """
