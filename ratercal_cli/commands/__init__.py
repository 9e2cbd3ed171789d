"""Click commands, one module per subcommand (added to the group in ``cli.py``).

The library raises plain exceptions (:mod:`ratercal_cli.errors`) that name its own arguments; here a
:class:`~ratercal_cli.errors.RatercalError` becomes ``error: MESSAGE`` on stderr with exit status 2,
each argument shown as its flag (:func:`flag`: ``paper_col`` -> ``--paper-col``, with the exceptions in
:data:`FLAGS`).  Every command is made with :func:`command` (or sits under the ``ratercal`` group,
which does the same), so none needs a handler of its own.
"""

from __future__ import annotations

import functools

import click

from ..errors import RatercalError, naming_flags

#: library argument -> command-line flag, where the flag is not ``--`` + the name with ``-`` for ``_``
FLAGS = {
    "cluster": "--cluster-col",
    "method": "--method",
    "methods": "--method",
    "facet_cols": "--facet-col",
    "anchors_in": "--anchors",
    "anchors_out": "--write-anchors",
    "calibrate": "--write-anchors",
    "write_anchors": "--write-anchors",
    "as_json": "--json",
    "html_out": "--html",
    "resolve": "--resolve-discrepancies",
    "out": "--out",
    "output": "-o",
}


def flag(name: str) -> str:
    """The command-line flag of the library argument ``name`` (a name starting with ``-`` is one)."""
    if name.startswith("-"):
        return name
    return FLAGS.get(name) or "--" + name.replace("_", "-")


def cli_message(exc: RatercalError) -> str:
    """The one line the command line prints for ``exc`` (after ``error: ``)."""
    lines = exc.render(flag).splitlines()
    return lines[0] if lines else type(exc).__name__


class CommandLineError(click.ClickException):
    """A :class:`RatercalError` as click shows it: ``error: MESSAGE``, exit status 2."""

    exit_code = 2

    def show(self, file=None):
        click.echo(f"error: {self.message}", err=True, file=file)


def translate(invoke):
    """Wrap a click ``invoke`` so a :class:`RatercalError` becomes a :class:`CommandLineError`."""
    @functools.wraps(invoke)
    def wrapper(self, ctx):
        try:
            with naming_flags(flag):   # the library's warnings name flags, as its errors do here
                return invoke(self, ctx)
        except RatercalError as exc:
            raise CommandLineError(cli_message(exc)) from exc
    return wrapper


class Command(click.Command):
    """A click command whose library errors print as one line with exit status 2."""

    invoke = translate(click.Command.invoke)


class Group(click.Group):
    """A click group whose library errors (its own or its commands') print as one line, exit 2."""

    invoke = translate(click.Group.invoke)


def command(*args, **kwargs):
    """``click.command`` with :class:`Command`: use it for every ``ratercal`` command."""
    kwargs.setdefault("cls", Command)
    return click.command(*args, **kwargs)
