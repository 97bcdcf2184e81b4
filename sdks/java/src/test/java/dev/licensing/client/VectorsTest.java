package dev.licensing.client;

import static dev.licensing.client.Check.equal;
import static dev.licensing.client.Check.isTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Every case of sdks/test-vectors (the directory given as -Dvectors.dir, else found from here). */
public class VectorsTest {
    static Path dir() {
        String given = System.getProperty("vectors.dir");
        if (given != null) return Path.of(given);
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("sdks/test-vectors");
            if (Files.isDirectory(candidate)) return candidate;
            if (p.getFileName() != null && p.getFileName().toString().equals("sdks") && Files.isDirectory(p.resolve("test-vectors")))
                return p.resolve("test-vectors");
        }
        throw new IllegalStateException("sdks/test-vectors not found: run from the repository or pass -Dvectors.dir");
    }

    public void testEveryVectorPasses() throws Exception {
        Map<String, Object> answer = Conformance.runVectors(dir());
        equal(List.of(), answer.get("failed"), "failed vectors");
        int total = 0;
        for (String file : new String[] {"license-files.json", "webhooks.json", "license-keys.json"}) {
            total += ((List<?>) Json.parseObject(Files.readString(dir().resolve(file))).get("cases")).size();
        }
        equal(total, answer.get("passed"), "every case counted");
        isTrue(total > 40, "the vector files hold cases (" + total + ")");
    }
}
