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
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Whether the build file in the working directory declares {@code io.github.gcslock:gcslock-test} for tests only
 * (Maven {@code <scope>test</scope>}, Gradle {@code testImplementation}): the set-up the README shows for tests,
 * which leaves the emulator off the class path of {@code spring-boot:run} and {@code bootRun}. Then
 * {@code gcslock.emulator.embedded=true} fails although the dependency is "there", and the start-up report says why
 * instead of asking to add it. {@code spring-boot:run} and {@code bootRun} run in the project's directory, so that
 * is where the build file is looked for; anything unreadable counts as "not found".
 */
final class TestScopedEmulator {

    static final String GROUP_ID = "io.github.gcslock";
    static final String ARTIFACT_ID = "gcslock-test";

    private static final Pattern GRADLE_TEST_ONLY = Pattern.compile(
            "test(?:Implementation|RuntimeOnly|CompileOnly)\\s*\\(?\\s*[\"']" + Pattern.quote(GROUP_ID + ":" + ARTIFACT_ID));

    private TestScopedEmulator() {
    }

    /** The build file in {@code directory} that declares gcslock-test for tests only, or empty. */
    static Optional<String> declaredIn(Path directory) {
        Path pom = directory.resolve("pom.xml");
        if (Files.isRegularFile(pom) && testScopedInPom(pom)) {
            return Optional.of("pom.xml");
        }
        for (String gradle : new String[]{"build.gradle", "build.gradle.kts"}) {
            Path file = directory.resolve(gradle);
            try {
                if (Files.isRegularFile(file) && GRADLE_TEST_ONLY.matcher(Files.readString(file)).find()) {
                    return Optional.of(gradle);
                }
            } catch (IOException | RuntimeException e) {
                // unreadable: not found
            }
        }
        return Optional.empty();
    }

    /** The build file in the working directory, as {@link #declaredIn(Path)}. */
    static Optional<String> inWorkingDirectory() {
        return declaredIn(Path.of(System.getProperty("user.dir", ".")));
    }

    private static boolean testScopedInPom(Path pom) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            DocumentBuilder builder = factory.newDocumentBuilder();
            builder.setErrorHandler(new DefaultHandler()); // no "[Fatal Error]" line on stderr; the exception is enough
            Document document = builder.parse(pom.toFile());
            NodeList dependencies = document.getElementsByTagName("dependency");
            for (int i = 0; i < dependencies.getLength(); i++) {
                Element dependency = (Element) dependencies.item(i);
                if (ARTIFACT_ID.equals(text(dependency, "artifactId")) && GROUP_ID.equals(text(dependency, "groupId"))
                        && "test".equals(text(dependency, "scope"))
                        && !"dependencyManagement".equals(dependency.getParentNode().getParentNode().getNodeName())) {
                    return true;
                }
            }
        } catch (Exception e) {
            // not a pom we can read: not found
        }
        return false;
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
