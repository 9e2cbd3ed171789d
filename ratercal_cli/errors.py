"""Errors that the command line turns into one-line messages and exit code 2."""


class RatercalError(Exception):
    """A user-facing error: bad input, an impossible design, a refused method.

    The message is one line and names the file, line and field (or config key)
    where it can.
    """


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
