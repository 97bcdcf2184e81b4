"""The one place requests are made: the licence credential, JSON, a time limit per attempt, retries
with back-off that honour ``Retry-After``, and failures turned into LicensingError.

What is retried, as in the TypeScript SDK (packages/client/src/http.ts and retry.ts): a 429 always
(the server refused it before doing anything); a 503, a connection failure or a timeout only for a
call that is harmless to repeat (``idempotent``), since the first try may have landed. The wait is
the server's ``Retry-After`` when it gave one, else exponential back-off with jitter; a
``Retry-After`` longer than ``max_retry_delay`` is not waited for: the error is raised at once.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import random as _random
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Mapping, Optional, Tuple

from .encoding import js_trim
from .errors import LicensingError, error_from_response
from .version import __version__

#: Statuses that mean "not done, try later": rate limited, or a backing service down.
RETRYABLE_STATUSES = frozenset((429, 503))
_PRINTABLE = re.compile(r"[\x21-\x7e]+")
_JSON = re.compile(r"\bjson\b", re.IGNORECASE)


def check_base_url(value: str) -> str:
    """An absolute http(s) URL without query or fragment, without its trailing slashes."""
    if not isinstance(value, str):
        raise TypeError('base_url must be a string such as "https://licensing.example.com"')
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError('base_url must be an absolute http(s) URL such as "https://licensing.example.com", got %r' % value)
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise ValueError("base_url must not have a query or fragment")
    if not _PRINTABLE.fullmatch(value):
        raise ValueError("base_url must not contain spaces or control characters")
    return value.rstrip("/")


def authorization_of(license_key: str) -> str:
    """The ``Authorization`` value; a key with spaces or control characters would forge another header."""
    if not isinstance(license_key, str) or not _PRINTABLE.fullmatch(js_trim(license_key)):
        raise ValueError("the licence key must be printable ASCII without spaces")
    return "License " + js_trim(license_key)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110
    section 10.2.3). None when absent or unreadable; never negative."""
    if value is None:
        return None
    text = js_trim(value)
    if re.fullmatch(r"[0-9]+", text):
        return float(int(text))
    # An HTTP date names its day and month; anything else (such as "-3") is no date.
    if not re.match(r"[A-Za-z]{3}, ", text):
        return None
    try:
        at = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None:
        return None
    seconds = at.timestamp() - (time.time() if now is None else now)
    return float(max(0, math.ceil(seconds)))


def backoff_delay(attempt: int, base: float = 0.5, cap: float = 8.0, random: Callable[[], float] = _random.random) -> float:
    """Exponential back-off with "equal jitter": half of the step fixed, half random, so clients that
    failed together spread out but none retries at once. ``attempt`` counts retries from 0."""
    step = min(cap, base * 2**attempt)
    return step / 2 + random() * (step / 2)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as it is, never followed: urllib would send the licence key along to
    wherever it points, and no app route of the API redirects."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        return None


class Transport:
    """Sends requests as one licence (``Authorization: License <key>``) to one server.

    :param timeout: the time limit of each attempt's connection and each read, in seconds.
    :param max_retries: further tries after a 429, a 503 or no answer.
    :param max_retry_delay: the longest ``Retry-After`` waited for, in seconds.
    :param sleep: how to wait (tests pass one that records the waits).
    """

    def __init__(
        self,
        base_url: str,
        license_key: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_delay: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.base_url = check_base_url(base_url)
        self._authorization = authorization_of(license_key)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError("max_retries must be a whole number, 0 or more")
        if not isinstance(max_retry_delay, (int, float)) or max_retry_delay < 0:
            raise ValueError("max_retry_delay must be a number of seconds, 0 or more")
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_retry_delay = float(max_retry_delay)
        self._sleep = sleep
        self._random = random
        self._opener = urllib.request.build_opener(_NoRedirects())
        self._user_agent = "licensing-client-python/%s (Python %d.%d)" % (
            __version__,
            sys.version_info[0],
            sys.version_info[1],
        )

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotent: bool,
    ) -> Any:
        """Sends the request, retrying what may be retried; answers the parsed body of a 2xx answer
        (None when it has none). Raises LicensingError otherwise."""
        pairs = [(k, v) for k, v in (query or {}).items() if v is not None]
        url = self.base_url + path + ("?" + urllib.parse.urlencode(pairs) if pairs else "")
        headers = {
            "Authorization": self._authorization,
            "Accept": "application/json",
            "User-Agent": self._user_agent,
        }
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            error, answer = self._attempt(method, url, data, headers)
            if error is None:
                status, answer_headers, parsed = answer
                if 200 <= status < 300:
                    return parsed
                error = error_from_response(
                    status, parsed, answer_headers, parse_retry_after(answer_headers.get("retry-after"))
                )
            no_answer = error.status == 0 and error.code != "invalid_response"
            retryable = no_answer or error.status in RETRYABLE_STATUSES
            # A 429 was refused before any work, so anything may be repeated; the rest only when safe.
            if not retryable or attempt >= self.max_retries or (error.status != 429 and not idempotent):
                raise error
            wait = error.retry_after if error.retry_after is not None else backoff_delay(attempt, random=self._random)
            if wait > self.max_retry_delay:
                raise error
            self._sleep(wait)
            attempt += 1

    def _attempt(
        self, method: str, url: str, data: Optional[bytes], headers: Mapping[str, str]
    ) -> Tuple[Optional[LicensingError], Any]:
        """One try: (None, (status, headers, body)) for any answer, or (error, None) for none."""
        request = urllib.request.Request(url, data=data, headers=dict(headers), method=method)
        try:
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    status, answer_headers, raw = response.status, response.headers, response.read()
            except urllib.error.HTTPError as answer:
                # Any status but 2xx arrives as HTTPError; it is an answer all the same.
                try:
                    status, answer_headers, raw = answer.code, answer.headers, answer.read()
                finally:
                    answer.close()
        except urllib.error.URLError as err:
            if isinstance(err.reason, socket.timeout):
                return self._timeout(), None
            return LicensingError(0, "network_error", str(err.reason)), None
        except socket.timeout:
            return self._timeout(), None
        except (OSError, http.client.HTTPException) as err:
            return LicensingError(0, "network_error", str(err) or type(err).__name__), None
        try:
            body = _parse_body(raw, answer_headers.get("content-type"), status)
        except LicensingError as err:
            return err, None
        return None, (status, answer_headers, body)

    def _timeout(self) -> LicensingError:
        return LicensingError(0, "timeout", "no answer within %g s" % self.timeout)


def _parse_body(raw: bytes, content_type: Optional[str], status: int) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    ok = 200 <= status < 300
    if not _JSON.search(content_type or ""):
        if ok:
            raise LicensingError(status, "invalid_response", "expected JSON, got %s" % (content_type or "no content type"))
        return text
    try:
        return json.loads(text)
    except ValueError:
        if ok:
            raise LicensingError(status, "invalid_response", "the answer is not valid JSON") from None
        return text
