package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * docs/clients.md's install of the Java client agrees with the build: the command builds the
 * client with exactly what it needs from this repository, the dependency block names the
 * client's coordinates, and the import lines are those of the example the suite compiles and
 * runs (ReadmeClientExample). The install itself is not run: it would write to the local Maven
 * repository that every build on the machine shares.
 */
class JavaClientInstallTest {
  private static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("..").normalize();
  private static final String PAGE = "docs/clients.md";

  private static String block(String marker, String language, int index) throws IOException {
    Matcher m = Pattern.compile("<!-- tested by JavaClientInstallTest -->\\n```" + language + "\\n(.*?)\\n```",
        Pattern.DOTALL).matcher(Files.readString(ROOT.resolve(PAGE)));
    List<String> blocks = new ArrayList<>();
    while (m.find()) {
      blocks.add(m.group(1));
    }
    assertThat(blocks).as("%s's %s block(s) for %s", PAGE, language, marker).hasSizeGreaterThan(index);
    return blocks.get(index);
  }

  private static Element pom(String module) throws Exception {
    Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(ROOT.resolve(module).resolve("pom.xml").toFile());
    return pom.getDocumentElement();
  }

  /** The text of the first child element with this name, or null. */
  private static String child(Element parent, String name) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        return e.getTextContent().strip();
      }
    }
    return null;
  }

  private static Element element(Element parent, String name) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        return e;
      }
    }
    throw new AssertionError("no <" + name + "> in <" + parent.getTagName() + ">");
  }

  @Test
  void theInstallCommandBuildsTheClientWithWhatItNeedsFromThisRepository() throws Exception {
    assertThat(block("the install", "sh", 0)).isEqualTo("mvn -B install -DskipTests -pl client-java -am");
    // -am adds the modules the client depends on: the proto stubs only, and through them the parent.
    Element client = pom("client-java");
    List<String> ours = new ArrayList<>();
    Element dependencies = element(client, "dependencies");
    for (Node n = dependencies.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element dependency && "dev.redlockd".equals(child(dependency, "groupId"))) {
        ours.add(child(dependency, "artifactId"));
      }
    }
    assertThat(ours).as("the client's dependencies from this repository").containsExactly("redlockd-proto");
    assertThat(child(element(pom("proto"), "parent"), "artifactId")).isEqualTo("redlockd-parent");
    // JDK 17, as the page says.
    assertThat(child(element(pom("."), "properties"), "maven.compiler.release")).isEqualTo("17");
    assertThat(Files.readString(ROOT.resolve(PAGE))).contains("With JDK 17");
  }

  @Test
  void theDependencyNamesTheClientsCoordinates() throws Exception {
    Element client = pom("client-java");
    Element parent = element(client, "parent");
    String expected = String.join("\n", "<dependency>",
        "  <groupId>" + child(parent, "groupId") + "</groupId>",
        "  <artifactId>" + child(client, "artifactId") + "</artifactId>",
        "  <version>" + child(parent, "version") + "</version>",
        "</dependency>");
    assertThat(block("the dependency", "xml", 0)).isEqualTo(expected);
  }

  @Test
  void theImportsAreThoseOfTheExampleTheSuiteRuns() throws IOException {
    ReadmeExamples.assertQuoted(ReadmeClientExample.class, "client-imports");
    assertThat(block("the imports", "java", 0)).startsWith("import dev.redlockd.client.");
  }
}
