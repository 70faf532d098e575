"""An ``http.server`` handler base serving ax executors by path (standard library only).

::

    from ax_sdk import AxExecutor, TeamKeys
    from ax_sdk.http_server import serve

    server = serve({"/ax/order-stat": AxExecutor(keys, handler)}, host="0.0.0.0", port=8090)
    server.serve_forever()

or subclass :class:`AxRequestHandler` (set ``routes``; add ``do_GET`` for a health check, …) and
pass it to a ``ThreadingHTTPServer`` yourself. A POST to one of ``routes`` (matched on the path,
the query string and a trailing slash ignored) is answered by its executor; the signature
covers ``self.path``, the request target exactly as sent. Requests are served one thread each
(``ThreadingHTTPServer``), so a slow synchronous handler does not hold up others.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar, Mapping, Optional

from .executor import Answer, AxExecutor

__all__ = ["AxRequestHandler", "handler_class", "serve"]


class _ChunkedBodyTooLarge(Exception):
    pass


def _normal(path: str) -> str:
    return path.split("?", 1)[0].rstrip("/") or "/"


class AxRequestHandler(BaseHTTPRequestHandler):
    """Serves ``routes`` (path -> :class:`AxExecutor`); anything else is 404 (405 for another method)."""

    #: The executors by path, e.g. ``{"/ax/order-stat": AxExecutor(...)}``.
    routes: ClassVar[Mapping[str, AxExecutor]] = {}
    #: Log each request line to stderr (``http.server``'s own format); default on.
    log_requests: ClassVar[bool] = True
    protocol_version = "HTTP/1.1"
    server_version = "ax-sdk-python"

    def log_message(self, format: str, *args: object) -> None:
        if self.log_requests:
            super().log_message(format, *args)

    def _executor(self) -> Optional[AxExecutor]:
        wanted = _normal(self.path)
        for path, executor in self.routes.items():
            if _normal(path) == wanted:
                return executor
        return None

    def _answer(self, answer: Answer, *, allow: bool = False) -> None:
        payload = answer.encoded()
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if allow:
            self.send_header("Allow", "POST")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    def _read_chunked(self, limit: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            line = self.rfile.readline(1024)
            length = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if length == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            size += length
            if size > limit:
                raise _ChunkedBodyTooLarge()
            chunks.append(self.rfile.read(length))
            self.rfile.readline(1024)  # the CRLF after the chunk

    def _read_body(self, limit: int) -> Optional[bytes]:
        """The body, or ``None`` when it is over ``limit`` bytes (the connection is then closed)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            try:
                return self._read_chunked(limit)
            except (_ChunkedBodyTooLarge, ValueError):
                self.close_connection = True
                return None
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if length < 0 or length > limit:
            self.close_connection = True
            return None
        return self.rfile.read(length) if length > 0 else b""

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        executor = self._executor()
        if executor is None:
            self.close_connection = True
            self._answer(Answer(404, {"error": {"code": "NOT_FOUND", "message": "no ax executor at this path"}}))
            return
        body = self._read_body(executor.body_limit_bytes)
        if body is None:
            self._answer(Answer(413, {"error": {"code": "BODY_TOO_LARGE", "message": f"the body is larger than {executor.body_limit_bytes} bytes"}}))
            return
        headers = {name: value for name, value in self.headers.items()}
        self._answer(executor.handle("POST", self.path, headers, body))

    def _not_post(self) -> None:
        self.close_connection = True
        if self._executor() is None:
            self._answer(Answer(404, {"error": {"code": "NOT_FOUND", "message": "no ax executor at this path"}}))
        else:
            self._answer(Answer(405, {"error": {"code": "METHOD_NOT_ALLOWED", "message": "ax calls an executor with POST"}}), allow=True)

    do_GET = do_PUT = do_DELETE = do_PATCH = _not_post  # noqa: N815


def handler_class(routes: Mapping[str, AxExecutor], base: type[AxRequestHandler] = AxRequestHandler, *, log_requests: bool = True) -> type[AxRequestHandler]:
    """A subclass of ``base`` serving ``routes``."""
    return type("AxRoutesHandler", (base,), {"routes": dict(routes), "log_requests": log_requests})


def serve(routes: Mapping[str, AxExecutor], *, host: str = "127.0.0.1", port: int = 8090, log_requests: bool = True) -> ThreadingHTTPServer:
    """A bound ``ThreadingHTTPServer`` serving ``routes`` (call ``serve_forever()``; port 0 = any free one).

    ``log_requests``: log each request line to stderr; default on.
    """
    server = ThreadingHTTPServer((host, port), handler_class(routes, log_requests=log_requests))
    server.daemon_threads = True
    return server
