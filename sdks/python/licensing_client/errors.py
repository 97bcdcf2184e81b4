"""One error for everything a call can fail with: an answer of the API (from its RFC 9457 problem
details, docs/api.md "Errors"), or no answer at all (status 0: network failure or timeout).
Branch on ``code``, the API's stable word, rather than on messages."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional


class LicensingError(Exception):
    """A refused or failed call.

    :ivar status: the HTTP status, or 0 when no answer arrived.
    :ivar code: the API's ``code`` (``not_found``, ``conflict``, ``rate_limited``…), or
        ``network_error``, ``timeout`` or ``invalid_response`` when there was no usable answer.
    :ivar detail: what went wrong, for a person.
    :ivar next_action: what the user can do, when the API says: ``free_a_seat`` (every seat is
        taken), ``renew`` or ``contact_vendor`` (an update the licence may not have)…
    :ivar validation_code: the licence's validation code behind a refusal, when the API says
        (``expired``, ``entitlements_missing``…).
    :ivar request_id: the request's ``X-Request-Id``: quote it to support.
    :ivar retry_after: seconds the server asked to wait (``Retry-After``), when it said.
    :ivar errors: ``[{field, message}]`` of a 400 answer.
    """

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        next_action: Optional[str] = None,
        validation_code: Optional[str] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        errors: Optional[List[Dict[str, str]]] = None,
        type: Optional[str] = None,
        title: Optional[str] = None,
    ) -> None:
        super().__init__("%s %s: %s" % (status, code, detail) if status else "%s: %s" % (code, detail))
        self.status = status
        self.code = code
        self.detail = detail
        self.next_action = next_action
        self.validation_code = validation_code
        self.request_id = request_id
        self.retry_after = retry_after
        self.errors = errors or []
        self.type = type
        self.title = title

    def __repr__(self) -> str:
        return "LicensingError(status=%r, code=%r, detail=%r, next_action=%r)" % (
            self.status,
            self.code,
            self.detail,
            self.next_action,
        )


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _string(value: Any) -> str:
    return "" if value is None else str(value)


def _first(*values: Optional[str]) -> Optional[str]:
    return next((v for v in values if v is not None), None)


def _fallback_code(status: int) -> str:
    if status == 429:
        return "rate_limited"
    if status in (502, 503, 504):
        return "service_unavailable"
    if status == 401:
        return "unauthorized"
    if status == 403:
        return "forbidden"
    if status == 404:
        return "not_found"
    return "internal" if status >= 500 else "invalid_request"


def error_from_response(
    status: int,
    body: Any,
    headers: Mapping[str, str],
    retry_after: Optional[float],
) -> LicensingError:
    """The error of a non-2xx answer: its problem+json if it has one, else what the status says."""
    request_id = headers.get("x-request-id")
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        listed = body.get("errors") if isinstance(body.get("errors"), list) else []
        errors = [
            {"field": _string(e.get("field")), "message": _string(e.get("message"))}
            for e in listed
            if isinstance(e, dict)
        ]
        detail = _first(_text(body.get("detail")), _text(body.get("title")), "HTTP %d" % status)
        return LicensingError(
            status,
            body["code"],
            detail,
            next_action=_text(body.get("next_action")),
            validation_code=_text(body.get("validation_code")),
            request_id=_first(_text(body.get("request_id")), request_id),
            retry_after=retry_after,
            errors=errors,
            type=_text(body.get("type")),
            title=_text(body.get("title")),
        )
    # Not problem+json: a proxy or a load balancer answered. Keep what can be known.
    detail = (
        body.strip()[:200]
        if isinstance(body, str) and body.strip()
        else "HTTP %d without problem details" % status
    )
    return LicensingError(
        status, _fallback_code(status), detail, request_id=request_id, retry_after=retry_after
    )
