package io.github.gcslock;

import com.google.cloud.storage.Blob;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Who holds a lock: a label for people (application@host:pid by default) plus a random part drawn
 * for each registry, so that two registries never share an owner id even when given the same label.
 * The random part is what makes "this object is ours" trustworthy (leaked-lease retake, adopting
 * our own object after a lost reply).
 */
record ProcessIdentity(String owner, String label, String host, String pid, String application) {

    private static final SecureRandom RANDOM = new SecureRandom();

    /** The identity of a registry labelled {@code label} (null: application@host:pid), its random part from {@code runtime}. */
    static ProcessIdentity create(String label, String application, EngineRuntime runtime) {
        String host = hostName();
        String pid = Long.toString(ProcessHandle.current().pid());
        String l = label != null ? label : (application != null ? application + "@" : "") + host + ":" + pid;
        return new ProcessIdentity(l + "#" + runtime.randomId(6), l, host, pid, application);
    }

    /** Whether {@code object} was written by this registry for the lease {@code leaseId}. */
    boolean isOurs(Blob object, String leaseId) {
        return owner.equals(LockObject.owner(object)) && leaseId.equals(LockObject.leaseId(object));
    }

    static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown-host";
        }
    }
}
