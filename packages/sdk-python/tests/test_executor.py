"""AxExecutor, behind http.server and behind WSGI: verified calls reach the handler and its
answer is what the worker takes; refused ones never reach it."""

from __future__ import annotations

import io
import json
import threading
import unittest
import urllib.error
import urllib.request
from typing import Any, Optional
from wsgiref.simple_server import WSGIRequestHandler, make_server
from wsgiref.util import setup_testing_defaults

from ax_sdk import AxExecutor, ExecutionContext, HandlerResult, Result, TeamKeys, now_ms, sign_v2, signed_headers
from ax_sdk.http_server import serve
from ax_sdk.wsgi import AxWsgiApp, request_target

from .support import KEY, OTHER_KEY, execution_body

KEYS = TeamKeys("payments", {1: KEY})


class Recorder:
    def __init__(self) -> None:
        self.seen: list[ExecutionContext] = []
        self.errors: list[BaseException] = []

    def handler(self, ctx: ExecutionContext) -> HandlerResult:
        self.seen.append(ctx)
        mode = ctx.params.get("mode")
        if mode == "fail":
            return Result(False, "no orders")
        if mode == "throw":
            raise ValueError("boom")
        if mode == "async":
            return ctx.accepted()
        if mode == "dict":
            return {"success": True, "data": {"as": "dict"}}
        if mode == "none":
            return None
        return Result(True, data={"rows": 3})


def call_headers(body: bytes, path: str = "/job", keys: TeamKeys = KEYS, at: Optional[int] = None) -> dict[str, str]:
    return {**signed_headers(keys, method="POST", path=path, body=body, timestamp_ms=at), "Idempotency-Key": "order_stat:x:1", "X-Ax-Worker": "w1"}


class CoreTest(unittest.TestCase):
    def setUp(self) -> None:
        self.recorder = Recorder()
        self.executor = AxExecutor(KEYS, self.recorder.handler, on_error=lambda error, _ctx: self.recorder.errors.append(error))

    def handle(self, body: bytes, headers: Optional[dict[str, str]] = None, path: str = "/job") -> tuple[int, Any]:
        answer = self.executor.handle("POST", path, call_headers(body, path) if headers is None else headers, body)
        return answer.status, json.loads(answer.encoded())

    def test_answers_results_as_the_worker_reads_them(self) -> None:
        self.assertEqual(self.handle(execution_body()), (200, {"success": True, "data": {"rows": 3}}))
        self.assertEqual(self.handle(execution_body(params={"mode": "fail"})), (200, {"success": False, "message": "no orders"}))
        self.assertEqual(self.handle(execution_body(params={"mode": "throw"})), (200, {"success": False, "message": "boom"}))
        self.assertEqual(self.handle(execution_body(params={"mode": "async"})), (202, {"accepted": True}))
        self.assertEqual(self.handle(execution_body(params={"mode": "dict"})), (200, {"success": True, "data": {"as": "dict"}}))
        self.assertEqual(self.handle(execution_body(params={"mode": "none"})), (200, {"success": True}))
        self.assertEqual([type(e) for e in self.recorder.errors], [ValueError])
        ctx = self.recorder.seen[0]
        self.assertEqual((ctx.idempotency_key, ctx.worker_id, ctx.key_version), ("order_stat:x:1", "w1", 1))

    def test_refusals_never_reach_the_handler(self) -> None:
        body = execution_body()
        self.assertEqual(self.handle(body, call_headers(body, keys=TeamKeys("payments", {1: OTHER_KEY})))[1]["error"]["code"], "BAD_SIGNATURE")
        self.assertEqual(self.handle(body, call_headers(body, path="/other"))[0], 401)
        self.assertEqual(self.handle(body, call_headers(body, at=now_ms() - 301_000))[1]["error"]["code"], "STALE_TIMESTAMP")
        status, answer = self.handle(body, {})
        self.assertEqual((status, answer["error"]["code"]), (401, "MISSING_SIGNATURE"))
        invalid = execution_body(attempt=0)
        self.assertEqual(self.handle(invalid)[0], 400)
        self.assertEqual(self.executor.handle("PUT", "/job", call_headers(body), body).status, 405)
        self.assertEqual(self.recorder.seen, [])

    def test_refuses_empty_keys_at_construction(self) -> None:
        with self.assertRaises(ValueError):
            AxExecutor(TeamKeys("payments", {}), self.recorder.handler)


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


class HttpServerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.recorder = Recorder()
        self.server = serve({"/ax/job": AxExecutor(KEYS, self.recorder.handler, body_limit_bytes=4096)}, port=0, log_requests=False)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=lambda: self.server.serve_forever(0.05), daemon=True)
        self.thread.start()

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def test_serves_signed_calls_and_refuses_the_rest(self) -> None:
        body = execution_body()
        self.assertEqual(post(f"{self.url}/ax/job", body, call_headers(body, "/ax/job")), (200, {"success": True, "data": {"rows": 3}}))
        # the query string is part of the signed path
        self.assertEqual(post(f"{self.url}/ax/job?region=eu", body, call_headers(body, "/ax/job?region=eu"))[0], 200)
        self.assertEqual(post(f"{self.url}/ax/job?region=us", body, call_headers(body, "/ax/job?region=eu"))[0], 401)
        status, answer = post(f"{self.url}/ax/job", body, call_headers(body, "/ax/job", keys=TeamKeys("payments", {1: OTHER_KEY})))
        self.assertEqual((status, answer["error"]["code"]), (401, "BAD_SIGNATURE"))
        self.assertEqual(post(f"{self.url}/ax/job", body, {"Content-Type": "application/json"})[1]["error"]["code"], "MISSING_SIGNATURE")
        self.assertEqual(post(f"{self.url}/elsewhere", body, call_headers(body, "/elsewhere"))[0], 404)
        big = execution_body(params={"pad": "x" * 5000})
        self.assertEqual(post(f"{self.url}/ax/job", big, call_headers(big, "/ax/job"))[0], 413)
        self.assertEqual(len(self.recorder.seen), 2)

    def test_a_chunked_body_is_verified_as_sent(self) -> None:
        import http.client

        body = execution_body(params={"mode": "async"})
        connection = http.client.HTTPConnection("127.0.0.1", self.server.server_address[1], timeout=5)
        try:
            connection.request("POST", "/ax/job", body=iter([body[:10], body[10:]]), headers=call_headers(body, "/ax/job"), encode_chunked=True)
            response = connection.getresponse()
            self.assertEqual((response.status, json.loads(response.read())), (202, {"accepted": True}))
        finally:
            connection.close()


class WsgiTest(unittest.TestCase):
    def setUp(self) -> None:
        self.recorder = Recorder()
        self.fallback_calls = 0

        def fallback(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            self.fallback_calls += 1
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"the app"]

        self.app = AxWsgiApp({"/ax/job/": AxExecutor(KEYS, self.recorder.handler)}, app=fallback)

    def call(self, path: str, body: bytes, headers: dict[str, str], method: str = "POST", **environ: str) -> tuple[str, bytes]:
        env: dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path, "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), **environ}
        for name, value in headers.items():
            key = name.upper().replace("-", "_")
            env[key if key == "CONTENT_TYPE" else f"HTTP_{key}"] = value
        setup_testing_defaults(env)
        status: list[str] = []
        chunks = self.app(env, lambda s, _h: status.append(s))
        return status[0], b"".join(chunks)

    def test_serves_its_routes_and_passes_the_rest_on(self) -> None:
        body = execution_body(params={"mode": "async"})
        status, answer = self.call("/ax/job", body, call_headers(body, "/ax/job"))
        self.assertEqual((status, json.loads(answer)), ("202 Accepted", {"accepted": True}))
        status, answer = self.call("/ax/job", body, call_headers(body, "/ax/other"))
        self.assertEqual((status[:3], json.loads(answer)["error"]["code"]), ("401", "BAD_SIGNATURE"))
        self.assertEqual(self.call("/ax/job", body, call_headers(body, "/ax/job"), method="GET")[0][:3], "405")
        self.assertEqual(self.call("/health", b"", {}, method="GET"), ("200 OK", b"the app"))
        self.assertEqual(self.fallback_calls, 1)
        self.assertEqual(len(self.recorder.seen), 1)

    def test_the_signed_path_includes_the_mount_point_and_query(self) -> None:
        body = execution_body()
        status, _ = self.call("/ax/job", body, call_headers(body, "/svc/ax/job?x=%C3%A9"), SCRIPT_NAME="/svc", QUERY_STRING="x=%C3%A9")
        self.assertEqual(status[:3], "200")
        self.assertEqual(request_target({"SCRIPT_NAME": "/svc", "PATH_INFO": "/a b", "QUERY_STRING": ""}), "/svc/a%20b")
        self.assertEqual(request_target({"RAW_URI": "/raw%2Fpath?q=1", "PATH_INFO": "/raw/path"}), "/raw%2Fpath?q=1")

    def test_under_wsgiref(self) -> None:
        class Quiet(WSGIRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = make_server("127.0.0.1", 0, self.app, handler_class=Quiet)
        thread = threading.Thread(target=lambda: server.serve_forever(0.05), daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            body = execution_body(params={"mode": "fail"})
            self.assertEqual(post(f"{url}/ax/job", body, call_headers(body, "/ax/job")), (200, {"success": False, "message": "no orders"}))
            tampered = execution_body(params={"mode": "fail", "x": 1})
            self.assertEqual(post(f"{url}/ax/job", tampered, call_headers(body, "/ax/job"))[0], 401)
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


class RotationOverHttpTest(unittest.TestCase):
    def test_previous_signature_header_is_read(self) -> None:
        executor = AxExecutor(KEYS, lambda ctx: None)
        body = execution_body()
        headers = call_headers(body, keys=TeamKeys("payments", {2: "c" * 64}))
        headers["X-Ax-Previous-Signature"] = sign_v2(KEY, timestamp=headers["X-Ax-Timestamp"], method="POST", path="/job", body=body)
        self.assertEqual(executor.handle("POST", "/job", headers, body).status, 200)


if __name__ == "__main__":
    unittest.main()
