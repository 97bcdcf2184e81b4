"""The app's side of the licensing API, for Python 3.9+ with ``cryptography`` as its only dependency.

- :func:`check_key`: read a licence key as typed (native keys with check characters, foreign keys).
- :func:`verify_license_file`: verify a signed licence file offline (Ed25519).
- :func:`verify_webhook`: verify a webhook delivery (Standard Webhooks, HMAC-SHA256).
- :class:`LicensedApp`: talk to the API as the licence itself (``Authorization: License <key>``):
  validate, activate, heartbeat a floating seat on a thread, release it, fetch a licence file,
  check for updates.
"""

from .app import AppState, LicensedApp, heartbeat_interval
from .api import LicenseApi
from .errors import LicensingError
from .keys import KeyCheck, check_key
from .license_file import Verification, verify_license_file
from .machine import machine_fingerprint
from .transport import Transport
from .version import __version__
from .webhooks import WebhookVerification, sign_webhook, verify_webhook

__all__ = [
    "AppState",
    "KeyCheck",
    "LicenseApi",
    "LicensedApp",
    "LicensingError",
    "Transport",
    "Verification",
    "WebhookVerification",
    "__version__",
    "check_key",
    "heartbeat_interval",
    "machine_fingerprint",
    "sign_webhook",
    "verify_license_file",
    "verify_webhook",
]
