package dev.licensing.client;

import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The conformance command (docs/sdk-conformance.md), run by {@code sdks/conformance java COMMAND …}:
 * one JSON object on one line on stdout; exit 0 when the answer is valid or the call succeeded, 1 when
 * not, 2 on a usage error (the message on stderr).
 */
public final class Conformance {
    static final int OK = 0;
    static final int NO = 1;
    static final int USAGE = 2;

    private Conformance() {}

    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        System.exit(run(args, out, err));
    }

    /** A usage error: an unknown command or option, or a missing value. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /** Runs one command; answers the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        try {
            if (args.length == 0) throw new UsageException("a command is needed");
            String command = args[0];
            String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
            switch (command) {
                case "verify-file": return verifyFile(rest, out);
                case "verify-webhook": return verifyWebhook(rest, out);
                case "check-key": return checkKey(rest, out);
                case "validate": return validate(rest, out);
                case "activate": return activate(rest, out);
                case "heartbeat": return heartbeat(rest, out);
                case "deactivate": return deactivate(rest, out);
                case "fetch-file": return fetchFile(rest, out);
                case "vectors": return vectors(rest, out);
                default: throw new UsageException("unknown command \"" + command + "\"");
            }
        } catch (UsageException | IllegalArgumentException | IllegalStateException e) {
            // An option's value the library refuses (an empty --entitlement, a malformed key) is a usage error too.
            err.println("conformance: " + e.getMessage());
            err.println("usage: sdks/conformance java verify-file|verify-webhook|check-key|validate|activate|heartbeat|deactivate|fetch-file|vectors [options] (docs/sdk-conformance.md)");
            return USAGE;
        } catch (LicensingException e) {
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("error", e.toJson());
            out.println(Json.write(answer));
            return NO;
        }
    }

    // ---- the commands ----

    private static int verifyFile(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--public-keys", "--file", "--fingerprint", "--now"), Set.of());
        List<PublicKey> keys;
        try {
            keys = PublicKey.listFromJson(readText(o.required("--public-keys"), "--public-keys"));
        } catch (IllegalArgumentException e) {
            throw new UsageException("--public-keys: " + e.getMessage());
        }
        String file = readText(o.required("--file"), "--file");
        Instant now = o.value("--now") == null ? null : isoInstant(o.value("--now"));
        Verification result;
        try {
            result = LicenseFiles.verify(file, keys, o.value("--fingerprint"), now);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--public-keys: " + e.getMessage());
        }
        out.println(Json.write(result.toJson()));
        return result.valid() ? OK : NO;
    }

    private static int verifyWebhook(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--secret", "--id", "--timestamp", "--signature", "--body-file", "--now"), Set.of());
        String secret = o.required("--secret");
        String id = o.required("--id");
        String timestamp = o.required("--timestamp");
        String signature = o.required("--signature");
        byte[] body = readBytes(o.required("--body-file"), "--body-file");
        Instant now = o.value("--now") == null ? null : unixInstant(o.value("--now"));
        WebhookVerification result;
        try {
            result = Webhooks.verify(body, id, timestamp, signature, secret, now);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--secret: " + e.getMessage());
        }
        out.println(Json.write(result.toJson()));
        return result.valid() ? OK : NO;
    }

    private static int checkKey(String[] args, PrintStream out) throws UsageException {
        // The key is taken as it is, even when it starts with a hyphen (a foreign key may); "--" before it is allowed.
        String[] rest = args.length > 0 && args[0].equals("--") ? java.util.Arrays.copyOfRange(args, 1, args.length) : args;
        if (rest.length == 0) throw new UsageException("check-key needs the KEY");
        if (rest.length > 1) throw new UsageException("check-key takes one KEY (quote a key with spaces)");
        KeyCheck result = LicenseKeys.check(rest[0]);
        out.println(Json.write(result.toJson()));
        return result.wellFormed() ? OK : NO;
    }

    private static int validate(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--base-url", "--license-key", "--fingerprint"), Set.of("--entitlement"));
        Validation answer = app(o).validate(o.values("--entitlement").toArray(new String[0]));
        out.println(Json.write(answer.json()));
        return answer.valid() ? OK : NO;
    }

    private static int activate(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--base-url", "--license-key", "--fingerprint", "--name"), Set.of());
        o.required("--fingerprint");
        Activation seat = app(o).activate(o.value("--name"));
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("activation_id", seat.id());
        out.println(Json.write(answer));
        return OK;
    }

    private static int heartbeat(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--base-url", "--license-key", "--activation-id"), Set.of());
        String id = o.required("--activation-id");
        Activation seat = app(o).heartbeat(id);
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("activation_id", seat.id());
        answer.put("lease_expires_at", seat.leaseExpiresAt());
        out.println(Json.write(answer));
        return OK;
    }

    private static int deactivate(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--base-url", "--license-key", "--activation-id"), Set.of());
        String id = o.required("--activation-id");
        app(o).deactivate(id);
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("deactivated", true);
        out.println(Json.write(answer));
        return OK;
    }

    private static int fetchFile(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--base-url", "--license-key", "--fingerprint"), Set.of());
        LicenseFile file = app(o).licenseFile();
        out.println(file.toJson());
        return OK;
    }

    private static LicensedApp app(Options o) throws UsageException {
        String baseUrl = o.required("--base-url");
        String key = o.required("--license-key");
        try {
            return LicensedApp.builder()
                    .baseUrl(baseUrl)
                    .licenseKey(key)
                    .fingerprint(o.value("--fingerprint"))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    // ---- vectors ----

    private static int vectors(String[] args, PrintStream out) throws UsageException {
        Options o = Options.parse(args, Set.of("--dir"), Set.of());
        Path dir = Path.of(o.required("--dir"));
        Map<String, Object> answer;
        try {
            answer = runVectors(dir);
        } catch (IOException | IllegalArgumentException e) {
            throw new UsageException("--dir: " + e.getMessage());
        }
        out.println(Json.write(answer));
        return ((List<?>) answer.get("failed")).isEmpty() ? OK : NO;
    }

    /**
     * Every case of the three vector files, through the same code as the single commands:
     * {@code {passed, failed: [{file, name, expected, got}]}}.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> runVectors(Path dir) throws IOException {
        int passed = 0;
        List<Object> failed = new ArrayList<>();

        Map<String, Object> files = Json.parseObject(Files.readString(dir.resolve("license-files.json"), StandardCharsets.UTF_8));
        Map<String, Object> keySets = (Map<String, Object>) files.get("key_sets");
        for (Object c : (List<Object>) files.get("cases")) {
            Map<String, Object> v = (Map<String, Object>) c;
            Object got;
            try {
                List<PublicKey> keys = PublicKey.listOf(keySets.get((String) v.get("key_set")));
                Instant now = isoInstant((String) v.get("now"));
                got = LicenseFiles.verifyParsed(v.get("file"), keys, (String) v.get("fingerprint"), now).toJson();
            } catch (RuntimeException | UsageException e) {
                got = Map.of("error", String.valueOf(e.getMessage()));
            }
            if (Json.same(v.get("expect"), got)) passed++;
            else failed.add(failure("license-files.json", v, got));
        }

        Map<String, Object> hooks = Json.parseObject(Files.readString(dir.resolve("webhooks.json"), StandardCharsets.UTF_8));
        for (Object c : (List<Object>) hooks.get("cases")) {
            Map<String, Object> v = (Map<String, Object>) c;
            Object got;
            try {
                byte[] body = ((String) v.get("body")).getBytes(StandardCharsets.UTF_8);
                Instant now = unixInstant(String.valueOf(v.get("now")));
                got = Webhooks.verify(body, (String) v.get("id"), (String) v.get("timestamp"), (String) v.get("signature"),
                        (String) v.get("secret"), now).toJson();
            } catch (RuntimeException | UsageException e) {
                got = Map.of("error", String.valueOf(e.getMessage()));
            }
            if (Json.same(v.get("expect"), got)) passed++;
            else failed.add(failure("webhooks.json", v, got));
        }

        Map<String, Object> keys = Json.parseObject(Files.readString(dir.resolve("license-keys.json"), StandardCharsets.UTF_8));
        for (Object c : (List<Object>) keys.get("cases")) {
            Map<String, Object> v = (Map<String, Object>) c;
            Object got;
            try {
                got = LicenseKeys.check((String) v.get("input")).toJson();
            } catch (RuntimeException e) {
                got = Map.of("error", String.valueOf(e.getMessage()));
            }
            if (Json.same(v.get("expect"), got)) passed++;
            else failed.add(failure("license-keys.json", v, got));
        }

        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("passed", passed);
        answer.put("failed", failed);
        return answer;
    }

    private static Map<String, Object> failure(String file, Map<String, Object> vector, Object got) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("file", file);
        f.put("name", vector.get("name"));
        f.put("expected", vector.get("expect"));
        f.put("got", got);
        return f;
    }

    // ---- options ----

    /** {@code --name value} (or {@code --name=value}) options; any other word is a usage error. */
    static final class Options {
        private final Map<String, String> single = new HashMap<>();
        private final Map<String, List<String>> repeated = new HashMap<>();

        static Options parse(String[] args, Set<String> singleNames, Set<String> repeatedNames) throws UsageException {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                String name = arg;
                String value = null;
                int eq = arg.indexOf('=');
                if (arg.startsWith("--") && eq > 2) {
                    name = arg.substring(0, eq);
                    value = arg.substring(eq + 1);
                }
                if (!singleNames.contains(name) && !repeatedNames.contains(name))
                    throw new UsageException(arg.startsWith("-") ? "unknown option " + name : "unexpected argument \"" + arg + "\"");
                if (value == null) {
                    if (i + 1 >= args.length) throw new UsageException(name + " needs a value");
                    value = args[++i];
                }
                if (repeatedNames.contains(name)) o.repeated.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
                else if (o.single.put(name, value) != null) throw new UsageException(name + " given twice");
            }
            return o;
        }

        String value(String name) {
            return single.get(name);
        }

        String required(String name) throws UsageException {
            String v = single.get(name);
            if (v == null) throw new UsageException(name + " is required");
            return v;
        }

        List<String> values(String name) {
            return repeated.getOrDefault(name, List.of());
        }
    }

    private static String readText(String path, String option) throws UsageException {
        return new String(readBytes(path, option), StandardCharsets.UTF_8);
    }

    private static byte[] readBytes(String path, String option) throws UsageException {
        try {
            return Files.readAllBytes(Path.of(path));
        } catch (IOException | RuntimeException e) {
            throw new UsageException(option + ": cannot read " + path + " (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static Instant isoInstant(String value) throws UsageException {
        Long ms = LicenseFiles.dateMillis(value);
        if (ms == null) throw new UsageException("--now must be an ISO 8601 date-time, got \"" + value + "\"");
        return Instant.ofEpochMilli(ms);
    }

    private static Instant unixInstant(String value) throws UsageException {
        try {
            BigDecimal seconds = new BigDecimal(value.trim());
            return Instant.ofEpochMilli(seconds.movePointRight(3).longValue());
        } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
            throw new UsageException("--now must be Unix seconds, got \"" + value + "\"");
        }
    }
}
