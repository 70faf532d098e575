"""The report/claim client: business code reports asynchronous results and claims its run
through the admin API's signed endpoints (ADMIN-API.md "HTTP executors", R15, R18)::

    POST /api/v1/executions/{executionId}/report   body {"success": …, "message"?, "data"?}
    POST /api/v1/executions/{executionId}/claim    body {}

Both are signed v2 (the newest version of the team's keys) over the method, the path (with
the base URL's own path, if any, as the Node SDK does) and the exact body bytes sent.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .context import Result
from .signature import KeysLike, resolve_keys, signed_headers

__all__ = ["AxClient", "AxApiError", "ReportAnswer"]


@dataclass(frozen=True)
class ReportAnswer:
    """What the admin API answered a report: ``duplicate`` for a repeat of a relayed report."""

    duplicate: bool


class AxApiError(Exception):
    """The admin API answered something unexpected (``status``, ``body``; ``code`` from ``{"error":{"code"}}``)."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"ax admin API answered HTTP {status}: {body[:300]}")
        self.status = status
        self.body = body
        self.code = _error_code(body)


def _error_code(text: str) -> Optional[str]:
    try:
        error = json.loads(text).get("error")
        code = error.get("code") if isinstance(error, dict) else None
        return code if isinstance(code, str) else None
    except (ValueError, AttributeError):
        return None


#: What JavaScript's ``encodeURIComponent`` leaves as is besides ``quote``'s own ``_.-~`` and alphanumerics.
_URI_COMPONENT_SAFE = "!*'()"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect would change the signed path (and turn a POST into a GET): never follow one.
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None


class AxClient:
    """Reports and claims, signed with ``keys``.

    :param base_url: the admin API, e.g. ``http://ax-admin:8080`` (without ``/api/v1``).
    :param keys: the team's executor keys, as for ``AxExecutor`` (signs with the newest version). Never the master
        ``AX_EXECUTOR_SECRET``.
    :param timeout_s: per request; default 10 s.
    :param not_async_retry_s: how long a report is retried while ax answers 409 ``NOT_ASYNC``
        (a report sent right after the 202 can arrive before ax recorded that answer);
        default 30 s.
    """

    def __init__(
        self,
        base_url: str,
        keys: KeysLike,
        *,
        timeout_s: float = 10.0,
        not_async_retry_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._base = base_url.rstrip("/")
        parsed = urllib.parse.urlsplit(self._base)
        if parsed.scheme not in ("http", "https") or parsed.netloc == "":
            raise ValueError(f"ax_sdk: base_url must be http(s)://host[:port][/path], got {base_url!r}")
        # a base URL with a path (behind a proxy) is part of what is signed
        self._base_path = parsed.path.rstrip("/")
        self._keys = resolve_keys(keys)
        self._timeout_s = timeout_s
        self._not_async_retry_s = not_async_retry_s
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect())

    def _post(self, execution_id: str, action: str, payload: Any) -> tuple[int, str]:
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        # as JavaScript's encodeURIComponent
        path = f"/api/v1/executions/{urllib.parse.quote(execution_id, safe=_URI_COMPONENT_SAFE)}/{action}"
        headers = signed_headers(self._keys, method="POST", path=f"{self._base_path}{path}", body=body)
        request = urllib.request.Request(f"{self._base}{path}", data=body, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=self._timeout_s) as response:
                return response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.read().decode("utf-8", "replace")

    def report(self, execution_id: str, result: Result) -> ReportAnswer:
        """Reports the final result of an accepted (202) execution. A repeat answers ``duplicate=True``.

        Raises :class:`AxApiError` for any answer but 200 (after retrying 409 ``NOT_ASYNC``),
        ``OSError`` (``urllib.error.URLError``) when the admin API cannot be reached.
        """
        started = time.monotonic()
        pause_s = 0.1
        status, text = self._post(execution_id, "report", result.to_json())
        while status == 409 and _error_code(text) == "NOT_ASYNC" and time.monotonic() - started + pause_s <= self._not_async_retry_s:
            self._sleep(pause_s)
            pause_s = min(pause_s * 2, 2.0)
            status, text = self._post(execution_id, "report", result.to_json())
        if status != 200:
            raise AxApiError(status, text)
        try:
            return ReportAnswer(duplicate=json.loads(text).get("duplicate") is True)
        except (ValueError, AttributeError):
            return ReportAnswer(duplicate=False)

    def claim(self, execution_id: str) -> bool:
        """Claims the run (instance, runNo) for this execution.

        ``True`` for the holder; ``False`` when another live execution holds it (409): then do
        not do the work. Raises :class:`AxApiError` for any other answer.
        """
        status, text = self._post(execution_id, "claim", {})
        if status == 200:
            return True
        if status == 409:
            return False
        raise AxApiError(status, text)
