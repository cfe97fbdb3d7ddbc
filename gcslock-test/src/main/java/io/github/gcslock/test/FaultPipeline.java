package io.github.gcslock.test;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * What the {@link Faults} (and the {@link ClientFaults} of the client a request came from) do to one
 * request around its operation, in this order:
 * <ol>
 * <li>count it;</li>
 * <li>the client's partition: refuse it (no reply, nothing processed), hold it until the partition heals,
 *     or let it through to commit and lose its reply (a partition that starts mid-request);</li>
 * <li>latency, then an action queued for this operation ({@link Faults#beforeNext});</li>
 * <li>"fail next N" (the client's, then the emulator-wide): answer with the injected status without processing it;</li>
 * <li>the operation itself (it commits; an error it answers with is a reply like any other);</li>
 * <li>a reply lost to a partition that started mid-request, a slow reply of the client
 *     ({@link ClientFaults#slowReplies}), then a dropped reply ({@link Faults#dropReplies}): the operation has
 *     committed, and the client never hears of it or hears too late.</li>
 * </ol>
 */
final class FaultPipeline {

    private final Faults faults;

    FaultPipeline(Faults faults) {
        this.faults = faults;
    }

    /**
     * Runs {@code request} through the faults, with {@code operation} (given the request body) as the step
     * that commits. Returns the reply to send, or {@code null} when the connection is to close without
     * one (closing an exchange before its headers were sent closes the connection: the reply is lost).
     */
    Reply run(ApiRequest request, Function<byte[], Reply> operation) throws IOException, InterruptedException {
        if (!faults.logging()) {
            return serve(request, operation, null);
        }
        long received = System.nanoTime();
        RequestNotes notes = new RequestNotes();
        ClientFaults c = faults.clientAt(request.localPort());
        notes.client = c == null ? null : c.name();
        notes.object = request.object();
        int[] status = {0};
        boolean[] processed = {false};
        Reply reply;
        RequestNotes.CURRENT.set(notes);
        try {
            reply = serve(request, operation, r -> {
                processed[0] = true;
                status[0] = r.status();
            });
        } finally {
            RequestNotes.CURRENT.remove();
        }
        String object = notes.object != null ? notes.object : request.query().get("name");
        faults.log(new LoggedRequest(notes.client, request.op(), request.bucket(), object, received, System.nanoTime(),
                status[0], processed[0] && reply == null, notes.writeRateLimited, notes.previousWriter,
                notes.previousWriteNanos, status[0] >= 200 && status[0] < 300 ? notes.metadata : java.util.Map.of(),
                status[0] >= 200 && status[0] < 300 ? notes.updated : null));
        return reply;
    }

    /** {@link #run} itself; {@code answered} (when not null) is told the reply once the operation has run. */
    private Reply serve(ApiRequest request, Function<byte[], Reply> operation, java.util.function.Consumer<Reply> answered)
            throws IOException, InterruptedException {
        Operation op = request.op();
        faults.count(op);
        ClientFaults client = faults.clientAt(request.localPort());
        ClientFaults.Admission admission = client == null ? ClientFaults.Admission.PROCESS : client.admit(op);
        if (admission == ClientFaults.Admission.REFUSE) {
            return null; // partitioned: the request never reached us, and the client gets no reply
        }
        long latency = faults.nextLatencyNanos();
        if (latency > 0) {
            TimeUnit.NANOSECONDS.sleep(latency);
        }
        Runnable action = faults.takeAction(op, request.object() != null ? request.object() : request.query().get("name"));
        if (action != null) {
            action.run();
        }
        Integer failure = client == null ? null : client.takeFailure(op);
        if (failure == null) {
            failure = faults.takeFailure(op);
        }
        byte[] body = request.readBody();
        if (failure != null) {
            Reply injected = Reply.error(new GcsError(failure, GcsError.defaultReason(failure), "Injected failure " + failure));
            if (answered != null) {
                answered.accept(injected);
            }
            return injected;
        }
        Reply reply;
        try {
            reply = operation.apply(body);
        } catch (GcsError e) {
            reply = Reply.error(e);
        }
        faults.countAnswered(op, reply.status());
        if (answered != null) {
            answered.accept(reply);
        }
        if (admission == ClientFaults.Admission.PROCESS_AND_LOSE_REPLY) {
            return null; // committed, and the partition started before the reply left
        }
        if (client != null) {
            client.beforeReply(); // committed; the reply may come after the client gave up
        }
        if (faults.shouldDropReply(op)) {
            return null; // committed, but the client never hears of it
        }
        return reply;
    }
}
