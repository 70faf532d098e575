"""Continuing ax's trace in a business service (#48).

The worker sends the W3C ``traceparent`` header of its call span when ax's tracing is on;
``ctx.trace`` exposes it parsed (standard library only). When the service has the
``opentelemetry-api`` package installed, the handler runs inside a SERVER span that continues
the trace, so the service's own spans nest under ax's; without a configured tracer provider that
span is a no-op.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Optional

_HEX2 = re.compile(r"[0-9a-f]{2}")
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class TraceContext:
    """The caller's trace context, from the ``traceparent`` header."""

    #: 32 lowercase hex digits: the run's trace id (also ``ctx.trace_id`` and ax's log lines).
    trace_id: str
    #: 16 hex digits: the span of ax's call (this service's span is its child).
    parent_span_id: str
    #: ax recorded this trace (the ``sampled`` flag).
    sampled: bool
    #: The header as received.
    traceparent: str


def parse_traceparent(header: Optional[str]) -> Optional[TraceContext]:
    """The context of a ``traceparent`` value, or ``None`` when it is missing or invalid (the
    W3C rule: ignore it). Version ``ff`` and all-zero ids are invalid; a later version is read by
    its first four fields."""
    if header is None or len(header) > 512:
        return None
    value = header.strip()
    fields = value.split("-")
    if len(fields) < 4:
        return None
    version, trace_id, span_id, flags = fields[:4]
    if not _HEX2.fullmatch(version) or version == "ff" or (version == "00" and len(fields) != 4):
        return None
    if not _TRACE_ID.fullmatch(trace_id) or trace_id == "0" * 32:
        return None
    if not _SPAN_ID.fullmatch(span_id) or span_id == "0" * 16:
        return None
    if not _HEX2.fullmatch(flags):
        return None
    return TraceContext(trace_id=trace_id, parent_span_id=span_id, sampled=(int(flags, 16) & 1) == 1, traceparent=value)


def _otel() -> Any:
    try:
        from opentelemetry import trace as otel_trace  # type: ignore[import-not-found]
    except ImportError:
        return None
    return otel_trace


@contextmanager
def trace_scope(context: Optional[TraceContext], *, task_name: str, execution_id: str, instance_id: str, attempt: int) -> Iterator[None]:
    """Runs the body in a SERVER span ``ax <task_name>`` continuing ``context`` when
    ``opentelemetry-api`` is installed; otherwise (or without a context) just runs it."""
    otel_trace = _otel() if context is not None else None
    if otel_trace is None or context is None:
        yield
        return
    span_context = otel_trace.SpanContext(
        trace_id=int(context.trace_id, 16),
        span_id=int(context.parent_span_id, 16),
        is_remote=True,
        trace_flags=otel_trace.TraceFlags(otel_trace.TraceFlags.SAMPLED if context.sampled else otel_trace.TraceFlags.DEFAULT),
    )
    parent = otel_trace.set_span_in_context(otel_trace.NonRecordingSpan(span_context))
    tracer = otel_trace.get_tracer("ax_sdk")
    attributes = {"ax.task.name": task_name, "ax.execution.id": execution_id, "ax.instance.id": instance_id, "ax.attempt": attempt}
    with tracer.start_as_current_span(f"ax {task_name}", context=parent, kind=otel_trace.SpanKind.SERVER, attributes=attributes):
        yield
