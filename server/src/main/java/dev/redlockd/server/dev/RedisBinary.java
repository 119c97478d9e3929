package dev.redlockd.server.dev;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Finds a {@code redis-server} to run: the one on PATH, else the binary shipped inside the
 * embedded-redis jar from Maven Central, so a machine with only a JDK and Maven can run
 * redlockd in dev mode and its tests.
 */
public final class RedisBinary {
  /** Set (system property or environment variable) to "true" to skip PATH and use the bundled binary. */
  public static final String FORCE_EMBEDDED_PROPERTY = "redlockd.redis.embedded";
  public static final String FORCE_EMBEDDED_ENV = "REDLOCKD_REDIS_EMBEDDED";

  private static Path extracted; // guarded by RedisBinary.class

  private RedisBinary() {}

  public static Path locate() {
    if (!forceEmbedded()) {
      String path = System.getenv("PATH");
      if (path != null) {
        for (String dir : path.split(File.pathSeparator)) {
          Path candidate = Path.of(dir, "redis-server");
          if (Files.isExecutable(candidate)) {
            return candidate;
          }
        }
      }
    }
    return embedded();
  }

  public static String describe(Path binary) {
    synchronized (RedisBinary.class) {
      if (binary.equals(extracted)) {
        return "redis-server bundled in the embedded-redis jar";
      }
    }
    return "redis-server from PATH (" + binary + ")";
  }

  private static boolean forceEmbedded() {
    return "true".equalsIgnoreCase(System.getProperty(FORCE_EMBEDDED_PROPERTY))
        || "true".equalsIgnoreCase(System.getenv(FORCE_EMBEDDED_ENV));
  }

  private static synchronized Path embedded() {
    if (extracted != null && Files.isExecutable(extracted)) {
      return extracted;
    }
    String resource = resourceName();
    try (InputStream in = RedisBinary.class.getResourceAsStream("/" + resource)) {
      if (in == null) {
        throw new IllegalStateException("no redis-server on PATH and no bundled binary " + resource
            + " on the classpath");
      }
      Path file = Files.createTempFile("redlockd-redis-server-", "");
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      if (!file.toFile().setExecutable(true, true)) {
        throw new IllegalStateException("cannot make " + file + " executable");
      }
      file.toFile().deleteOnExit();
      extracted = file;
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot extract the bundled redis-server", e);
    }
  }

  private static String resourceName() {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    boolean arm = arch.contains("aarch64") || arch.contains("arm64");
    boolean x64 = arch.contains("amd64") || arch.contains("x86_64");
    if (os.contains("linux") && x64) {
      return "redis-server-6.2.6-v5-linux-amd64";
    }
    if (os.contains("linux") && arm) {
      return "redis-server-6.2.7-linux-arm64";
    }
    if (os.contains("mac") && x64) {
      return "redis-server-6.2.6-v5-darwin-amd64";
    }
    if (os.contains("mac") && arm) {
      return "redis-server-6.2.6-v5-darwin-arm64";
    }
    throw new IllegalStateException("no bundled redis-server for " + os + "/" + arch
        + ": install redis-server on PATH");
  }
}
