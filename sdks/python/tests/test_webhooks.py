"""Webhook deliveries beyond the vectors."""

import datetime as dt
import unittest

from licensing_client import sign_webhook, verify_webhook

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ID = "evt_1"
TS = 1780315200
BODY = b'{"id":"evt_1","type":"license.created"}'


class Webhooks(unittest.TestCase):
    def verify(self, body=BODY, id=ID, timestamp=str(TS), signature=None, secret=SECRET, now=TS):
        signature = sign_webhook(SECRET, ID, TS, BODY) if signature is None else signature
        return verify_webhook(body, id, timestamp, signature, secret, now=now)

    def test_round_trip(self) -> None:
        self.assertEqual(tuple(self.verify()), (True, "valid"))
        self.assertTrue(self.verify(body=BODY.decode()).valid)
        self.assertTrue(self.verify(timestamp=TS).valid)
        self.assertTrue(self.verify(now=dt.datetime.fromtimestamp(TS, dt.timezone.utc)).valid)

    def test_secret_without_prefix(self) -> None:
        self.assertTrue(self.verify(secret=SECRET[len("whsec_"):]).valid)

    def test_missing_headers(self) -> None:
        for kwargs in ({"id": ""}, {"id": None}, {"timestamp": ""}, {"signature": ""}):
            with self.subTest(kwargs):
                self.assertEqual(self.verify(**kwargs).code, "missing_headers")

    def test_timestamps(self) -> None:
        # Only ASCII digits, whole seconds, at most 12 of them, and nothing after them.
        for ts in ("1780315200.5", "-1780315200", "１７８０３１５２００", "1780315200\n", "0001780315200", " 1780315200"):
            with self.subTest(ts):
                self.assertEqual(self.verify(timestamp=ts).code, "invalid_timestamp")

    def test_tolerance(self) -> None:
        self.assertTrue(self.verify(now=TS + 300).valid)
        self.assertTrue(self.verify(now=TS - 300).valid)
        self.assertEqual(self.verify(now=TS + 300.5).code, "timestamp_out_of_tolerance")
        self.assertEqual(self.verify(now=TS - 301).code, "timestamp_out_of_tolerance")

    def test_signature_list(self) -> None:
        good = sign_webhook(SECRET, ID, TS, BODY)
        other = sign_webhook("whsec_" + "A" * 32, ID, TS, BODY)
        self.assertTrue(self.verify(signature="v1,!!! v1, v2,abc %s" % good).valid)
        self.assertTrue(self.verify(signature="%s %s" % (other, good)).valid)
        self.assertTrue(self.verify(signature=good + ",extra").valid)
        self.assertEqual(self.verify(signature=other).code, "bad_signature")
        self.assertEqual(self.verify(signature=good.replace("v1,", "v1 ")).code, "bad_signature")
        self.assertEqual(self.verify(body=BODY + b" ").code, "bad_signature")

    def test_unusable_secret_raises(self) -> None:
        for secret in ("", "whsec_", "whsec_not base64!"):
            with self.subTest(secret):
                with self.assertRaises(ValueError):
                    self.verify(secret=secret)

    def test_parsed_body_raises(self) -> None:
        with self.assertRaises(TypeError):
            self.verify(body={"id": "evt_1"})


if __name__ == "__main__":
    unittest.main()
