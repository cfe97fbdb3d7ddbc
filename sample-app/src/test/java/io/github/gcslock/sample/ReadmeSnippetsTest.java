package io.github.gcslock.sample;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;
import java.io.StringReader;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java and XML snippet of README.md that a user copies, checked in the build:
 * <ul>
 *   <li>Java: each snippet is compiled against this module's test class path (the starter, gcslock-test, Spring
 *       Boot). A snippet with a top-level class is compiled as a file; a snippet of members (a method, a field and
 *       a method, a {@code @Bean}) is compiled inside a class that extends {@link ReadmeUserCode}, which has the
 *       application's own methods the snippets call. Only the snippet's own imports are used (hoisted to the top of
 *       the file), so every snippet shows the imports a user needs to copy it.</li>
 *   <li>XML: each snippet is well-formed, and each dependency has a version or is managed by a BOM that the same
 *       snippet imports; gcslock's versions and the ShedLock version are the build's, and {@code gcslock-bom}
 *       manages every published module at the build's version.</li>
 * </ul>
 */
class ReadmeSnippetsTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** An import line of a snippet (a comment may follow it): hoisted to the top of the compiled file. */
    private static final Pattern IMPORT = Pattern.compile("(?m)^import\\s+(?:static\\s+)?[\\w.*]+;.*$");

    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile("(?m)^(?:public\\s+|final\\s+|abstract\\s+)*(?:class|interface|record|enum)\\s+(\\w+)");

    /** A fenced block of README.md: its language, its first line's number, its text with the list indentation removed. */
    record Snippet(String language, int line, String text) {
    }

    static List<Snippet> snippets(String language) throws Exception {
        List<String> lines = Files.readAllLines(ROOT.resolve("README.md"));
        List<Snippet> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String fence = lines.get(i).strip();
            if (fence.equals("```" + language)) {
                int indent = lines.get(i).indexOf('`');
                StringBuilder text = new StringBuilder();
                int j = i + 1;
                for (; !lines.get(j).strip().equals("```"); j++) {
                    String l = lines.get(j);
                    text.append(l.length() >= indent && l.substring(0, indent).isBlank() ? l.substring(indent) : l).append('\n');
                }
                out.add(new Snippet(language, i + 2, text.toString()));
                i = j;
            }
        }
        return out;
    }

    @Test
    void everyJavaSnippetCompiles() throws Exception {
        List<Snippet> java = snippets("java");
        assertThat(java).as("Java snippets in README.md").hasSizeGreaterThanOrEqualTo(5);
        List<String> failures = new ArrayList<>();
        for (Snippet s : java) {
            String className;
            // Only the snippet's own imports (a user copies them with it), and the application's own classes
            // that the snippets call (ReadmeUserCode, ReportJob).
            StringBuilder source = new StringBuilder("package io.github.gcslock.sample.readme;\n\n");
            Matcher imports = IMPORT.matcher(s.text());
            while (imports.find()) {
                source.append(imports.group()).append('\n');
            }
            source.append("import io.github.gcslock.sample.*;\n\n");
            String body = IMPORT.matcher(s.text()).replaceAll("");
            Matcher type = TOP_LEVEL_TYPE.matcher(body);
            if (type.find()) {
                className = type.group(1);
                source.append(body);
            } else {
                className = "ReadmeSnippetAtLine" + s.line();
                source.append("@org.springframework.stereotype.Component\nclass ").append(className)
                        .append(" extends ReadmeUserCode {\n").append(body).append("}\n");
            }
            String errors = compile(className, source.toString());
            if (!errors.isEmpty()) {
                failures.add("README.md line " + s.line() + ":\n" + errors);
            }
        }
        assertThat(failures).as("README Java snippets that do not compile").isEmpty();
    }

    @Test
    void everyJavaSnippetShowsTheImportsOfGcslocksTypes() throws Exception {
        for (Snippet s : snippets("java")) {
            Matcher type = Pattern.compile("\\b(LockRegistry|GcsLocked|GcsLocks|Lease|GcsLockRegistry|GcsIntegrationLockRegistry)\\b")
                    .matcher(IMPORT.matcher(s.text()).replaceAll(""));
            while (type.find()) {
                assertThat(s.text()).as("README.md line " + s.line() + " uses " + type.group(1) + " and shows its import")
                        .containsPattern("(?m)^import io\\.github\\.gcslock\\.[\\w.]*\\b" + type.group(1) + ";");
            }
        }
    }

    @Test
    void theLeaderElectionSnippetIsTheConfigurationTheFailoverTestRuns() throws Exception {
        Snippet leader = snippets("java").stream().filter(s -> s.text().contains("class LeaderConfig")).findFirst().orElseThrow();
        String tested = Files.readString(Path.of("src/test/java/io/github/gcslock/sample/LeaderConfig.java"));
        assertThat(tested.substring(tested.indexOf("import "))).as("LeaderConfig.java after its package line")
                .isEqualTo(leader.text());
    }

    private static String compile(String className, String source) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///" + className + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return source;
            }
        };
        Path out = Files.createTempDirectory("readme-snippet");
        List<String> options = List.of("-classpath", System.getProperty("java.class.path"), "-d", out.toString(),
                "-proc:none", "-parameters", "-Xlint:none");
        boolean ok = javac.getTask(null, null, diagnostics, options, null, List.of(file)).call();
        StringBuilder errors = new StringBuilder();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
                errors.append("  ").append(d.getMessage(null)).append("\n    in: ")
                        .append(source.lines().skip(Math.max(0, d.getLineNumber() - 1)).findFirst().orElse("").strip()).append('\n');
            }
        }
        return ok && errors.isEmpty() ? "" : errors.length() > 0 ? errors.toString() : "  javac failed";
    }

    // ---- XML ----

    private static Document parse(String xml) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return f.newDocumentBuilder().parse(new InputSource(new StringReader(xml)));
    }

    private static String child(Element e, String name) {
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(name)) {
                return c.getTextContent().strip();
            }
        }
        return null;
    }

    private static List<Element> elements(Document d, String tag) {
        NodeList list = d.getElementsByTagName(tag);
        List<Element> out = new ArrayList<>();
        for (int i = 0; i < list.getLength(); i++) {
            out.add((Element) list.item(i));
        }
        return out;
    }

    /** {@code <project>}'s own {@code <version>}, and its {@code <properties>}. */
    private static Document pom(Path path) throws Exception {
        return parse(Files.readString(path));
    }

    private static String projectVersion(Document pom) {
        return child(pom.getDocumentElement(), "version");
    }

    /** groupId:artifactId → version, of what {@code gcslock-bom} manages. */
    private static Map<String, String> bomManaged() throws Exception {
        Map<String, String> managed = new HashMap<>();
        for (Element d : elements(pom(ROOT.resolve("gcslock-bom/pom.xml")), "dependency")) {
            managed.put(child(d, "groupId") + ":" + child(d, "artifactId"), child(d, "version"));
        }
        return managed;
    }

    @Test
    void theBomManagesEveryPublishedModuleAtTheBuildsVersion() throws Exception {
        String version = projectVersion(pom(ROOT.resolve("pom.xml")));
        assertThat(projectVersion(pom(ROOT.resolve("gcslock-bom/pom.xml")))).isEqualTo(version);
        assertThat(bomManaged()).containsOnlyKeys("io.github.gcslock:gcslock-core", "io.github.gcslock:gcslock-test",
                "io.github.gcslock:gcslock-shedlock", "io.github.gcslock:gcslock-spring-boot-autoconfigure",
                "io.github.gcslock:gcslock-spring-boot-starter").allSatisfy((k, v) -> assertThat(v).as(k).isEqualTo(version));
        for (String module : bomManaged().keySet()) {
            Path modulePom = ROOT.resolve(module.substring(module.indexOf(':') + 1)).resolve("pom.xml");
            assertThat(modulePom).as("a module of this build").exists();
        }
    }

    @Test
    void everyXmlSnippetIsWellFormedAndEveryDependencyHasAVersionOrTheBom() throws Exception {
        Document parent = pom(ROOT.resolve("pom.xml"));
        String version = projectVersion(parent);
        String shedlockVersion = elements(parent, "shedlock.version").get(0).getTextContent().strip();
        Map<String, String> bom = bomManaged();
        List<Snippet> xml = snippets("xml");
        assertThat(xml).as("XML snippets in README.md").hasSizeGreaterThanOrEqualTo(3);
        List<String> failures = new ArrayList<>();
        for (Snippet s : xml) {
            Document d;
            try {
                d = parse("<snippet>" + s.text() + "</snippet>");
            } catch (Exception e) {
                failures.add("README.md line " + s.line() + ": not well-formed XML: " + e.getMessage());
                continue;
            }
            Set<String> managed = new HashSet<>();
            List<Element> dependencies = elements(d, "dependency");
            for (Element dep : dependencies) {
                if ("import".equals(child(dep, "scope"))) {
                    String bomName = child(dep, "groupId") + ":" + child(dep, "artifactId");
                    if (!bomName.equals("io.github.gcslock:gcslock-bom")) {
                        failures.add("README.md line " + s.line() + ": imports " + bomName + ", which this test does not know");
                    }
                    if (!version.equals(child(dep, "version"))) {
                        failures.add("README.md line " + s.line() + ": imports gcslock-bom " + child(dep, "version") + ", not " + version);
                    }
                    managed.addAll(bom.keySet());
                }
            }
            for (Element dep : dependencies) {
                String name = child(dep, "groupId") + ":" + child(dep, "artifactId");
                String v = child(dep, "version");
                if ("import".equals(child(dep, "scope"))) {
                    continue;
                }
                if (v == null) {
                    if (!managed.contains(name)) {
                        failures.add("README.md line " + s.line() + ": " + name + " has no <version> and no BOM imported in "
                                + "the snippet manages it ('dependencies.dependency.version' for " + name + ":jar is missing)");
                    }
                } else if (name.startsWith("io.github.gcslock:") && !v.equals(version)) {
                    failures.add("README.md line " + s.line() + ": " + name + " " + v + ", not the build's " + version);
                } else if (name.startsWith("net.javacrumbs.shedlock:") && !v.equals(shedlockVersion)) {
                    failures.add("README.md line " + s.line() + ": " + name + " " + v + ", not the tested " + shedlockVersion);
                }
                if (name.startsWith("io.github.gcslock:") && !bom.containsKey(name)) {
                    failures.add("README.md line " + s.line() + ": " + name + " is not a published gcslock module");
                }
            }
        }
        assertThat(failures).as("README XML snippets").isEmpty();
    }
}
