package io.github.gcslock;

import com.google.api.gax.paging.Page;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holds {@link InMemoryStorage} to the HTTP emulator (gcslock-test), so the explorer's storage never drifts from it:
 * the same random sequences of create / get / update / delete / list (with prefix and pages), with preconditions
 * that hold and that fail (doesNotExist, ifGenerationMatch, ifMetagenerationMatch: right, wrong, on a missing
 * object), give the same results on both — the same objects (generations compared by order of appearance,
 * metagenerations, metadata, {@code updated} not before {@code timeCreated}), the same 404/412, the same pages. Seeds are printed;
 * {@code -Dgcslock.differential.seed=N} replays one sequence.
 */
class InMemoryStorageDifferentialTest {

    private static final String BUCKET = "diff";
    private static final String[] NAMES = {"p/a", "p/b", "p/c", "q/x"};
    private static final int SEQUENCES = Integer.getInteger("gcslock.differential.sequences", 150);
    private static final int STEPS = 40;

    private GcsEmulator gcs;

    @BeforeEach
    void start() {
        gcs = GcsEmulator.start();
        gcs.writeRateLimit(false);
    }

    @AfterEach
    void stop() {
        gcs.close();
    }

    @Test
    void randomSequencesGiveTheSameResultsInMemoryAsOnTheEmulator() {
        Long only = Long.getLong("gcslock.differential.seed");
        long base = only != null ? only : new Random().nextLong();
        int sequences = only != null ? 1 : SEQUENCES;
        System.out.println("InMemoryStorageDifferentialTest: seeds " + base + " .. " + (base + sequences - 1)
                + " (replay one with -Dgcslock.differential.seed=N)");
        for (int i = 0; i < sequences; i++) {
            long seed = base + i;
            String bucket = BUCKET + i;
            gcs.createBucket(bucket);
            Side emulator = new Side(gcs.storage(), bucket);
            Side memory = new Side(new InMemoryStorage(bucket, Instant::now).storage(), bucket);
            Random random = new Random(seed);
            List<String> trace = new ArrayList<>();
            for (int step = 0; step < STEPS; step++) {
                Op op = Op.random(random);
                String expected = emulator.run(op);
                String actual = memory.run(op);
                trace.add(op + " -> " + expected);
                assertThat(actual).as("seed %d, step %d: %s; steps so far:%n%s", seed, step, op, String.join("\n", trace))
                        .isEqualTo(expected);
            }
        }
    }

    /** One abstract operation: what to do, on which name, with which preconditions (resolved per side). */
    record Op(String kind, String name, String generation, String metageneration, Map<String, String> metadata, int pageSize,
              String prefix) {

        static Op random(Random r) {
            String name = NAMES[r.nextInt(NAMES.length)];
            String[] gens = {"none", "none", "seen", "wrong", "zero"};
            String[] metas = {"none", "none", "seen", "wrong"};
            Map<String, String> meta = new LinkedHashMap<>();
            for (String k : new String[] {"k1", "k2", "k3"}) {
                int c = r.nextInt(4);
                if (c == 1) {
                    meta.put(k, "v" + r.nextInt(3));
                } else if (c == 2) {
                    meta.put(k, null);
                }
            }
            return switch (r.nextInt(6)) {
                case 0, 1 -> new Op("create", name, r.nextInt(3) == 0 ? gens[r.nextInt(gens.length)] : "zero", "none", meta, 0, null);
                case 2 -> new Op("get", name, "none", "none", meta, 0, null);
                case 3 -> new Op("update", name, gens[r.nextInt(gens.length)], metas[r.nextInt(metas.length)], meta, 0, null);
                case 4 -> new Op("delete", name, gens[r.nextInt(gens.length)], metas[r.nextInt(metas.length)], meta, 0, null);
                default -> new Op("list", null, "none", "none", meta, 1 + r.nextInt(3), r.nextBoolean() ? "p/" : "");
            };
        }

        @Override
        public String toString() {
            return kind + (name == null ? " prefix='" + prefix + "' pageSize=" + pageSize
                    : " " + name + " generation=" + generation + " metageneration=" + metageneration
                    + (kind.equals("create") || kind.equals("update") ? " metadata=" + metadata : ""));
        }
    }

    /** One storage, with what it has seen: the generations of each name, numbered by order of appearance. */
    private static final class Side {
        private final Storage storage;
        private final String bucket;
        private final Map<Long, Integer> generationOrder = new HashMap<>();
        private final Map<String, Blob> seen = new HashMap<>();

        Side(Storage storage, String bucket) {
            this.storage = storage;
            this.bucket = bucket;
        }

        String run(Op op) {
            try {
                return switch (op.kind()) {
                    case "create" -> describe(storage.create(BlobInfo.newBuilder(bucket, op.name()).setMetadata(withoutNulls(op.metadata())).build(),
                            new byte[0], targetOptions(op, true)));
                    case "get" -> describe(storage.get(BlobId.of(bucket, op.name())));
                    case "update" -> describe(storage.update(BlobInfo.newBuilder(bucket, op.name()).setMetadata(op.metadata()).build(),
                            targetOptions(op, false)));
                    case "delete" -> "deleted=" + storage.delete(BlobId.of(bucket, op.name()), sourceOptions(op));
                    default -> list(op);
                };
            } catch (StorageException e) {
                return "error " + e.getCode();
            }
        }

        private String list(Op op) {
            List<String> pages = new ArrayList<>();
            Page<Blob> page = storage.list(bucket, Storage.BlobListOption.prefix(op.prefix()), Storage.BlobListOption.pageSize(op.pageSize()));
            while (page != null) {
                List<String> items = new ArrayList<>();
                page.getValues().forEach(b -> items.add(describe(b)));
                pages.add(items + (page.hasNextPage() ? " more" : " end"));
                page = page.hasNextPage() ? page.getNextPage() : null;
            }
            return String.join(" | ", pages);
        }

        private Storage.BlobTargetOption[] targetOptions(Op op, boolean create) {
            List<Storage.BlobTargetOption> o = new ArrayList<>();
            Long g = generation(op);
            if (g != null) {
                o.add(g == 0 && create ? Storage.BlobTargetOption.doesNotExist() : Storage.BlobTargetOption.generationMatch(g));
            }
            Long m = metageneration(op);
            if (m != null) {
                o.add(Storage.BlobTargetOption.metagenerationMatch(m));
            }
            return o.toArray(new Storage.BlobTargetOption[0]);
        }

        private Storage.BlobSourceOption[] sourceOptions(Op op) {
            List<Storage.BlobSourceOption> o = new ArrayList<>();
            Long g = generation(op);
            if (g != null) {
                o.add(Storage.BlobSourceOption.generationMatch(g));
            }
            Long m = metageneration(op);
            if (m != null) {
                o.add(Storage.BlobSourceOption.metagenerationMatch(m));
            }
            return o.toArray(new Storage.BlobSourceOption[0]);
        }

        private Long generation(Op op) {
            Blob last = seen.get(op.name());
            return switch (op.generation()) {
                case "seen" -> last == null ? 1L : last.getGeneration();
                case "wrong" -> last == null ? 7L : last.getGeneration() + 7;
                case "zero" -> 0L;
                default -> null;
            };
        }

        private Long metageneration(Op op) {
            Blob last = seen.get(op.name());
            return switch (op.metageneration()) {
                case "seen" -> last == null ? 1L : last.getMetageneration();
                case "wrong" -> last == null ? 5L : last.getMetageneration() + 5;
                default -> null;
            };
        }

        private String describe(Blob b) {
            if (b == null) {
                return "null";
            }
            seen.put(b.getName(), b);
            int g = generationOrder.computeIfAbsent(b.getGeneration(), k -> generationOrder.size() + 1);
            Map<String, String> meta = b.getMetadata() == null ? Map.of() : new java.util.TreeMap<>(b.getMetadata());
            boolean ordered = !b.getUpdateTimeOffsetDateTime().isBefore(b.getCreateTimeOffsetDateTime());
            return b.getName() + "@g" + g + "/m" + b.getMetageneration() + meta + (ordered ? "" : " updated<created")
                    + " size=" + b.getSize();
        }

        private static Map<String, String> withoutNulls(Map<String, String> m) {
            Map<String, String> out = new LinkedHashMap<>();
            m.forEach((k, v) -> {
                if (v != null) {
                    out.put(k, v);
                }
            });
            return out;
        }
    }
}
