package dev.redlockd.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * docs/clients.md's Spring Boot section: its example properties bind as it says, and its table
 * names exactly the properties RedlockdProperties has.
 */
class DocumentedPropertiesTest {
  private static final Path PAGE = Path.of("..", "docs/clients.md");

  private static String page() throws IOException {
    return Files.readString(PAGE);
  }

  @Test
  void theExampleBindsAsDocumented() throws IOException {
    String text = page();
    int marker = text.indexOf("<!-- tested by DocumentedPropertiesTest -->");
    int start = text.indexOf("```properties\n", marker) + "```properties\n".length();
    Properties example = new Properties();
    example.load(new StringReader(text.substring(start, text.indexOf("```", start))));
    RedlockdProperties bound = new Binder(new MapConfigurationPropertySource(example))
        .bind("redlockd", RedlockdProperties.class).get();
    assertThat(bound.getTargets()).containsExactly("10.0.0.1:50051", "10.0.0.2:50051");
    assertThat(bound.getTls().isEnabled()).isTrue();
    assertThat(bound.getTls().getCaFile()).isEqualTo(Path.of("/etc/redlockd/ca.pem"));
    assertThat(bound.getTokenFile()).isEqualTo(Path.of("/run/secrets/redlockd-token"));
    assertThat(bound.getLockRegistry().getPrefix()).isEqualTo("orders-service/");
    assertThat(bound.getLockRegistry().getTtl()).isEqualTo(Duration.ofSeconds(15));
    assertThat(bound.getDefaultTtl()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void theTableNamesEveryPropertyAndNoOther() throws IOException {
    Set<String> documented = new TreeSet<>();
    Matcher row = Pattern.compile("(?m)^\\| (`redlockd\\.[^|]*)\\|").matcher(page());
    while (row.find()) {
      Matcher name = Pattern.compile("`(redlockd\\.[a-z.-]+)`").matcher(row.group(1));
      while (name.find()) {
        documented.add(name.group(1));
      }
    }
    Set<String> bindable = new TreeSet<>();
    Map<String, Object> everySet = Map.ofEntries(
        Map.entry("redlockd.targets", "a:1"), Map.entry("redlockd.token", "t"),
        Map.entry("redlockd.token-file", "/t"), Map.entry("redlockd.default-ttl", "1s"),
        Map.entry("redlockd.call-timeout", "1s"), Map.entry("redlockd.owner", "o"),
        Map.entry("redlockd.propagate-trace-context", "false"),
        Map.entry("redlockd.tls.enabled", "true"), Map.entry("redlockd.tls.ca-file", "/c"),
        Map.entry("redlockd.tls.certificate-file", "/c"), Map.entry("redlockd.tls.key-file", "/k"),
        Map.entry("redlockd.lock-registry.enabled", "false"), Map.entry("redlockd.lock-registry.prefix", "p"),
        Map.entry("redlockd.lock-registry.ttl", "2s"));
    // Each is bound (a misspelt one would leave its default), and together they are every setter.
    RedlockdProperties all = new Binder(new MapConfigurationPropertySource(everySet))
        .bind("redlockd", RedlockdProperties.class).get();
    assertThat(List.of(all.getToken(), all.getOwner(), all.getLockRegistry().getPrefix())).containsExactly("t", "o",
        "p");
    assertThat(all.isPropagateTraceContext()).isFalse();
    assertThat(all.getLockRegistry().isEnabled()).isFalse();
    assertThat(all.getTls().getKeyFile()).isEqualTo(Path.of("/k"));
    bindable.addAll(everySet.keySet());
    assertThat(setters(RedlockdProperties.class) + setters(RedlockdProperties.Tls.class)
        + setters(RedlockdProperties.LockRegistry.class)).isEqualTo(bindable.size());
    assertThat(documented).isEqualTo(bindable);
  }

  private static int setters(Class<?> type) {
    return (int) java.util.Arrays.stream(type.getDeclaredMethods()).filter(m -> m.getName().startsWith("set")).count();
  }
}
