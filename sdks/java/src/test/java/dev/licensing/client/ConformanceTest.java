package dev.licensing.client;

import static dev.licensing.client.Check.equal;
import static dev.licensing.client.Check.isTrue;
import static dev.licensing.client.MockApi.empty;
import static dev.licensing.client.MockApi.json;
import static dev.licensing.client.MockApi.problem;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

public class ConformanceTest {
    /** What one run printed and answered. */
    record Run(int status, String out, String err) {
        Map<String, Object> json() {
            isTrue(out.endsWith("\n") && out.indexOf('\n') == out.length() - 1, "one line on stdout: " + out);
            return Json.parseObject(out);
        }
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Conformance.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static void usage(String... args) {
        Run r = run(args);
        equal(2, r.status(), String.join(" ", args));
        equal("", r.out(), "nothing on stdout for a usage error");
        isTrue(!r.err().isEmpty(), "a message on stderr");
    }

    public void testUsageErrors() {
        usage();
        usage("nope");
        usage("check-key");
        usage("check-key", "a", "b");
        usage("vectors");
        usage("vectors", "--dir");
        usage("vectors", "--dir", "x", "--other", "y");
        usage("vectors", "--dir", "x", "stray");
        usage("verify-webhook", "--secret", "whsec_AAAA", "--id", "i", "--timestamp", "1", "--signature", "v1,x");
        usage("activate", "--base-url", "http://127.0.0.1:1", "--license-key", "k".repeat(20));
        usage("validate", "--base-url", "http://127.0.0.1:1", "--license-key", "k".repeat(20), "--fingerprint", "a", "--fingerprint", "b");
        usage("validate", "--license-key", "k".repeat(20));
        usage("vectors", "--dir", "/nonexistent/vectors");
        usage("validate", "--base-url", "http://127.0.0.1:1", "--license-key", "k".repeat(20), "--entitlement", "");
        usage("validate", "--base-url", "not a url", "--license-key", "k".repeat(20));
    }

    public void testCheckKey() {
        Run bad = run("check-key", "abc");
        equal(1, bad.status());
        equal(Map.of("well_formed", false, "reason", "format"), withoutNulls(bad.json()));
        Run good = run("check-key", "7k3qf-9xw2m-t0rbh-pz4dn-c8e1v-q3atg");
        equal(0, good.status());
        equal("{\"well_formed\":true,\"normalized\":\"7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG\",\"kind\":\"native\",\"reason\":null}\n", good.out());
        equal(0, run("check-key", "--", "--abcdefgh").status(), "a foreign key that starts with hyphens");
        equal(0, run("check-key", "-abcdefgh").status());
    }

    static Map<String, Object> withoutNulls(Map<String, Object> m) {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        m.forEach((k, v) -> {
            if (v != null) out.put(k, v);
        });
        return out;
    }

    public void testVectors() {
        Run r = run("vectors", "--dir", VectorsTest.dir().toString());
        equal(0, r.status(), r.out());
        equal(List.of(), r.json().get("failed"));
    }

    public void testVectorsReportFailures() throws Exception {
        Path dir = Files.createTempDirectory("vectors");
        try {
            for (String f : new String[] {"license-files.json", "webhooks.json"}) Files.copy(VectorsTest.dir().resolve(f), dir.resolve(f));
            Files.writeString(dir.resolve("license-keys.json"), "{\"cases\":[{\"name\":\"wrong on purpose\",\"input\":\"abc\","
                    + "\"expect\":{\"well_formed\":true,\"normalized\":\"abc\",\"kind\":\"foreign\",\"reason\":null}}]}");
            Run r = run("vectors", "--dir", dir.toString());
            equal(1, r.status());
            List<?> failed = (List<?>) r.json().get("failed");
            equal(1, failed.size());
            Map<?, ?> f = (Map<?, ?>) failed.get(0);
            equal("license-keys.json", f.get("file"));
            equal("wrong on purpose", f.get("name"));
            equal("format", ((Map<?, ?>) f.get("got")).get("reason"));
            equal(true, ((Map<?, ?>) f.get("expected")).get("well_formed"));
        } finally {
            for (String f : new String[] {"license-files.json", "webhooks.json", "license-keys.json"}) Files.deleteIfExists(dir.resolve(f));
            Files.delete(dir);
        }
    }

    public void testVerifyFileAndWebhook() throws Exception {
        TestSigner signer = new TestSigner("kid_c");
        Path dir = Files.createTempDirectory("conformance");
        try {
            Path keys = dir.resolve("keys.json");
            Files.writeString(keys, Json.write(Map.of("data", List.of(Map.of("kid", "kid_c", "public_key_pem", signer.publicKey().publicKeyPem())))));
            Path file = dir.resolve("file.json");
            Files.writeString(file, Json.write(signer.file(Json.write(signer.payload("fingerprint", "m1")))));
            Run ok = run("verify-file", "--public-keys", keys.toString(), "--file", file.toString(), "--fingerprint", "m1", "--now", "2026-06-02T00:00:00.000Z");
            equal(0, ok.status(), ok.out() + ok.err());
            equal("valid", ok.json().get("code"));
            equal("m1", ((Map<?, ?>) ok.json().get("payload")).get("fingerprint"));
            Run required = run("verify-file", "--public-keys", keys.toString(), "--file", file.toString(), "--now", "2026-06-02T00:00:00.000Z");
            equal(1, required.status());
            equal("{\"valid\":false,\"code\":\"fingerprint_required\",\"payload\":null}\n", required.out());
            usage("verify-file", "--public-keys", keys.toString(), "--file", file.toString(), "--now", "yesterday");
            usage("verify-file", "--public-keys", file.toString(), "--file", file.toString());

            Path body = dir.resolve("body");
            byte[] bytes = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
            Files.write(body, bytes);
            String sig = "v1," + java.util.Base64.getEncoder().encodeToString(WebhooksTest.mac(WebhooksTest.KEY, "evt_1", "1780315200", bytes));
            Run hook = run("verify-webhook", "--secret", WebhooksTest.SECRET, "--id", "evt_1", "--timestamp", "1780315200", "--signature", sig,
                    "--body-file", body.toString(), "--now", "1780315260");
            equal(0, hook.status());
            equal("{\"valid\":true,\"code\":\"valid\"}\n", hook.out());
            Run old = run("verify-webhook", "--secret", WebhooksTest.SECRET, "--id", "evt_1", "--timestamp", "1780315200", "--signature", sig,
                    "--body-file", body.toString(), "--now=1780316000");
            equal(1, old.status());
            equal("timestamp_out_of_tolerance", old.json().get("code"));
            Files.delete(keys);
            Files.delete(file);
            Files.delete(body);
        } finally {
            Files.delete(dir);
        }
    }

    public void testApiCommands() throws Exception {
        String key = LicenseKeysTest.KEY;
        try (MockApi api = new MockApi()) {
            api.handler = r -> {
                if (r.path().equals("/api/v1/keys/validate"))
                    return json(200, LicensedAppTest.validation(r.json().get("entitlements") == null, "valid", null));
                if (r.path().endsWith("/activations")) return json(201, LicensedAppTest.activation("act_9", "2026-06-01T12:05:00.000Z"));
                if (r.path().endsWith("/heartbeat")) return json(200, LicensedAppTest.activation("act_9", "2026-06-01T12:10:00.000Z"));
                if (r.path().endsWith("/file")) return json(201, Map.of("kid", "k", "algorithm", "Ed25519", "payload", "cA==", "signature", "cw=="));
                if (r.method().equals("DELETE")) return r.path().endsWith("/act_9") ? empty(204) : problem(404, "not_found", "no such activation");
                return problem(404, "not_found", "no");
            };
            String[] common = {"--base-url", api.baseUrl(), "--license-key", key};
            Run valid = run(concat("validate", common, "--fingerprint", "m1"));
            equal(0, valid.status(), valid.out());
            equal(true, valid.json().get("valid"));
            equal("m1", api.requests.get(0).json().get("fingerprint"));
            Run notValid = run(concat("validate", common, "--entitlement", "a", "--entitlement", "b"));
            equal(1, notValid.status(), "valid: false exits 1");
            equal(List.of("a", "b"), api.requests.get(1).json().get("entitlements"));

            Run activated = run(concat("activate", common, "--fingerprint", "m1", "--name", "Box"));
            equal(0, activated.status());
            equal("{\"activation_id\":\"act_9\"}\n", activated.out());
            Run beat = run(concat("heartbeat", common, "--activation-id", "act_9"));
            equal("{\"activation_id\":\"act_9\",\"lease_expires_at\":\"2026-06-01T12:10:00.000Z\"}\n", beat.out());
            Run file = run(concat("fetch-file", common, "--fingerprint", "m1"));
            equal("{\"kid\":\"k\",\"algorithm\":\"Ed25519\",\"payload\":\"cA==\",\"signature\":\"cw==\"}\n", file.out());
            Run released = run(concat("deactivate", common, "--activation-id", "act_9"));
            equal(0, released.status());
            equal("{\"deactivated\":true}\n", released.out());

            Run refused = run(concat("deactivate", common, "--activation-id", "act_0"));
            equal(1, refused.status());
            equal("{\"error\":{\"status\":404,\"code\":\"not_found\",\"detail\":\"no such activation\",\"next_action\":null}}\n", refused.out());
        }
    }

    static String[] concat(String command, String[] common, String... more) {
        String[] out = new String[1 + common.length + more.length];
        out[0] = command;
        System.arraycopy(common, 0, out, 1, common.length);
        System.arraycopy(more, 0, out, 1 + common.length, more.length);
        return out;
    }
}
