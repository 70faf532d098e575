"""``AxExecutor``: receives one ax HTTP execution, framework-neutral.

Verifies the signature (v2, the team's executor keys, the timestamp), validates the body and
calls the business handler, then says what to answer — the same steps and answers as the Node
SDK's ``axExecutor``:

- 401 ``{"error": {"code": <SignatureError.code>, "message"}}`` for a refused signature;
- 400 ``VALIDATION_FAILED`` for a body that is not an execution, 413 ``BODY_TOO_LARGE`` for one over the limit;
- 200 ``{"success": …, "message"?, "data"?}`` for a synchronous result (a handler that raises
  answers ``{"success": false, "message": str(error)}``);
- 202 ``{"accepted": true}`` when the handler returns ``ctx.accepted()``.

``ax_sdk.wsgi`` and ``ax_sdk.http_server`` feed it requests; other frameworks call
:meth:`AxExecutor.handle` with the method, the request target as sent, the headers and the raw
body bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from .client import AxClient
from .context import Accepted, ExecutionContext, ExecutionRequestError, HandlerResult, Result, parse_execution
from .signature import DEFAULT_MAX_SKEW_MS, KeysLike, SignatureError, resolve_keys, verify_signature
from .trace import parse_traceparent, trace_scope

__all__ = ["AxExecutor", "Answer", "DEFAULT_BODY_LIMIT_BYTES", "Handler"]

#: Default largest accepted body: 1 MiB.
DEFAULT_BODY_LIMIT_BYTES = 1_048_576

#: The business handler.
Handler = Callable[[ExecutionContext], HandlerResult]


@dataclass(frozen=True)
class Answer:
    """What to answer the worker: an HTTP status and a JSON body."""

    status: int
    body: Mapping[str, Any]

    def encoded(self) -> bytes:
        """The body as UTF-8 JSON bytes."""
        return json.dumps(self.body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _refusal(status: int, code: str, message: str) -> Answer:
    return Answer(status, {"error": {"code": code, "message": message}})


def _header(headers: Mapping[str, str], name: str) -> str:
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return ""


def _result_body(result: HandlerResult) -> Mapping[str, Any]:
    if result is None:
        return {"success": True}
    if isinstance(result, Result):
        return result.to_json()
    if isinstance(result, Mapping) and isinstance(result.get("success"), bool):
        return dict(result)
    raise TypeError(f"ax_sdk: a handler returns Result, {{'success': bool, ...}}, None or ctx.accepted(), not {type(result).__name__}")


class AxExecutor:
    """One executor endpoint.

    :param keys: the team's executor keys: ``TeamKeys(team, {version: key})`` or a list of what
        ``GET /api/v1/teams/{team}/executor-key`` answers; hold the previous version too while a
        rotation's grace lasts. Never the master ``AX_EXECUTOR_SECRET``.
    :param handler: called with the :class:`ExecutionContext`; returns a :class:`Result`, a
        ``{"success": …}`` dict, ``None`` (= success) or ``ctx.accepted()`` (= 202).
    :param client: used by ``ctx.report`` / ``ctx.claim``; default none (they raise).
    :param max_skew_ms: largest accepted distance of ``X-Ax-Timestamp`` from this clock;
        default 300000 ms (5 min).
    :param body_limit_bytes: largest accepted body; default 1 MiB.
    :param on_error: called with an exception the handler raised (answered
        ``{"success": false}``) and the context; default none.
    """

    def __init__(
        self,
        keys: KeysLike,
        handler: Handler,
        *,
        client: Optional[AxClient] = None,
        max_skew_ms: int = DEFAULT_MAX_SKEW_MS,
        body_limit_bytes: int = DEFAULT_BODY_LIMIT_BYTES,
        on_error: Optional[Callable[[BaseException, ExecutionContext], None]] = None,
    ) -> None:
        if not callable(handler):
            raise TypeError("ax_sdk: handler must be a function (ctx) -> result")
        if max_skew_ms <= 0 or body_limit_bytes <= 0:
            raise ValueError("ax_sdk: max_skew_ms and body_limit_bytes must be positive")
        self.keys = resolve_keys(keys)  # refuses an empty key set now, not at the first call
        self.handler = handler
        self.client = client
        self.max_skew_ms = max_skew_ms
        self.body_limit_bytes = body_limit_bytes
        self.on_error = on_error

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes, *, now_ms: Optional[int] = None) -> Answer:
        """Verifies, parses and runs one call. ``path`` is the request target exactly as sent
        (path and query string), ``body`` the raw bytes."""
        if method.upper() != "POST":
            return _refusal(405, "METHOD_NOT_ALLOWED", "ax calls an executor with POST")
        if len(body) > self.body_limit_bytes:
            return _refusal(413, "BODY_TOO_LARGE", f"the body is larger than {self.body_limit_bytes} bytes")
        try:
            verify_signature(self.keys, headers=headers, method=method, path=path, body=body, now_ms_value=now_ms, max_skew_ms=self.max_skew_ms)
        except SignatureError as error:
            return _refusal(401, error.code, str(error))
        key_version = int(_header(headers, "X-Ax-Key-Version"))  # verified: a positive integer
        try:
            ctx = parse_execution(
                body,
                idempotency_key=_header(headers, "Idempotency-Key"),
                worker_id=_header(headers, "X-Ax-Worker"),
                key_version=key_version,
                client=self.client,
                trace=parse_traceparent(_header(headers, "traceparent") or None),
            )
        except ExecutionRequestError as error:
            return _refusal(400, error.code, str(error))
        try:
            with trace_scope(ctx.trace, task_name=ctx.task_name, execution_id=ctx.execution_id, instance_id=ctx.instance_id, attempt=ctx.attempt):
                result = self.handler(ctx)
            if isinstance(result, Accepted):
                return Answer(202, {"accepted": True})
            return Answer(200, _result_body(result))
        except Exception as error:  # a failed job, answered as such: the worker records the message
            if self.on_error is not None:
                try:
                    self.on_error(error, ctx)
                except Exception:  # noqa: BLE001 - a throwing on_error must not turn the answer into a dropped connection
                    pass
            return Answer(200, {"success": False, "message": str(error) or type(error).__name__})
