package dev.redlockd.it.polyglot;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** examples/python against the real server, with Debian's grpcio on /usr/bin/python3. */
class PythonExampleTest extends ExampleClientContract {
  private static final String PYTHON = "/usr/bin/python3";

  @Override
  void assumeRuntime(Path root) throws InterruptedException {
    Runtimes.Result probe = Runtimes.run(List.of(PYTHON, "-c", "import grpc, grpc_tools.protoc"), root,
        Duration.ofSeconds(30));
    assumeTrue(probe.ok(), () -> "skipped: " + PYTHON + " without the grpc and grpc_tools modules "
        + "(apt-get install -y python3-grpcio python3-grpc-tools): " + probe.output());
  }

  @Override
  List<String> command(Path root, List<String> options) {
    List<String> command = new ArrayList<>(List.of(PYTHON, root.resolve("examples/python/lock_example.py").toString()));
    command.addAll(options);
    return command;
  }

  @Override
  String language() {
    return "python";
  }
}
