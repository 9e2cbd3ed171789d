"""``ratercal app``: a local web application from an export to a signed-off adjustment.

:func:`serve` binds 127.0.0.1 (a free port, or the one asked for), prints the address with its token,
opens the browser and serves :func:`.server.create_app` with uvicorn until Ctrl-C; the uploads' private
folder is removed at exit.  Starlette (pages rendered on the server from Jinja2 templates) rather than
Flask: an ASGI app whose middleware sees the request body as it streams, so an upload over the limit is
refused by its Content-Length or its count without being read whole (:mod:`.security`), and whose
TestClient drives the whole flow in the tests without a server.
"""

from __future__ import annotations

import socket

__all__ = ["serve", "bind"]


def bind(port: int | None = None) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0/None: a free one the system picks)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(port or 0)))
    sock.listen(64)
    return sock


def serve(port: int | None = None, open_browser: bool = True, max_upload: int | None = None, echo=print) -> None:
    """Serve the app until interrupted (module docstring); ``echo`` prints the address line first."""
    import secrets
    import threading
    import webbrowser

    import uvicorn

    from .security import DEFAULT_MAX_UPLOAD
    from .server import create_app

    sock = bind(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    app = create_app(token=token, port=port, max_upload=max_upload or DEFAULT_MAX_UPLOAD)
    url = f"http://127.0.0.1:{port}/?token={token}"
    echo(url)
    echo("ratercal app: open the address above in a browser (Ctrl-C stops the server and removes the uploads)")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    if open_browser:
        threading.Timer(0.5, lambda: webbrowser.open(url)).start()
    try:
        server.run(sockets=[sock])
    finally:
        app.state.ratercal.close()
