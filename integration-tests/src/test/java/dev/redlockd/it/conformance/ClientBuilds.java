package dev.redlockd.it.conformance;

import static org.junit.jupiter.api.Assertions.fail;

import dev.redlockd.testing.MissingRuntime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Builds and unit-tests each language's client once per test run, by its {@code check.sh}:
 * stubs checked against the proto, the language's own tests, the runner and example built.
 * A language whose runtime is not installed is skipped with the script's reason, except under
 * {@code CI=true}: CI installs every runtime, so a missing one there is a broken CI.
 */
final class ClientBuilds {
  /** check.sh's exit code for "this language's runtime is not installed here". */
  private static final int RUNTIME_MISSING = 3;
  private static final Duration CHECK_TIMEOUT = Duration.ofMinutes(8);
  /**
   * By script (Python's two runners, sync and asyncio, share one check). Every language's check
   * starts at once, as the test run begins ({@link ClientBuildsAtStart}) or at the first caller:
   * they are independent builds, and run side by side they cost the suite about the longest one
   * instead of the sum.
   */
  private static final Map<Path, CompletableFuture<Runtimes.Result>> CHECKED = new ConcurrentHashMap<>();
  /**
   * Go's build cache where Go keeps it for the user (as Maven keeps ~/.m2 and npm ~/.npm) rather
   * than clients/go/target/gocache, which each clone starts empty: compiling gRPC and its
   * dependencies with the race detector again took 150 CPU-seconds of the 2 cores the suite
   * has, against 7 with the cache. The cache is keyed by the content of what it compiled, so
   * nothing stale is reused. A GOCACHE set for the test run wins.
   */
  static final Map<String, String> BUILD_CACHES = Map.of("GOCACHE", System.getenv().getOrDefault("GOCACHE",
      Path.of(System.getProperty("user.home"), ".cache", "go-build").toString()));

  private ClientBuilds() {}

  /** Returns once the language's client is built and its own tests passed; skips or fails otherwise. */
  static void assumeBuilt(Language language) {
    Path root = Runtimes.repositoryRoot();
    Path script = language.checkScript(root);
    if (script == null) {
      return;
    }
    startAll();
    Runtimes.Result result = CHECKED.get(script).join();
    if (result.ok()) {
      return;
    }
    String output = result.output();
    if (result.exitCode() == RUNTIME_MISSING) {
      MissingRuntime.skipOrFail(language.id + " client skipped: its runtime is not installed: " + lastLine(output));
    }
    fail(script + " failed (exit " + result.exitCode() + "):\n" + output);
  }

  /** Starts every language's check, once per test run. */
  static synchronized void startAll() {
    if (!CHECKED.isEmpty()) {
      return;
    }
    Path root = Runtimes.repositoryRoot();
    for (Language language : Language.values()) {
      Path script = language.checkScript(root);
      if (script != null) {
        CHECKED.computeIfAbsent(script, s -> CompletableFuture.supplyAsync(() -> check(root, s, language),
            ClientBuilds::onItsOwnThread));
      }
    }
  }

  private static void onItsOwnThread(Runnable build) {
    Thread thread = new Thread(build, "client-check");
    thread.setDaemon(true);
    thread.start();
  }

  private static Runtimes.Result check(Path root, Path script, Language language) {
    try {
      Runtimes.Result result = Runtimes.run(List.of("bash", script.toString()), root, CHECK_TIMEOUT, BUILD_CACHES);
      Path log = root.resolve("integration-tests/target/conformance/" + language.id + "-check.log");
      Files.createDirectories(log.getParent());
      Files.writeString(log, result.output());
      return result;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static String lastLine(String output) {
    String[] lines = output.strip().split("\n");
    return lines[lines.length - 1];
  }
}
