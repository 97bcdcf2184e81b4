"""Verifying webhook deliveries on the receiving side (Standard Webhooks, standardwebhooks.com).

The signed content is ``{webhook-id}.{webhook-timestamp}.{raw body}``, HMAC-SHA256 with the
base64-decoded part of the endpoint's ``whsec_…`` secret. ``webhook-signature`` holds space-separated
``v1,<base64>`` values (two while a secret rotates) and one match is enough. The timestamp must be
whole seconds within five minutes of now, so a captured delivery cannot be replayed later.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import NamedTuple, Optional, Union

from .dates import Instant, instant_ms
from .encoding import base64_to_bytes

#: Allowed distance between ``webhook-timestamp`` and now, in seconds.
TOLERANCE_SECONDS = 300

# [0-9], not \d: Python's \d also matches other scripts' digits, and int() reads them.
_TIMESTAMP = re.compile(r"[0-9]{1,12}")

Body = Union[bytes, bytearray, memoryview, str]


class WebhookVerification(NamedTuple):
    """``code`` is ``valid``, ``missing_headers``, ``invalid_timestamp``,
    ``timestamp_out_of_tolerance`` or ``bad_signature``."""

    valid: bool
    code: str


def _key(secret: str) -> bytes:
    if not isinstance(secret, str) or secret == "":
        raise ValueError("secret must be the endpoint's whsec_… signing secret")
    try:
        key = base64_to_bytes(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
    except ValueError:
        raise ValueError("secret must be the endpoint's whsec_… signing secret (base64 after the prefix)") from None
    if not key:
        raise ValueError("secret must be the endpoint's whsec_… signing secret (it is empty)")
    return key


def _raw(body: Body) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise TypeError(
        "body must be the raw request body (bytes), got %s: a parsed and re-serialised body does not verify"
        % type(body).__name__
    )


def _signed(id: str, timestamp: str, body: bytes) -> bytes:
    return ("%s.%s." % (id, timestamp)).encode("utf-8") + body


def verify_webhook(
    body: Body,
    id: Optional[str],
    timestamp: Union[str, int, None],
    signature_header: Optional[str],
    secret: str,
    now: Instant = None,
    tolerance: float = TOLERANCE_SECONDS,
) -> WebhookVerification:
    """Checks one delivery: the raw body as received and its ``webhook-id``, ``webhook-timestamp``
    and ``webhook-signature`` headers. Never raises for a bad delivery; raises ValueError for an
    unusable ``secret``.

    :param now: the time to check against (default: the clock): a datetime or seconds since the epoch.
    """
    raw = _raw(body)
    key = _key(secret)
    if isinstance(timestamp, int) and not isinstance(timestamp, bool):
        timestamp = str(timestamp)
    if not id or not timestamp or not signature_header:
        return WebhookVerification(False, "missing_headers")
    if not isinstance(timestamp, str) or not _TIMESTAMP.fullmatch(timestamp):
        return WebhookVerification(False, "invalid_timestamp")
    if abs(instant_ms(now) / 1000 - int(timestamp)) > tolerance:
        return WebhookVerification(False, "timestamp_out_of_tolerance")

    expected = hmac.new(key, _signed(id, timestamp, raw), hashlib.sha256).digest()
    for part in signature_header.split(" "):
        fields = part.split(",")
        if fields[0] != "v1" or len(fields) < 2 or not fields[1]:
            continue
        try:
            given = base64_to_bytes(fields[1])
        except ValueError:
            continue
        if hmac.compare_digest(expected, given):
            return WebhookVerification(True, "valid")
    return WebhookVerification(False, "bad_signature")


def sign_webhook(secret: str, id: str, timestamp: Union[str, int], body: Body) -> str:
    """The ``webhook-signature`` value the sender puts on a delivery (``v1,<base64>``): for tests
    of a receiver."""
    digest = hmac.new(_key(secret), _signed(id, str(timestamp), _raw(body)), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")
