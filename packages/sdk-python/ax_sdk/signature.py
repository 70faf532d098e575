"""Signature v2, as ax workers, business endpoints and the report/claim endpoints use it.

ADMIN-API.md "HTTP executors"::

    X-Ax-Team: <team>   X-Ax-Key-Version: <n>   X-Ax-Timestamp: <unix ms>
    X-Ax-Signature: v2=<hex HMAC-SHA256(key, "v2\\n<timestamp>\\n<METHOD>\\n<path>\\n<body>")>

``key`` is the team's executor key of version n (``GET /api/v1/teams/{team}/executor-key``,
a 64-character hex string, used as the HMAC key *as text*, exactly as ax hands it out), never
the master ``AX_EXECUTOR_SECRET``. ``<path>`` is the request's path with its query string
exactly as sent, so a signature made for one execution's ``/report`` does not verify at
another's. During a key rotation's grace a worker also sends ``X-Ax-Previous-Signature``, made
with version n-1, so a service that has not loaded the new key yet keeps verifying.

The same scheme as the Node SDK's ``packages/sdk/src/signature.ts``; ``tests/vectors.json``
holds signatures computed by it, and ``test/e2e/python-sdk.test.ts`` checks both directions.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Union

__all__ = [
    "DEFAULT_MAX_SKEW_MS",
    "TeamKeys",
    "KeysLike",
    "resolve_keys",
    "sign_v2",
    "signed_headers",
    "verify_signature",
    "now_ms",
    "SignatureError",
    "MissingSignatureError",
    "SignatureV1Error",
    "BadTimestampError",
    "StaleTimestampError",
    "WrongTeamError",
    "UnknownKeyVersionError",
    "BadSignatureError",
]

#: Default accepted distance between a request's timestamp and the receiver's clock: 5 min.
DEFAULT_MAX_SKEW_MS = 300_000

_TIMESTAMP = re.compile(r"\d{1,16}")
_KEY_VERSION = re.compile(r"[1-9]\d{0,8}")

Body = Union[bytes, bytearray, memoryview, str]


def now_ms() -> int:
    """The local clock in unix milliseconds (what ``X-Ax-Timestamp`` carries)."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class TeamKeys:
    """A team's executor keys as a service holds them: version -> key (hex, as ax hands it out).

    Hold one version, or two while a rotation's grace lasts (the current and the previous one).
    """

    team: str
    keys: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for version, key in self.keys.items():
            if not isinstance(version, int) or isinstance(version, bool) or version < 1:
                raise ValueError(f"ax_sdk: key versions are positive integers, got {version!r}")
            if not isinstance(key, str) or key == "":
                raise ValueError(f"ax_sdk: the key of version {version} must be a non-empty string")

    @classmethod
    def parse(cls, team: str, text: str) -> "TeamKeys":
        """Keys from ``"<version>:<key>[,<version>:<key>]"``, e.g. ``"2:ab12…,1:cd34…"``.

        Convenient for one environment variable. Raises ``ValueError`` naming the bad entry.
        """
        keys: dict[int, str] = {}
        for entry in (part.strip() for part in text.split(",")):
            if entry == "":
                continue
            version, sep, key = entry.partition(":")
            if sep == "" or not _KEY_VERSION.fullmatch(version.strip()) or key.strip() == "":
                raise ValueError(f"ax_sdk: {entry[:12]!r}… is not <version>:<key> (e.g. 1:ab12…)")
            keys[int(version)] = key.strip()
        if not keys:
            raise ValueError("ax_sdk: no executor key given (<version>:<key>, from GET /api/v1/teams/{team}/executor-key)")
        return cls(team=team, keys=keys)

    @classmethod
    def from_executor_keys(cls, entries: "Iterable[Mapping[str, Any]]") -> "TeamKeys":
        """Keys from what ``GET /api/v1/teams/{team}/executor-key`` answers, one entry per version:
        ``[{"team": "orders", "keyVersion": 2, "key": "…"}, {"team": "orders", "keyVersion": 1, …}]``
        (extra fields are ignored). Raises ``ValueError`` for an empty list, mixed teams, a bad
        version or two different keys of one version.
        """
        team: Optional[str] = None
        keys: dict[int, str] = {}
        for entry in entries:
            entry_team, version, key = entry.get("team"), entry.get("keyVersion"), entry.get("key")
            if not isinstance(entry_team, str) or entry_team == "":
                raise ValueError("ax_sdk: every executor key needs its team")
            if team is not None and entry_team != team:
                raise ValueError(f"ax_sdk: the keys mix teams {team!r} and {entry_team!r}; one executor verifies one team's calls")
            team = entry_team
            if not isinstance(version, int) or isinstance(version, bool) or version < 1:
                raise ValueError(f"ax_sdk: key version {version!r} is not a positive integer")
            if not isinstance(key, str) or key == "":
                raise ValueError(f"ax_sdk: the key of version {version} is empty (is the environment variable set?)")
            if keys.get(version, key) != key:
                raise ValueError(f"ax_sdk: two different keys for version {version}")
            keys[version] = key
        if team is None:
            raise ValueError("ax_sdk: no executor key given (a list of what GET /api/v1/teams/{team}/executor-key answers)")
        return cls(team=team, keys=keys)

    def current(self) -> tuple[int, str]:
        """The newest version and its key (the one a service signs reports and claims with)."""
        if not self.keys:
            raise ValueError("ax_sdk: TeamKeys holds no key (version -> key, from GET /api/v1/teams/{team}/executor-key)")
        version = max(self.keys)
        return version, self.keys[version]


#: Keys as the SDK takes them: ``TeamKeys``, or a list of what the admin API answers
#: (``[{"team", "keyVersion", "key"}]``, see :meth:`TeamKeys.from_executor_keys`).
KeysLike = Union[TeamKeys, Iterable[Mapping[str, Any]]]


def resolve_keys(keys: KeysLike) -> TeamKeys:
    """``keys`` as ``TeamKeys`` (checked: at least one key). Raises ``ValueError``/``TypeError`` saying what to pass."""
    if isinstance(keys, TeamKeys):
        keys.current()
        return keys
    if isinstance(keys, (str, bytes, Mapping)):
        raise TypeError("ax_sdk: keys are TeamKeys(team, {version: key}) or a list of what GET /api/v1/teams/{team}/executor-key answers")
    return TeamKeys.from_executor_keys(keys)


def _as_bytes(body: Body) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    return bytes(body)


def sign_v2(key: str, *, timestamp: str, method: str, path: str, body: Body) -> str:
    """The ``X-Ax-Signature`` value of a request under ``key``: ``v2=<64 hex digits>``.

    ``body`` is the raw bytes as sent (a ``str`` is encoded as UTF-8); never re-serialise JSON.
    """
    mac = hmac.new(key.encode("utf-8"), digestmod=hashlib.sha256)
    mac.update(f"v2\n{timestamp}\n{method.upper()}\n{path}\n".encode("utf-8"))
    mac.update(_as_bytes(body))
    return "v2=" + mac.hexdigest()


def signed_headers(keys: TeamKeys, *, method: str, path: str, body: Body, timestamp_ms: Optional[int] = None) -> dict[str, str]:
    """Headers of a signed request from a business service to the admin API (report, claim).

    Signed with the newest version of ``keys``; ``timestamp_ms`` defaults to the local clock.
    """
    version, key = keys.current()
    timestamp = str(now_ms() if timestamp_ms is None else timestamp_ms)
    return {
        "Content-Type": "application/json",
        "X-Ax-Team": keys.team,
        "X-Ax-Key-Version": str(version),
        "X-Ax-Timestamp": timestamp,
        "X-Ax-Signature": sign_v2(key, timestamp=timestamp, method=method, path=path, body=body),
    }


class SignatureError(Exception):
    """A signed request was refused. ``code`` is the Node SDK's ``SignatureProblem`` name.

    Answer it with HTTP 401 ``{"error": {"code": code, "message": str(error)}}``.
    """

    code = "BAD_SIGNATURE"


class MissingSignatureError(SignatureError):
    """A signature header is absent; ``header`` names the first missing one."""

    code = "MISSING_SIGNATURE"

    def __init__(self, header: str) -> None:
        super().__init__(f"the {header} header is missing (X-Ax-Team, X-Ax-Key-Version, X-Ax-Timestamp and X-Ax-Signature are required)")
        self.header = header


class SignatureV1Error(SignatureError):
    """An ``sha256=`` (v1) signature: no longer accepted."""

    code = "SIGNATURE_V1"

    def __init__(self) -> None:
        super().__init__("signature v1 (sha256=…) is no longer accepted (this service verifies v2)")


class BadTimestampError(SignatureError):
    """``X-Ax-Timestamp`` is not unix milliseconds."""

    code = "BAD_TIMESTAMP"

    def __init__(self, timestamp: str) -> None:
        super().__init__(f"X-Ax-Timestamp must be unix milliseconds, got {timestamp[:32]!r}")
        self.timestamp = timestamp


class StaleTimestampError(SignatureError):
    """``X-Ax-Timestamp`` is farther than the accepted skew from this clock."""

    code = "STALE_TIMESTAMP"

    def __init__(self, skew_ms: int, max_skew_ms: int) -> None:
        super().__init__(f"the request timestamp is {skew_ms} ms from this clock (at most {max_skew_ms} ms accepted)")
        self.skew_ms = skew_ms
        self.max_skew_ms = max_skew_ms


class WrongTeamError(SignatureError):
    """Signed for another team than the one this service holds keys of."""

    code = "WRONG_TEAM"

    def __init__(self, team: str, expected: str) -> None:
        super().__init__(f"signed for team {team[:64]!r}, this service holds the keys of team {expected!r}")
        self.team = team
        self.expected = expected


class UnknownKeyVersionError(SignatureError):
    """Signed with a key version this service does not hold (nor its predecessor, with a previous signature)."""

    code = "UNKNOWN_KEY_VERSION"

    def __init__(self, key_version: str, held: list[int]) -> None:
        super().__init__(f"signed with key version {key_version[:16]!r}; this service holds version(s) {', '.join(map(str, held)) or 'none'}")
        self.key_version = key_version
        self.held = held


class BadSignatureError(SignatureError):
    """The signature does not match the method, path, body, timestamp and key."""

    code = "BAD_SIGNATURE"

    def __init__(self, header: str = "X-Ax-Signature") -> None:
        super().__init__(f"the request signature ({header}) is wrong: method, path, body, timestamp and key are signed")
        self.header = header


def _matches(key: str, signature: str, *, timestamp: str, method: str, path: str, body: Body) -> bool:
    expected = sign_v2(key, timestamp=timestamp, method=method, path=path, body=body).encode("utf-8")
    return hmac.compare_digest(expected, signature.encode("utf-8"))


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    value = headers.get(name)
    if value is None:
        value = headers.get(name.lower())
    if value is None:
        lowered = name.lower()
        for k, v in headers.items():
            if k.lower() == lowered:
                return v
    return value


def verify_signature(
    keys: TeamKeys,
    *,
    headers: Mapping[str, str],
    method: str,
    path: str,
    body: Body,
    now_ms_value: Optional[int] = None,
    max_skew_ms: int = DEFAULT_MAX_SKEW_MS,
) -> int:
    """Checks a received request against the service's keys, as the Node SDK's ``verifySignature``.

    ``headers`` are the request's headers (any case); ``path`` is the request target exactly as
    received (path and query); ``body`` the raw bytes. Returns the key version that verified it;
    raises a ``SignatureError`` subclass naming what failed. The comparison is constant-time.
    """
    team = _header(headers, "X-Ax-Team")
    key_version = _header(headers, "X-Ax-Key-Version")
    timestamp = _header(headers, "X-Ax-Timestamp")
    signature = _header(headers, "X-Ax-Signature")
    previous_signature = _header(headers, "X-Ax-Previous-Signature")
    if timestamp is None:
        raise MissingSignatureError("X-Ax-Timestamp")
    if signature is None:
        raise MissingSignatureError("X-Ax-Signature")
    if signature.startswith("sha256="):
        raise SignatureV1Error()
    if team is None:
        raise MissingSignatureError("X-Ax-Team")
    if key_version is None:
        raise MissingSignatureError("X-Ax-Key-Version")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise BadTimestampError(timestamp)
    skew = abs((now_ms() if now_ms_value is None else now_ms_value) - int(timestamp))
    if skew > max_skew_ms:
        raise StaleTimestampError(skew, max_skew_ms)
    if team != keys.team:
        raise WrongTeamError(team, keys.team)
    held = sorted(keys.keys)
    if not _KEY_VERSION.fullmatch(key_version):
        raise UnknownKeyVersionError(key_version, held)
    version = int(key_version)
    current = keys.keys.get(version)
    if current is not None:
        if _matches(current, signature, timestamp=timestamp, method=method, path=path, body=body):
            return version
        raise BadSignatureError()
    # A rotation this service has not caught up with: the worker's signature with version - 1.
    previous = keys.keys.get(version - 1)
    if previous is not None and previous_signature is not None:
        if _matches(previous, previous_signature, timestamp=timestamp, method=method, path=path, body=body):
            return version - 1
        raise BadSignatureError("X-Ax-Previous-Signature")
    raise UnknownKeyVersionError(key_version, held)
