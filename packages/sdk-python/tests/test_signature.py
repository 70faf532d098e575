"""Signature v2: the Node SDK's vectors verify here, and every refusal names what failed."""

from __future__ import annotations

import unittest

from ax_sdk import (
    BadSignatureError,
    BadTimestampError,
    MissingSignatureError,
    SignatureError,
    SignatureV1Error,
    StaleTimestampError,
    TeamKeys,
    UnknownKeyVersionError,
    WrongTeamError,
    sign_v2,
    signed_headers,
    verify_signature,
)

from .support import KEY, OTHER_KEY, VECTORS

KEYS = TeamKeys("payments", {1: KEY})
REQUEST = {"method": "POST", "path": "/job", "body": b'{"a":1}'}
NOW = 1_000_000


def headers(keys: TeamKeys = KEYS, at: int = NOW, **request: object) -> dict[str, str]:
    merged = {**REQUEST, **request}
    return signed_headers(keys, method=str(merged["method"]), path=str(merged["path"]), body=merged["body"], timestamp_ms=at)  # type: ignore[arg-type]


class NodeVectorsTest(unittest.TestCase):
    """tests/vectors.json was computed with the Node SDK's signV2 (test/e2e/python-sdk.test.ts re-checks it)."""

    def test_every_node_signature_is_reproduced_and_verifies(self) -> None:
        self.assertGreaterEqual(len(VECTORS["signatures"]), 5)
        for vector in VECTORS["signatures"]:
            with self.subTest(vector["name"]):
                body = vector["body"].encode("utf-8")
                signed = sign_v2(vector["key"], timestamp=vector["timestamp"], method=vector["method"], path=vector["path"], body=body)
                self.assertEqual(signed, vector["signature"])
                received = {
                    "X-Ax-Team": "payments",
                    "X-Ax-Key-Version": "3",
                    "X-Ax-Timestamp": vector["timestamp"],
                    "X-Ax-Signature": vector["signature"],
                }
                version = verify_signature(
                    TeamKeys("payments", {3: vector["key"]}),
                    headers=received,
                    method=vector["method"],
                    path=vector["path"],
                    body=body,
                    now_ms_value=int(vector["timestamp"]),
                )
                self.assertEqual(version, 3)

    def test_the_shared_vector_of_core_and_the_node_sdk(self) -> None:
        vector = VECTORS["signatures"][0]
        self.assertEqual(vector["signature"], "v2=ae7cb030034ea3382c3a1676cc7bc396970b5044d45c7794953928c743414c9a")
        # a str body is signed as its UTF-8 bytes
        self.assertEqual(sign_v2(vector["key"], timestamp=vector["timestamp"], method="POST", path=vector["path"], body=vector["body"]), vector["signature"])

    def test_the_node_rotation_vector_verifies_with_only_the_previous_key_or_both(self) -> None:
        rotation = VECTORS["rotation"]
        received = rotation["headers"]
        self.assertEqual(received["x-ax-key-version"], "2")
        common = {"headers": received, "method": rotation["method"], "path": rotation["path"], "body": rotation["body"].encode(), "now_ms_value": int(received["x-ax-timestamp"])}
        self.assertEqual(verify_signature(TeamKeys("payments", {1: rotation["previousKey"]}), **common), 1)  # type: ignore[arg-type]
        self.assertEqual(verify_signature(TeamKeys("payments", {1: rotation["previousKey"], 2: rotation["currentKey"]}), **common), 2)  # type: ignore[arg-type]
        without_previous = {k: v for k, v in received.items() if k != "x-ax-previous-signature"}
        with self.assertRaises(UnknownKeyVersionError):
            verify_signature(TeamKeys("payments", {1: rotation["previousKey"]}), **{**common, "headers": without_previous})  # type: ignore[arg-type]
        forged = {**received, "x-ax-previous-signature": "v2=" + "0" * 64}
        with self.assertRaises(BadSignatureError) as caught:
            verify_signature(TeamKeys("payments", {1: rotation["previousKey"]}), **{**common, "headers": forged})  # type: ignore[arg-type]
        self.assertEqual(caught.exception.header, "X-Ax-Previous-Signature")


class VerifyTest(unittest.TestCase):
    def verify(self, received: dict[str, str], keys: TeamKeys = KEYS, at: int = NOW, **request: object) -> int:
        merged = {**REQUEST, **request}
        return verify_signature(keys, headers=received, method=str(merged["method"]), path=str(merged["path"]), body=merged["body"], now_ms_value=at)  # type: ignore[arg-type]

    def test_accepts_its_own_signature_with_headers_in_any_case(self) -> None:
        signed = headers()
        self.assertEqual(self.verify(signed), 1)
        self.assertEqual(self.verify({k.lower(): v for k, v in signed.items()}), 1)
        self.assertEqual(self.verify({k.upper(): v for k, v in signed.items()}), 1)

    def test_refuses_another_body_path_method_and_key(self) -> None:
        signed = headers()
        for change in ({"body": b'{"a":2}'}, {"path": "/other-job"}, {"path": "/job?x=1"}, {"method": "PUT"}):
            with self.subTest(change), self.assertRaises(BadSignatureError):
                self.verify(signed, **change)
        with self.assertRaises(BadSignatureError):
            self.verify(signed, keys=TeamKeys("payments", {1: OTHER_KEY}))

    def test_names_the_missing_header(self) -> None:
        signed = headers()
        for name in ("X-Ax-Timestamp", "X-Ax-Signature", "X-Ax-Team", "X-Ax-Key-Version"):
            with self.subTest(name):
                with self.assertRaises(MissingSignatureError) as caught:
                    self.verify({k: v for k, v in signed.items() if k != name})
                self.assertEqual(caught.exception.header, name)
                self.assertEqual(caught.exception.code, "MISSING_SIGNATURE")
                self.assertIn(name, str(caught.exception))

    def test_refuses_v1_bad_and_stale_timestamps_wrong_team_and_unknown_versions(self) -> None:
        signed = headers()
        cases: list[tuple[dict[str, str], int, type[SignatureError], str]] = [
            ({**signed, "X-Ax-Signature": "sha256=" + "0" * 64}, NOW, SignatureV1Error, "SIGNATURE_V1"),
            ({**signed, "X-Ax-Timestamp": "soon"}, NOW, BadTimestampError, "BAD_TIMESTAMP"),
            (signed, NOW + 300_001, StaleTimestampError, "STALE_TIMESTAMP"),
            (signed, NOW - 300_001, StaleTimestampError, "STALE_TIMESTAMP"),
            ({**signed, "X-Ax-Team": "orders"}, NOW, WrongTeamError, "WRONG_TEAM"),
            ({**signed, "X-Ax-Key-Version": "7"}, NOW, UnknownKeyVersionError, "UNKNOWN_KEY_VERSION"),
            ({**signed, "X-Ax-Key-Version": "0"}, NOW, UnknownKeyVersionError, "UNKNOWN_KEY_VERSION"),
            ({**signed, "X-Ax-Signature": "v2=" + "0" * 64}, NOW, BadSignatureError, "BAD_SIGNATURE"),
            ({**signed, "X-Ax-Signature": "v2=é"}, NOW, BadSignatureError, "BAD_SIGNATURE"),
        ]
        for received, at, error, code in cases:
            with self.subTest(code), self.assertRaises(error) as caught:
                self.verify(received, at=at)
            self.assertEqual(caught.exception.code, code)
        # exactly at the edge of the window: accepted
        self.assertEqual(self.verify(signed, at=NOW + 300_000), 1)

    def test_a_service_holding_only_the_previous_key_verifies_the_previous_signature(self) -> None:
        rotated = TeamKeys("payments", {2: "c" * 64})
        signed = headers(rotated)
        signed["X-Ax-Previous-Signature"] = sign_v2(KEY, timestamp=str(NOW), **REQUEST)  # type: ignore[arg-type]
        self.assertEqual(signed["X-Ax-Key-Version"], "2")
        self.assertEqual(self.verify(signed), 1)
        self.assertEqual(self.verify(signed, keys=TeamKeys("payments", {1: KEY, 2: "c" * 64})), 2)


class TeamKeysTest(unittest.TestCase):
    def test_signs_with_the_newest_version(self) -> None:
        keys = TeamKeys("payments", {1: KEY, 2: OTHER_KEY})
        self.assertEqual(keys.current(), (2, OTHER_KEY))
        self.assertEqual(headers(keys)["X-Ax-Key-Version"], "2")

    def test_parse(self) -> None:
        self.assertEqual(TeamKeys.parse("payments", f" 2:{OTHER_KEY}, 1:{KEY} ").keys, {1: KEY, 2: OTHER_KEY})
        for bad in ("", "abc", "0:abc", "x:abc", "1:"):
            with self.subTest(bad), self.assertRaises(ValueError):
                TeamKeys.parse("payments", bad)

    def test_from_executor_keys_takes_what_the_admin_api_answers(self) -> None:
        keys = TeamKeys.from_executor_keys([{"team": "payments", "keyVersion": 2, "key": OTHER_KEY, "previousValidUntil": "…"}, {"team": "payments", "keyVersion": 1, "key": KEY}])
        self.assertEqual((keys.team, dict(keys.keys)), ("payments", {1: KEY, 2: OTHER_KEY}))
        bad_lists: list[list[dict[str, object]]] = [
            [],
            [{"team": "payments", "keyVersion": 1, "key": KEY}, {"team": "orders", "keyVersion": 2, "key": KEY}],
            [{"team": "payments", "keyVersion": "1", "key": KEY}],
            [{"team": "payments", "keyVersion": 1, "key": ""}],
            [{"team": "payments", "keyVersion": 1, "key": KEY}, {"team": "payments", "keyVersion": 1, "key": OTHER_KEY}],
        ]
        for bad in bad_lists:
            with self.subTest(bad), self.assertRaises(ValueError):
                TeamKeys.from_executor_keys(bad)

    def test_refuses_bad_versions_and_empty_key_sets(self) -> None:
        with self.assertRaises(ValueError):
            TeamKeys("payments", {0: KEY})
        with self.assertRaises(ValueError):
            TeamKeys("payments", {}).current()


if __name__ == "__main__":
    unittest.main()
