#!/usr/bin/env python3
"""An ax HTTP executor in Python: answers 202 at once, reports the result a moment later.

    AX_TEAM=payments AX_EXECUTOR_KEYS=1:<key> AX_ADMIN_URL=http://127.0.0.1:8080 \\
        python3 examples/executor.py

Environment:
  AX_TEAM            the team the task belongs to (required)
  AX_EXECUTOR_KEYS   <version>:<key>[,<version>:<key>] from GET /api/v1/teams/{team}/executor-key
                     (hold the previous version too during a rotation's grace; required)
  AX_ADMIN_URL       the admin API the reports go to, e.g. http://ax-admin:8080 (required)
  HOST, PORT         where to listen; default 127.0.0.1 and 8090 (0 = any free port)
  AX_REPORT_DELAY_S  how long the "work" takes before the report; default 1

The task: {"exec": {"type": "http", "url": "http://<host>:<port>/ax/report-later"}}. A call with
params {"fail": "why"} reports a failure instead. A call with a bad signature is refused with
401 by the SDK before this code sees it. `ax_sdk` must be importable: install the
ax-scheduler-sdk wheel (README "Build and install"), or run it from packages/sdk-python.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sys
import threading

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # ax_sdk next to examples/

from ax_sdk import AxApiError, AxClient, AxExecutor, ExecutionContext, HandlerResult, Result, TeamKeys  # noqa: E402
from ax_sdk.http_server import serve  # noqa: E402

ROUTE = "/ax/report-later"


def required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if value == "":
        sys.exit(f"examples/executor.py: {name} is required (see the top of this file)")
    return value


def main() -> None:
    try:
        keys = TeamKeys.parse(required("AX_TEAM"), required("AX_EXECUTOR_KEYS"))
        client = AxClient(required("AX_ADMIN_URL"), keys)
        delay_s = float(os.environ.get("AX_REPORT_DELAY_S", "1"))
    except ValueError as error:
        sys.exit(f"examples/executor.py: {error}")
    pending: list[threading.Thread] = []

    def work_then_report(ctx: ExecutionContext) -> None:
        # the business work would go here; key its writes on ctx.idempotency_key so a retry
        # of the same run never doubles them
        failure = ctx.params.get("fail")
        result = (
            Result(False, f"asked to fail: {failure}")
            if failure
            else Result(True, "done", {"bizDate": ctx.biz_date, "attempt": ctx.attempt, "idempotencyKey": ctx.idempotency_key})
        )
        try:
            answer = ctx.report(result)
            print(f"reported {ctx.execution_id} success={result.success} duplicate={answer.duplicate}", flush=True)
        except (AxApiError, OSError) as error:
            print(f"report of {ctx.execution_id} failed: {error}", flush=True)

    def handler(ctx: ExecutionContext) -> HandlerResult:
        print(f"call {ctx.execution_id} task={ctx.task_name} attempt={ctx.attempt} key={ctx.idempotency_key}", flush=True)
        timer = threading.Timer(delay_s, work_then_report, args=(ctx,))
        pending.append(timer)
        timer.start()
        return ctx.accepted()

    server = serve({ROUTE: AxExecutor(keys, handler, client=client)}, host=os.environ.get("HOST", "127.0.0.1"), port=int(os.environ.get("PORT", "8090")))
    host, port = server.server_address[0], server.server_address[1]

    def stop(_signum: int, _frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"ax example executor listening on http://{host}:{port}{ROUTE} (team {keys.team}, key versions {sorted(keys.keys)})", flush=True)
    server.serve_forever(0.2)
    server.server_close()
    for timer in pending:
        timer.join()  # reports already promised are still sent
    print("stopped", flush=True)


if __name__ == "__main__":
    main()
