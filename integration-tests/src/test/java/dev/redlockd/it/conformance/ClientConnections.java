package dev.redlockd.it.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which local ports a process (a conformance runner) holds an established TCP connection to,
 * read from Linux's /proc: its socket descriptors, and the kernel's table of TCP connections.
 * A fault scenario asks it before it stops a replica, so that it stops one only while the
 * runner's client can already reach another: a gRPC channel reconnects to a replica that came
 * back after its own backoff (a second or more), and a replica stopped before that would leave
 * the holder nowhere to resume, by the harness's timing, not by any rule of the client.
 */
final class ClientConnections {
  private static final String ESTABLISHED = "01";

  private ClientConnections() {}

  /** Whether process {@code pid} has an established TCP connection to any of {@code ports}. */
  static boolean connectedToAny(long pid, Collection<Integer> ports) {
    Set<String> sockets = sockets(pid);
    for (String table : List.of("tcp", "tcp6")) {
      Path path = Path.of("/proc", Long.toString(pid), "net", table);
      List<String> lines;
      try {
        lines = Files.readAllLines(path);
      } catch (IOException gone) {
        return false;
      }
      for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
        String[] f = line.trim().split("\\s+");
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        if (f.length > 9 && f[3].equals(ESTABLISHED) && sockets.contains(f[9])
            && ports.contains(Integer.parseInt(f[2].substring(f[2].indexOf(':') + 1), 16))) {
          return true;
        }
      }
    }
    return false;
  }

  /** The inodes of the sockets the process has open. */
  private static Set<String> sockets(long pid) {
    Set<String> inodes = new HashSet<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : fds) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            inodes.add(target.substring("socket:[".length(), target.length() - 1));
          }
        } catch (IOException closedMeanwhile) {
          // the descriptor was closed while we listed them
        }
      }
    } catch (IOException gone) {
      return Set.of();
    } catch (UncheckedIOException gone) {
      return inodes;
    }
    return inodes;
  }
}
