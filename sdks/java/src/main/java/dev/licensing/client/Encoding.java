package dev.licensing.client;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Byte helpers that read what the TypeScript SDK reads, no more and no less. */
final class Encoding {
    private Encoding() {}

    private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/]*");

    /**
     * Standard or URL-safe base64, padded or not, to bytes; anything else is an IllegalArgumentException.
     * The server writes standard base64 and docs/api.md calls it base64url, so both are read.
     */
    static byte[] base64(String input) {
        String standard = input.replace('-', '+').replace('_', '/');
        int end = standard.length();
        while (end > 0 && standard.charAt(end - 1) == '=') end--;
        standard = standard.substring(0, end);
        if (!BASE64.matcher(standard).matches() || standard.length() % 4 == 1)
            throw new IllegalArgumentException("not valid base64");
        return Base64.getDecoder().decode(standard + "===".substring(0, (4 - standard.length() % 4) % 4));
    }

    /** Strict UTF-8: a malformed sequence is an error, not a replacement character. A leading BOM is dropped, as TextDecoder does. */
    static String utf8(byte[] bytes) throws CharacterCodingException {
        String text = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes))
                .toString();
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }

    private static final Pattern PEM = Pattern.compile("-----BEGIN PUBLIC KEY-----([\\s\\S]+?)-----END PUBLIC KEY-----");

    /** The DER bytes inside a PEM "PUBLIC KEY" block (SPKI). */
    static byte[] pemPublicKey(String pem) {
        Matcher m = PEM.matcher(pem);
        if (!m.find()) throw new IllegalArgumentException("not a PEM \"PUBLIC KEY\" block");
        return base64(m.group(1).replaceAll("\\s+", ""));
    }
}
