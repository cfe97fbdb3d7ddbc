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
 * <li>"fail next N": answer with the injected status without processing it;</li>
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
        Integer failure = faults.takeFailure(op);
        byte[] body = request.readBody();
        if (failure != null) {
            return Reply.error(new GcsError(failure, GcsError.defaultReason(failure), "Injected failure " + failure));
        }
        Reply reply;
        try {
            reply = operation.apply(body);
        } catch (GcsError e) {
            reply = Reply.error(e);
        }
        faults.countAnswered(op, reply.status());
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
