"""A real server (uvicorn on 127.0.0.1, a free port) for the tests that need one: the browser tests and
uploads streamed without a Content-Length (Starlette's TestClient reads a body whole before the app)."""

from __future__ import annotations

import threading
import time

import pytest


@pytest.fixture(scope="module")
def live_server(tmp_path_factory):
    """``(base URL, token, Starlette app state)`` of a server with a 1 MB upload limit (module-wide)."""
    pytest.importorskip("uvicorn")
    import uvicorn

    from ratercal_cli.app import bind
    from ratercal_cli.app.server import create_app

    sock = bind(0)
    port = sock.getsockname()[1]
    token = "live-token-" + "x" * 20
    folder = tmp_path_factory.mktemp("uploads")
    app = create_app(token=token, port=port, folder=folder, max_upload=2**20)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", token, app.state.ratercal
    server.should_exit = True
    thread.join(10)
    sock.close()
