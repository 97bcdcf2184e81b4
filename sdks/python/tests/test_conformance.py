"""The conformance command (docs/sdk-conformance.md): one JSON line on stdout, exit 0, 1 or 2,
usage errors on stderr only. Run in this process (main() with its output captured), and a few times
as the child process the dispatcher starts."""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from licensing_client.conformance import main

from .support import KEY, PACKAGE_ROOT, VECTORS, FakeApi, vectors, without_proxies


def conformance(*args: str):
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, without_proxies(), clear=True), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def child(*args: str, via_dispatcher: bool = False):
    env = without_proxies()
    env["PYTHONPATH"] = str(PACKAGE_ROOT)
    if via_dispatcher:
        command = ["bash", str(PACKAGE_ROOT.parent / "conformance"), "python", *args]
    else:
        command = [sys.executable, "-m", "licensing_client.conformance", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    return done.returncode, done.stdout, done.stderr


class ChildProcess(unittest.TestCase):
    def test_the_exit_statuses(self) -> None:
        code, out, _ = child("vectors", "--dir", str(VECTORS))
        self.assertEqual((code, json.loads(out)["failed"]), (0, []))
        code, out, _ = child("check-key", "abc")
        self.assertEqual((code, json.loads(out)["well_formed"]), (1, False))
        code, out, err = child("nope")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("unknown command nope", err)

    @unittest.skipUnless((PACKAGE_ROOT.parent / "conformance").exists(), "no sdks/conformance dispatcher")
    def test_through_the_dispatcher(self) -> None:
        code, out, _ = child("check-key", "7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG", via_dispatcher=True)
        self.assertEqual((code, json.loads(out)["kind"]), (0, "native"))
        code, out, _ = child("nope", via_dispatcher=True)
        self.assertEqual((code, out), (2, ""))


class Offline(unittest.TestCase):
    def answer(self, *args: str, status: int = 0):
        code, out, err = conformance(*args)
        self.assertEqual(code, status, err)
        self.assertEqual(out.count("\n"), 1, out)
        return json.loads(out)

    def test_vectors(self) -> None:
        answer = self.answer("vectors", "--dir", str(VECTORS))
        self.assertEqual(answer["failed"], [])
        self.assertGreater(answer["passed"], 40)

    def test_vectors_that_fail(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            for name in ("license-files.json", "webhooks.json", "license-keys.json"):
                data = vectors(name)
                if name == "license-keys.json":
                    data["cases"][0]["expect"]["kind"] = "foreign"
                with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                    json.dump(data, f)
            answer = self.answer("vectors", "--dir", d, status=1)
        self.assertEqual([f["name"] for f in answer["failed"]], ["a native key as issued"])
        self.assertEqual(answer["failed"][0]["got"]["kind"], "native")

    def test_check_key(self) -> None:
        self.assertEqual(
            self.answer("check-key", "7k3qf-9xw2m-t0rbh-pz4dn-c8e1v-q3atg"),
            {"well_formed": True, "normalized": KEY, "kind": "native", "reason": None},
        )
        self.assertEqual(self.answer("check-key", "abc", status=1)["reason"], "format")
        # A word starting with one hyphen is the key, not an option.
        self.assertEqual(self.answer("check-key", "-abcdefgh")["kind"], "foreign")

    def test_verify_file(self) -> None:
        data = vectors("license-files.json")
        case = next(c for c in data["cases"] if c["name"] == "node-locked, on its machine")
        with tempfile.TemporaryDirectory() as d:
            keys, file = os.path.join(d, "keys.json"), os.path.join(d, "file.json")
            with open(keys, "w") as f:
                json.dump({"data": data["key_sets"][case["key_set"]]}, f)
            with open(file, "w") as f:
                json.dump(case["file"], f)
            answer = self.answer("verify-file", "--public-keys", keys, "--file", file, "--fingerprint", "machine-7f3a", "--now", case["now"])
            self.assertEqual(answer, case["expect"])
            refused = self.answer("verify-file", "--public-keys", keys, "--file", file, "--now", case["now"], status=1)
            self.assertEqual(refused, {"valid": False, "code": "fingerprint_required", "payload": None})

    def test_verify_webhook(self) -> None:
        case = vectors("webhooks.json")["cases"][0]
        with tempfile.NamedTemporaryFile("wb", delete=False) as f:
            f.write(case["body"].encode("utf-8"))
        self.addCleanup(os.unlink, f.name)
        args = ["verify-webhook", "--secret", case["secret"], "--id", case["id"], "--timestamp", case["timestamp"], "--signature", case["signature"], "--body-file", f.name]
        self.assertEqual(self.answer(*args, "--now", str(case["now"])), {"valid": True, "code": "valid"})
        self.assertEqual(self.answer(*args, "--now", str(case["now"] + 301), status=1)["code"], "timestamp_out_of_tolerance")

    def test_usage_errors(self) -> None:
        for args in (
            ["nope"],
            [],
            ["check-key"],
            ["check-key", "a", "b"],
            ["check-key", "abc", "--x", "y"],
            ["vectors"],
            ["vectors", "--dir"],
            ["vectors", "--dir", str(VECTORS), "--extra", "1"],
            ["vectors", "--dir", str(VECTORS), "stray"],
            ["verify-file", "--file", "f.json"],
            ["activate", "--base-url", "http://127.0.0.1:9", "--license-key", KEY],
            ["--help"],
        ):
            with self.subTest(args):
                code, out, err = conformance(*args)
                self.assertEqual(code, 2)
                self.assertEqual(out, "")
                self.assertIn("usage:", err)

    def test_other_failures_exit_1_with_a_message(self) -> None:
        code, out, err = conformance("vectors", "--dir", "/nonexistent")
        self.assertEqual((code, out), (1, ""))
        self.assertIn("No such file", err)


class Api(unittest.TestCase):
    def setUp(self) -> None:
        self.api = FakeApi()
        self.addCleanup(self.api.close)
        self.common = ["--base-url", self.api.base_url, "--license-key", KEY]

    def run_api(self, *args: str):
        code, out, err = conformance(*args)
        return code, (json.loads(out) if out else None), err

    def test_validate(self) -> None:
        self.api.on("POST", "/api/v1/keys/validate", (200, {"valid": True, "code": "valid", "license": None}), (200, {"valid": False, "code": "expired"}))
        code, answer, _ = self.run_api("validate", *self.common, "--entitlement", "a", "--entitlement", "b")
        self.assertEqual((code, answer["code"]), (0, "valid"))
        self.assertEqual(self.api.requests[0].body, {"key": KEY, "fingerprint": "conformance", "entitlements": ["a", "b"]})
        self.assertEqual(self.api.requests[0].headers["authorization"], "License " + KEY)
        code, answer, _ = self.run_api("validate", *self.common, "--fingerprint", "m1")
        self.assertEqual((code, answer["code"]), (1, "expired"))

    def test_seat_commands(self) -> None:
        base = "/api/v1/licenses/%s/activations" % KEY
        self.api.on("POST", base, (201, {"id": "act_1", "fingerprint": "m1", "lease_expires_at": None}))
        self.api.on("POST", base + "/act_1/heartbeat", (200, {"id": "act_1", "fingerprint": "m1", "lease_expires_at": "2026-06-01T12:05:00.000Z"}))
        self.api.on("DELETE", base + "/act_1", (204, None))
        self.assertEqual(self.run_api("activate", *self.common, "--fingerprint", "m1", "--name", "Laptop")[:2], (0, {"activation_id": "act_1"}))
        self.assertEqual(self.api.requests[-1].body, {"fingerprint": "m1", "name": "Laptop"})
        self.assertEqual(
            self.run_api("heartbeat", *self.common, "--activation-id", "act_1")[:2],
            (0, {"activation_id": "act_1", "lease_expires_at": "2026-06-01T12:05:00.000Z"}),
        )
        self.assertEqual(self.run_api("deactivate", *self.common, "--activation-id", "act_1")[:2], (0, {"deactivated": True}))

    def test_fetch_file(self) -> None:
        the_file = {"kid": "k", "algorithm": "Ed25519", "payload": "e30", "signature": "AA"}
        self.api.on("POST", "/api/v1/licenses/%s/file" % KEY, (201, the_file))
        self.assertEqual(self.run_api("fetch-file", *self.common, "--fingerprint", "m1")[:2], (0, the_file))
        self.assertEqual(self.api.requests[-1].body, {"fingerprint": "m1"})

    def test_a_refusal(self) -> None:
        self.api.on(
            "POST", "/api/v1/licenses/%s/activations" % KEY,
            (409, {"code": "conflict", "detail": "activation_limit_reached: all seats taken", "next_action": "free_a_seat"}),
        )
        code, answer, _ = self.run_api("activate", *self.common, "--fingerprint", "m1")
        self.assertEqual(code, 1)
        self.assertEqual(
            answer,
            {"error": {"status": 409, "code": "conflict", "detail": "activation_limit_reached: all seats taken", "next_action": "free_a_seat"}},
        )


if __name__ == "__main__":
    unittest.main()
