package io.github.gcslock.autoconfigure;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.helpers.DefaultHandler;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import java.util.regex.Pattern;

/**
 * Whether the build file in the working directory declares {@code io.github.gcslock:gcslock-test} for tests only
 * (Maven {@code <scope>test</scope>}, Gradle {@code testImplementation}): the set-up the README shows for tests,
 * which leaves the emulator off the class path of {@code spring-boot:run} and {@code bootRun}. Then
 * {@code gcslock.emulator.embedded=true} fails although the dependency is "there", and the start-up report says why
 * instead of asking to add it. {@code spring-boot:run} and {@code bootRun} run in the project's directory, so that
 * is where the build files are looked for (any POM there, for {@code -f other.xml}, and the modules it lists);
 * anything unreadable counts as "not found".
 */
final class TestScopedEmulator {

    static final String GROUP_ID = "io.github.gcslock";
    static final String ARTIFACT_ID = "gcslock-test";

    private static final Pattern GRADLE_TEST_ONLY = Pattern.compile(
            "test(?:Implementation|RuntimeOnly|CompileOnly)\\s*\\(?\\s*[\"']" + Pattern.quote(GROUP_ID + ":" + ARTIFACT_ID));

    private TestScopedEmulator() {
    }

    /** How deep below the working directory module builds are looked for. */
    private static final int MODULE_DEPTH = 3;

    /**
     * The build file under {@code directory} that declares gcslock-test for tests only, as a path relative to it, or
     * empty. Looked at: every Maven POM in {@code directory} (any {@code *.xml} whose root is {@code <project>}, so
     * {@code mvn -f other.xml} is covered) and, through their {@code <modules>}, the POMs of the modules (an IDE may
     * run the application from the root of a multi-module build); {@code build.gradle} and {@code build.gradle.kts}
     * in {@code directory} and in its sub-directories up to {@value #MODULE_DEPTH} levels down (Gradle subprojects).
     */
    static Optional<String> declaredIn(Path directory) {
        List<Path> poms = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            files.filter(f -> f.getFileName().toString().endsWith(".xml") && Files.isRegularFile(f)).sorted(
                            Comparator.comparing((Path f) -> !f.getFileName().toString().equals("pom.xml")).thenComparing(Path::toString))
                    .forEach(poms::add);
        } catch (IOException | RuntimeException e) {
            // unreadable directory: nothing found
        }
        Set<Path> seen = new HashSet<>();
        for (Path pom : poms) {
            Optional<Path> found = testScopedInPom(pom, 0, seen);
            if (found.isPresent()) {
                return Optional.of(relative(directory, found.get()));
            }
        }
        try (Stream<Path> files = Files.walk(directory, MODULE_DEPTH)) {
            return files.filter(f -> f.getFileName() != null && (f.getFileName().toString().equals("build.gradle")
                            || f.getFileName().toString().equals("build.gradle.kts")))
                    .filter(f -> !f.toString().contains("/build/") && !f.toString().contains("/node_modules/"))
                    .sorted(Comparator.comparingInt(Path::getNameCount).thenComparing(Path::toString))
                    .filter(TestScopedEmulator::testOnlyInGradle)
                    .findFirst().map(f -> relative(directory, f));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static String relative(Path directory, Path file) {
        return directory.relativize(file).toString().replace('\\', '/');
    }

    private static boolean testOnlyInGradle(Path file) {
        try {
            return Files.isRegularFile(file) && GRADLE_TEST_ONLY.matcher(Files.readString(file)).find();
        } catch (IOException | RuntimeException e) {
            return false; // unreadable: not found
        }
    }

    /** The build file in the working directory, as {@link #declaredIn(Path)}. */
    static Optional<String> inWorkingDirectory() {
        return declaredIn(Path.of(System.getProperty("user.dir", ".")));
    }

    /** {@code pom}, or one of its modules (to {@value #MODULE_DEPTH} levels), if it declares gcslock-test for tests only. */
    private static Optional<Path> testScopedInPom(Path pom, int depth, Set<Path> seen) {
        if (depth > MODULE_DEPTH || !Files.isRegularFile(pom) || !seen.add(pom.toAbsolutePath().normalize())) {
            return Optional.empty();
        }
        Document document;
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            DocumentBuilder builder = factory.newDocumentBuilder();
            builder.setErrorHandler(new DefaultHandler()); // no "[Fatal Error]" line on stderr; the exception is enough
            document = builder.parse(pom.toFile());
        } catch (Exception e) {
            return Optional.empty(); // not a pom we can read: not found
        }
        if (!"project".equals(document.getDocumentElement().getLocalName() != null
                ? document.getDocumentElement().getLocalName() : document.getDocumentElement().getTagName())) {
            return Optional.empty();
        }
        NodeList dependencies = document.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            if (ARTIFACT_ID.equals(text(dependency, "artifactId")) && GROUP_ID.equals(text(dependency, "groupId"))
                    && "test".equals(text(dependency, "scope"))
                    && !"dependencyManagement".equals(dependency.getParentNode().getParentNode().getNodeName())) {
                return Optional.of(pom);
            }
        }
        NodeList modules = document.getElementsByTagName("module");
        for (int i = 0; i < modules.getLength(); i++) {
            String module = modules.item(i).getTextContent().trim();
            if (module.isEmpty()) {
                continue;
            }
            try {
                Path target = pom.getParent() == null ? Path.of(module) : pom.getParent().resolve(module);
                Optional<Path> found = testScopedInPom(Files.isDirectory(target) ? target.resolve("pom.xml") : target, depth + 1, seen);
                if (found.isPresent()) {
                    return found;
                }
            } catch (RuntimeException e) {
                // a module path we cannot follow: skip it
            }
        }
        return Optional.empty();
    }

    private static String text(Element parent, String child) {
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i) instanceof Element e && e.getTagName().equals(child)) {
                return e.getTextContent().trim();
            }
        }
        return null;
    }
}
