"""Errors the command line prints as one line, ``error: MESSAGE``, with exit code 2.

:class:`RatercalError` is a :class:`click.ClickException`: click prints it and exits with its
``exit_code`` wherever it is raised under a command, so no command needs a handler of its own.
"""

import click


class RatercalError(click.ClickException):
    """A user-facing error: bad input, an impossible design, a refused method.

    The message is one line and names the file, line and field (or config key)
    where it can.
    """

    exit_code = 2

    def __init__(self, message=""):
        super().__init__(str(message))

    def __str__(self):
        return self.message

    def show(self, file=None):
        first = self.format_message().splitlines()
        click.echo(f"error: {first[0] if first else type(self).__name__}", err=True, file=file)


class InputError(RatercalError):
    """Bad data or config: names where (file:line, field or key)."""

    def __init__(self, message, path=None, line=None, field=None):
        where = ""
        if path is not None:
            where = str(path)
            if line is not None:
                where += f":{line}"
            where += ": "
        if field is not None:
            message = f"{field}: {message}"
        super().__init__(where + message)
        self.path, self.line, self.field = path, line, field


class MethodError(RatercalError):
    """A method cannot be applied to these ratings (e.g. needs two raters per paper)."""


class NotFittedError(RatercalError, AttributeError):
    """``transform`` (or a fitted attribute) asked of an estimator before ``fit``."""
