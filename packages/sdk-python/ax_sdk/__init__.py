"""ax SDK for Python: receive ax HTTP executions and report asynchronous results.

The Python twin of ``ax-scheduler-sdk`` (packages/sdk), standard library only. See README.md.
"""

from .client import AxApiError, AxClient, ReportAnswer
from .context import Accepted, ExecutionContext, ExecutionRequestError, HandlerResult, Result, parse_execution
from .executor import DEFAULT_BODY_LIMIT_BYTES, Answer, AxExecutor, Handler
from .trace import TraceContext, parse_traceparent
from .signature import (
    DEFAULT_MAX_SKEW_MS,
    BadSignatureError,
    KeysLike,
    BadTimestampError,
    MissingSignatureError,
    SignatureError,
    SignatureV1Error,
    StaleTimestampError,
    TeamKeys,
    UnknownKeyVersionError,
    WrongTeamError,
    now_ms,
    resolve_keys,
    sign_v2,
    signed_headers,
    verify_signature,
)

__version__ = "0.1.0"

__all__ = [
    "TraceContext",
    "parse_traceparent",
    "Accepted",
    "Answer",
    "AxApiError",
    "AxClient",
    "AxExecutor",
    "BadSignatureError",
    "BadTimestampError",
    "DEFAULT_BODY_LIMIT_BYTES",
    "DEFAULT_MAX_SKEW_MS",
    "ExecutionContext",
    "ExecutionRequestError",
    "Handler",
    "HandlerResult",
    "KeysLike",
    "MissingSignatureError",
    "ReportAnswer",
    "Result",
    "SignatureError",
    "SignatureV1Error",
    "StaleTimestampError",
    "TeamKeys",
    "UnknownKeyVersionError",
    "WrongTeamError",
    "now_ms",
    "parse_execution",
    "resolve_keys",
    "sign_v2",
    "signed_headers",
    "verify_signature",
]
