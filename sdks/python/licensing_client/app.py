"""The app's side of licensing with the licence key alone (no API key ships in the app): validate
this machine, take a seat, keep a floating seat alive with a heartbeat at a third of its lease,
release it on stop, and check a signed licence file offline when the server is out of reach.
The Python counterpart of the TypeScript SDK's LicensedApp (packages/client/src/licensed-app.ts)."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Union

from .api import LicenseApi, code_list
from .dates import Instant
from .encoding import js_trim
from .errors import LicensingError
from .keys import canonical_key
from .license_file import PublicKeys, Verification, public_key_list, verify_license_file
from .machine import machine_fingerprint
from .transport import Transport

#: Statuses of a heartbeat that mean "this activation is no longer a seat": lapsed, reclaimed or deactivated.
SEAT_GONE = frozenset((404, 409, 410))
#: The shortest heartbeat period, in seconds, whatever the lease.
MIN_HEARTBEAT_INTERVAL = 1.0


def heartbeat_interval(lease_seconds: float) -> float:
    """How often to heartbeat a lease, in seconds: a third of it, so two missed beats still keep the seat."""
    return max(MIN_HEARTBEAT_INTERVAL, lease_seconds / 3)


class AppState(NamedTuple):
    """What start() found."""

    #: This machine's activation (its seat), with ``lease_expires_at`` when the seat is floating.
    activation: Dict[str, Any]
    #: The validation answer for this machine (``valid``, ``code``, ``detail``, ``next_action``…).
    validation: Dict[str, Any]
    #: The licence's effective entitlements (feature codes).
    entitlements: List[str]
    #: The policy's lease in seconds, or None for a node-locked activation (no heartbeats).
    lease_seconds: Optional[float]
    #: How often the background thread heartbeats, in seconds, or None when it does not.
    heartbeat_every: Optional[float]


def _non_empty(value: Any, name: str) -> str:
    if not isinstance(value, str) or js_trim(value) == "":
        raise ValueError("%s must be a non-empty string" % name)
    return js_trim(value)


def _number(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


class LicensedApp:
    """One licensed app on one machine, speaking for its licence with the licence key alone
    (``Authorization: License <key>``).

    ::

        app = LicensedApp("https://licensing.example.com", key, product_id="prod_…")
        with app:                       # start(): activate, validate, heartbeat a floating seat
            ...                         # stop() on the way out releases the seat

    :param base_url: where the gateway answers.
    :param license_key: the customer's licence key, the app's only credential.
    :param product_id: refuse a key of another product (validation answers ``product_mismatch``);
        needed by check_for_update().
    :param fingerprint: a stable, non-identifying id of this machine (at most 200 characters);
        default :func:`machine_fingerprint` (of the product, when ``product_id`` is given).
    :param name: a name for this machine in the licence's activation list.
    :param public_keys: the product's public signing keys shipped with the app, for verify_offline().
    :param timeout: the time limit of each attempt, in seconds (keep it short at start-up, where a
        user waits).
    :param max_retries: further tries after a 429, a 503 or no answer.
    :param max_retry_delay: the longest ``Retry-After`` waited for, in seconds.
    :param on_error: called with every failure of a background heartbeat; the thread keeps going
        (two missed beats still leave the seat alive). Without it the failure is kept in ``last_error``.
    :param on_heartbeat: called with the renewed activation after every background heartbeat.
    """

    def __init__(
        self,
        base_url: str,
        license_key: str,
        product_id: Optional[str] = None,
        fingerprint: Optional[str] = None,
        *,
        name: Optional[str] = None,
        public_keys: Optional[PublicKeys] = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_delay: float = 60.0,
        on_error: Optional[Callable[[Exception], None]] = None,
        on_heartbeat: Optional[Callable[[Dict[str, Any]], None]] = None,
    ) -> None:
        self.license_key = _non_empty(license_key, "license_key")
        self.product_id = _non_empty(product_id, "product_id") if product_id is not None else None
        self.fingerprint = (
            _non_empty(fingerprint, "fingerprint")
            if fingerprint is not None
            else machine_fingerprint(self.product_id or "")
        )
        self.name = _non_empty(name, "name") if name is not None else None
        self.public_keys = public_key_list(public_keys) if public_keys is not None else None
        for hook, value in (("on_error", on_error), ("on_heartbeat", on_heartbeat)):
            if value is not None and not callable(value):
                raise TypeError("%s must be callable" % hook)
        self._on_error = on_error
        self._on_heartbeat = on_heartbeat
        self.api = LicenseApi(
            Transport(
                base_url,
                self.license_key,
                timeout=timeout,
                max_retries=max_retries,
                max_retry_delay=max_retry_delay,
            ),
            self.license_key,
        )
        #: The last failure of a background heartbeat, or None.
        self.last_error: Optional[Exception] = None
        self._lock = threading.RLock()  # guards the remembered activation and the thread's handles
        self._session = threading.RLock()  # one start() or stop() at a time
        self._activation: Optional[Dict[str, Any]] = None
        self._stop_event: Optional[threading.Event] = None
        self._thread: Optional[threading.Thread] = None
        self._running = False

    def __repr__(self) -> str:
        # The key is the customer's credential: never whole in a log line.
        return "LicensedApp(base_url=%r, license_key=%r, product_id=%r)" % (
            self.api.transport.base_url,
            self.license_key[:5] + "…",
            self.product_id,
        )

    @property
    def activation(self) -> Optional[Dict[str, Any]]:
        """This machine's remembered activation (its seat), or None before activate() and after deactivate()."""
        with self._lock:
            return self._activation

    @property
    def is_running(self) -> bool:
        """True between start() and stop()."""
        return self._running

    # --- the calls -------------------------------------------------------------------------------

    def validate(self, entitlements: Iterable[str] = ()) -> Dict[str, Any]:
        """May this machine run? ``POST /api/v1/keys/validate`` with the key and the fingerprint.
        A "no" is an answer, not an error: read ``valid``, ``code``, ``detail`` and ``next_action``
        (``lease_expired`` → activate() again; ``entitlements_missing`` → the detail names them).

        :param entitlements: feature codes the licence must include.
        """
        codes = code_list(entitlements, "entitlements")
        return self.api.validate(
            fingerprint=self.fingerprint, product_id=self.product_id, entitlements=codes or None
        )

    def activate(self, name: Optional[str] = None) -> Dict[str, Any]:
        """Takes a seat for this machine (``POST …/activations``), remembered for heartbeat() and
        deactivate(). Idempotent per fingerprint: the server answers the existing activation.

        :raises LicensingError: 409 ``conflict`` when every seat is taken (``next_action``
            ``free_a_seat``: see request_seat_rescue()) or the licence is not active; 401 for an
            unknown, suspended or revoked key.
        """
        activation = self.api.activate(self.fingerprint, name if name is not None else self.name)
        with self._lock:
            self._activation = activation
        return activation

    def heartbeat(self) -> Dict[str, Any]:
        """Renews the remembered seat's lease (``POST …/activations/{id}/heartbeat``) and answers the
        activation with its new ``lease_expires_at``. When the seat is gone (lapsed, reclaimed or
        deactivated: 404, 409 or 410) it activates once more and answers the new activation; with no
        seat remembered it activates."""
        seat = self.activation or self.activate()
        try:
            renewed = self.api.heartbeat(seat["id"])
        except LicensingError as err:
            if err.status not in SEAT_GONE:
                raise
            with self._lock:
                if self._activation is not None and self._activation.get("id") == seat["id"]:
                    self._activation = None
            return self.activate()
        with self._lock:
            # A stop() or a re-activation may have replaced the seat while this was on its way.
            if self._activation is not None and self._activation.get("id") == seat["id"]:
                self._activation = renewed
        return renewed

    def deactivate(self) -> None:
        """Releases the remembered seat at once (``DELETE …/activations/{id}?fingerprint=…``). Does
        nothing when there is none; a seat the server no longer has (404) counts as released. Does not
        stop the heartbeat thread: stop() does both."""
        seat = self.activation
        if seat is None:
            return
        try:
            # Its own fingerprint: releasing its own floating seat never spends the customer's deactivations.
            self.api.deactivate(seat["id"], fingerprint=seat.get("fingerprint") or self.fingerprint)
        except LicensingError as err:
            if err.status != 404:
                raise
        with self._lock:
            if self._activation is not None and self._activation.get("id") == seat["id"]:
                self._activation = None

    def license_file(self, ttl_days: Optional[int] = None) -> Dict[str, Any]:
        """A signed licence file bound to this machine (``POST …/file``), for starts without network:
        keep it on disk and check it with verify_offline(). A licence that requires activation needs
        this machine activated first.

        :param ttl_days: how long the file is valid offline (1-365, at most the policy's cap; default 30).
        """
        return self.api.file(fingerprint=self.fingerprint, ttl_days=ttl_days)

    def verify_offline(self, file: Union[Mapping, str, bytes], now: Instant = None) -> Verification:
        """Checks a licence file with no network: the signature with ``public_keys``, the dates, this
        machine's fingerprint, and that it is a file of this licence (else ``license_mismatch``) and of
        ``product_id`` when given. Never raises for a bad file."""
        if self.public_keys is None:
            raise ValueError("verify_offline needs the product's public keys: pass public_keys to LicensedApp()")
        result = verify_license_file(file, self.public_keys, fingerprint=self.fingerprint, now=now)
        if not result.valid or result.payload is None:
            return result
        signed_key = result.payload.get("license_key")
        # A genuine file of another licence proves nothing about this one.
        if not isinstance(signed_key, str) or canonical_key(signed_key) != canonical_key(self.license_key):
            return Verification(False, "license_mismatch", None)
        if self.product_id is not None and result.payload.get("product_id") != self.product_id:
            return Verification(False, "license_mismatch", None)
        return result

    def check_for_update(
        self, version: str, platform: str, arch: str, channel: Optional[str] = None
    ) -> Dict[str, Any]:
        """Asks the product's update feed (``GET /api/v1/products/{id}/updates``) whether a newer
        release fits this machine: ``{update_available: false}`` or ``{update_available: true,
        release, artifact}``. Needs ``product_id``; no activation is needed.

        :param platform: ``macos``, ``windows`` or ``linux``.
        :param arch: ``x86_64`` or ``aarch64``.
        :param channel: the least stable channel the user accepts (default ``stable``).
        :raises LicensingError: 403 when the licence may have no updates: ``validation_code`` says why
            (``expired``…) and ``next_action`` what the user can do (``renew``).
        """
        if self.product_id is None:
            raise ValueError("check_for_update needs the product: pass product_id to LicensedApp()")
        return self.api.check_for_update(self.product_id, version, platform, arch, channel)

    def request_seat_rescue(self) -> Dict[str, Any]:
        """When every seat is taken (``next_action`` ``free_a_seat``): e-mails the licence's owner a
        one-time link to their machines in the customer portal (``POST …/seat-rescue``)."""
        return self.api.seat_rescue()

    # --- the session -----------------------------------------------------------------------------

    def start(self) -> AppState:
        """Starts the licensed session: activate(), then validate() (whose licence names the policy's
        ``lease_seconds`` and the entitlements), then, for a floating seat, a heartbeat every third of
        the lease on a daemon thread (it never keeps the process alive). Background failures go to
        ``on_error`` and ``last_error``. Calling it again restarts the thread.

        :raises LicensingError: when activation fails (every seat taken…) or the server is unreachable.
        """
        with self._session:
            self._halt()
            activation = self.activate()
            validation = self.validate()
            license_ = validation.get("license") if isinstance(validation.get("license"), dict) else {}
            policy = license_.get("policy") if isinstance(license_.get("policy"), dict) else {}
            lease = _number(policy.get("lease_seconds"))
            every = heartbeat_interval(lease) if lease is not None else None
            with self._lock:
                if every is not None:
                    stop = threading.Event()
                    thread = threading.Thread(
                        target=self._run, args=(stop, every), name="licensing-heartbeat", daemon=True
                    )
                    self._stop_event, self._thread = stop, thread
                    thread.start()
                self._running = True
                current = self._activation or activation
            entitlements = validation.get("entitlements")
            if not isinstance(entitlements, list):
                entitlements = license_.get("entitlements") if isinstance(license_.get("entitlements"), list) else []
            return AppState(current, validation, list(entitlements), lease, every)

    def stop(self) -> None:
        """Ends the session: stops the heartbeat thread, waits for a heartbeat on its way, and releases
        the seat (deactivate()). Safe to call more than once. If the release fails (no network) the
        error is raised and a later stop() tries again; a floating seat left behind lapses by itself."""
        with self._session:
            with self._lock:
                thread = self._thread
            self._halt()
        # Joined outside the session lock: an on_error that calls stop() must not wait for itself.
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self.deactivate()

    def __enter__(self) -> "LicensedApp":
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.stop()
        except Exception:
            # Failing to release the seat must not hide the error that ended the block.
            if exc_type is None:
                raise

    def _halt(self) -> None:
        with self._lock:
            if self._stop_event is not None:
                self._stop_event.set()
            self._stop_event = None
            self._thread = None
            self._running = False

    def _run(self, stop: threading.Event, every: float) -> None:
        while not stop.wait(every):
            self._beat()

    def _beat(self) -> None:
        """One background heartbeat; nothing it raises ends the thread."""
        try:
            activation = self.heartbeat()
            self.last_error = None
            if self._on_heartbeat is not None:
                self._on_heartbeat(activation)
        except Exception as err:  # noqa: BLE001 - the thread must outlive any failure
            self.last_error = err
            if self._on_error is not None:
                try:
                    self._on_error(err)
                except Exception:  # noqa: BLE001
                    pass


__all__ = ["AppState", "LicensedApp", "heartbeat_interval", "SEAT_GONE", "MIN_HEARTBEAT_INTERVAL"]
