package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule 14 for a create whose outcome is unknown (its reply lost, or a 412 through the retrying client that may be its
 * own retry): it may have left an object of ours that the call must still adopt or delete, so it stays in flight for
 * close() until then. Found by an independent review of 19e94d4, where the flight ended as the request failed: close()
 * on another thread returned while that object was in the bucket, deleted only later by the acquiring thread (the
 * hand-out's delete, or deleteOwnUnknownCreate), and left for its TTL if the process exited once close() returned.
 */
class CloseAfterLostCreateReplyTest extends EmulatorTestBase {

    private GcsLockRegistry patient() {
        return registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2)).operationTimeout(Duration.ofSeconds(5)));
    }

    /**
     * Interleaving: T1 tryAcquire("job"): INSERT commits, its reply is dropped; the client retries, 412 (our own
     * object); catch -> endCreate(flight); T1 reads the object (GET held here). T2 close(): no lease, no create in
     * flight -> returns. The bucket holds T1's object after close() returned. Then T1 adopts it, own() sees closed and
     * deletes it.
     */
    @Test
    void closeDoesNotReturnWhileTheObjectOfALostCreateReplyIsBeingAdopted() throws Exception {
        GcsLockRegistry r = patient();
        CountDownLatch readArrived = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        gcs.faults().dropNextReply(Operation.INSERT); // the create commits, its reply is lost
        gcs.faults().beforeNext(Operation.GET, "gcslock/job", () -> { // the read after the 412 of the retried create
            readArrived.countDown();
            await(letGo);
        });
        try {
            CompletableFuture<Object> acquiring = CompletableFuture.supplyAsync(() -> {
                try {
                    return r.tryAcquire("job");
                } catch (Throwable e) {
                    return e;
                }
            });
            assertThat(readArrived.await(20, TimeUnit.SECONDS)).as("the read after the create's 412 arrived").isTrue();
            assertThat(object("job")).as("our create committed").isNotNull();

            CompletableFuture<Void> closing = CompletableFuture.runAsync(r::close);
            boolean returnedWhileHeld;
            try {
                closing.get(1500, TimeUnit.MILLISECONDS);
                returnedWhileHeld = true;
            } catch (java.util.concurrent.TimeoutException e) {
                returnedWhileHeld = false;
            }
            boolean objectThen = object("job") != null;
            letGo.countDown();
            closing.get(60, TimeUnit.SECONDS);
            Object outcome = acquiring.get(30, TimeUnit.SECONDS);
            assertThat(outcome).as("the call's outcome").isInstanceOf(IllegalStateException.class);
            assertThat(object("job")).as("the object once the acquiring call ended").isNull();
            assertThat(returnedWhileHeld && objectThen)
                    .as("close() returned (returned=%s) while the object of our own create whose reply was lost was in the bucket (%s)",
                            returnedWhileHeld, objectThen)
                    .isFalse();
        } finally {
            letGo.countDown();
        }
    }

    /**
     * The same gap for a waiter: its single-try create's reply is lost (transient failure, flight ended); its next
     * create through the retrying client is refused by beginCreate ("closed"), and waitFor's deleteOwnUnknownCreate
     * runs after close() returned. Held: the GET of that delete.
     */
    @Test
    void closeDoesNotReturnWhileAWaitersUnknownCreateIsStillToBeDeleted() throws Exception {
        GcsLockRegistry r = patient();
        // A look that finds the name free first, so that the waiter's create is a single try.
        GcsLockRegistry other = holder();
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        held.release();

        CountDownLatch createArrived = new CountDownLatch(1);
        CountDownLatch letCreateGo = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            createArrived.countDown();
            await(letCreateGo);
        });
        gcs.faults().dropNextReply(Operation.INSERT);
        CompletableFuture<Object> acquiring = CompletableFuture.supplyAsync(() -> {
            try {
                return r.acquire("job", Duration.ofSeconds(20));
            } catch (Throwable e) {
                return e;
            }
        });
        CountDownLatch readArrived = new CountDownLatch(1);
        CountDownLatch letReadGo = new CountDownLatch(1);
        try {
            assertThat(createArrived.await(20, TimeUnit.SECONDS)).as("the waiter's create arrived").isTrue();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(r::close);
            sleep(300);
            // Hold whatever GET of the object follows the create (the adoption read or the unknown create's delete).
            gcs.faults().beforeNext(Operation.GET, "gcslock/job", () -> {
                readArrived.countDown();
                await(letReadGo);
            });
            letCreateGo.countDown();
            boolean reached = readArrived.await(20, TimeUnit.SECONDS);
            boolean returnedWhileHeld;
            try {
                closing.get(1500, TimeUnit.MILLISECONDS);
                returnedWhileHeld = true;
            } catch (java.util.concurrent.TimeoutException e) {
                returnedWhileHeld = false;
            }
            boolean objectThen = object("job") != null;
            letReadGo.countDown();
            closing.get(60, TimeUnit.SECONDS);
            Object outcome = acquiring.get(30, TimeUnit.SECONDS);
            assertThat(reached).as("a GET of the object followed the create").isTrue();
            assertThat(outcome).as("the call's outcome").isInstanceOf(Throwable.class);
            assertThat(returnedWhileHeld && objectThen)
                    .as("close() returned (returned=%s) while the object of the waiter's create of unknown outcome was in the bucket (%s); outcome %s",
                            returnedWhileHeld, objectThen, outcome)
                    .isFalse();
            assertThat(object("job")).as("the object once the acquiring call ended").isNull();
        } finally {
            letCreateGo.countDown();
            letReadGo.countDown();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
