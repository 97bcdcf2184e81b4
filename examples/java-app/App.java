// A minimal Java app that checks its licence at start-up with sdks/java, the licence key being its
// only credential (no API key ships in an app):
//   1. the key as typed is checked offline first (a typo never reaches the server);
//   2. online: the server validates it for this machine (activating the machine when the policy asks);
//      a valid licence leaves a signed licence file on disk for the next start without network;
//   3. when the server gives no answer (no network, timeout, 429, 5xx): that licence file, verified
//      offline with the product's public keys that ship with the app.
// A definite "no" from the server is final: the file is only for when there is no answer.
//
//   LICENSING_BASE_URL=https://licensing.example.com LICENSE_KEY=7K3QF-… ./run.sh
//
// Exit status: 0 the app may run, 1 it may not, 2 misconfigured.
import dev.licensing.client.Activation;
import dev.licensing.client.KeyCheck;
import dev.licensing.client.LicenseFile;
import dev.licensing.client.LicenseKeys;
import dev.licensing.client.LicensedApp;
import dev.licensing.client.LicensingException;
import dev.licensing.client.PublicKey;
import dev.licensing.client.Validation;
import dev.licensing.client.Verification;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

public final class App {
    public static void main(String[] args) throws Exception {
        String baseUrl = System.getenv("LICENSING_BASE_URL");
        String key = System.getenv("LICENSE_KEY");
        if (baseUrl == null || key == null) {
            System.err.println("set LICENSING_BASE_URL and LICENSE_KEY (optional: PRODUCT_ID, PUBLIC_KEYS, LICENSE_FILE, MACHINE_FINGERPRINT)");
            System.exit(2);
        }
        KeyCheck typed = LicenseKeys.check(key);
        if (!typed.wellFormed()) {
            System.out.println("This is not a licence key (" + typed.reason() + "): check the typing.");
            System.exit(1);
        }
        Path licenseFile = Path.of(env("LICENSE_FILE", "license-file.json"));
        Path publicKeysFile = Path.of(env("PUBLIC_KEYS", "public-keys.json"));
        // The product's public keys (GET /api/v1/products/{id}/signing-keys), shipped with the app.
        List<PublicKey> publicKeys = Files.isReadable(publicKeysFile) ? PublicKey.listFromJson(Files.readString(publicKeysFile)) : null;

        LicensedApp app = LicensedApp.builder()
                .baseUrl(baseUrl)
                .licenseKey(typed.normalized())
                .productId(env("PRODUCT_ID", null))
                .fingerprint(env("MACHINE_FINGERPRINT", machineFingerprint()))
                .publicKeys(publicKeys)
                // A user waits at start-up: answer soon, fall back to the file otherwise.
                .timeout(Duration.ofSeconds(5))
                .maxRetries(1)
                .build();
        try {
            Validation verdict = app.validate();
            Activation seat = null;
            if ("activate".equals(verdict.nextAction())) {
                seat = app.activate();
                verdict = app.validate();
            }
            System.out.printf("Licence (from the server): %s, %s%n", verdict.code(), verdict.detail());
            if (!verdict.valid()) {
                System.out.println("Next: " + verdict.nextAction());
                System.exit(1);
            }
            System.out.println("Features: " + String.join(", ", verdict.entitlements()));
            keepLicenseFile(app, licenseFile);
            // This demo exits at once: a floating seat it took is released now rather than left to lapse.
            if (seat != null && seat.isFloating()) app.deactivate();
            System.exit(0);
        } catch (LicensingException e) {
            if (!e.isUnanswered()) {
                System.out.printf("Refused by the server: %d %s, %s%n", e.status(), e.code(), e.detail());
                if (e.nextAction() != null) System.out.println("Next: " + e.nextAction());
                System.exit(1);
            }
            System.out.println("No answer from the server (" + e.code() + "): checking the licence file offline.");
        }

        if (publicKeys == null || !Files.isReadable(licenseFile)) {
            System.out.println("No licence file or public keys to start offline with (" + licenseFile + ", " + publicKeysFile + ").");
            System.exit(1);
        }
        Verification offline = app.verifyOffline(Files.readString(licenseFile, StandardCharsets.UTF_8), null);
        if (!offline.valid()) {
            System.out.println("Licence file refused: " + offline.code());
            System.exit(1);
        }
        System.out.printf("Licence (from the licence file): valid until %s%n", offline.text("valid_until"));
        System.out.println("Features: " + String.join(", ", offline.entitlements()));
        System.exit(0);
    }

    /** A fresh signed file for the next start without network; failing to get one is no reason to refuse. */
    static void keepLicenseFile(LicensedApp app, Path path) {
        try {
            LicenseFile file = app.licenseFile(7);
            Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
            Files.writeString(tmp, file.toJson(), StandardCharsets.UTF_8);
            // Write then rename, so a crash never leaves half a file.
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            System.out.println("Kept a licence file for offline starts: " + path);
        } catch (LicensingException | java.io.IOException e) {
            System.out.println("No licence file kept this time: " + e.getMessage());
        }
    }

    /** A stable id of this machine that reveals nothing about it (use a hardware id in a real app). */
    static String machineFingerprint() throws Exception {
        String host = InetAddress.getLocalHost().getHostName();
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(("java-app:" + host).getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(digest, 0, 16);
    }

    static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }
}
