package dev.redlockd.it.conformance;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A language with a redlockd client: how its build is checked and how its conformance runner
 * and its README example are started. Every language but Java builds with
 * {@code clients/<name>/check.sh}, which exits 3 when the language's runtime is not installed.
 */
enum Language {
  JAVA("java"),
  PYTHON("python"),
  /** Python's asyncio client (redlockd.aio), built and checked by the same clients/python/check.sh. */
  PYTHON_AIO("python-aio"),
  NODE("node"),
  GO("go");

  final String id;

  Language(String id) {
    this.id = id;
  }

  /** The command that runs this language's conformance runner, before its options. */
  List<String> runner(Path root) {
    return switch (this) {
      // The flags the replicas get too: a short-lived runner gains nothing from the top compiler.
      case JAVA -> List.of(javaBinary(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
          System.getProperty("java.class.path"), JavaRunner.class.getName());
      case PYTHON -> List.of(venvPython(root), root.resolve("clients/python/conformance/runner.py").toString());
      case PYTHON_AIO -> List.of(venvPython(root), root.resolve("clients/python/conformance/runner_aio.py").toString());
      case NODE -> List.of("node", root.resolve("clients/node/conformance/runner.mjs").toString());
      case GO -> List.of(root.resolve("clients/go/target/bin/redlockd-conformance").toString());
    };
  }

  /** What only this language's runner has in its command line. */
  String runnerMarker() {
    return switch (this) {
      case JAVA -> JavaRunner.class.getName();
      case PYTHON -> "conformance/runner.py";
      case PYTHON_AIO -> "conformance/runner_aio.py";
      case NODE -> "conformance/runner.mjs";
      case GO -> "redlockd-conformance";
    };
  }

  /** The command that runs this language's example (the one its README section quotes). */
  List<String> example(Path root, String server) {
    List<String> command = new ArrayList<>(switch (this) {
      case JAVA -> throw new UnsupportedOperationException("the Java example runs in-process: ReadmeClientExampleTest");
      case PYTHON -> List.of(venvPython(root), root.resolve("clients/python/examples/lock_example.py").toString());
      case PYTHON_AIO -> List.of(venvPython(root), root.resolve("clients/python/examples/aio_example.py").toString());
      case NODE -> List.of("node", root.resolve("clients/node/examples/lock-example.mjs").toString());
      case GO -> List.of(root.resolve("clients/go/target/bin/redlockd-example").toString());
    });
    command.addAll(List.of("--server", server));
    return command;
  }

  /** The build check of this language's client, or none (Java's is the Maven build itself). */
  Path checkScript(Path root) {
    return this == JAVA ? null : root.resolve("clients/" + (this == PYTHON_AIO ? "python" : id) + "/check.sh");
  }

  private static String venvPython(Path root) {
    return root.resolve("clients/python/target/venv/bin/python").toString();
  }

  private static String javaBinary() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
