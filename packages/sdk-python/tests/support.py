"""Shared helpers of the unit tests."""

from __future__ import annotations

import json
import pathlib
from datetime import datetime, timedelta, timezone
from typing import Any

VECTORS: dict[str, Any] = json.loads((pathlib.Path(__file__).parent / "vectors.json").read_text("utf-8"))

KEY = "a" * 64
OTHER_KEY = "f" * 64


def execution_body(**overrides: Any) -> bytes:
    """An execution body as a worker sends it (compact JSON, UTF-8)."""
    body: dict[str, Any] = {
        "executionId": "e1",
        "instanceId": "1",
        "taskName": "order_stat",
        "team": "payments",
        "bizDate": "2026-12-01",
        "expectedTime": "2026-12-01T02:00:00.000Z",
        "attempt": 1,
        "params": {"n": 1},
        "traceId": "t1",
        "deadline": (datetime.now(timezone.utc) + timedelta(minutes=1)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    body.update(overrides)
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
