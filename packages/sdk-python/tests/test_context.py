"""The execution body is validated as the Node SDK's executionRequestSchema does."""

from __future__ import annotations

import json
import unittest

from ax_sdk import ExecutionRequestError, Result, parse_execution

from .support import execution_body


class ParseExecutionTest(unittest.TestCase):
    def test_parses_a_worker_body_into_the_context(self) -> None:
        ctx = parse_execution(execution_body(params={"city": "Zürich"}), idempotency_key="order_stat:x:1", worker_id="w1", key_version=2)
        self.assertEqual((ctx.execution_id, ctx.instance_id, ctx.task_name, ctx.team), ("e1", "1", "order_stat", "payments"))
        self.assertEqual((ctx.biz_date, ctx.attempt, dict(ctx.params)), ("2026-12-01", 1, {"city": "Zürich"}))
        self.assertEqual((ctx.idempotency_key, ctx.worker_id, ctx.key_version, ctx.trace_id), ("order_stat:x:1", "w1", 2, "t1"))
        self.assertGreater(ctx.seconds_left(), 30)
        self.assertEqual(ctx.raw["executionId"], "e1")

    def test_team_is_optional_and_trace_id_may_be_empty(self) -> None:
        body = json.loads(execution_body(traceId=""))
        del body["team"]
        ctx = parse_execution(body)
        self.assertIsNone(ctx.team)
        self.assertEqual(ctx.trace_id, "")

    def test_names_every_bad_field(self) -> None:
        with self.assertRaises(ExecutionRequestError) as caught:
            parse_execution(execution_body(executionId="", attempt=0, bizDate="1.12.2026", params=[], deadline="tomorrow", team=None))
        problems = " ".join(caught.exception.problems)
        for name in ("executionId", "attempt", "bizDate", "params", "deadline", "team"):
            self.assertIn(name, problems)
        self.assertEqual(caught.exception.code, "VALIDATION_FAILED")
        for bad in (execution_body(attempt=True), execution_body(deadline="2026-12-01T02:00:00")):
            with self.subTest(bad), self.assertRaises(ExecutionRequestError):
                parse_execution(bad)

    def test_refuses_what_is_not_a_json_object(self) -> None:
        for bad in (b"not json", b"[1]", b"\xff\xfe"):
            with self.subTest(bad), self.assertRaises(ExecutionRequestError):
                parse_execution(bad)

    def test_report_and_claim_without_a_client_say_what_is_missing(self) -> None:
        ctx = parse_execution(execution_body())
        with self.assertRaisesRegex(RuntimeError, "client"):
            ctx.report(Result(True))
        with self.assertRaisesRegex(RuntimeError, "client"):
            ctx.claim()


class ResultTest(unittest.TestCase):
    def test_json(self) -> None:
        self.assertEqual(Result(True).to_json(), {"success": True})
        self.assertEqual(Result(False, "no orders", {"rows": 0}).to_json(), {"success": False, "message": "no orders", "data": {"rows": 0}})


if __name__ == "__main__":
    unittest.main()
