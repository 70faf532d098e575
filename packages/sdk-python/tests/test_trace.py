"""ctx.trace (#48): the worker's ``traceparent`` header, parsed; invalid or absent: None."""

from __future__ import annotations

import unittest

from ax_sdk import AxExecutor, ExecutionContext, HandlerResult, Result, TeamKeys, parse_traceparent, signed_headers

from .support import KEY, execution_body

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"


class ParseTest(unittest.TestCase):
    def test_reads_the_header_ax_sends(self) -> None:
        ctx = parse_traceparent(f"00-{TRACE}-{SPAN}-01")
        assert ctx is not None
        self.assertEqual((ctx.trace_id, ctx.parent_span_id, ctx.sampled), (TRACE, SPAN, True))
        self.assertFalse(getattr(parse_traceparent(f"00-{TRACE}-{SPAN}-00"), "sampled"))
        self.assertEqual(getattr(parse_traceparent(f"cc-{TRACE}-{SPAN}-01-later"), "trace_id"), TRACE)

    def test_ignores_invalid_values(self) -> None:
        for value in [None, "", f"00-{TRACE}-{SPAN}", f"00-{TRACE}-{SPAN}-01-more", f"ff-{TRACE}-{SPAN}-01", f"00-{'0' * 32}-{SPAN}-01",
                      f"00-{TRACE}-{'0' * 16}-01", f"00-{TRACE.upper()}-{SPAN}-01", f"00-{TRACE}-{SPAN}-0g"]:
            self.assertIsNone(parse_traceparent(value), value)


class ContextTest(unittest.TestCase):
    def test_ctx_trace_is_the_header_or_none(self) -> None:
        keys = TeamKeys("payments", {1: KEY})
        seen: list[ExecutionContext] = []

        def handler(ctx: ExecutionContext) -> HandlerResult:
            seen.append(ctx)
            return Result(True)

        executor = AxExecutor(keys, handler)
        body = execution_body()
        headers = {**signed_headers(keys, method="POST", path="/job", body=body), "Idempotency-Key": "k", "X-Ax-Worker": "w1"}
        self.assertEqual(executor.handle("POST", "/job", {**headers, "traceparent": f"00-{TRACE}-{SPAN}-01"}, body).status, 200)
        self.assertEqual(executor.handle("POST", "/job", headers, body).status, 200)
        self.assertEqual(executor.handle("POST", "/job", {**headers, "traceparent": "garbage"}, body).status, 200)
        self.assertEqual(getattr(seen[0].trace, "trace_id"), TRACE)
        self.assertEqual(getattr(seen[0].trace, "parent_span_id"), SPAN)
        self.assertIsNone(seen[1].trace)
        self.assertIsNone(seen[2].trace)


if __name__ == "__main__":
    unittest.main()
