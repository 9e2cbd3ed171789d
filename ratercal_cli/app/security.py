"""What keeps a local web server local: an ASGI middleware around the app.

* **Token** (as Jupyter's): every request carries the server's random token, in the URL the first
  time (``/?token=...``, printed by ``ratercal app``), which sets a cookie (HttpOnly, SameSite=Strict,
  named after the port) and redirects to the same address without it; afterwards the cookie.  Anything
  else is refused (403): another program or page on this machine cannot use the app.
* **Host header** against DNS rebinding: only ``127.0.0.1:PORT`` and ``localhost:PORT`` (403
  otherwise): a web page whose name an attacker points at 127.0.0.1 sends its own Host.
* **Upload size**: a body whose Content-Length is over the limit is refused (413) before a byte of
  it is read; a body without one (chunked) is counted as it streams and refused when it passes the
  limit.
* **Headers**: a Content-Security-Policy with no script source at all (a label that slipped past the
  escaping still could not run), no framing, no referrer (the token never leaves in a Referer).
"""

from __future__ import annotations

import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

__all__ = ["Security", "UploadTooLarge", "DEFAULT_MAX_UPLOAD", "CSP"]

#: The largest upload, in bytes (``ratercal app --max-upload MB``).
DEFAULT_MAX_UPLOAD = 200 * 2**20

CSP = ("default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")

_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
            (b"cache-control", b"no-store")]


class UploadTooLarge(Exception):
    """The request body passed the upload limit as it streamed."""


class Security:
    """The middleware (module docstring).  ``port``: the server's (None: any port of the two host
    names, for tests that do not know it); ``denied(status, message)``: the page of a refusal."""

    def __init__(self, app, token: str, port: int | None, max_upload: int, denied=None):
        self.app = app
        self.token = token
        self.port = port
        self.max_upload = int(max_upload)
        self.denied = denied or (lambda status, message: f"<!DOCTYPE html><p>{message}</p>")
        self.cookie = f"ratercal_{port or 'app'}"

    # -- checks ------------------------------------------------------------------------------
    def host_ok(self, host: str) -> bool:
        names = ("127.0.0.1", "localhost")
        if self.port is None:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
            return name in names
        return host in {f"{n}:{self.port}" for n in names}

    def _token_ok(self, given) -> bool:
        return isinstance(given, str) and secrets.compare_digest(given.encode(), self.token.encode())

    # -- ASGI --------------------------------------------------------------------------------
    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self.app(scope, receive, send)
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.host_ok(headers.get("host", "")):
            return await self._refuse(send, 403, "This server answers only to 127.0.0.1 and localhost.")
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if self._token_ok(query.get("token")):
            rest = urlencode([(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
                              if k != "token"])
            target = scope.get("path", "/") + (f"?{rest}" if rest else "")
            cookie = (f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict").encode("latin-1")
            if scope.get("method") in ("GET", "HEAD"):
                return await self._send(send, 303, b"", [(b"location", target.encode("latin-1")),
                                                         (b"set-cookie", cookie)])
        else:
            jar = SimpleCookie()
            try:
                jar.load(headers.get("cookie", ""))
            except Exception:
                jar = SimpleCookie()
            got = jar.get(self.cookie)
            if got is None or not self._token_ok(got.value):
                return await self._refuse(send, 403, "Open the address that 'ratercal app' printed (it holds the "
                                                     "token that lets you in).")
        length = headers.get("content-length")
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                return await self._refuse(send, 400, "A bad Content-Length.")
            if n > self.max_upload:   # refused before any of the body is read
                return await self._refuse(send, 413, self._too_large())
        return await self._guarded(scope, receive, send)

    async def _guarded(self, scope, receive, send):
        seen = 0
        started = False

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_upload:
                    raise UploadTooLarge()
            return message

        async def sending(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except UploadTooLarge:
            if not started:
                await self._refuse(send, 413, self._too_large())

    def _too_large(self) -> str:
        return (f"The file is larger than this server takes ({self.max_upload // 2**20} MB; "
                "start it with --max-upload MB for more).")

    async def _refuse(self, send, status, message):
        body = self.denied(status, message).encode("utf-8")
        await self._send(send, status, body, [(b"content-type", b"text/html; charset=utf-8")])

    async def _send(self, send, status, body, headers):
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-length", str(len(body)).encode()), *headers, *_HEADERS,
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
