package io.github.gcslock.test;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * The official Node.js client ({@code @google-cloud/storage}, pinned in {@code src/test/node/package.json})
 * against the standalone emulator: its default streaming upload sends {@code Content-Range: bytes 0-*}{@code /*},
 * which GCS accepts. Skipped, with the reason, when {@code node} is not on the PATH or the client is not
 * installed ({@code npm ci --prefix gcslock-test/src/test/node}; {@code .ci/run} does it).
 */
class NodeClientConformanceTest {

    private static final Path SCRIPT_DIR = Path.of("src", "test", "node");

    @Test
    void theOfficialNodeClientUploadsDownloadsListsAndDeletes() throws Exception {
        String node = nodeOrSkip();
        if (!Files.isDirectory(SCRIPT_DIR.resolve("node_modules").resolve("@google-cloud").resolve("storage"))) {
            abort("the Node.js client is not installed: run `npm ci --prefix gcslock-test/src/test/node` (.ci/run does)");
        }
        GcsEmulatorMain.Options options = GcsEmulatorMain.parse(new String[]{"--port", "0", "--bucket", "node-bucket"});
        try (GcsEmulator gcs = GcsEmulatorMain.start(options, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
            ProcessBuilder pb = new ProcessBuilder(node, "conformance.js").directory(SCRIPT_DIR.toFile()).redirectErrorStream(true);
            pb.environment().put("EMULATOR_ENDPOINT", gcs.endpoint());
            pb.environment().put("BUCKET", "node-bucket");
            Process p = pb.start();
            boolean finished = p.waitFor(120, TimeUnit.SECONDS);
            if (!finished) {
                p.destroyForcibly();
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(finished).as("node finished within 120 s; output:%n%s", out).isTrue();
            assertThat(p.exitValue()).as("node's exit code; output:%n%s", out).isZero();
            assertThat(out).contains("ok streaming resumable upload of unknown length (bytes 0-*/*)",
                    "ok resumable upload of a known length in 256 KiB chunks", "ok save() of a small string",
                    "ok create-if-absent with ifGenerationMatch=0 loses with 412", "ok list, exists and delete");
        }
    }

    private static String nodeOrSkip() throws InterruptedException {
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            if (p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return "node";
            }
        } catch (IOException e) {
            // not on the PATH
        }
        abort("node is not on the PATH: the Node.js client conformance test is skipped");
        return null;
    }
}
