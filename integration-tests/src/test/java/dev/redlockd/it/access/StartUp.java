package dev.redlockd.it.access;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.ServerProcess;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the server jar to its exit: for flags and files that must stop start-up. */
final class StartUp {
  private StartUp() {}

  /** The exit code and everything the process printed. */
  static String[] run(List<String> flags) throws Exception {
    Process p = new ProcessBuilder(ServerProcess.command(List.of(), flags)).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new String[] {Integer.toString(p.exitValue()), out.strip()};
  }
}
