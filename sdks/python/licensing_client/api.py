"""The REST calls an app makes with its licence key alone (docs/api.md "App credentials"): each a
thin request on the Transport. LicensedApp builds on these; use them directly to act on an
activation you named yourself (as the conformance command does)."""

from __future__ import annotations

import urllib.parse
from typing import Any, Dict, Iterable, Optional

from .encoding import js_trim
from .transport import Transport

# encodeURIComponent's unreserved set, so that a key's path segment is the one the TypeScript SDK sends.
_SEGMENT_SAFE = "!~*'()"


def segment(value: str, name: str) -> str:
    """One path segment, percent-encoded."""
    if not isinstance(value, str) or js_trim(value) == "":
        raise ValueError("%s must be a non-empty string" % name)
    encoded = urllib.parse.quote(js_trim(value), safe=_SEGMENT_SAFE)
    if encoded in (".", ".."):
        raise ValueError('%s must not be "." or ".."' % name)
    return encoded


def _optional(value: Optional[str], name: str) -> Optional[str]:
    if value is not None and (not isinstance(value, str) or value == ""):
        raise ValueError("%s must be a non-empty string when given" % name)
    return value


def code_list(values: Iterable[str], name: str) -> list:
    """A list of non-empty strings (a lone string is refused: it would be read letter by letter)."""
    if isinstance(values, (str, bytes)):
        raise TypeError("%s must be a list of strings, not one string" % name)
    listed = list(values)
    if any(not isinstance(v, str) or v == "" for v in listed):
        raise TypeError("%s must be a list of non-empty strings" % name)
    return listed


class LicenseApi:
    """The app routes for one licence: validate, activations, heartbeats, licence files, update feed."""

    def __init__(self, transport: Transport, license_key: str) -> None:
        self.transport = transport
        self.license_key = js_trim(license_key)
        self._path = "/api/v1/licenses/" + segment(license_key, "license_key")

    def validate(
        self,
        fingerprint: Optional[str] = None,
        product_id: Optional[str] = None,
        entitlements: Optional[Iterable[str]] = None,
    ) -> Dict[str, Any]:
        """``POST /api/v1/keys/validate``: ``{valid, code, detail, next_action, license, …}``.
        A "no" is an answer (``valid: false``), not an error."""
        body: Dict[str, Any] = {"key": self.license_key}
        if product_id is not None:
            body["product_id"] = _optional(product_id, "product_id")
        if fingerprint is not None:
            body["fingerprint"] = _optional(fingerprint, "fingerprint")
        if entitlements is not None:
            body["entitlements"] = code_list(entitlements, "entitlements")
        return self.transport.request("POST", "/api/v1/keys/validate", body=body, idempotent=True)

    def activate(self, fingerprint: str, name: Optional[str] = None) -> Dict[str, Any]:
        """``POST …/activations``: takes a seat; the same fingerprint again answers the same activation."""
        if not isinstance(fingerprint, str) or fingerprint == "":
            raise ValueError("fingerprint is required to activate a machine")
        body: Dict[str, Any] = {"fingerprint": fingerprint}
        if name is not None:
            body["name"] = _optional(name, "name")
        return self.transport.request("POST", self._path + "/activations", body=body, idempotent=True)

    def heartbeat(self, activation_id: str) -> Dict[str, Any]:
        """``POST …/activations/{id}/heartbeat``: the activation with its renewed ``lease_expires_at``."""
        path = "%s/activations/%s/heartbeat" % (self._path, segment(activation_id, "activation_id"))
        # Repeating a heartbeat only extends the same lease again.
        return self.transport.request("POST", path, idempotent=True)

    def deactivate(self, activation_id: str, fingerprint: Optional[str] = None) -> None:
        """``DELETE …/activations/{id}``. With the seat's own fingerprint, releasing one's own floating
        seat never spends the customer's deactivations."""
        path = "%s/activations/%s" % (self._path, segment(activation_id, "activation_id"))
        query = {"fingerprint": fingerprint} if fingerprint else None
        self.transport.request("DELETE", path, query=query, idempotent=True)

    def file(self, fingerprint: Optional[str] = None, ttl_days: Optional[int] = None) -> Dict[str, Any]:
        """``POST …/file``: a signed licence file ``{kid, algorithm, payload, signature}``."""
        body: Dict[str, Any] = {}
        if fingerprint is not None:
            body["fingerprint"] = _optional(fingerprint, "fingerprint")
        if ttl_days is not None:
            if not isinstance(ttl_days, int) or isinstance(ttl_days, bool):
                raise TypeError("ttl_days must be a whole number of days")
            body["ttl_days"] = ttl_days
        return self.transport.request("POST", self._path + "/file", body=body, idempotent=True)

    def seat_rescue(self) -> Dict[str, Any]:
        """``POST …/seat-rescue``: e-mails the licence's owner a link to free a seat. Never repeated
        by itself (a 429 aside, refused before any work)."""
        return self.transport.request("POST", self._path + "/seat-rescue", idempotent=False)

    def signing_keys(self, product_id: str) -> Dict[str, Any]:
        """``GET /api/v1/products/{id}/signing-keys``: ``{data: [{kid, algorithm, public_key_pem, …}]}``."""
        path = "/api/v1/products/%s/signing-keys" % segment(product_id, "product_id")
        return self.transport.request("GET", path, idempotent=True)

    def check_for_update(
        self, product_id: str, version: str, platform: str, arch: str, channel: Optional[str] = None
    ) -> Dict[str, Any]:
        """``GET /api/v1/products/{id}/updates``: ``{update_available: false}`` or
        ``{update_available: true, release, artifact}``."""
        query = {
            "version": _required(version, "version"),
            "platform": _required(platform, "platform"),
            "arch": _required(arch, "arch"),
            "channel": _optional(channel, "channel"),
        }
        path = "/api/v1/products/%s/updates" % segment(product_id, "product_id")
        return self.transport.request("GET", path, query=query, idempotent=True)


def _required(value: str, name: str) -> str:
    if not isinstance(value, str) or js_trim(value) == "":
        raise ValueError("%s must be a non-empty string" % name)
    return js_trim(value)
