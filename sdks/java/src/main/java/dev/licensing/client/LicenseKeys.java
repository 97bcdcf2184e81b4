package dev.licensing.client;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Reading a licence key as a person typed it, with no network, as the server reads it
 * ({@code proto/rules/license-key.ts}): a typo in a native key is caught by its check characters
 * before any request is sent.
 *
 * <p>A <b>native</b> key is six groups of five Crockford base32 characters, e.g.
 * {@code 7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG}: 28 random characters and two check characters (the sum
 * of position × value over the first 28, mod the prime 1021, written as two characters), so every
 * single mistyped character and every swap of two neighbours is detected. Case, surrounding white
 * space, hyphens and Crockford's look-alikes (O for 0, I and L for 1) are forgiven. A <b>foreign</b>
 * key, imported from another system (a Keygen hex key, a Lemon Squeezy UUID, a Gumroad key), is 8–64
 * characters of {@code A-Z a-z 0-9 . _ ~ + = : -} and is taken exactly as it is, surrounding white
 * space aside.
 */
public final class LicenseKeys {
    /** Crockford's base32 alphabet: no I, L, O or U. */
    public static final String ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    /** The longest key anything reads (a native key is 35 characters). */
    public static final int MAX_LENGTH = 64;

    private static final int RANDOM_CHARS = 28;
    private static final int KEY_CHARS = 30;
    private static final int MODULUS = 1021;
    private static final int GROUP = 5;
    private static final Pattern FOREIGN_KEY = Pattern.compile("[A-Za-z0-9._~+=:-]{8,64}");

    private LicenseKeys() {}

    /**
     * Reads a key as typed. Never throws: {@code null} reads as a key of the wrong format.
     *
     * @return well formed with its normalised form and kind, or not with the reason
     */
    public static KeyCheck check(String input) {
        if (input == null) return KeyCheck.refused(KeyCheck.FORMAT);
        KeyCheck asNative = checkNative(input);
        if (asNative.wellFormed() || KeyCheck.CHECKSUM.equals(asNative.reason()) || input.length() > MAX_LENGTH) return asNative;
        String trimmed = jsTrim(input);
        return FOREIGN_KEY.matcher(trimmed).matches() ? KeyCheck.ok(trimmed, KeyCheck.FOREIGN) : asNative;
    }

    /** The native reading alone: six groups of five Crockford characters with their right check characters. */
    public static KeyCheck checkNative(String input) {
        if (input == null || input.length() > MAX_LENGTH) return KeyCheck.refused(KeyCheck.FORMAT);
        // The server upper-cases as JavaScript does (Unicode, whatever the locale): Locale.ROOT, so that a
        // Turkish default locale does not turn "i" into "İ", which is no alias of 1.
        String upper = jsTrim(input).toUpperCase(Locale.ROOT);
        StringBuilder chars = new StringBuilder(KEY_CHARS);
        for (int i = 0; i < upper.length(); i++) {
            char c = upper.charAt(i);
            if (c == '-') continue;
            if (c == 'O') c = '0';
            else if (c == 'I' || c == 'L') c = '1';
            chars.append(c);
        }
        if (chars.length() != KEY_CHARS) return KeyCheck.refused(KeyCheck.FORMAT);
        for (int i = 0; i < KEY_CHARS; i++) {
            if (ALPHABET.indexOf(chars.charAt(i)) < 0) return KeyCheck.refused(KeyCheck.FORMAT);
        }
        String body = chars.substring(0, RANDOM_CHARS);
        if (!checkCharacters(body).equals(chars.substring(RANDOM_CHARS))) return KeyCheck.refused(KeyCheck.CHECKSUM);
        return KeyCheck.ok(group(chars.toString()), KeyCheck.NATIVE);
    }

    /** The two check characters of the first 28 characters of a native key. */
    static String checkCharacters(String body) {
        int sum = 0;
        for (int i = 0; i < body.length(); i++) sum += (i + 1) * ALPHABET.indexOf(body.charAt(i));
        int c = sum % MODULUS;
        return "" + ALPHABET.charAt(c / 32) + ALPHABET.charAt(c % 32);
    }

    private static String group(String chars) {
        StringBuilder out = new StringBuilder(chars.length() + chars.length() / GROUP);
        for (int i = 0; i < chars.length(); i += GROUP) {
            if (i > 0) out.append('-');
            out.append(chars, i, Math.min(chars.length(), i + GROUP));
        }
        return out.toString();
    }

    /**
     * JavaScript's String.prototype.trim: its white space and line terminators, which differ from
     * Java's strip() (a no-break space and U+FEFF are trimmed; U+001C–U+001F are not).
     */
    static String jsTrim(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && isJsSpace(s.charAt(start))) start++;
        while (end > start && isJsSpace(s.charAt(end - 1))) end--;
        return s.substring(start, end);
    }

    private static boolean isJsSpace(char c) {
        switch (c) {
            case '\t': case '\n': case 0x0B: case '\f': case '\r': case 0xFEFF: case 0x2028: case 0x2029:
                return true;
            default:
                return Character.getType(c) == Character.SPACE_SEPARATOR;
        }
    }
}
