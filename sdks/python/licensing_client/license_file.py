"""Offline check of a signed licence file (``POST /api/v1/licenses/{key}/file``).

A file is ``{kid, algorithm, payload, signature}``: the payload is base64 JSON signed with Ed25519 by
the product key named ``kid``. An app ships the product's public keys
(``GET /api/v1/products/{id}/signing-keys``) and checks a file with no network, in the order
docs/sdk-conformance.md gives, answering the first failure's code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union

from .dates import Instant, instant_ms, parse_js_date
from .encoding import base64_to_bytes, pem_to_der

#: How far ``issued_at`` may lie ahead of this machine's clock before the clock is deemed turned back.
CLOCK_SKEW_SECONDS = 300

#: Every code verify_license_file() answers.
CODES = (
    "valid",
    "malformed",
    "unsupported_algorithm",
    "unknown_key",
    "bad_signature",
    "kid_mismatch",
    "not_active",
    "expired",
    "not_yet_valid",
    "fingerprint_required",
    "fingerprint_mismatch",
)

PublicKeys = Union[Sequence[Mapping], Mapping]


class Verification(NamedTuple):
    """``code`` is ``valid`` or why the file is refused; ``payload`` is the signed licence facts
    (a dict) when valid, else None."""

    valid: bool
    code: str
    payload: Optional[Dict[str, Any]]


def _fail(code: str) -> Verification:
    return Verification(False, code, None)


def public_key_list(public_keys: PublicKeys) -> List[Mapping]:
    """The keys as a list: a list of ``{kid, public_key_pem}`` or the REST body ``{data: [...]}``."""
    given = public_keys.get("data") if isinstance(public_keys, Mapping) else public_keys
    if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
        raise TypeError(
            "public_keys must be a list of {kid, public_key_pem} (or the REST body {data: [...]}), got %s"
            % type(public_keys).__name__
        )
    for key in given:
        if (
            not isinstance(key, Mapping)
            or not isinstance(key.get("kid"), str)
            or not isinstance(key.get("public_key_pem"), str)
        ):
            raise TypeError("every public key needs a kid and a public_key_pem string")
    return list(given)


_loaded: Dict[str, Any] = {}


def _ed25519_key(pem: str, kid: str):
    """The public key of a SPKI PEM (kept: an app checks with the same few keys every time).
    Raises ValueError for anything but an Ed25519 public key: the keys shipped with the app are wrong."""
    key = _loaded.get(pem)
    if key is None:
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        from cryptography.hazmat.primitives.serialization import load_der_public_key

        try:
            key = load_der_public_key(pem_to_der(pem, "PUBLIC KEY"))
        except (ValueError, TypeError, UnsupportedAlgorithm) as err:
            raise ValueError("the public key %s is not a readable SPKI PEM: %s" % (kid, err)) from None
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("the public key %s is not an Ed25519 key" % kid)
        if len(_loaded) < 64:
            _loaded[pem] = key
    return key


def _reject_constant(name: str) -> None:
    # JSON has no NaN or Infinity; Python's json reads them, JavaScript's JSON.parse does not.
    raise ValueError("not JSON: %s" % name)


def verify_license_file(
    file: Union[Mapping, str, bytes],
    public_keys: PublicKeys,
    fingerprint: Optional[str] = None,
    now: Instant = None,
) -> Verification:
    """Checks a licence file offline; never raises for a bad file (only for unusable ``public_keys``).

    :param file: the file as the API answered it (a dict), or its JSON text.
    :param public_keys: the product's keys: a list of ``{kid, public_key_pem}`` or ``{data: [...]}``.
    :param fingerprint: this machine's fingerprint. A file bound to a machine is refused without one
        (``fingerprint_required``): it proves nothing on a machine that cannot say which it is.
    :param now: the time to check against: a datetime, seconds since the epoch or ISO 8601 text
        (default: the clock).
    """
    keys = public_key_list(public_keys)
    now_ms = instant_ms(now)
    if isinstance(file, (str, bytes, bytearray)):
        try:
            file = json.loads(file, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return _fail("malformed")
    if not isinstance(file, Mapping) or not all(
        isinstance(file.get(field), str) for field in ("kid", "algorithm", "payload", "signature")
    ):
        return _fail("malformed")
    if file["algorithm"] != "Ed25519":
        return _fail("unsupported_algorithm")
    key = next((k for k in keys if k["kid"] == file["kid"]), None)
    if key is None:
        return _fail("unknown_key")
    try:
        payload_bytes = base64_to_bytes(file["payload"])
        signature = base64_to_bytes(file["signature"])
    except ValueError:
        return _fail("malformed")

    from cryptography.exceptions import InvalidSignature

    public_key = _ed25519_key(key["public_key_pem"], key["kid"])
    try:
        # The bytes exactly as signed: parsing and serialising them again would change them.
        public_key.verify(signature, payload_bytes)
    except (InvalidSignature, ValueError):
        return _fail("bad_signature")

    try:
        # utf-8-sig: a leading byte-order mark is dropped, as TextDecoder drops it.
        payload = json.loads(payload_bytes.decode("utf-8-sig"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return _fail("malformed")
    if not isinstance(payload, dict):
        return _fail("malformed")
    # The kid inside is signed; the one outside is not, so they must agree.
    if payload.get("kid") != file["kid"]:
        return _fail("kid_mismatch")
    valid_until = parse_js_date(payload.get("valid_until"))
    issued_at = parse_js_date(payload.get("issued_at"))
    if valid_until is None or issued_at is None:
        return _fail("malformed")
    if payload.get("status") != "active":
        return _fail("not_active")
    if valid_until < now_ms:
        return _fail("expired")
    if issued_at > now_ms + CLOCK_SKEW_SECONDS * 1000:
        return _fail("not_yet_valid")
    bound_to = payload.get("fingerprint")
    if bound_to is not None:
        # A file bound to one machine is valid on that machine only.
        if fingerprint is None:
            return _fail("fingerprint_required")
        if not isinstance(bound_to, str) or bound_to != fingerprint:
            return _fail("fingerprint_mismatch")
    return Verification(True, "valid", payload)
