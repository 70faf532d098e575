"""What ax sends an HTTP executor, parsed, and what a handler answers.

The body (ADMIN-API.md "HTTP executors")::

    {"executionId": "…", "instanceId": "…", "taskName": "…", "team": "…", "bizDate": "2026-12-01",
     "expectedTime": "…", "attempt": 1, "params": {…}, "traceId": "…", "deadline": "…"}

validated as the Node SDK's ``executionRequestSchema`` does. A handler answers with a
:class:`Result` (``{"success": …, "message"?, "data"?}``, HTTP 200), ``None`` (= success), or
``ctx.accepted()`` (HTTP 202: report later with ``ctx.report(...)``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

if TYPE_CHECKING:
    from .client import AxClient, ReportAnswer
    from .trace import TraceContext

__all__ = ["Result", "Accepted", "ExecutionContext", "ExecutionRequestError", "parse_execution", "HandlerResult"]

_BIZ_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# ISO 8601 date-time with an offset (Z or ±hh:mm), as zod's `z.iso.datetime({ offset: true })`.
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})")


@dataclass(frozen=True)
class Result:
    """A result as the worker (synchronous answer) and the report endpoint take it.

    ``message`` at most 4096 characters for a report; ``data`` a JSON object.
    """

    success: bool
    message: Optional[str] = None
    data: Optional[Mapping[str, Any]] = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object: ``{"success": …}`` plus ``message`` / ``data`` when set."""
        body: dict[str, Any] = {"success": self.success}
        if self.message is not None:
            body["message"] = self.message
        if self.data is not None:
            body["data"] = dict(self.data)
        return body


class Accepted:
    """Returned by a handler (through ``ctx.accepted()``) to answer 202 and report later."""

    _instance: Optional["Accepted"] = None

    def __new__(cls) -> "Accepted":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "Accepted()"


#: What a handler may return: a result, a plain ``{"success": …}`` dict, ``None`` (success) or ``Accepted``.
HandlerResult = Union[Result, Mapping[str, Any], Accepted, None]


class ExecutionRequestError(ValueError):
    """The body is not an ax execution (answered 400 ``VALIDATION_FAILED``); ``problems`` lists each field."""

    code = "VALIDATION_FAILED"

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class _NoClient:
    def report(self, execution_id: str, result: Result) -> "ReportAnswer":
        raise RuntimeError("ax_sdk: ctx.report/ctx.claim need a client (AxExecutor(..., client=AxClient(...)))")

    def claim(self, execution_id: str) -> bool:
        raise RuntimeError("ax_sdk: ctx.report/ctx.claim need a client (AxExecutor(..., client=AxClient(...)))")


@dataclass(frozen=True)
class ExecutionContext:
    """One execution as a handler gets it (the Node SDK's ``ExecutionContext``, snake_case)."""

    execution_id: str
    instance_id: str
    task_name: str
    #: The task's team (absent from bodies of older workers: then ``None``).
    team: Optional[str]
    #: ``YYYY-MM-DD``.
    biz_date: str
    expected_time: str
    attempt: int
    params: Mapping[str, Any]
    trace_id: str
    #: The attempt's deadline, ISO 8601 as sent.
    deadline: str
    #: ``<taskName>:<expectedTime>:<runNo>``: equal across retries of one run, new per rerun (R18).
    idempotency_key: str = ""
    #: The worker that sent it (``X-Ax-Worker``).
    worker_id: str = ""
    #: ``X-Ax-Key-Version``: the team's key version ax signed with.
    key_version: int = 0
    #: ax's trace context from the ``traceparent`` header (sent when ax's tracing is on), or ``None``.
    trace: Optional["TraceContext"] = None
    #: The parsed body as received.
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    _client: Any = field(default=None, repr=False, compare=False)

    @property
    def deadline_at(self) -> datetime:
        """``deadline`` as an aware ``datetime``."""
        return _parse_datetime(self.deadline)

    def seconds_left(self, now: Optional[datetime] = None) -> float:
        """Seconds until the deadline (negative once past): stop synchronous work at 0."""
        return (self.deadline_at - (now or datetime.now(timezone.utc))).total_seconds()

    def accepted(self) -> Accepted:
        """Answer 202 now and report later (``return ctx.accepted()``)."""
        return Accepted()

    def report(self, result: Union[Result, bool], message: Optional[str] = None, data: Optional[Mapping[str, Any]] = None) -> "ReportAnswer":
        """Reports the final result of this execution (after ``accepted()``); needs a client.

        ``ctx.report(Result(True, data={...}))`` or ``ctx.report(True)`` / ``ctx.report(False, "why")``.
        """
        if not isinstance(result, Result):
            result = Result(success=bool(result), message=message, data=data)
        return (self._client or _NoClient()).report(self.execution_id, result)

    def claim(self) -> bool:
        """Claims this run for this execution; ``False`` = another execution holds it: do not do the work."""
        return (self._client or _NoClient()).claim(self.execution_id)


def _parse_datetime(text: str) -> datetime:
    # Python 3.11's fromisoformat takes "Z"; earlier ones do not.
    value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _string(body: Mapping[str, Any], name: str, problems: list[str], *, optional: bool = False, empty: bool = False) -> Optional[str]:
    value = body.get(name)
    if value is None and optional and name not in body:
        return None
    if not isinstance(value, str):
        problems.append(f"{name}: expected a string")
        return None
    if value == "" and not empty:
        problems.append(f"{name}: must not be empty")
        return None
    return value


def parse_execution(
    body: Union[bytes, str, Mapping[str, Any]],
    *,
    idempotency_key: str = "",
    worker_id: str = "",
    key_version: int = 0,
    client: Optional["AxClient"] = None,
    trace: Optional["TraceContext"] = None,
) -> ExecutionContext:
    """Parses and validates an execution body (raw JSON bytes/text, or an already parsed dict).

    Raises :class:`ExecutionRequestError` naming every bad field.
    """
    if isinstance(body, (bytes, str)):
        try:
            parsed: Any = json.loads(body)
        except (ValueError, UnicodeDecodeError) as error:
            raise ExecutionRequestError([f"the body is not JSON ({error})"]) from error
    else:
        parsed = body
    if not isinstance(parsed, Mapping):
        raise ExecutionRequestError(["the body must be a JSON object"])
    problems: list[str] = []
    execution_id = _string(parsed, "executionId", problems)
    instance_id = _string(parsed, "instanceId", problems)
    task_name = _string(parsed, "taskName", problems)
    team = _string(parsed, "team", problems, optional=True)
    biz_date = _string(parsed, "bizDate", problems)
    if biz_date is not None and not _BIZ_DATE.fullmatch(biz_date):
        problems.append("bizDate: expected YYYY-MM-DD")
    expected_time = _string(parsed, "expectedTime", problems)
    attempt = parsed.get("attempt")
    if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1:
        problems.append("attempt: expected an integer >= 1")
    params = parsed.get("params")
    if not isinstance(params, Mapping):
        problems.append("params: expected an object")
    trace_id = _string(parsed, "traceId", problems, empty=True)
    deadline = _string(parsed, "deadline", problems)
    if deadline is not None:
        try:
            if not _ISO_DATETIME.fullmatch(deadline):
                raise ValueError(deadline)
            _parse_datetime(deadline)
        except ValueError:
            problems.append("deadline: expected an ISO 8601 date-time with an offset")
    if problems:
        raise ExecutionRequestError(problems)
    assert execution_id is not None and instance_id is not None and task_name is not None
    assert biz_date is not None and expected_time is not None and trace_id is not None and deadline is not None
    assert isinstance(attempt, int) and isinstance(params, Mapping)
    return ExecutionContext(
        execution_id=execution_id,
        instance_id=instance_id,
        task_name=task_name,
        team=team,
        biz_date=biz_date,
        expected_time=expected_time,
        attempt=attempt,
        params=params,
        trace_id=trace_id,
        deadline=deadline,
        idempotency_key=idempotency_key,
        worker_id=worker_id,
        key_version=key_version,
        trace=trace,
        raw=parsed,
        _client=client,
    )
