package dev.licensing.client;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** A product signing key made for a test: signs licence files as the product service does. */
final class TestSigner {
    final String kid;
    final KeyPair pair;

    TestSigner(String kid) {
        this.kid = kid;
        try {
            this.pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    PublicKey publicKey() {
        String b64 = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(pair.getPublic().getEncoded());
        return new PublicKey(kid, "Ed25519", "-----BEGIN PUBLIC KEY-----\n" + b64 + "\n-----END PUBLIC KEY-----\n");
    }

    byte[] sign(byte[] message) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(pair.getPrivate());
            s.update(message);
            return s.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A file over these exact payload bytes. */
    Map<String, Object> file(byte[] payload) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("kid", kid);
        f.put("algorithm", "Ed25519");
        f.put("payload", Base64.getEncoder().encodeToString(payload));
        f.put("signature", Base64.getEncoder().encodeToString(sign(payload)));
        return f;
    }

    Map<String, Object> file(String payloadJson) {
        return file(payloadJson.getBytes(StandardCharsets.UTF_8));
    }

    /** A payload as the licence service writes one, with this key's kid; change members with {@code extra}. */
    Map<String, Object> payload(Object... extra) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("license_key", LicenseKeysTest.KEY);
        p.put("license_id", "lic_1");
        p.put("product_id", "prod_1");
        p.put("customer_email", null);
        p.put("status", "active");
        p.put("expires_at", null);
        p.put("fingerprint", null);
        p.put("entitlements", java.util.List.of("pdf-export"));
        p.put("issued_at", "2026-06-01T00:00:00.000Z");
        p.put("valid_until", "2026-07-01T00:00:00.000Z");
        p.put("kid", kid);
        for (int i = 0; i < extra.length; i += 2) p.put((String) extra[i], extra[i + 1]);
        return p;
    }
}
