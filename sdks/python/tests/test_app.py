"""The app client against a local API (http.server on a thread): what it sends, retries, errors,
and the heartbeat thread."""

import os
import socket
import threading
import time
import unittest
from unittest import mock

from licensing_client import LicensedApp, LicensingError, Transport
from licensing_client import app as app_module

from .support import KEY, NOW, FakeApi, Signer, wait_until, without_proxies

FP = "machine-1"
VALIDATE = "/api/v1/keys/validate"
ACTIVATIONS = "/api/v1/licenses/%s/activations" % KEY
FILE = "/api/v1/licenses/%s/file" % KEY


def activation(id="act_1", lease="2026-06-01T12:05:00.000Z"):
    return {"id": id, "fingerprint": FP, "name": None, "created_at": NOW, "lease_expires_at": lease}


def validation(valid=True, code="valid", lease_seconds=None):
    return {
        "valid": valid,
        "code": code,
        "detail": code,
        "next_action": "none" if valid else "contact_vendor",
        "entitlements": ["sync"],
        "license": {"key": KEY, "policy": {"lease_seconds": lease_seconds}, "entitlements": ["sync"]},
    }


class ApiTest(unittest.TestCase):
    def setUp(self) -> None:
        patcher = mock.patch.dict(os.environ, without_proxies(), clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.api = FakeApi()
        self.addCleanup(self.api.close)
        self.waits = []

    def app(self, **options) -> LicensedApp:
        options.setdefault("fingerprint", FP)
        app = LicensedApp(self.api.base_url, options.pop("license_key", KEY), **options)
        # Waits are recorded, not slept: retries cost no time in these tests.
        app.api.transport._sleep = self.waits.append
        return app


class Requests(ApiTest):
    def test_validate_sends_the_licence_credential(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation()))
        answer = self.app(product_id="prod_1", license_key="  %s " % KEY).validate(entitlements=["sync"])
        self.assertTrue(answer["valid"])
        [request] = self.api.requests
        self.assertEqual(request.headers["authorization"], "License " + KEY)
        self.assertEqual(request.headers["accept"], "application/json")
        self.assertEqual(request.headers["content-type"], "application/json")
        self.assertEqual(request.body, {"key": KEY, "product_id": "prod_1", "fingerprint": FP, "entitlements": ["sync"]})

    def test_a_no_is_an_answer(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation(False, "expired")))
        self.assertEqual(self.app().validate()["code"], "expired")
        self.assertNotIn("entitlements", self.api.requests[0].body)

    def test_entitlements_must_be_a_list(self) -> None:
        with self.assertRaises(TypeError):
            self.app().validate(entitlements="sync")

    def test_activate_heartbeat_deactivate(self) -> None:
        self.api.on("POST", ACTIVATIONS, (201, activation()))
        self.api.on("POST", ACTIVATIONS + "/act_1/heartbeat", (200, activation(lease="2026-06-01T12:06:00.000Z")))
        self.api.on("DELETE", ACTIVATIONS + "/act_1", (204, None))
        app = self.app(name="Laptop")
        self.assertEqual(app.activate()["id"], "act_1")
        self.assertEqual(self.api.requests[0].body, {"fingerprint": FP, "name": "Laptop"})
        self.assertEqual(app.heartbeat()["lease_expires_at"], "2026-06-01T12:06:00.000Z")
        self.assertEqual(app.activation["lease_expires_at"], "2026-06-01T12:06:00.000Z")
        app.deactivate()
        self.assertIsNone(app.activation)
        self.assertEqual(self.api.requests[-1].query, {"fingerprint": [FP]})
        app.deactivate()  # nothing left to release
        self.assertEqual(len(self.api.requests), 3)

    def test_heartbeat_of_a_lapsed_seat_activates_again(self) -> None:
        self.api.on("POST", ACTIVATIONS, (201, activation()), (201, activation("act_2")))
        self.api.on("POST", ACTIVATIONS + "/act_1/heartbeat", (409, {"code": "conflict", "detail": "lease_expired: …"}))
        app = self.app()
        app.activate()
        self.assertEqual(app.heartbeat()["id"], "act_2")
        self.assertEqual(app.activation["id"], "act_2")

    def test_a_seat_already_gone_counts_as_released(self) -> None:
        self.api.on("POST", ACTIVATIONS, (201, activation()))
        self.api.on("DELETE", ACTIVATIONS + "/act_1", (404, {"code": "not_found", "detail": "no such activation"}))
        app = self.app()
        app.activate()
        app.deactivate()
        self.assertIsNone(app.activation)

    def test_license_file(self) -> None:
        self.api.on("POST", FILE, (201, {"kid": "k", "algorithm": "Ed25519", "payload": "e30", "signature": "AA"}))
        self.assertEqual(self.app().license_file(ttl_days=7)["kid"], "k")
        self.assertEqual(self.api.requests[0].body, {"fingerprint": FP, "ttl_days": 7})

    def test_check_for_update(self) -> None:
        self.api.on("GET", "/api/v1/products/prod_1/updates", (200, {"update_available": False}))
        app = self.app(product_id="prod_1")
        self.assertEqual(app.check_for_update("1.2.0", "linux", "x86_64", channel="beta"), {"update_available": False})
        self.assertEqual(
            self.api.requests[0].query,
            {"version": ["1.2.0"], "platform": ["linux"], "arch": ["x86_64"], "channel": ["beta"]},
        )
        with self.assertRaises(ValueError):
            self.app().check_for_update("1.2.0", "linux", "x86_64")

    def test_key_in_the_path_is_encoded(self) -> None:
        foreign = "abc+def=ghi:jkl.0123"
        self.api.on("POST", "/api/v1/licenses/abc%2Bdef%3Dghi%3Ajkl.0123/activations", (201, activation()))
        self.app(license_key=foreign).activate()
        self.assertEqual(self.api.requests[0].headers["authorization"], "License " + foreign)

    def test_options_are_checked(self) -> None:
        for options in ({"license_key": "two words"}, {"license_key": ""}, {"license_key": "ключ-лицензии"}):
            with self.subTest(options), self.assertRaises(ValueError):
                self.app(**options)
        for base_url in ("licensing.example.com", "ftp://x", "https://x/?a=1", "https://x/#f"):
            with self.subTest(base_url), self.assertRaises(ValueError):
                LicensedApp(base_url, KEY, fingerprint=FP)

    def test_default_fingerprint(self) -> None:
        a = LicensedApp(self.api.base_url, KEY)
        self.assertRegex(a.fingerprint, r"^[0-9a-f]{32}$")
        self.assertEqual(a.fingerprint, LicensedApp(self.api.base_url, KEY).fingerprint)
        self.assertNotEqual(a.fingerprint, LicensedApp(self.api.base_url, KEY, product_id="prod_1").fingerprint)
        self.assertNotIn(KEY, repr(a))


class Errors(ApiTest):
    def test_problem_details(self) -> None:
        self.api.on(
            "POST",
            ACTIVATIONS,
            (
                409,
                {
                    "type": "/docs#error-conflict",
                    "title": "Conflict",
                    "status": 409,
                    "code": "conflict",
                    "detail": "activation_limit_reached: the licence is already active on 2 machines",
                    "request_id": "req_1",
                    "next_action": "free_a_seat",
                },
            ),
        )
        with self.assertRaises(LicensingError) as caught:
            self.app().activate()
        err = caught.exception
        self.assertEqual((err.status, err.code, err.next_action, err.request_id), (409, "conflict", "free_a_seat", "req_1"))
        self.assertTrue(err.detail.startswith("activation_limit_reached"))
        self.assertIsNone(err.validation_code)
        self.assertEqual(len(self.api.requests), 1)  # a refusal is not retried

    def test_validation_code(self) -> None:
        self.api.on(
            "GET",
            "/api/v1/products/prod_1/updates",
            (403, {"code": "forbidden", "detail": "expired: the licence has expired", "validation_code": "expired", "next_action": "renew"}),
        )
        with self.assertRaises(LicensingError) as caught:
            self.app(product_id="prod_1").check_for_update("1.0.0", "macos", "aarch64")
        self.assertEqual((caught.exception.validation_code, caught.exception.next_action), ("expired", "renew"))

    def test_field_errors(self) -> None:
        self.api.on(
            "POST", FILE,
            (400, {"code": "invalid_request", "detail": "ttl_days is too large", "errors": [{"field": "ttl_days", "message": "at most 30"}]}),
        )
        with self.assertRaises(LicensingError) as caught:
            self.app().license_file(ttl_days=400)
        self.assertEqual(caught.exception.errors, [{"field": "ttl_days", "message": "at most 30"}])

    def test_an_answer_that_is_not_problem_json(self) -> None:
        self.api.on("POST", VALIDATE, (502, "<html>Bad Gateway</html>", {"Content-Type": "text/html", "X-Request-Id": "req_9"}))
        with self.assertRaises(LicensingError) as caught:
            self.app(max_retries=0).validate()
        err = caught.exception
        self.assertEqual((err.status, err.code, err.detail, err.request_id), (502, "service_unavailable", "<html>Bad Gateway</html>", "req_9"))

    def test_a_2xx_that_is_not_json(self) -> None:
        self.api.on("POST", VALIDATE, (200, "ok"))
        with self.assertRaises(LicensingError) as caught:
            self.app().validate()
        self.assertEqual((caught.exception.status, caught.exception.code), (200, "invalid_response"))
        self.assertEqual(len(self.api.requests), 1)

    def test_redirects_are_not_followed(self) -> None:
        # The licence key must not travel to wherever a redirect points.
        self.api.on("POST", VALIDATE, (302, None, {"Location": "http://127.0.0.1:9/elsewhere"}))
        with self.assertRaises(LicensingError) as caught:
            self.app().validate()
        self.assertEqual(caught.exception.status, 302)
        self.assertEqual(len(self.api.requests), 1)


class Retries(ApiTest):
    def test_429_is_retried_after_retry_after(self) -> None:
        self.api.on(
            "POST", VALIDATE,
            (429, {"code": "rate_limited", "detail": "retry in 3 s"}, {"Retry-After": "3"}),
            (200, validation()),
        )
        self.assertTrue(self.app().validate()["valid"])
        self.assertEqual(len(self.api.requests), 2)
        self.assertEqual(self.waits, [3.0])

    def test_429_really_waits(self) -> None:
        self.api.on("POST", VALIDATE, (429, {"code": "rate_limited", "detail": "now"}, {"Retry-After": "0"}), (200, validation()))
        app = LicensedApp(self.api.base_url, KEY, fingerprint=FP)  # the real sleep
        self.assertTrue(app.validate()["valid"])
        self.assertEqual(len(self.api.requests), 2)

    def test_a_long_retry_after_is_not_waited_for(self) -> None:
        self.api.on("POST", VALIDATE, (429, {"code": "rate_limited", "detail": "an hour"}, {"Retry-After": "3600"}), (200, validation()))
        with self.assertRaises(LicensingError) as caught:
            self.app().validate()
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("rate_limited", 3600.0))
        self.assertEqual((len(self.api.requests), self.waits), (1, []))

    def test_503_backs_off_then_gives_up(self) -> None:
        self.api.on("POST", VALIDATE, (503, {"code": "service_unavailable", "detail": "down"}))
        app = self.app(max_retries=2)
        app.api.transport._random = lambda: 0.0
        with self.assertRaises(LicensingError) as caught:
            app.validate()
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(len(self.api.requests), 3)
        self.assertEqual(self.waits, [0.25, 0.5])

    def test_503_honours_retry_after(self) -> None:
        self.api.on("POST", VALIDATE, (503, {"code": "service_unavailable", "detail": "down"}, {"Retry-After": "5"}), (200, validation()))
        self.assertTrue(self.app().validate()["valid"])
        self.assertEqual(self.waits, [5.0])

    def test_retry_after_as_a_date(self) -> None:
        from email.utils import formatdate

        self.api.on(
            "POST", VALIDATE,
            (429, {"code": "rate_limited", "detail": "later"}, {"Retry-After": formatdate(time.time() + 30, usegmt=True)}),
            (200, validation()),
        )
        self.app().validate()
        self.assertEqual(len(self.waits), 1)
        self.assertTrue(28 <= self.waits[0] <= 31, self.waits)

    def test_a_call_unsafe_to_repeat_is_retried_on_429_only(self) -> None:
        path = "/api/v1/licenses/%s/seat-rescue" % KEY
        self.api.on("POST", path, (503, {"code": "service_unavailable", "detail": "down"}))
        with self.assertRaises(LicensingError):
            self.app().request_seat_rescue()
        self.assertEqual(len(self.api.requests), 1)
        self.api.on("POST", path, (429, {"code": "rate_limited", "detail": "x"}, {"Retry-After": "1"}), (202, {"object": "seat_rescue", "status": "queued"}))
        self.assertEqual(self.app().request_seat_rescue()["status"], "queued")

    def test_no_answer_is_retried(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        waits = []
        transport = Transport("http://127.0.0.1:%d" % port, KEY, max_retries=2, sleep=waits.append)
        with self.assertRaises(LicensingError) as caught:
            transport.request("POST", VALIDATE, body={"key": KEY}, idempotent=True)
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "network_error"))
        self.assertEqual(len(waits), 2)

    def test_timeout(self) -> None:
        def slow(request):
            time.sleep(0.5)
            return (200, validation())

        self.api.on("POST", VALIDATE, slow)
        with self.assertRaises(LicensingError) as caught:
            self.app(timeout=0.1, max_retries=0).validate()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "timeout"))


class Session(ApiTest):
    def setUp(self) -> None:
        super().setUp()
        # A lease of 0.15 s: a heartbeat every 0.05 s instead of the 1 s floor.
        patcher = mock.patch.object(app_module, "MIN_HEARTBEAT_INTERVAL", 0.01)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.api.on("POST", ACTIVATIONS, (201, activation()))
        self.api.on("DELETE", ACTIVATIONS + "/act_1", (204, None))

    def heartbeats(self):
        return self.api.calls("POST", ACTIVATIONS + "/act_1/heartbeat")

    def test_start_heartbeats_and_stop_releases(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation(lease_seconds=0.15)))
        self.api.on("POST", ACTIVATIONS + "/act_1/heartbeat", (200, activation()))
        renewed = []
        app = self.app(on_heartbeat=renewed.append)
        state = app.start()
        self.assertEqual((state.lease_seconds, state.entitlements), (0.15, ["sync"]))
        self.assertAlmostEqual(state.heartbeat_every, 0.05)
        self.assertTrue(app.is_running)
        self.assertTrue(wait_until(lambda: len(renewed) >= 2), "no heartbeats")
        app.stop()
        self.assertFalse(app.is_running)
        self.assertIsNone(app.activation)
        [release] = self.api.calls("DELETE", ACTIVATIONS + "/act_1")
        self.assertEqual(release.query, {"fingerprint": [FP]})
        count = len(self.heartbeats())
        time.sleep(0.15)
        self.assertEqual(len(self.heartbeats()), count, "heartbeats after stop()")
        self.assertFalse(any(t.name == "licensing-heartbeat" for t in threading.enumerate()))
        self.assertEqual(self.api.requests[-1].method, "DELETE")

    def test_node_locked_seat_has_no_thread(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation(lease_seconds=None)))
        app = self.app()
        state = app.start()
        self.assertIsNone(state.heartbeat_every)
        self.assertFalse(any(t.name == "licensing-heartbeat" for t in threading.enumerate()))
        app.stop()
        self.assertEqual(len(self.api.calls("DELETE", ACTIVATIONS + "/act_1")), 1)

    def test_heartbeat_failures_go_to_on_error_and_the_thread_goes_on(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation(lease_seconds=0.15)))
        self.api.on(
            "POST", ACTIVATIONS + "/act_1/heartbeat",
            (500, {"code": "internal", "detail": "boom"}),
            (200, activation()),
        )
        errors, renewed = [], []
        app = self.app(on_error=errors.append, on_heartbeat=renewed.append)
        app.start()
        self.assertTrue(wait_until(lambda: renewed), "the thread stopped after a failure")
        app.stop()
        self.assertEqual([e.code for e in errors], ["internal"])
        self.assertIsNone(app.last_error)

    def test_stop_from_on_error_does_not_wait_for_itself(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation(lease_seconds=0.15)))
        self.api.on("POST", ACTIVATIONS + "/act_1/heartbeat", (500, {"code": "internal", "detail": "boom"}))
        stopped = threading.Event()

        def give_up(err):
            app.stop()
            stopped.set()

        app = self.app(on_error=give_up, max_retries=0)
        app.start()
        self.assertTrue(stopped.wait(5), "stop() from the heartbeat thread did not return")
        self.assertFalse(app.is_running)
        self.assertEqual(len(self.api.calls("DELETE", ACTIVATIONS + "/act_1")), 1)

    def test_context_manager(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation(lease_seconds=0.15)))
        self.api.on("POST", ACTIVATIONS + "/act_1/heartbeat", (200, activation()))
        with self.app() as app:
            self.assertTrue(app.is_running)
            self.assertEqual(app.activation["id"], "act_1")
        self.assertFalse(app.is_running)
        self.assertEqual(len(self.api.calls("DELETE", ACTIVATIONS + "/act_1")), 1)

    def test_context_manager_keeps_the_error_of_the_block(self) -> None:
        self.api.on("POST", VALIDATE, (200, validation()))
        self.api.on("DELETE", ACTIVATIONS + "/act_1", (500, {"code": "internal", "detail": "boom"}))
        with self.assertRaises(KeyError):
            with self.app(max_retries=0):
                raise KeyError("the app's own error")

    def test_start_refused(self) -> None:
        self.api.on("POST", ACTIVATIONS, (401, {"code": "unauthorized", "detail": "unknown licence key"}))
        with self.assertRaises(LicensingError) as caught:
            self.app().start()
        self.assertEqual(caught.exception.status, 401)


class Offline(ApiTest):
    def test_verify_offline(self) -> None:
        signer = Signer()
        app = self.app(public_keys=[signer.public_key], product_id="prod_1")
        self.assertTrue(app.verify_offline(signer.sign(license_key=KEY.lower()), now=NOW).valid)
        self.assertEqual(app.verify_offline(signer.sign(license_key="ANOTHER-KEY-12345"), now=NOW).code, "license_mismatch")
        self.assertEqual(app.verify_offline(signer.sign(product_id="prod_2"), now=NOW).code, "license_mismatch")
        self.assertEqual(app.verify_offline(signer.sign(fingerprint="other"), now=NOW).code, "fingerprint_mismatch")
        self.assertTrue(app.verify_offline(signer.sign(fingerprint=FP), now=NOW).valid)
        with self.assertRaises(ValueError):
            self.app().verify_offline(signer.sign())


if __name__ == "__main__":
    unittest.main()
