package dev.redlockd.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A class-data archive of the server jar (the JDK's dynamic AppCDS), made once for each build of
 * the jar and used by every server the tests start with {@link ServerProcess#LIGHT_JVM}. The suite
 * starts a server JVM a few hundred times, and most of a start is loading and verifying the same
 * classes from the jar: measured on a 2-core machine of the CI kind, a start took 1.65 to 2.14 s
 * of CPU until it listened, and 1.07 to 1.31 s with the archive.
 *
 * <p>The archive is made by a training run: a server over one Redis node of its own, one Acquire
 * and Release through it (the classes of a request's path), then SIGTERM, on which the JVM writes
 * what it loaded. Its name carries the jar's size and modification time, so a rebuilt jar gets an
 * archive of its own (the JVM would refuse a stale one, silently, and start as without). Written
 * under a temporary name and moved into place, so a JVM beside this one sees a whole archive or
 * none. Anything that goes wrong leaves the servers starting as they did without it: the archive
 * changes how fast a server starts, nothing it does.
 */
final class ClassDataArchive {
  /**
   * The JVM prints nothing about the archive: tests read the server's output, and a server that
   * cannot map it (another JDK, a rebuilt jar) starts as without it.
   */
  private static final String QUIET = "-Xlog:cds=off,cds+dynamic=off,class+path=off";
  private static Optional<Path> decided; // guarded by ClassDataArchive.class

  private ClassDataArchive() {}

  /** The JVM flags that use the jar's archive, made first if there is none yet; none when it can't be. */
  static synchronized List<String> flags(Path jar) {
    if (decided == null) {
      decided = archiveOf(jar);
    }
    return decided.map(a -> List.of("-XX:SharedArchiveFile=" + a, QUIET)).orElse(List.of());
  }

  private static Optional<Path> archiveOf(Path jar) {
    try {
      Path archive = jar.resolveSibling(jar.getFileName().toString().replaceFirst("\\.jar$", "")
          + "-" + Files.size(jar) + "-" + Files.getLastModifiedTime(jar).toMillis() + ".jsa");
      if (!Files.isRegularFile(archive)) {
        train(jar, archive);
      }
      return Files.isRegularFile(archive) ? Optional.of(archive) : Optional.empty();
    } catch (IOException | RuntimeException e) {
      System.err.println("no class-data archive for the server jar (servers start without one): " + e);
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  private static void train(Path jar, Path archive) throws IOException, InterruptedException {
    Path written = Files.createTempFile(archive.getParent(), archive.getFileName().toString(), ".part");
    Files.delete(written); // the JVM writes it anew
    try (RedisCluster node = RedisCluster.start(1)) {
      List<String> command = new ArrayList<>(ServerProcess.LIGHT_JVM);
      command.addAll(List.of("-XX:ArchiveClassesAtExit=" + written, QUIET));
      ServerProcess server = ServerProcess.startPlain(command, List.of("--redis", node.redisFlag()));
      try {
        WarmUp.run(server.channel());
      } finally {
        server.close(); // SIGTERM: the archive is written as the JVM exits
      }
      if (Files.isRegularFile(written)) {
        Files.move(written, archive, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(written);
    }
  }
}
