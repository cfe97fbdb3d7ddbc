import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.PostDiscoveryFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

/**
 * The JVM of one mutation of dev/rule-mutations.py --explorer (compiled and started by that script, never by Maven):
 * runs the explorer classes named on the command line one after the other, without the test methods named after
 * "--exclude" (the targeted tests that pin one mutation each), and stops at the first failure, printing one line
 * "RESULT FOUND <class> <method> <seconds since that class started> <seconds since start> <first line of the failure>",
 * or "RESULT NOT FOUND <seconds>". A single method is selected with Class#method.
 */
public final class ExplorerCatalogue {

    public static void main(String[] args) {
        int ex = Arrays.asList(args).indexOf("--exclude");
        List<String> classes = Arrays.asList(args).subList(0, ex < 0 ? args.length : ex);
        Set<String> excluded = ex < 0 ? Set.of() : Set.copyOf(Arrays.asList(args).subList(ex + 1, args.length));
        long start = System.nanoTime();
        Launcher launcher = LauncherFactory.create();
        for (String c : classes) {
            long classStart = System.nanoTime();
            LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                    .selectors(c.contains("#") ? selectMethod(c) : selectClass(c))
                    .filters((PostDiscoveryFilter) d -> d.getSource()
                            .filter(s -> s instanceof MethodSource m && excluded.contains(
                                    m.getClassName().substring(m.getClassName().lastIndexOf('.') + 1) + "#" + m.getMethodName()))
                            .map(s -> FilterResult.excluded("a targeted test"))
                            .orElse(FilterResult.included("an explorer")))
                    .build();
            launcher.execute(request, new TestExecutionListener() {
                @Override
                public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                    if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL || !id.isTest()) {
                        return;
                    }
                    String method = id.getSource().filter(s -> s instanceof MethodSource)
                            .map(s -> ((MethodSource) s).getMethodName()).orElse(id.getDisplayName());
                    result.getThrowable().ifPresent(t -> System.out.println("FULL FAILURE:\n" + t.getMessage()));
                    String why = result.getThrowable().map(t -> t.getClass().getSimpleName() + ": " + t.getMessage())
                            .orElse(String.valueOf(result.getStatus()));
                    why = Arrays.stream(why.split("\n")).map(String::strip).filter(l -> !l.isEmpty()).limit(12)
                            .collect(Collectors.joining(" | "));
                    System.out.printf("%nRESULT FOUND %s %s %.1f %.1f %s%n", c.replaceAll(".*\\.", ""), method,
                            (System.nanoTime() - classStart) / 1e9, (System.nanoTime() - start) / 1e9,
                            why.length() > 900 ? why.substring(0, 900) : why);
                    System.out.flush();
                    Runtime.getRuntime().halt(1); // the first find is enough: leave the rest (threads, emulator) behind
                }
            });
        }
        System.out.printf("%nRESULT NOT FOUND %.1f%n", (System.nanoTime() - start) / 1e9);
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
