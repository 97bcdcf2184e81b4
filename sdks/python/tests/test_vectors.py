"""Every case of sdks/test-vectors through the library (the same cases the conformance command runs)."""

import unittest

from licensing_client import check_key, verify_license_file, verify_webhook

from .support import vectors


class LicenseFileVectors(unittest.TestCase):
    def test_every_case(self) -> None:
        data = vectors("license-files.json")
        self.assertGreater(len(data["cases"]), 0)
        for case in data["cases"]:
            with self.subTest(case["name"]):
                v = verify_license_file(
                    case["file"], data["key_sets"][case["key_set"]], fingerprint=case["fingerprint"], now=case["now"]
                )
                self.assertEqual(
                    {"valid": v.valid, "code": v.code, "payload": v.payload}, case["expect"]
                )
                self.assertIn(v.code, data["codes"])


class WebhookVectors(unittest.TestCase):
    def test_every_case(self) -> None:
        data = vectors("webhooks.json")
        self.assertGreater(len(data["cases"]), 0)
        for case in data["cases"]:
            with self.subTest(case["name"]):
                v = verify_webhook(
                    case["body"].encode("utf-8"),
                    case["id"],
                    case["timestamp"],
                    case["signature"],
                    case["secret"],
                    now=case["now"],
                )
                self.assertEqual({"valid": v.valid, "code": v.code}, case["expect"])


class LicenseKeyVectors(unittest.TestCase):
    def test_every_case(self) -> None:
        data = vectors("license-keys.json")
        self.assertGreater(len(data["cases"]), 0)
        for case in data["cases"]:
            with self.subTest(case["name"]):
                self.assertEqual(check_key(case["input"])._asdict(), case["expect"])


if __name__ == "__main__":
    unittest.main()
