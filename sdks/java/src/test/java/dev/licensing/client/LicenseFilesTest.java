package dev.licensing.client;

import static dev.licensing.client.Check.equal;
import static dev.licensing.client.Check.fails;
import static dev.licensing.client.Check.isTrue;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;

public class LicenseFilesTest {
    final TestSigner signer = new TestSigner("kid_test");
    final List<PublicKey> keys = List.of(signer.publicKey());
    final Instant now = Instant.parse("2026-06-01T12:00:00Z");

    Verification verify(Map<String, Object> file, String fingerprint, Instant at) {
        return LicenseFiles.verify(file, keys, fingerprint, at);
    }

    String code(Map<String, Object> payload) {
        return verify(signer.file(Json.write(payload)), null, now).code();
    }

    public void testValidFileGivesItsPayload() {
        Verification v = verify(signer.file(Json.write(signer.payload())), null, now);
        equal(true, v.valid());
        equal("valid", v.code());
        equal(LicenseKeysTest.KEY, v.licenseKey());
        equal(List.of("pdf-export"), v.entitlements());
        equal("prod_1", v.payload().get("product_id"));
    }

    public void testJsonTextAndRecordInputs() {
        Map<String, Object> file = signer.file(Json.write(signer.payload()));
        equal("valid", LicenseFiles.verify(Json.write(file), keys, null, now).code());
        LicenseFile record = new LicenseFile((String) file.get("kid"), "Ed25519", (String) file.get("payload"), (String) file.get("signature"));
        equal("valid", LicenseFiles.verify(record, keys, null, now).code());
        equal("malformed", LicenseFiles.verify("not json", keys, null, now).code());
        equal("malformed", LicenseFiles.verify("[1]", keys, null, now).code());
        equal("malformed", LicenseFiles.verifyParsed(null, keys, null, now).code());
    }

    public void testUrlSafeUnpaddedBase64IsRead() {
        byte[] payload = Json.write(signer.payload()).getBytes(StandardCharsets.UTF_8);
        Map<String, Object> file = signer.file(payload);
        file.put("payload", Base64.getUrlEncoder().withoutPadding().encodeToString(payload));
        file.put("signature", Base64.getUrlEncoder().withoutPadding().encodeToString(signer.sign(payload)));
        equal("valid", verify(file, null, now).code());
        file.put("payload", "a*b");
        equal("malformed", verify(file, null, now).code(), "not base64");
        file.put("payload", "abcde");
        equal("malformed", verify(file, null, now).code(), "one character too many");
    }

    public void testShapeBeforeAlgorithmBeforeKey() {
        Map<String, Object> file = signer.file(Json.write(signer.payload()));
        file.put("kid", 1);
        equal("malformed", verify(file, null, now).code());
        file.put("kid", "kid_other");
        file.put("algorithm", "RS256");
        equal("unsupported_algorithm", verify(file, null, now).code());
        file.put("algorithm", "Ed25519");
        equal("unknown_key", verify(file, null, now).code());
    }

    public void testSignatureOfWrongLength() {
        Map<String, Object> file = signer.file(Json.write(signer.payload()));
        file.put("signature", Base64.getEncoder().encodeToString(new byte[10]));
        equal("bad_signature", verify(file, null, now).code());
        file.put("signature", "");
        equal("bad_signature", verify(file, null, now).code());
    }

    public void testSignedButNotAnObject() {
        equal("malformed", verify(signer.file("[1,2]"), null, now).code(), "an array");
        equal("malformed", verify(signer.file("\"text\""), null, now).code(), "a string");
        equal("malformed", verify(signer.file(new byte[] {(byte) 0xC3, (byte) 0x28}), null, now).code(), "not UTF-8");
    }

    public void testUtf8BomIsDroppedAsTextDecoderDoes() {
        byte[] json = Json.write(signer.payload()).getBytes(StandardCharsets.UTF_8);
        byte[] withBom = new byte[json.length + 3];
        withBom[0] = (byte) 0xEF;
        withBom[1] = (byte) 0xBB;
        withBom[2] = (byte) 0xBF;
        System.arraycopy(json, 0, withBom, 3, json.length);
        equal("valid", verify(signer.file(withBom), null, now).code());
    }

    public void testOrderOfTheChecksAfterTheSignature() {
        equal("kid_mismatch", code(signer.payload("kid", "kid_other", "status", "revoked")));
        equal("kid_mismatch", code(signer.payload("kid", null)));
        equal("malformed", code(signer.payload("valid_until", "someday", "status", "revoked")));
        equal("malformed", code(signer.payload("issued_at", null)));
        equal("malformed", code(signer.payload("issued_at", 1780315200000L)));
        equal("not_active", code(signer.payload("status", "suspended", "valid_until", "2020-01-01T00:00:00Z")));
        equal("expired", code(signer.payload("valid_until", "2020-01-01T00:00:00Z", "issued_at", "2030-01-01T00:00:00Z")));
        equal("not_yet_valid", code(signer.payload("issued_at", "2030-01-01T00:00:00Z", "valid_until", "2031-01-01T00:00:00Z", "fingerprint", "m")));
    }

    public void testDateBoundaries() {
        equal("valid", code(signer.payload("valid_until", "2026-06-01T12:00:00.000Z")), "valid until exactly now");
        equal("expired", code(signer.payload("valid_until", "2026-06-01T11:59:59.999Z")));
        equal("valid", code(signer.payload("issued_at", "2026-06-01T12:05:00.000Z")), "five minutes of clock skew");
        equal("not_yet_valid", code(signer.payload("issued_at", "2026-06-01T12:05:00.001Z")));
        equal("valid", code(signer.payload("valid_until", "2026-06-01T14:00:00+02:00")), "an offset");
        equal("valid", code(signer.payload("valid_until", "2026-06-02")), "a date alone is UTC midnight");
        // JavaScript keeps milliseconds: a microsecond past valid_until is still that millisecond.
        Map<String, Object> file = signer.file(Json.write(signer.payload("valid_until", "2026-06-01T12:00:00.000Z")));
        equal("valid", verify(file, null, Instant.parse("2026-06-01T12:00:00.000900Z")).code());
    }

    public void testFingerprints() {
        Map<String, Object> bound = signer.file(Json.write(signer.payload("fingerprint", "machine-1")));
        equal("valid", verify(bound, "machine-1", now).code());
        equal("fingerprint_required", verify(bound, null, now).code());
        equal("fingerprint_mismatch", verify(bound, "machine-2", now).code());
        equal("fingerprint_mismatch", verify(bound, "", now).code(), "an empty fingerprint is a fingerprint");
        Map<String, Object> numeric = signer.file(Json.write(signer.payload("fingerprint", 7L)));
        equal("fingerprint_mismatch", verify(numeric, "7", now).code());
        Map<String, Object> unbound = signer.file(Json.write(signer.payload()));
        equal("valid", verify(unbound, "any-machine", now).code(), "an unbound file is valid anywhere");
    }

    public void testKeysFromTheRestBodyOrAnArray() {
        String pem = Json.write(signer.publicKey().publicKeyPem());
        List<PublicKey> fromData = PublicKey.listFromJson("{\"data\":[{\"kid\":\"kid_test\",\"algorithm\":\"Ed25519\",\"public_key_pem\":" + pem + ",\"current\":true}]}");
        List<PublicKey> fromArray = PublicKey.listFromJson("[{\"kid\":\"kid_test\",\"public_key_pem\":" + pem + "}]");
        equal(fromData.get(0).publicKeyPem(), fromArray.get(0).publicKeyPem());
        equal(null, fromArray.get(0).algorithm());
        Map<String, Object> file = signer.file(Json.write(signer.payload()));
        equal("valid", LicenseFiles.verify(file, fromData, null, now).code());
        fails(IllegalArgumentException.class, () -> PublicKey.listFromJson("{}"));
        fails(IllegalArgumentException.class, () -> PublicKey.listFromJson("[{\"kid\":\"k\"}]"));
    }

    public void testBadPemOfTheNamedKeyIsAnError() {
        List<PublicKey> broken = List.of(new PublicKey("kid_test", "Ed25519", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"));
        Map<String, Object> file = signer.file(Json.write(signer.payload()));
        fails(IllegalArgumentException.class, () -> LicenseFiles.verify(file, broken, null, now));
        // Another listed key's PEM is never read.
        List<PublicKey> mixed = List.of(new PublicKey("kid_other", null, "junk"), signer.publicKey());
        equal("valid", LicenseFiles.verify(file, mixed, null, now).code());
    }

    public void testAnotherKeysSignatureIsBad() {
        TestSigner other = new TestSigner("kid_test");
        Map<String, Object> file = other.file(Json.write(other.payload()));
        equal("bad_signature", verify(file, null, now).code());
        isTrue(verify(file, null, now).payload() == null, "no payload unless valid");
    }
}
