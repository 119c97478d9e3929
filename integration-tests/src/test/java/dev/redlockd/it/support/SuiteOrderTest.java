package dev.redlockd.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** SuiteOrder names test classes by their simple names: a renamed class would silently lose its place. */
class SuiteOrderTest {
  @Test
  void everyClassItPlacesIsATestClassOfThisModule() throws Exception {
    List<String> classes = new ArrayList<>();
    try (Stream<Path> files = Files.walk(Path.of("src/test/java"))) {
      files.map(f -> f.getFileName().toString())
          .filter(f -> f.endsWith("Test.java") || f.endsWith("IT.java"))
          .forEach(f -> classes.add(f.substring(0, f.length() - ".java".length())));
    }
    assertThat(classes).containsAll(SuiteOrder.FIRST).containsAll(SuiteOrder.LAST);
    assertThat(SuiteOrder.FIRST).doesNotContainAnyElementsOf(SuiteOrder.LAST).doesNotHaveDuplicates();
    assertThat(SuiteOrder.LAST).doesNotHaveDuplicates();
  }
}
