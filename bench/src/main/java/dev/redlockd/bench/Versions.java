package dev.redlockd.bench;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** Versions of the compared libraries, written into versions.properties by the build. */
final class Versions {
  private static final Properties VERSIONS = load();

  private Versions() {}

  static String of(String library) {
    return VERSIONS.getProperty(library, "?");
  }

  private static Properties load() {
    Properties p = new Properties();
    try (InputStream in = Versions.class.getResourceAsStream("versions.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      // "?" in the report says it
    }
    return p;
  }
}
