package io.github.gcslock.spring;

import org.springframework.core.annotation.AliasFor;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while holding the named GCS lock, so that exactly one instance of
 * a service runs it at a time:
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @GcsLocked("nightly-report")
 * void nightlyReport() { ... }
 * }</pre>
 *
 * <p>The name may hold {@code ${...}} placeholders, and SpEL over the method's arguments when it
 * contains {@code #}: {@code "'invoice-' + #tenant"} (an expression) or {@code "invoice-#{#tenant}"}
 * (a template). Inside the method, {@link GcsLocks#currentLease()} gives the lease, so long work can
 * call {@code checkHealthy()} between steps and tag writes with the fencing token.
 *
 * <p>Nested calls on one thread are reentrant and cost no GCS request. The lock is released when the
 * method returns or throws (after {@link #holdAtLeast()}, if set). Usable as a meta-annotation on methods;
 * an annotation meta-annotated with it on a class is refused at start-up.
 *
 * <p>Async and reactive methods: a method returning a {@code CompletionStage} (e.g. {@code CompletableFuture})
 * holds the lock until that stage completes; one returning a Reactor {@code Mono} or {@code Flux} takes it when
 * subscribed to and holds it until the publisher completes, fails or is cancelled. Such a hold belongs to the
 * invocation (each subscription), not to a thread: a second call while it runs finds the lock held — also
 * from the same thread, or by subscribing to the same {@code Mono} again — and is skipped, fails or waits as
 * {@link #ifLocked()} says. A {@code @GcsLocked} publisher subscribed inside the chain of a subscription holding
 * the same name is a reentrant hold of it. Return types whose end the lock cannot see (a plain
 * {@code Future} outside {@code @Async}, other publishers, Kotlin {@code suspend}) are refused at start-up.
 *
 * <p>Async and reactive methods hold the lock until their result completes, not until they return:
 * <ul>
 *   <li>a method returning {@code CompletableFuture}/{@code CompletionStage} holds it from the call until the
 *       stage completes (value, exception or cancellation); the caller's future completes after the release.
 *       {@code SKIP} returns a future of {@code null} without running the method;</li>
 *   <li>a method returning a Reactor {@code Mono}/{@code Flux} is invoked at subscription and holds the lock
 *       until the publisher completes, errors or is cancelled; {@code SKIP} gives an empty publisher,
 *       {@code WAIT} waits on Reactor's bounded-elastic scheduler, and the lease is in the subscriber
 *       context ({@code ctx.get(Lease.class)}), not in {@link GcsLocks#currentLease()};</li>
 *   <li>an {@code @Async} method holds the lock on the async thread.</li>
 * </ul>
 * Kotlin {@code suspend} functions are not covered: return a {@code Mono} or a {@code CompletableFuture}.
 *
 * <p>Applied through a proxy, like {@code @Transactional}: a call through {@code this} from another
 * method of the same bean is not locked. Methods a proxy cannot intercept ({@code static}, {@code private},
 * {@code final}, or of a {@code final} class) are refused at start-up, naming the method.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface GcsLocked {

    /** The lock name; alias of {@link #name()}. */
    @AliasFor("name")
    String value() default "";

    /** The lock name; alias of {@link #value()}. */
    @AliasFor("value")
    String name() default "";

    /**
     * How long to wait for the lock, as a duration ({@code "30s"}, {@code "PT1M"}, {@code "500ms"}) or a
     * placeholder. Empty: {@code gcslock.wait} (default 0s) for SKIP and FAIL, no limit for WAIT.
     */
    String maxWait() default "";

    /** What to do when the lock is held elsewhere. */
    IfLocked ifLocked() default IfLocked.SKIP;

    /**
     * Keep the lock at least this long after acquiring it, even if the method ends sooner (like
     * ShedLock's lockAtLeastFor), so that instances whose clocks or schedules differ slightly do not
     * run a short job twice. Empty or {@code "0s"}: release at once.
     */
    String holdAtLeast() default "";
}
