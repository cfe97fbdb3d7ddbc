package io.github.gcslock;

import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * The client, except that an interrupt during its retry backoff surfaces as a {@link StorageException}
 * (outcome unknown, like any transient error) instead of a {@code NullPointerException}.
 *
 * <p>Why: google-cloud-storage's retry loop catches the {@code InterruptedException} of its backoff wait
 * and then calls {@code StorageException.coalesce(null)} (no failure recorded yet), which throws a
 * {@code NullPointerException}. Threads are interrupted exactly at shutdown (an executor's
 * {@code shutdownNow}, Spring's scheduler), while GCS may be unreachable; the NPE then escaped every
 * {@code catch (StorageException)} of the engine and was logged as an unexpected ERROR with its stack.
 * The interrupt flag stays set for the caller.
 */
final class InterruptTolerantStorage implements InvocationHandler {

    private final Storage delegate;

    private InterruptTolerantStorage(Storage delegate) {
        this.delegate = delegate;
    }

    static Storage wrap(Storage storage) {
        if (Proxy.isProxyClass(storage.getClass()) && Proxy.getInvocationHandler(storage) instanceof InterruptTolerantStorage) {
            return storage;
        }
        return (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(), new Class<?>[] {Storage.class},
                new InterruptTolerantStorage(storage));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            return objectMethod(proxy, method, args, "InterruptTolerantStorage", delegate);
        }
        try {
            return method.invoke(delegate, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof NullPointerException npe && fromCoalesce(npe)) {
                StorageException interrupted = new StorageException(0,
                        "interrupted while the GCS client waited to retry " + method.getName() + "; outcome unknown", npe);
                Thread.currentThread().interrupt();
                throw interrupted;
            }
            throw cause;
        }
    }

    private static boolean fromCoalesce(NullPointerException npe) {
        StackTraceElement[] stack = npe.getStackTrace();
        return stack.length > 0 && stack[0].getClassName().equals(StorageException.class.getName())
                && stack[0].getMethodName().equals("coalesce");
    }

    /**
     * Answers an {@link Object} method called on a {@code Storage} proxy (this one, or {@code LockStore}'s
     * reporting proxy): identity for {@code equals}/{@code hashCode}, {@code label[delegate]} for
     * {@code toString}, anything else from the delegate.
     */
    static Object objectMethod(Object proxy, Method method, Object[] args, String label, Storage delegate)
            throws ReflectiveOperationException {
        return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            case "toString" -> label + "[" + delegate + "]";
            default -> method.invoke(delegate, args);
        };
    }
}
