"""A WSGI app / middleware serving ax executors by path (PEP 3333; wsgiref, gunicorn, uWSGI…).

::

    from ax_sdk import AxExecutor, TeamKeys
    from ax_sdk.wsgi import AxWsgiApp

    app = AxWsgiApp({"/ax/order-stat": AxExecutor(keys, handler)}, app=your_flask_or_django_app)

A request for one of ``routes`` (POST, matched on ``PATH_INFO``, a trailing slash ignored) is
answered by its executor; any other goes to ``app`` (404 without one). The signature covers
the request target exactly as the worker sent it: ``RAW_URI`` (gunicorn) or ``REQUEST_URI``
(uWSGI, mod_wsgi) when the server provides it, otherwise ``SCRIPT_NAME + PATH_INFO`` re-quoted
plus ``?QUERY_STRING`` — the same for every URL without unusual percent-escapes. Wrap the
framework's app from the outside, so nothing reads the body before the signature is checked.
"""

from __future__ import annotations

import urllib.parse
from typing import Any, Callable, Iterable, Mapping, Optional

from .executor import Answer, AxExecutor

__all__ = ["AxWsgiApp", "request_target", "request_headers"]

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large"}


def request_target(environ: Mapping[str, Any]) -> str:
    """The request's path and query as sent (what the signature covers)."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if isinstance(raw, str) and raw.startswith("/"):
        return raw
    # PEP 3333: PATH_INFO is the percent-decoded path, as latin-1 text of its bytes
    path = (environ.get("SCRIPT_NAME", "") or "") + (environ.get("PATH_INFO", "") or "")
    quoted = urllib.parse.quote(path.encode("latin-1"), safe="/:@!$&'()*+,;=~")
    query = environ.get("QUERY_STRING", "") or ""
    return f"{quoted}?{query}" if query else quoted


def request_headers(environ: Mapping[str, Any]) -> dict[str, str]:
    """The request's headers (lower-case names) from a WSGI environ."""
    headers: dict[str, str] = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            headers[key[5:].replace("_", "-").lower()] = value
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            headers[key.replace("_", "-").lower()] = environ[key]
    return headers


def _read_body(environ: Mapping[str, Any], limit: int) -> Optional[bytes]:
    """The body, or ``None`` when it is over ``limit`` bytes."""
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    length_text = environ.get("CONTENT_LENGTH") or ""
    if length_text.strip() == "":
        # no length: only a server that terminates the input lets us read to its end
        return stream.read(limit + 1) if environ.get("wsgi.input_terminated") else b""
    try:
        length = int(length_text)
    except ValueError:
        length = 0
    if length > limit:
        return None
    return stream.read(length) if length > 0 else b""


def _normal(path: str) -> str:
    return path.rstrip("/") or "/"


class AxWsgiApp:
    """WSGI app serving ``routes`` (path -> :class:`AxExecutor`); other requests go to ``app``."""

    def __init__(self, routes: Mapping[str, AxExecutor], *, app: Optional[WsgiApp] = None) -> None:
        self.routes = {_normal(path): executor for path, executor in routes.items()}
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        executor = self.routes.get(_normal(environ.get("PATH_INFO", "") or "/"))
        if executor is None:
            if self.app is not None:
                return self.app(environ, start_response)
            return self._send(start_response, Answer(404, {"error": {"code": "NOT_FOUND", "message": "no ax executor at this path"}}))
        method = environ.get("REQUEST_METHOD", "GET")
        if method.upper() != "POST":
            return self._send(start_response, Answer(405, {"error": {"code": "METHOD_NOT_ALLOWED", "message": "ax calls an executor with POST"}}), allow=True)
        body = _read_body(environ, executor.body_limit_bytes)
        if body is None:
            return self._send(start_response, Answer(413, {"error": {"code": "BODY_TOO_LARGE", "message": f"the body is larger than {executor.body_limit_bytes} bytes"}}))
        answer = executor.handle(method, request_target(environ), request_headers(environ), body)
        return self._send(start_response, answer)

    @staticmethod
    def _send(start_response: StartResponse, answer: Answer, *, allow: bool = False) -> list[bytes]:
        payload = answer.encoded()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
        if allow:
            headers.append(("Allow", "POST"))
        start_response(f"{answer.status} {_REASONS.get(answer.status, 'Unknown')}", headers)
        return [payload]
