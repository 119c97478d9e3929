package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public API of dev.redlockd.client is a checked-in list, {@code client-java/api.txt}: every
 * public type and its public constructors, methods and fields, with their signatures. The list is
 * exact (a signature changed by accident, a helper left public, shows up as a diff of that file
 * in review), and docs/clients.md is held to it by name: every type and member the list holds is
 * named on the Java part of the page, and every Java name of the names table is in the list.
 * Full signatures in the page itself would not read well; names are what a reader looks up.
 */
class PublicApiTest {
  private static final Path LIST = Path.of("api.txt");
  private static final Path DOCS = Path.of("../docs/clients.md");
  /** Methods every class has, and an enum's generated ones: not this client's API. */
  private static final Set<String> OBJECT_METHODS = Set.of("toString", "equals", "hashCode", "values", "valueOf");
  /** Types of the JDK and gRPC the names table mentions beside the client's own. */
  private static final Set<String> OTHER_TYPES = Set.of("Optional", "Duration", "Channel");

  @Test
  void thePublicApiIsTheCheckedInList() throws IOException {
    String actual = String.join("\n", publicApi()) + "\n";
    if (!actual.equals(Files.readString(LIST))) {
      Path written = Path.of("target", "api.txt");
      Files.createDirectories(written.getParent());
      Files.writeString(written, actual);
      assertThat(actual)
          .as("the public API differs from api.txt; if the change is meant, copy %s over api.txt and say it in "
              + "docs/clients.md", written)
          .isEqualTo(Files.readString(LIST));
    }
  }

  @Test
  void everyTypeAndMemberOfTheListIsNamedInTheDocs() throws IOException {
    Set<String> named = words(javaPartOfDocs());
    List<String> missing = new ArrayList<>();
    for (String line : Files.readAllLines(LIST)) {
      String name = line.startsWith(" ") ? memberName(line) : line.split(" ")[1];
      String simple = name.substring(name.lastIndexOf('.') + 1);
      if (!named.contains(simple)) {
        missing.add(line.strip());
      }
    }
    assertThat(missing).as("public, but docs/clients.md's Java part never names them").isEmpty();
  }

  @Test
  void everyJavaNameOfTheNamesTableIsInTheList() throws IOException {
    Set<String> api = new TreeSet<>();
    for (String line : Files.readAllLines(LIST)) {
      String name = line.startsWith(" ") ? memberName(line) : line.split(" ")[1];
      api.add(name.substring(name.lastIndexOf('.') + 1));
    }
    List<String> missing = new ArrayList<>();
    List<String> rows = namesTableRows();
    assertThat(rows).hasSizeGreaterThan(10);
    Pattern called = Pattern.compile("\\b([A-Za-z_]\\w*)\\(|\\b([A-Z]\\w*)\\.|^([A-Z]\\w*)$");
    for (String row : rows) {
      for (String span : codeSpans(row.split(" \\| ")[1])) {
        Matcher m = called.matcher(span);
        while (m.find()) {
          String name = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3);
          if (!api.contains(name) && !OTHER_TYPES.contains(name)) {
            missing.add(span);
          }
        }
      }
    }
    assertThat(missing).as("the names table's Java column names what the client does not have").isEmpty();
  }

  /** Every public type of the package (nested ones too), then its public members, one a line. */
  static List<String> publicApi() throws IOException {
    Path classes = Path.of(LockClient.class.getProtectionDomain().getCodeSource().getLocation().getPath());
    List<Class<?>> types;
    try (Stream<Path> files = Files.list(classes.resolve("dev/redlockd/client"))) {
      types = files.map(f -> f.getFileName().toString())
          .filter(f -> f.endsWith(".class"))
          .<Class<?>>map(f -> load("dev.redlockd.client." + f.substring(0, f.length() - ".class".length())))
          .filter(PublicApiTest::isPublicApi)
          .sorted((a, b) -> a.getName().compareTo(b.getName()))
          .toList();
    }
    List<String> lines = new ArrayList<>();
    for (Class<?> type : types) {
      lines.add(kind(type) + " " + simple(type.getTypeName()) + supertypes(type));
      List<String> members = new ArrayList<>();
      for (Field f : type.getDeclaredFields()) {
        if (Modifier.isPublic(f.getModifiers())) {
          members.add("  " + (Modifier.isStatic(f.getModifiers()) ? "static " : "") + simple(f.getGenericType())
              + " " + f.getName());
        }
      }
      for (Constructor<?> c : type.getDeclaredConstructors()) {
        if (Modifier.isPublic(c.getModifiers())) {
          members.add("  new " + type.getSimpleName() + params(c.getGenericParameterTypes()));
        }
      }
      for (Method m : type.getDeclaredMethods()) {
        if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()
            && !OBJECT_METHODS.contains(m.getName()) && !overridesAnotherLibrary(type, m)) {
          members.add("  " + (Modifier.isStatic(m.getModifiers()) ? "static " : "") + simple(m.getGenericReturnType())
              + " " + m.getName() + params(m.getGenericParameterTypes()));
        }
      }
      members.sort(null);
      lines.addAll(members);
    }
    return lines;
  }

  /** The class of a binary name ("dev.redlockd.client.LockClient$Builder"), without initializing it. */
  private static Class<?> load(String binaryName) {
    try {
      return Class.forName(binaryName, false, PublicApiTest.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean isPublicApi(Class<?> c) {
    for (Class<?> t = c; t != null; t = t.getEnclosingClass()) {
      if (!Modifier.isPublic(t.getModifiers()) || t.isAnonymousClass() || t.isLocalClass()) {
        return false;
      }
    }
    return true;
  }

  /**
   * A method that implements a supertype of another library (gRPC's name resolver SPI): that
   * library's API. The JDK's interfaces ({@code AutoCloseable.close}) are this client's API too.
   */
  private static boolean overridesAnotherLibrary(Class<?> type, Method m) {
    List<Class<?>> supers = new ArrayList<>(Arrays.asList(type.getInterfaces()));
    for (Class<?> s = type.getSuperclass(); s != null && s != Object.class; s = s.getSuperclass()) {
      supers.add(s);
      supers.addAll(Arrays.asList(s.getInterfaces()));
    }
    for (Class<?> s : supers) {
      if (!s.getPackageName().equals(type.getPackageName()) && !s.getPackageName().startsWith("java.")) {
        try {
          s.getMethod(m.getName(), m.getParameterTypes());
          return true;
        } catch (NoSuchMethodException e) {
          // not from this one
        }
      }
    }
    return false;
  }

  /** " extends X implements Y, Z", for the supertypes other than Object, Record and Enum. */
  private static String supertypes(Class<?> c) {
    Type parent = c.getGenericSuperclass();
    String extended = parent == null || c.isRecord() || c.isEnum() || parent == Object.class ? ""
        : " extends " + simple(parent);
    Type[] interfaces = c.getGenericInterfaces();
    return extended + (interfaces.length == 0 ? "" : (c.isInterface() ? " extends " : " implements ")
        + Arrays.stream(interfaces).map(PublicApiTest::simple).collect(Collectors.joining(", ")));
  }

  private static String kind(Class<?> c) {
    return c.isRecord() ? "record" : c.isEnum() ? "enum" : c.isInterface() ? "interface"
        : Throwable.class.isAssignableFrom(c) ? "exception" : "class";
  }

  private static String params(Type[] types) {
    return Arrays.stream(types).map(PublicApiTest::simple).collect(Collectors.joining(", ", "(", ")"));
  }

  private static String simple(Type type) {
    return simple(type.getTypeName());
  }

  /** Type names without their packages: "java.util.Optional<dev.redlockd.client.Lease>" to "Optional<Lease>". */
  private static String simple(String typeName) {
    return typeName.replaceAll("\\b[a-z_][\\w]*\\.", "").replace('$', '.');
  }

  /** The member's name in a line of the list: the word before "(", or the last word of a field. */
  private static String memberName(String line) {
    int paren = line.indexOf('(');
    String head = paren >= 0 ? line.substring(0, paren) : line;
    return head.substring(head.lastIndexOf(' ') + 1);
  }

  /** The Java section, the names table's Java column, and the other sections' lines for Java. */
  private static String javaPartOfDocs() throws IOException {
    String docs = Files.readString(DOCS);
    StringBuilder part = new StringBuilder(
        docs.substring(docs.indexOf("\n## Java client"), docs.indexOf("\n## Clients in other languages")));
    for (String line : docs.split("\n")) {
      if (line.startsWith("- Java:") || line.startsWith("| Java |")) {
        part.append('\n').append(line);
      }
    }
    for (String row : namesTableRows()) {
      part.append('\n').append(row.split(" \\| ")[1]);
    }
    return part.toString();
  }

  private static List<String> namesTableRows() throws IOException {
    String docs = Files.readString(DOCS);
    String table = docs.substring(docs.indexOf("\n| what | Java | Python | Node.js | Go |") + 1);
    return table.lines().takeWhile(l -> l.startsWith("| ")).skip(2).toList();
  }

  private static List<String> codeSpans(String text) {
    Matcher m = Pattern.compile("`([^`]+)`").matcher(text);
    List<String> spans = new ArrayList<>();
    while (m.find()) {
      spans.add(m.group(1));
    }
    return spans;
  }

  /** Every identifier in the code of {@code markdown}: its fenced blocks and its code spans. */
  private static Set<String> words(String markdown) {
    StringBuilder code = new StringBuilder();
    StringBuilder prose = new StringBuilder();
    boolean fenced = false;
    for (String line : markdown.split("\n")) {
      if (line.startsWith("```")) {
        fenced = !fenced;
      } else {
        (fenced ? code : prose).append(line).append('\n');
      }
    }
    codeSpans(prose.toString()).forEach(span -> code.append(span).append('\n'));
    Set<String> words = new TreeSet<>();
    Matcher m = Pattern.compile("[A-Za-z_]\\w*").matcher(code);
    while (m.find()) {
      words.add(m.group());
    }
    return words;
  }
}
