package io.github.gcslock.test;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.BucketInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.Storage.BlobListOption;
import com.google.cloud.storage.StorageException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** objects.list through the real client against a known tree: delimiter, offsets, glob, and exact paging. */
class ListObjectsTest {

    private static final String BUCKET = "tree";
    private static final List<String> TREE = List.of(
            "a.txt", "a/", "a/b.txt", "a/b/c.txt", "a/b/d.png", "a/c.txt", "b/x.txt", "b/y/z.txt", "c.png", "d/", "d/e.txt");
    private static GcsEmulator gcs;
    private static Storage storage;

    @BeforeAll
    static void start() {
        gcs = GcsEmulator.start();
        gcs.createBucket(BUCKET);
        storage = gcs.storage(RetrySettings.newBuilder().setMaxAttempts(1).setTotalTimeoutDuration(Duration.ofSeconds(10)).build());
        for (String name : TREE) {
            storage.create(BlobInfo.newBuilder(BUCKET, name).build(), name.getBytes(StandardCharsets.UTF_8));
        }
    }

    @AfterAll
    static void stop() {
        gcs.close();
    }

    /** Every entry of every page: objects by name, prefixes ("directories") as "name (dir)". */
    private static List<String> list(BlobListOption... options) {
        List<String> out = new ArrayList<>();
        for (Blob b : storage.list(BUCKET, options).iterateAll()) {
            out.add(b.isDirectory() ? b.getName() + " (dir)" : b.getName());
            if (out.size() > 10 * TREE.size()) {
                throw new AssertionError("paging does not end: " + out.subList(0, 30));
            }
        }
        return out;
    }

    @Test
    void delimiterRollsNestedNamesIntoPrefixes() {
        assertThat(list(BlobListOption.delimiter("/")))
                .containsExactlyInAnyOrder("a.txt", "c.png", "a/ (dir)", "b/ (dir)", "d/ (dir)");
    }

    @Test
    void delimiterWithAPrefixListsOneDirectoryLevel() {
        assertThat(list(BlobListOption.prefix("a/"), BlobListOption.delimiter("/")))
                .containsExactlyInAnyOrder("a/", "a/b.txt", "a/c.txt", "a/b/ (dir)");
        assertThat(list(BlobListOption.prefix("b/"), BlobListOption.delimiter("/")))
                .containsExactlyInAnyOrder("b/x.txt", "b/y/ (dir)");
    }

    @Test
    void includeTrailingDelimiterAlsoListsObjectsNamedLikeTheirPrefix() {
        assertThat(list(BlobListOption.delimiter("/"), BlobListOption.includeTrailingDelimiter()))
                .containsExactlyInAnyOrder("a.txt", "c.png", "a/", "d/", "a/ (dir)", "b/ (dir)", "d/ (dir)");
    }

    @Test
    void startAndEndOffsetBoundTheNames() {
        assertThat(list(BlobListOption.startOffset("a/b"), BlobListOption.endOffset("b/y")))
                .containsExactly("a/b.txt", "a/b/c.txt", "a/b/d.png", "a/c.txt", "b/x.txt");
        assertThat(list(BlobListOption.startOffset("c.png"))).containsExactly("c.png", "d/", "d/e.txt");
        assertThat(list(BlobListOption.endOffset("a/"))).containsExactly("a.txt");
        assertThat(list(BlobListOption.prefix("a/"), BlobListOption.startOffset("a/c"))).containsExactly("a/c.txt");
        assertThat(list(BlobListOption.startOffset("a"), BlobListOption.endOffset("b"), BlobListOption.delimiter("/")))
                .containsExactlyInAnyOrder("a.txt", "a/ (dir)");
    }

    @Test
    void matchGlobFiltersNames() {
        assertThat(list(BlobListOption.matchGlob("**/*.txt")))
                .containsExactly("a.txt", "a/b.txt", "a/b/c.txt", "a/c.txt", "b/x.txt", "b/y/z.txt", "d/e.txt");
        assertThat(list(BlobListOption.matchGlob("a/*.txt"))).containsExactly("a/b.txt", "a/c.txt");
        assertThat(list(BlobListOption.matchGlob("*.{png,txt}"))).containsExactly("a.txt", "c.png");
        assertThat(list(BlobListOption.matchGlob("a/[!b]*"))).containsExactly("a/c.txt");
        assertThat(list(BlobListOption.matchGlob("?/?.txt"))).containsExactly("a/b.txt", "a/c.txt", "b/x.txt", "d/e.txt");
        assertThat(list(BlobListOption.matchGlob("**.png"))).containsExactly("a/b/d.png", "c.png");
        assertThat(list(BlobListOption.prefix("b/"), BlobListOption.matchGlob("**/z.txt"))).containsExactly("b/y/z.txt");
    }

    @Test
    void aMalformedGlobIs400() {
        assertThatThrownBy(() -> list(BlobListOption.matchGlob("a/[bc")))
                .isInstanceOfSatisfying(StorageException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(400);
                    assertThat(e.getMessage()).contains("a/[bc");
                });
    }

    @Test
    void pagingIsExactForEveryPageSizeAndOptionSet() {
        List<BlobListOption[]> optionSets = List.of(
                new BlobListOption[0],
                new BlobListOption[]{BlobListOption.delimiter("/")},
                new BlobListOption[]{BlobListOption.delimiter("/"), BlobListOption.includeTrailingDelimiter()},
                new BlobListOption[]{BlobListOption.prefix("a/"), BlobListOption.delimiter("/")},
                new BlobListOption[]{BlobListOption.matchGlob("**/*.txt")},
                new BlobListOption[]{BlobListOption.matchGlob("**/*.txt"), BlobListOption.delimiter("/")},
                new BlobListOption[]{BlobListOption.startOffset("a/b"), BlobListOption.endOffset("d"), BlobListOption.delimiter("/")},
                new BlobListOption[]{BlobListOption.delimiter("b")});
        for (BlobListOption[] options : optionSets) {
            List<String> onePage = list(options);
            assertThat(onePage).as("no duplicates in %s", Arrays.toString(options)).doesNotHaveDuplicates();
            for (int size = 1; size <= TREE.size() + 1; size++) {
                BlobListOption[] paged = Stream.concat(Arrays.stream(options), Stream.of(BlobListOption.pageSize(size)))
                        .toArray(BlobListOption[]::new);
                assertThat(list(paged)).as("page size %d with %s", size, Arrays.toString(options))
                        .containsExactlyInAnyOrderElementsOf(onePage);
            }
        }
    }

    @Test
    void aPrefixIsNotRepeatedOnTheNextPage() {
        // Page size 1 with a delimiter: "a/" is one entry, and the next page must not start inside it.
        List<String> entries = list(BlobListOption.delimiter("/"), BlobListOption.pageSize(1));
        assertThat(entries).containsExactly("a.txt", "a/ (dir)", "b/ (dir)", "c.png", "d/ (dir)");
    }

    @Test
    void versionsIsHonouredOnAnUnversionedBucketAndRefusedOnAVersionedOne() {
        assertThat(list(BlobListOption.versions(true))).containsExactlyElementsOf(TREE);
        gcs.createBucket(BucketInfo.newBuilder("versioned").setVersioningEnabled(true).build());
        assertThatThrownBy(() -> storage.list("versioned", BlobListOption.versions(true)).iterateAll().forEach(b -> { }))
                .isInstanceOfSatisfying(StorageException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(501);
                    assertThat(e.getMessage()).contains("versions=true");
                });
    }
}
