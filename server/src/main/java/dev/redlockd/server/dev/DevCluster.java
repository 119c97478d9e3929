package dev.redlockd.server.dev;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** N local Redis nodes in a temporary directory: dev mode's cluster and the tests' one. */
public final class DevCluster implements AutoCloseable {
  private final Path dir;
  private final Path binary;
  private final List<RedisProcess> nodes;

  private DevCluster(Path dir, Path binary, List<RedisProcess> nodes) {
    this.dir = dir;
    this.binary = binary;
    this.nodes = nodes;
  }

  public static DevCluster start(int count) {
    Path binary = RedisBinary.locate();
    Path dir;
    try {
      dir = Files.createTempDirectory("redlockd-dev");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<RedisProcess> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        nodes.add(RedisProcess.start(binary, dir.resolve("node-" + i)));
      }
    } catch (RuntimeException e) {
      nodes.forEach(RedisProcess::close);
      throw e;
    }
    return new DevCluster(dir, binary, List.copyOf(nodes));
  }

  public List<RedisProcess> nodes() {
    return nodes;
  }

  public List<String> uris() {
    return nodes.stream().map(RedisProcess::uri).toList();
  }

  public String binaryDescription() {
    return RedisBinary.describe(binary);
  }

  @Override
  public void close() {
    nodes.forEach(RedisProcess::close);
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort: a temp directory left behind harms nothing
    }
  }
}
