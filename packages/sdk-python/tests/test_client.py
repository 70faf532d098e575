"""AxClient signs reports and claims as the admin API verifies them (checked here with the
SDK's own verify_signature over what arrived; against the real admin API in
test/e2e/python-sdk.test.ts)."""

from __future__ import annotations

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

from ax_sdk import AxApiError, AxClient, Result, SignatureError, TeamKeys, verify_signature

from .support import KEY, OTHER_KEY

KEYS = TeamKeys("payments", {1: KEY})


class FakeAdminApi:
    """Answers /api/v1/executions/{id}/report|claim like admin-api, after verifying the signature."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.not_async_left = 2
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                problem: Optional[str] = None
                try:
                    verify_signature(KEYS, headers=dict(self.headers.items()), method="POST", path=self.path, body=raw)
                except SignatureError as error:
                    problem = error.code
                parts = self.path.split("/")
                execution_id, action = parts[-2], parts[-1]
                fake.received.append({"path": self.path, "problem": problem, "body": json.loads(raw), "content_type": self.headers.get("Content-Type")})
                if problem is not None:
                    self.answer(401, {"error": {"code": "BAD_SIGNATURE", "message": problem}})
                elif execution_id == "early" and fake.not_async_left > 0:
                    fake.not_async_left -= 1
                    self.answer(409, {"error": {"code": "NOT_ASYNC", "message": "not yet"}})
                elif execution_id == "done":
                    self.answer(409, {"error": {"code": "CLAIMED", "message": "other"}})
                elif action == "claim":
                    self.answer(200 if execution_id == "e1" else 409, {"granted": execution_id == "e1"})
                else:
                    self.answer(200, {"duplicate": True} if execution_id == "dup" else {"accepted": True, "duplicate": False})

            def answer(self, status: int, body: Any) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=lambda: self.server.serve_forever(0.05), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = FakeAdminApi()
        self.sleeps: list[float] = []
        self.addCleanup(self.api.close)

    def client(self, keys: TeamKeys = KEYS, base: Optional[str] = None, **options: Any) -> AxClient:
        return AxClient(base or f"{self.api.url}/", keys, sleep=self.sleeps.append, **options)

    def test_signs_report_and_claim_calls_as_the_admin_api_expects(self) -> None:
        client = self.client()
        self.assertFalse(client.report("e1", Result(True, data={"n": 1, "city": "Zürich"})).duplicate)
        self.assertTrue(client.report("dup", Result(False, "x")).duplicate)
        self.assertTrue(client.claim("e1"))
        self.assertFalse(client.claim("e2"))
        self.assertEqual(
            [(r["path"], r["problem"]) for r in self.api.received],
            [
                ("/api/v1/executions/e1/report", None),
                ("/api/v1/executions/dup/report", None),
                ("/api/v1/executions/e1/claim", None),
                ("/api/v1/executions/e2/claim", None),
            ],
        )
        self.assertEqual(self.api.received[0]["body"], {"success": True, "data": {"n": 1, "city": "Zürich"}})
        self.assertEqual(self.api.received[1]["body"], {"success": False, "message": "x"})
        self.assertEqual(self.api.received[2]["body"], {})
        self.assertEqual(self.api.received[0]["content_type"], "application/json")

    def test_an_execution_id_is_escaped_as_encodeURIComponent_and_signed_so(self) -> None:
        self.assertFalse(self.client().claim("e1/x y"))  # the fake grants only "e1"
        self.assertEqual(self.api.received[0]["path"], "/api/v1/executions/e1%2Fx%20y/claim")
        self.assertIsNone(self.api.received[0]["problem"])

    def test_a_wrong_key_raises_with_the_status_and_code(self) -> None:
        with self.assertRaises(AxApiError) as caught:
            self.client(TeamKeys("payments", {1: OTHER_KEY})).claim("e1")
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "BAD_SIGNATURE"))
        self.assertIn("HTTP 401", str(caught.exception))

    def test_retries_a_report_answered_409_not_async_and_gives_up_on_other_409s(self) -> None:
        self.assertFalse(self.client().report("early", Result(True)).duplicate)
        self.assertEqual(len([r for r in self.api.received if r["path"] == "/api/v1/executions/early/report"]), 3)
        self.assertEqual(self.sleeps, [0.1, 0.2])
        with self.assertRaises(AxApiError) as caught:
            self.client().report("done", Result(True))
        self.assertEqual(caught.exception.code, "CLAIMED")
        self.api.not_async_left = 100
        with self.assertRaises(AxApiError) as gave_up:
            self.client(not_async_retry_s=0.0).report("early", Result(True))
        self.assertEqual(gave_up.exception.code, "NOT_ASYNC")

    def test_a_base_url_with_a_path_is_signed_with_it(self) -> None:
        # behind a proxy at /ax-admin: the fake sees the full path and verifies it
        client = self.client(base=f"{self.api.url}/ax-admin/")
        self.assertFalse(client.report("e1", Result(True)).duplicate)
        self.assertEqual(self.api.received[0]["path"], "/ax-admin/api/v1/executions/e1/report")
        self.assertIsNone(self.api.received[0]["problem"])

    def test_refuses_a_base_url_that_is_not_http(self) -> None:
        with self.assertRaises(ValueError):
            AxClient("ax-admin:8080", KEYS)


if __name__ == "__main__":
    unittest.main()
