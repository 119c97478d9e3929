package dev.redlockd.it.polyglot;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** examples/node against the real server, with @grpc/grpc-js from examples/node/node_modules. */
class NodeExampleTest extends ExampleClientContract {

  @Override
  void assumeRuntime(Path root) throws InterruptedException {
    Runtimes.Result node = Runtimes.run(List.of("node", "--version"), root, Duration.ofSeconds(30));
    assumeTrue(node.ok(), () -> "skipped: no node on PATH: " + node.output());
    Path example = root.resolve("examples/node");
    if (!Files.isRegularFile(example.resolve("node_modules/@grpc/grpc-js/package.json"))) {
      // The lock file pins every package, so this is what `npm ci` in the README installs.
      Runtimes.Result install = Runtimes.run(
          List.of("npm", "ci", "--prefix", example.toString(), "--no-audit", "--no-fund"), root,
          Duration.ofMinutes(3));
      assumeTrue(install.ok(), () -> "skipped: examples/node/node_modules is not installed and "
          + "`npm ci --prefix examples/node` failed: " + install.output());
    }
  }

  @Override
  List<String> command(Path root, List<String> options) {
    List<String> command = new ArrayList<>(List.of("node", root.resolve("examples/node/lock-example.js").toString()));
    command.addAll(options);
    return command;
  }

  @Override
  String language() {
    return "node";
  }
}
