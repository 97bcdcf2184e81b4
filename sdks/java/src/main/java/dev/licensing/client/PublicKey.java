package dev.licensing.client;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A product signing key as {@code GET /api/v1/products/{id}/signing-keys} lists it: what an app ships
 * to check licence files offline. Keep the older keys after a rotation: the files they signed keep
 * verifying until they expire.
 *
 * <p>Not {@link java.security.PublicKey}: this is the listed key with its {@code kid}; {@link #toJavaKey()}
 * gives the JCA key.
 *
 * @param kid the key's id, which a licence file names
 * @param algorithm {@code "Ed25519"} (may be null when not given)
 * @param publicKeyPem the SPKI public key in PEM ({@code -----BEGIN PUBLIC KEY-----…})
 */
public record PublicKey(String kid, String algorithm, String publicKeyPem) {
    public PublicKey {
        Objects.requireNonNull(kid, "kid");
        Objects.requireNonNull(publicKeyPem, "publicKeyPem");
    }

    /**
     * The keys of a JSON text: an array of {@code {kid, algorithm, public_key_pem}}, or the REST body
     * {@code {data: [...]}}.
     *
     * @throws IllegalArgumentException when it is neither, or a key lacks its kid or PEM string
     */
    public static List<PublicKey> listFromJson(String json) {
        return listOf(Json.parse(json));
    }

    /** The keys of a parsed JSON value (see {@link #listFromJson(String)}). */
    public static List<PublicKey> listOf(Object parsed) {
        Object list = parsed instanceof Map ? ((Map<?, ?>) parsed).get("data") : parsed;
        if (!(list instanceof List))
            throw new IllegalArgumentException("public keys must be a JSON array of {kid, public_key_pem} or {data: [...]}, got " + Json.typeName(parsed));
        List<PublicKey> keys = new ArrayList<>();
        for (Object item : (List<?>) list) {
            Map<?, ?> k = item instanceof Map ? (Map<?, ?>) item : Map.of();
            if (!(k.get("kid") instanceof String) || !(k.get("public_key_pem") instanceof String))
                throw new IllegalArgumentException("every public key needs a kid and a public_key_pem string");
            Object algorithm = k.get("algorithm");
            keys.add(new PublicKey((String) k.get("kid"), algorithm instanceof String ? (String) algorithm : null, (String) k.get("public_key_pem")));
        }
        return Collections.unmodifiableList(keys);
    }

    /**
     * The Ed25519 key of the PEM (SPKI → X509EncodedKeySpec).
     *
     * @throws IllegalArgumentException when the PEM holds no Ed25519 public key
     */
    public java.security.PublicKey toJavaKey() {
        try {
            return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(Encoding.pemPublicKey(publicKeyPem)));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("public key " + kid + " is not an Ed25519 SPKI public key: " + e.getMessage(), e);
        }
    }
}
