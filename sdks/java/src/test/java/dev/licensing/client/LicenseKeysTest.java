package dev.licensing.client;

import static dev.licensing.client.Check.equal;
import static dev.licensing.client.Check.isFalse;
import static dev.licensing.client.Check.isTrue;

import java.util.Locale;

public class LicenseKeysTest {
    static final String KEY = "7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG";

    public void testCheckCharacters() {
        equal("TG", LicenseKeys.checkCharacters("7K3QF9XW2MT0RBHPZ4DNC8E1VQ3A"));
    }

    public void testUpperCasesTheSameInEveryLocale() {
        Locale before = Locale.getDefault();
        try {
            // In Turkish, "i".toUpperCase() is "İ" (no alias of 1); the server reads it as JavaScript does: "I".
            Locale.setDefault(new Locale("tr", "TR"));
            KeyCheck k = LicenseKeys.check("iozlo-abcde-fghjk-mnpqr-stvwx-yolen");
            equal(KeyCheck.ok("10Z10-ABCDE-FGHJK-MNPQR-STVWX-Y01EN", "native"), k);
        } finally {
            Locale.setDefault(before);
        }
    }

    public void testUnicodeUpperCaseAsJavaScript() {
        // U+0131 (dotless i) upper-cases to I, read as 1, in JavaScript too.
        equal("10Z10-ABCDE-FGHJK-MNPQR-STVWX-Y01EN", LicenseKeys.check("\u0131OZlO-ABCDE-FGHJK-MNPQR-STVWX-YOlEN").normalized());
        // Full-width letters stay full-width: not the alphabet, and not a foreign key either.
        equal(KeyCheck.refused("format"), LicenseKeys.check("７K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG"));
    }

    public void testTrimsWhatJavaScriptTrims() {
        // A no-break space, U+FEFF, U+3000 and line separators are trimmed by JavaScript's trim() (not by String.strip()).
        equal(KEY, LicenseKeys.check("\u00A0\uFEFF\u3000" + KEY + "\u2028\n\u000B").normalized());
        equal("38b1460a-5104-4067-a91d-77b872934d51", LicenseKeys.check("\u00A038b1460a-5104-4067-a91d-77b872934d51\u00A0").normalized());
        // U+001F is white space to Java's strip() but not to JavaScript.
        equal(KeyCheck.refused("format"), LicenseKeys.check("\u001F" + KEY));
    }

    public void testNativeShapedWithWrongCheckIsNeverForeign() {
        KeyCheck k = LicenseKeys.check("7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATH");
        equal(KeyCheck.refused("checksum"), k);
    }

    public void testForeignLengths() {
        equal(KeyCheck.ok("abcdefgh", "foreign"), LicenseKeys.check("abcdefgh"));
        equal(KeyCheck.refused("format"), LicenseKeys.check("abcdefg"));
        String sixtyFour = "a".repeat(64);
        equal(KeyCheck.ok(sixtyFour, "foreign"), LicenseKeys.check(sixtyFour));
        equal(KeyCheck.refused("format"), LicenseKeys.check("a".repeat(65)));
        // 64 characters once trimmed, but more as typed: the limit is on what was typed.
        equal(KeyCheck.refused("format"), LicenseKeys.check(" " + sixtyFour));
        equal(KeyCheck.ok("a.b_c~d+e=f:g-h", "foreign"), LicenseKeys.check("a.b_c~d+e=f:g-h"));
        isTrue(LicenseKeys.check("-leading-hyphen").isForeign(), "a foreign key may start with a hyphen");
    }

    public void testNullAndEmpty() {
        equal(KeyCheck.refused("format"), LicenseKeys.check(null));
        equal(KeyCheck.refused("format"), LicenseKeys.check(""));
        isFalse(LicenseKeys.check("   ").wellFormed(), "spaces only");
    }

    public void testNativeWithAnyHyphensAndCase() {
        equal(KEY, LicenseKeys.check("7k3qf9xw2mt0rbhpz4dnc8e1vq3atg").normalized());
        equal(KEY, LicenseKeys.check("-7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG-").normalized());
        equal("native", LicenseKeys.check(KEY).kind());
    }
}
