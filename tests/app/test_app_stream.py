"""An upload without a Content-Length is counted as it streams and refused past the limit, on a real
server: the client is stopped after about the limit, not after the 2 GB it would send."""

import select
import socket
from urllib.parse import urlparse


def reply_of(s) -> str:
    """The server's whole answer (it closes the connection after a refusal)."""
    data = b""
    while b"</html>" not in data:
        got = s.recv(65536)
        if not got:
            break
        data += got
    return data.decode("utf-8", "replace")


def test_a_chunked_2_gb_upload_is_refused_as_it_streams(live_server):
    base, token, state = live_server
    u = urlparse(base)
    before = set(state.folder.iterdir())
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        head = (f"POST /upload?token={token} HTTP/1.1\r\nHost: {u.netloc}\r\nTransfer-Encoding: chunked\r\n"
                "Content-Type: multipart/form-data; boundary=b\r\n\r\n")
        part = (b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n'
                b"Content-Type: text/csv\r\n\r\n")
        s.sendall(head.encode() + b"%x\r\n" % len(part) + part + b"\r\n")
        chunk = b"x" * 65536
        sent = 0
        answered = False
        while sent < 2 * 2**30:   # would be 2 GB; the server answers after about its 1 MB limit
            try:
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                answered = True
                break
            sent += len(chunk)
            if select.select([s], [], [], 0)[0]:
                answered = True
                break
            assert sent < 64 * 2**20, "the server read 64 MB of a body over its 1 MB limit"
        assert answered
        reply = reply_of(s)
    assert reply.startswith("HTTP/1.1 413"), reply[:200]
    assert sent <= 32 * 2**20   # the limit plus what the sockets' buffers took in
    assert set(state.folder.iterdir()) == before   # nothing kept


def test_a_2_gb_content_length_is_refused_before_the_body(live_server):
    base, token, _ = live_server
    u = urlparse(base)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall((f"POST /upload?token={token} HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Length: {2 * 2**30}\r\n"
                   "Content-Type: multipart/form-data; boundary=b\r\n\r\n").encode())
        reply = reply_of(s)   # answered with no byte of the body sent
    assert reply.startswith("HTTP/1.1 413") and "larger than this server takes (1 MB" in reply


def test_token_and_host_on_a_real_server(live_server):
    import http.client

    base, token, _ = live_server
    u = urlparse(base)
    for host, path, want in ((u.netloc, "/", 403), ("evil.example", f"/?token={token}", 403),
                             (f"localhost:{u.port}", f"/?token={token}", 303), (u.netloc, f"/?token={token}", 303)):
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        c.request("GET", path, headers={"Host": host})
        r = c.getresponse()
        assert r.status == want, (host, path, r.status)
        c.close()
