"""What the tests share: the vector files, a local API on http.server, and licence files signed here."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import licensing_client

#: sdks/test-vectors, found from the package (sdks/python/licensing_client → sdks).
VECTORS = Path(licensing_client.__file__).resolve().parents[2] / "test-vectors"
#: sdks/python, for running the conformance command in a child process.
PACKAGE_ROOT = Path(licensing_client.__file__).resolve().parents[1]

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


def vectors(name: str) -> Dict[str, Any]:
    with open(VECTORS / name, encoding="utf-8") as f:
        return json.load(f)


def without_proxies(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment with no proxy: requests to 127.0.0.1 must not leave the machine."""
    env = dict(os.environ if env is None else env)
    for name in PROXY_VARIABLES:
        env.pop(name, None)
    return env


class Request:
    def __init__(self, method: str, path: str, query: Dict[str, List[str]], headers: Dict[str, str], body: Any):
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return "Request(%s %s)" % (self.method, self.path)


Response = Union[Tuple[int, Any], Tuple[int, Any, Dict[str, str]], Callable[["Request"], Tuple]]


class FakeApi:
    """A local server answering scripted responses per route; every request is recorded.

    ``on(method, path, *responses)``: each request of that route takes the next response, and the
    last one repeats. A response is ``(status, body[, headers])`` (a dict or list body is sent as
    JSON, a str as text/plain, None as no body) or a function of the Request returning one.
    """

    def __init__(self) -> None:
        self.requests: List[Request] = []
        self._routes: Dict[Tuple[str, str], List[Response]] = {}
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                request = Request(
                    self.command,
                    url.path,
                    urllib.parse.parse_qs(url.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                with api._lock:
                    api.requests.append(request)
                    queue = api._routes.get((self.command, url.path))
                    response = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else None
                if response is None:
                    response = (404, {"code": "not_found", "detail": "no route %s %s" % (self.command, url.path)})
                if callable(response):
                    response = response(request)
                status, payload = response[0], response[1]
                headers = dict(response[2]) if len(response) > 2 else {}
                if isinstance(payload, (dict, list)):
                    data = json.dumps(payload).encode()
                    default_type = "application/problem+json" if status >= 400 else "application/json"
                    headers.setdefault("Content-Type", default_type)
                elif isinstance(payload, str):
                    data = payload.encode()
                    headers.setdefault("Content-Type", "text/plain")
                else:
                    data = b""
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if data:
                    self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = _handle

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that gave up (a timeout test) leaves a broken pipe here: not a failure.
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        # A short poll: shutdown() waits for it, once per test.
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def on(self, method: str, path: str, *responses: Response) -> None:
        with self._lock:
            self._routes[(method, path)] = list(responses)

    def calls(self, method: str, path: str) -> List[Request]:
        with self._lock:
            return [r for r in self.requests if r.method == method and r.path == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


class Signer:
    """An Ed25519 product key of the tests' own, signing licence files as the product service does."""

    def __init__(self, kid: str = "kid_test") -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self.kid = kid
        self._key = Ed25519PrivateKey.generate()
        pem = self._key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self.public_key = {"kid": kid, "algorithm": "Ed25519", "public_key_pem": pem.decode("ascii")}

    def sign_bytes(self, payload: bytes, kid: Optional[str] = None) -> Dict[str, str]:
        return {
            "kid": kid or self.kid,
            "algorithm": "Ed25519",
            "payload": base64.b64encode(payload).decode("ascii"),
            "signature": base64.b64encode(self._key.sign(payload)).decode("ascii"),
        }

    def sign(self, **fields: Any) -> Dict[str, str]:
        payload = dict(LICENCE)
        payload["kid"] = self.kid
        payload.update(fields)
        return self.sign_bytes(json.dumps(payload).encode("utf-8"))


KEY = "7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG"
NOW = "2026-06-01T12:00:00.000Z"
LICENCE = {
    "license_key": KEY,
    "license_id": "lic_1",
    "product_id": "prod_1",
    "customer_email": None,
    "status": "active",
    "expires_at": None,
    "fingerprint": None,
    "entitlements": ["sync"],
    "issued_at": "2026-06-01T00:00:00.000Z",
    "valid_until": "2026-07-01T00:00:00.000Z",
}
