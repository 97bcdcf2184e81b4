"""Licence files beyond the vectors: the edges where a Python port could differ from the reference."""

import base64
import datetime as dt
import json
import unittest

from licensing_client import verify_license_file
from licensing_client.dates import parse_js_date

from .support import LICENCE, NOW, Signer


class LicenseFiles(unittest.TestCase):
    def setUp(self) -> None:
        self.signer = Signer()
        self.keys = [self.signer.public_key]

    def verify(self, file, **options):
        options.setdefault("now", NOW)
        return verify_license_file(file, self.keys, **options)

    def test_valid(self) -> None:
        v = self.verify(self.signer.sign())
        self.assertEqual((v.valid, v.code), (True, "valid"))
        self.assertEqual(v.payload["entitlements"], ["sync"])
        valid, code, payload = v  # a plain tuple too
        self.assertTrue(valid)

    def test_public_keys_as_the_rest_body(self) -> None:
        self.assertTrue(verify_license_file(self.signer.sign(), {"data": self.keys}, now=NOW).valid)

    def test_file_as_json_text(self) -> None:
        self.assertTrue(self.verify(json.dumps(self.signer.sign())).valid)
        self.assertEqual(self.verify("not json").code, "malformed")
        self.assertEqual(self.verify(None).code, "malformed")

    def test_url_safe_unpadded_base64(self) -> None:
        f = self.signer.sign()
        for field in ("payload", "signature"):
            f[field] = base64.urlsafe_b64encode(base64.b64decode(f[field])).decode().rstrip("=")
        self.assertTrue(self.verify(f).valid)

    def test_white_space_in_base64_is_malformed(self) -> None:
        # base64.b64decode would skip it; the reference refuses it.
        f = self.signer.sign()
        f["payload"] = f["payload"][:10] + "\n" + f["payload"][10:]
        self.assertEqual(self.verify(f).code, "malformed")

    def test_short_signature_is_a_bad_signature(self) -> None:
        f = self.signer.sign()
        f["signature"] = base64.b64encode(b"\x00" * 10).decode()
        self.assertEqual(self.verify(f).code, "bad_signature")

    def test_payload_must_be_a_json_object(self) -> None:
        for raw in (b"[1, 2]", b'"text"', b"null", b"\xff\xfe{}", b'{"kid": NaN}', b'{"valid_until": Infinity}'):
            with self.subTest(raw):
                self.assertEqual(self.verify(self.signer.sign_bytes(raw)).code, "malformed")

    def test_byte_order_mark_is_dropped_as_textdecoder_does(self) -> None:
        payload = dict(LICENCE, kid=self.signer.kid)
        f = self.signer.sign_bytes(b"\xef\xbb\xbf" + json.dumps(payload).encode())
        self.assertTrue(self.verify(f).valid)

    def test_dates_must_be_dates(self) -> None:
        for value in ("yesterday", 1780315200, None, "2026-06 00:00:00Z", "2026-13-01T00:00:00Z"):
            with self.subTest(value):
                self.assertEqual(self.verify(self.signer.sign(valid_until=value)).code, "malformed")

    def test_dates_with_offsets(self) -> None:
        # 13:59:59+02:00 is 11:59:59Z: expired at noon.
        self.assertEqual(self.verify(self.signer.sign(valid_until="2026-06-01T13:59:59+02:00")).code, "expired")
        self.assertTrue(self.verify(self.signer.sign(valid_until="2026-06-01T14:00:00+02:00")).valid)

    def test_order_of_checks(self) -> None:
        # Status comes before the dates, the dates before the machine.
        f = self.signer.sign(status="suspended", valid_until="2020-01-01T00:00:00Z", fingerprint="m")
        self.assertEqual(self.verify(f).code, "not_active")
        f = self.signer.sign(valid_until="2020-01-01T00:00:00Z", fingerprint="m")
        self.assertEqual(self.verify(f).code, "expired")

    def test_fingerprints(self) -> None:
        f = self.signer.sign(fingerprint="machine-1")
        self.assertEqual(self.verify(f).code, "fingerprint_required")
        self.assertEqual(self.verify(f, fingerprint="").code, "fingerprint_mismatch")
        self.assertEqual(self.verify(f, fingerprint="machine-2").code, "fingerprint_mismatch")
        self.assertTrue(self.verify(f, fingerprint="machine-1").valid)
        # A file for any machine is valid on this one.
        self.assertTrue(self.verify(self.signer.sign(), fingerprint="machine-1").valid)

    def test_now_in_every_form(self) -> None:
        f = self.signer.sign()
        at = dt.datetime(2026, 6, 1, 12, tzinfo=dt.timezone.utc)
        for now in (at, at.timestamp(), int(at.timestamp()), NOW):
            with self.subTest(now):
                self.assertTrue(self.verify(f, now=now).valid)
        self.assertEqual(self.verify(f, now=dt.datetime(2026, 7, 1, 0, 0, 0, 1000, tzinfo=dt.timezone.utc)).code, "expired")
        # valid_until itself is still valid.
        self.assertTrue(self.verify(f, now="2026-07-01T00:00:00.000Z").valid)
        with self.assertRaises(ValueError):
            self.verify(f, now="tomorrow")

    def test_clock_skew(self) -> None:
        self.assertTrue(self.verify(self.signer.sign(issued_at="2026-06-01T12:05:00.000Z")).valid)
        self.assertEqual(self.verify(self.signer.sign(issued_at="2026-06-01T12:05:00.001Z")).code, "not_yet_valid")

    def test_unusable_public_keys_raise(self) -> None:
        with self.assertRaises(TypeError):
            verify_license_file(self.signer.sign(), "keys", now=NOW)
        with self.assertRaises(TypeError):
            verify_license_file(self.signer.sign(), [{"kid": "k"}], now=NOW)
        not_ed25519 = {"kid": self.signer.kid, "public_key_pem": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"}
        with self.assertRaises(ValueError):
            verify_license_file(self.signer.sign(), [not_ed25519], now=NOW)

    def test_another_key_type_raises(self) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        pem = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        with self.assertRaises(ValueError):
            verify_license_file(self.signer.sign(), [{"kid": self.signer.kid, "public_key_pem": pem.decode()}], now=NOW)


class JavaScriptDates(unittest.TestCase):
    def test_forms_date_parse_reads(self) -> None:
        self.assertEqual(parse_js_date("2026-06-01T12:00:00.000Z"), 1780315200000)
        self.assertEqual(parse_js_date("2026-06-01T12:00:00.1239Z"), 1780315200123)
        self.assertEqual(parse_js_date("2026-06-01"), 1780272000000)
        self.assertEqual(parse_js_date("2026-06-01T24:00:00Z"), 1780358400000)
        self.assertEqual(parse_js_date("2026-04-31T00:00:00Z"), parse_js_date("2026-05-01T00:00:00Z"))
        self.assertEqual(parse_js_date("+002026-06-01T00:00:00Z"), 1780272000000)
        self.assertEqual(parse_js_date("2026-06-01t12:00:00-0130"), 1780320600000)

    def test_forms_it_refuses(self) -> None:
        for text in ("2026-06-01T24:00:01Z", "2026-06-01T12Z", "2026-06-01T12:00:00+01", "-000000-01-01",
                     "2026-02-32", " 2026-06-01", "2026-06-01T12:00:00.Z", "+275760-09-13T00:00:00.001Z", "٢٠٢٦"):
            with self.subTest(text):
                self.assertIsNone(parse_js_date(text))


if __name__ == "__main__":
    unittest.main()
