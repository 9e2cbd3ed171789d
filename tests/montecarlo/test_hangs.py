"""Issue 30 item 6: no hang on a --scheduler that is not a Dask scheduler."""

import socket
import threading
import time

import pytest

from ratercal_cli.errors import RatercalError


@pytest.fixture
def server(request):
    """A TCP port answered by something that is not Dask: ``silent`` accepts and says nothing,
    ``http`` answers as a web server."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    conns = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            conns.append(c)
            if request.param == "http":
                try:
                    c.recv(65536)
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    srv.close()
    for c in conns:
        c.close()


@pytest.mark.parametrize("server", ["silent", "http"], indirect=True)
def test_a_port_that_is_not_dask_is_one_line_within_the_timeout(server):
    distributed = pytest.importorskip("distributed")
    from ratercal_cli.montecarlo.executors import connect

    t0 = time.monotonic()
    with pytest.raises(RatercalError, match=r"scheduler: cannot reach the Dask scheduler at 'tcp://127\.0\.0\.1"):
        connect(distributed.Client, server, seconds=1.0)
    assert time.monotonic() - t0 < 10
