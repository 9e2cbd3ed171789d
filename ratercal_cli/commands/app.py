"""``ratercal app``: the local web application (:mod:`ratercal_cli.app`)."""

from __future__ import annotations

import click


@click.command("app")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--no-browser", "no_browser", is_flag=True, help="Only print the address; open no browser.")
@click.option("--max-upload", "max_upload", type=click.IntRange(1), default=200, show_default=True, metavar="MB",
              help="The largest file the app takes, in MB.")
def app(port, no_browser, max_upload):
    """A local web app: upload an export, check the columns guessed, see whether adjustment is warranted
    and by which method, and download the adjusted file (in the input's format and layout), the change
    list, the report and the decision memo.

    Serves on 127.0.0.1 only; the first line printed is the address with its token (every request needs
    it, as Jupyter's); uploads stay in a private temporary folder removed when the server stops (Ctrl-C).
    """
    from ..app import serve

    serve(port or None, open_browser=not no_browser, max_upload=max_upload * 2**20,
          echo=lambda line: click.echo(line))
